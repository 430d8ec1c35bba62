//! Resolution tests: real WGSL and real attributes in, interfaces and located spec errors out.

use super::*;
use crate::interface::{SampleType, TextureAccess, TextureDim};
use crate::syntax::parse_spec;

const SAXPY: &str = r#"
struct Params { n: u32, a: f32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < p.n) { y[g.x] = p.a * x[g.x] + y[g.x]; }
}
"#;

fn resolve_attr(attr: &str, wgsl: &str) -> Result<ResolvedKernel, ResolveError> {
    let (spec, _) = parse_spec(attr.parse().unwrap()).expect("attribute parses");
    resolve("K", &spec, wgsl, "k.wgsl")
}

#[track_caller]
fn check_spec_err(attr: &str, wgsl: &str, loc: Loc, needle: &str) {
    match resolve_attr(attr, wgsl) {
        Err(ResolveError::Spec(errors)) => {
            assert!(
                errors.iter().any(|e| e.loc == loc
                    && (e.message.contains(needle)
                        || e.hint.as_deref().unwrap_or("").contains(needle))),
                "no error at {loc:?} containing `{needle}` in {errors:#?}"
            );
        }
        other => panic!("expected spec errors, got {other:?}"),
    }
}

#[test]
fn saxpy_resolves_with_inferred_types_and_dispatch() {
    let k = resolve_attr(
        r#"source = "", sizes(n = 1000), bind(x = input(n), y = inout(n), p = uniform(n, 2.0))"#,
        SAXPY,
    )
    .unwrap();
    assert_eq!(k.interface.entry, "main");
    assert_eq!(k.interface.workgroup_size, [64, 1, 1]);
    assert_eq!(k.buffers.len(), 3);
    assert_eq!(k.buffers[0].binding.kind, BindingKind::StorageRead);
    assert_eq!(k.buffers[1].role, Role::Inout);
    let p = &k.buffers[2];
    assert_eq!(
        p.binding.layout.scalars(0).collect::<Vec<_>>(),
        vec![(0, Scalar::U32), (4, Scalar::F32)]
    );
    assert_eq!(
        k.baseline.dispatch.to_string(),
        "grid(n, 1, 1)",
        "inferred from the single inout"
    );
    assert_eq!(k.tune_shapes.len(), 1);
    assert_eq!(k.verify_shapes[0]["n"], 875 | 1);
    assert_eq!(k.buffers[0].byte_size(&k.tune_shapes[0]).unwrap(), 4000);
    assert_eq!(k.content_hash.len(), 16);
}

#[test]
fn spec_errors_point_at_their_token() {
    let base = r#"source = "", sizes(n = 1000), "#;
    check_spec_err(
        &format!("{base} bind(z = input(n))"),
        SAXPY,
        Loc::Binding(0),
        "no binding `z`",
    );
    check_spec_err(
        &format!("{base} bind(z = input(n))"),
        SAXPY,
        Loc::Binding(0),
        "`x` (@group(0) @binding(0)",
    );
    check_spec_err(
        &format!("{base} bind(x = output(n))"),
        SAXPY,
        Loc::BindingRole(0),
        "cannot be `output`",
    );
    check_spec_err(
        &format!("{base} bind(x = input(m), y = inout(n), p = uniform(n, 1.0))"),
        SAXPY,
        Loc::BindingLen(0),
        "size `m` is not declared",
    );
    check_spec_err(
        &format!("{base} bind(x = input(n), y = inout(n), p = uniform(n))"),
        SAXPY,
        Loc::BindingRole(2),
        "holds 2 scalar(s); 1 value(s) given",
    );
    check_spec_err(
        &format!("{base} entry = \"nope\", bind(x = input(n), y = inout(n), p = uniform(n, 1.0))"),
        SAXPY,
        Loc::Entry,
        "entry point `nope` not found",
    );
    check_spec_err(
        &format!("{base} bind(x = input(n), y = inout(n))"),
        SAXPY,
        Loc::Attr,
        "binding `p`",
    );
    check_spec_err(
        &format!("{base} bind(x = input(n), y = inout(n), p = uniform(n, 1.0)), grid = (q)"),
        SAXPY,
        Loc::Dispatch,
        "`q` is neither a size declared in `sizes(..)` nor a parameter in `params(..)`",
    );
    check_spec_err(
        &format!("{base} bind(x = input(n), y = inout(n), p = uniform(n, 1.0)), params(WG = [1])"),
        SAXPY,
        Loc::Param(0),
        "no `override WG`",
    );
    check_spec_err(
        &format!("{base} bind(x = input(n - 2000), y = inout(n), p = uniform(n, 1.0))"),
        SAXPY,
        Loc::BindingLen(0),
        "underflow",
    );
}

#[test]
fn wgsl_errors_carry_file_and_line() {
    let broken = "@compute @workgroup_size(1)\nfn main() {\n  let x: f32 = 1u;\n}\n";
    match resolve_attr(r#"source = """#, broken) {
        Err(ResolveError::Wgsl(ReflectError::Parse { rendered, line, .. })) => {
            assert_eq!(line, Some(3));
            assert!(rendered.contains("k.wgsl:3"), "{rendered}");
        }
        other => panic!("{other:?}"),
    }
    let invalid = "@group(0) @binding(0) var<storage, read> x: array<f32>;\n@compute @workgroup_size(1)\nfn main() { x[0] = 1.0; }\n";
    assert!(matches!(
        resolve_attr(r#"source = """#, invalid),
        Err(ResolveError::Wgsl(
            ReflectError::Validation { .. } | ReflectError::Parse { .. }
        ))
    ));
}

#[test]
fn override_workgroup_sizes_and_struct_arrays_reflect() {
    let wgsl = r#"
override WG: u32 = 128;
struct Buf { n: u32, pad: u32, data: array<vec2<f32>> }
@group(0) @binding(0) var<storage, read_write> b: Buf;
@group(1) @binding(3) var<storage, read> m: array<mat3x3<f32>, 2>;
var<workgroup> tile: array<f32, 256>;
@compute @workgroup_size(WG, 1)
fn main(@builtin(local_invocation_index) i: u32) { tile[i] = m[0][0][0]; b.data[i] = vec2(tile[i]); }
"#;
    let r = reflect(wgsl, None, "x.wgsl").unwrap().interface;
    assert_eq!(r.workgroup_size, [128, 1, 1]);
    assert_eq!(r.workgroup_size_overrides[0].as_deref(), Some("WG"));
    assert_eq!(r.overrides[0].default, Some(128.0));
    assert_eq!(r.workgroup_storage_bytes, Some(1024));
    let b = &r.bindings[0].layout;
    assert_eq!(b.header_size, 8);
    assert_eq!(b.array.as_ref().unwrap().stride, 8);
    assert_eq!(b.byte_size(10), 88);
    let m = &r.bindings[1];
    assert_eq!((m.group, m.binding), (1, 3));
    assert_eq!(m.layout.byte_size(0), 96);
    // mat3x3 columns are 16 bytes apart; 9 scalars per matrix.
    assert_eq!(m.layout.scalars(0).count(), 18);
    assert_eq!(m.layout.scalars(0).nth(3), Some((16, Scalar::F32)));
}

#[test]
fn interface_mismatches_are_described() {
    let a = reflect(SAXPY, None, "a").unwrap().interface;
    let changed = SAXPY
        .replace("var<storage, read> x", "var<storage, read_write> x")
        .replace("@binding(2)", "@binding(5)");
    let b = reflect(&changed, None, "b").unwrap().interface;
    let m = a.mismatches(&b);
    assert_eq!(m.len(), 2, "{m:?}");
    assert!(
        m[0].contains("var<storage, read_write> instead of var<storage, read>"),
        "{m:?}"
    );
    assert!(
        m[1].contains("@binding(5) `p` is not a binding of the baseline"),
        "{m:?}"
    );
    assert!(a.mismatches(&a).is_empty());
}

/// Resolves `attr` against SAXPY, then its `reference(..)` against `reference_wgsl`.
fn resolve_with_reference(attr: &str, reference_wgsl: &str) -> Result<Program, ResolveError> {
    let (spec, _) = parse_spec(attr.parse().unwrap()).expect("attribute parses");
    let kernel = resolve("K", &spec, SAXPY, "k.wgsl").expect("the kernel resolves");
    resolve_reference(
        &kernel,
        spec.reference.as_ref().expect("a reference"),
        reference_wgsl,
        "k_ref.wgsl",
    )
}

const SAXPY_ATTR: &str =
    r#"source = "", sizes(n = 1000), bind(x = input(n), y = inout(n), p = uniform(n, 2.0))"#;

#[test]
fn a_reference_keeps_its_own_entry_workgroup_size_and_launch_rule() {
    let wide = SAXPY
        .replace("@workgroup_size(64)", "@workgroup_size(256)")
        .replace("fn main", "fn saxpy_fast");
    let attr = format!("{SAXPY_ATTR}, reference(source = \"\", workgroups = ((n + 255) / 256))");
    let program = resolve_with_reference(&attr, &wide).expect("the reference fits");
    assert_eq!(program.entry, "saxpy_fast");
    assert_eq!(program.workgroup_size, [256, 1, 1]);
    assert_eq!(program.dispatch.mode, crate::DispatchMode::Workgroups);
    assert_eq!(
        program
            .dispatch
            .workgroups(program.workgroup_size, |_| Some(1000), 65535),
        Ok([4, 1, 1])
    );
    // The reference does not change what the kernel is: its hash is the same without one.
    let (with, _) = parse_spec(attr.parse().unwrap()).unwrap();
    let (without, _) = parse_spec(SAXPY_ATTR.parse().unwrap()).unwrap();
    assert_eq!(
        resolve("K", &with, SAXPY, "k.wgsl").unwrap().content_hash,
        resolve("K", &without, SAXPY, "k.wgsl")
            .unwrap()
            .content_hash
    );
}

#[track_caller]
fn check_reference_err(attr_tail: &str, reference_wgsl: &str, loc: Loc, needle: &str) {
    let attr = format!("{SAXPY_ATTR}, {attr_tail}");
    match resolve_with_reference(&attr, reference_wgsl) {
        Err(ResolveError::Spec(errors)) => assert!(
            errors
                .iter()
                .any(|e| e.loc == loc && e.message.contains(needle)),
            "no error at {loc:?} containing `{needle}` in {errors:#?}"
        ),
        other => panic!("expected spec errors, got {other:?}"),
    }
}

#[test]
fn a_reference_must_fit_the_kernels_bindings() {
    let grid = r#"reference(source = "", grid = (n))"#;
    check_reference_err(
        grid,
        &SAXPY.replace("var<storage, read> x", "var<storage, read_write> x"),
        Loc::Reference,
        "does not fit the kernel's bindings",
    );
    check_reference_err(
        grid,
        &SAXPY
            .replace("y: array<f32>", "y: array<u32>")
            .replace("p.a * x[g.x] + y[g.x]", "u32(p.a * x[g.x]) + y[g.x]"),
        Loc::Reference,
        "has type `array<u32>` instead of `array<f32>`",
    );
    check_reference_err(
        grid,
        "fn main( {",
        Loc::Reference,
        "invalid WGSL in reference k_ref.wgsl",
    );
    check_reference_err(
        r#"reference(source = "", grid = (m))"#,
        SAXPY,
        Loc::ReferenceDispatch,
        "size `m` is not declared",
    );
    check_reference_err(
        r#"reference(source = "", grid = (n - 2000))"#,
        SAXPY,
        Loc::ReferenceDispatch,
        "on shape",
    );
}

const TEMPLATE: &str = r#"
override X: u32;
override Y: u32;
override THREADS: u32;
override ITEMS: u32 = 2u;
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(X, Y)
fn main(@builtin(local_invocation_index) l: u32, @builtin(workgroup_id) w: vec3<u32>) {
    let base = w.x * THREADS * ITEMS;
    for (var k = 0u; k < ITEMS; k++) {
        let i = base + k * THREADS + l;
        if (i < arrayLength(&y)) { y[i] = 2.0 * x[i]; }
    }
}
"#;

#[test]
fn overrides_without_defaults_take_their_first_candidate_and_derived_values() {
    let k = resolve_attr(
        r#"source = "", sizes(n = 4096), bind(x = input(n), y = output(n)),
           workgroups = (cdiv(n, 256)),
           params(X = [16, 8, 32], Y = [4, 8], THREADS = X * Y, ITEMS = [1, 2, 4]),
           constraints(THREADS * ITEMS <= 256, pow2(ITEMS))"#,
        TEMPLATE,
    )
    .unwrap();
    let constants: Vec<(&str, f64)> = k.baseline.constants_pairs();
    assert_eq!(
        constants,
        vec![("X", 16.0), ("Y", 4.0), ("THREADS", 64.0)],
        "first candidates, then derived; ITEMS keeps its WGSL default"
    );
    assert_eq!(k.baseline.workgroup_size, [16, 4, 1]);
    assert_eq!(k.interface.workgroup_size, [16, 4, 1]);
    assert!(k.interface.overrides[0].required);
    assert_eq!(k.derived.len(), 1);
    assert_eq!(k.constraints[0].to_string(), "THREADS * ITEMS <= 256");
    assert_eq!(
        k.baseline.dispatch.to_string(),
        "workgroups(cdiv(n, 256), 1, 1)"
    );
}

#[test]
fn parameter_mistakes_are_located() {
    let base =
        r#"source = "", sizes(n = 4096), bind(x = input(n), y = output(n)), workgroups = (n), "#;
    check_spec_err(
        &format!("{base} params(X = [8], Y = [8])"),
        TEMPLATE,
        Loc::Attr,
        "`override THREADS` has no default value",
    );
    check_spec_err(
        &format!("{base} params(X = [8], Y = [8], THREADS = X * n)"),
        TEMPLATE,
        Loc::Derived(0),
        "cannot use sizes",
    );
    check_spec_err(
        &format!("{base} params(X = [8], Y = [8], THREADS = X * Y, Z = X)"),
        TEMPLATE,
        Loc::Derived(1),
        "no `override Z`",
    );
    check_spec_err(
        &format!("{base} params(X = [8], Y = [8], THREADS = [1], THREADS = X * Y)"),
        TEMPLATE,
        Loc::Derived(0),
        "candidates and a derived value",
    );
    // The baseline (first candidates) must meet every constraint on every shape.
    check_spec_err(
        &format!("{base} params(X = [8], Y = [8], THREADS = X * Y), constraints(THREADS <= 32)"),
        TEMPLATE,
        Loc::Constraint(0),
        "the baseline (THREADS = 64) breaks `THREADS <= 32`",
    );
    check_spec_err(
        &format!("{base} params(X = [8], Y = [8], THREADS = X * Y), constraints(n % THREADS == 0)"),
        TEMPLATE,
        Loc::Constraint(0),
        "on shape (n = 3583)",
    );
    check_spec_err(
        &format!("{base} params(X = [8], Y = [8], THREADS = X * Y), constraints(m > 1)"),
        TEMPLATE,
        Loc::Constraint(0),
        "`m` is neither an `override` of the WGSL nor a size",
    );
}

/// A GEMV computing `OUTPUTS_PER_WG` outputs per workgroup, `SPLIT` lanes per output.
const GEMV: &str = r#"
override OUTPUTS_PER_WG: u32;
override SPLIT: u32 = 2u;
override ROWS: u32;
override SCALE: f32 = 1.0;
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) l: u32, @builtin(workgroup_id) w: vec3<u32>) {
    let row = w.x * OUTPUTS_PER_WG + l / SPLIT;
    if (l < ROWS && row < arrayLength(&y) && l % SPLIT == 0u) {
        y[row] = SCALE * a[row] * x[0];
    }
}
"#;

const GEMV_BIND: &str =
    r#"source = "", sizes(m = 1000), bind(a = input(m), x = input(m), y = output(m)), "#;

#[test]
fn a_launch_rule_may_use_parameters_and_the_baseline_carries_their_values() {
    let k = resolve_attr(
        &format!(
            "{GEMV_BIND} workgroups = (cdiv(m, OUTPUTS_PER_WG)), \
             params(OUTPUTS_PER_WG = [4, 16], ROWS = OUTPUTS_PER_WG * SPLIT)"
        ),
        GEMV,
    )
    .unwrap();
    assert_eq!(
        k.baseline.constants_pairs(),
        vec![("OUTPUTS_PER_WG", 4.0), ("ROWS", 8.0)]
    );
    assert_eq!(
        k.baseline
            .workgroups(|n| k.tune_shapes[0].get(n).copied(), 65535),
        Ok([250, 1, 1])
    );
    // A parameter with a WGSL default, and a derived one, get a baseline constant too once the
    // launch rule reads them; the hash follows.
    let k2 = resolve_attr(
        &format!(
            "{GEMV_BIND} workgroups = (cdiv(m, SPLIT), cdiv(m, ROWS)), \
             params(OUTPUTS_PER_WG = [4, 16], SPLIT = [2, 4], ROWS = OUTPUTS_PER_WG * SPLIT)"
        ),
        GEMV,
    )
    .unwrap();
    assert_eq!(
        k2.baseline.constants_pairs(),
        vec![("OUTPUTS_PER_WG", 4.0), ("ROWS", 8.0), ("SPLIT", 2.0)]
    );
    assert_eq!(
        k2.baseline
            .workgroups(|n| (n == "m").then_some(1000), 65535),
        Ok([500, 125, 1])
    );
    assert_ne!(k.content_hash, k2.content_hash);
}

#[test]
fn launch_rule_names_that_are_not_sizes_or_parameters_are_located() {
    let params = "params(OUTPUTS_PER_WG = [4], ROWS = OUTPUTS_PER_WG)";
    // An override left out of `params(..)`: the hint says how to tune it.
    check_spec_err(
        &format!("{GEMV_BIND} workgroups = (cdiv(m, SPLIT)), {params}"),
        GEMV,
        Loc::Dispatch,
        "tune the override: `params(SPLIT = [..])`",
    );
    // A name that is nothing: the hint offers a size or a parameter, and the nearest name.
    check_spec_err(
        &format!("{GEMV_BIND} workgroups = (cdiv(m, OUTPUTS_PER_W)), {params}"),
        GEMV,
        Loc::Dispatch,
        "did you mean `OUTPUTS_PER_WG`?",
    );
    check_spec_err(
        &format!("{GEMV_BIND} workgroups = (cdiv(m, T)), {params}"),
        GEMV,
        Loc::Dispatch,
        "an `override T: u32;` in the WGSL with `params(T = [..])`",
    );
    match resolve_attr(
        &format!("{GEMV_BIND} workgroups = (cdiv(m, T)), {params}"),
        GEMV,
    ) {
        Err(ResolveError::Spec(errors)) => {
            assert_eq!(errors.len(), 1, "{errors:#?}");
            assert_eq!(errors[0].culprit.as_deref(), Some("T"));
        }
        other => panic!("{other:?}"),
    }
    // A float parameter cannot count workgroups.
    check_spec_err(
        &format!(
            "{GEMV_BIND} workgroups = (m * SCALE), params(OUTPUTS_PER_WG = [4], ROWS = OUTPUTS_PER_WG, SCALE = [1.0, 2.0])"
        ),
        GEMV,
        Loc::Dispatch,
        "`override SCALE` is `f32`; a launch rule counts with integers",
    );
    // A name that is a size and a parameter at once is ambiguous.
    check_spec_err(
        r#"source = "", sizes(m = 1000, SPLIT = 2), bind(a = input(m), x = input(m), y = output(m)),
           workgroups = (cdiv(m, SPLIT)), params(OUTPUTS_PER_WG = [4], ROWS = OUTPUTS_PER_WG, SPLIT = [2])"#,
        GEMV,
        Loc::Dispatch,
        "`SPLIT` is both a size and a parameter",
    );
    // Lengths stay over sizes: every variant runs on the same buffers.
    check_spec_err(
        &format!(
            r#"source = "", sizes(m = 1000), bind(a = input(m), x = input(m), y = output(m * OUTPUTS_PER_WG)),
               workgroups = (cdiv(m, OUTPUTS_PER_WG)), {params}"#
        ),
        GEMV,
        Loc::BindingLen(2),
        "only the launch rule may use parameters",
    );
    // The baseline's values must launch on every shape.
    check_spec_err(
        &format!(
            "{GEMV_BIND} workgroups = (cdiv(m, OUTPUTS_PER_WG)), params(OUTPUTS_PER_WG = [0, 4], ROWS = OUTPUTS_PER_WG)"
        ),
        GEMV,
        Loc::Dispatch,
        "division by zero",
    );
}

const BLUR: &str = r#"
@group(0) @binding(0) var src: texture_2d<f32>;
@group(0) @binding(1) var smp: sampler;
@group(0) @binding(2) var dst: texture_storage_2d<rgba8unorm, write>;
@group(0) @binding(3) var hist: texture_storage_2d_array<r32uint, read_write>;
@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let s = textureSampleLevel(src, smp, vec2<f32>(g.xy) / 64.0, 0.0);
    textureStore(dst, g.xy, s);
    let h = textureLoad(hist, g.xy, 0);
    textureStore(hist, g.xy, 0, h + vec4<u32>(1u));
}
"#;

#[test]
fn textures_and_samplers_reflect_and_resolve() {
    let r = reflect(BLUR, None, "b.wgsl").unwrap().interface;
    assert_eq!(
        r.bindings.iter().map(|b| b.kind).collect::<Vec<_>>(),
        vec![
            BindingKind::SampledTexture {
                dim: TextureDim::D2,
                sample: SampleType::Float { filterable: true }
            },
            BindingKind::Sampler { filtering: true },
            BindingKind::StorageTexture {
                dim: TextureDim::D2,
                format: TexelFormat::Rgba8unorm,
                access: TextureAccess::Write
            },
            BindingKind::StorageTexture {
                dim: TextureDim::D2Array,
                format: TexelFormat::R32uint,
                access: TextureAccess::ReadWrite
            },
        ]
    );
    let k = resolve_attr(
        r#"source = "", sizes(w = 64, h = 32, layers = 3),
           bind(src = texture(w, h, format = rgba32float), dst = storage_texture(w, h),
                hist = storage_texture(w, h, layers, range(0, 8))),
           grid = (w, h)"#,
        BLUR,
    )
    .unwrap();
    let roles: Vec<Role> = k.buffers.iter().map(|b| b.role).collect();
    assert_eq!(
        roles,
        vec![Role::Input, Role::Sampler, Role::Output, Role::Inout]
    );
    // rgba32float cannot be filtered: the texture and every sampler are declared so.
    assert_eq!(
        k.interface.bindings[0].kind,
        BindingKind::SampledTexture {
            dim: TextureDim::D2,
            sample: SampleType::Float { filterable: false }
        }
    );
    assert_eq!(
        k.interface.bindings[1].kind,
        BindingKind::Sampler { filtering: false }
    );
    let shape = &k.tune_shapes[0];
    assert_eq!(k.buffers[0].len_on(shape).unwrap(), 64 * 32);
    assert_eq!(k.buffers[0].byte_size(shape).unwrap(), 64 * 32 * 16);
    assert_eq!(k.buffers[3].extent_on(shape).unwrap(), [64, 32, 3]);
    assert_eq!(
        k.buffers[2].layout().scalars(2).count(),
        8,
        "4 channels x 2 texels"
    );
    // A variant's reflected interface (filterable by default) still fits the resolved one.
    assert!(k.interface.mismatches(&r).is_empty());
}

#[test]
fn texture_spec_mistakes_are_located() {
    let base = r#"source = "", sizes(w = 64, h = 32), grid = (w, h), "#;
    check_spec_err(
        &format!("{base} bind(dst = storage_texture(w, h), hist = storage_texture(w, h, 2))"),
        BLUR,
        Loc::Attr,
        "texture `src` (`texture_2d<f32>`) is not described",
    );
    check_spec_err(
        &format!(
            "{base} bind(src = texture(w), dst = storage_texture(w, h), hist = storage_texture(w, h, 2))"
        ),
        BLUR,
        Loc::BindingLen(0),
        "takes 2 extent(s), 1 given",
    );
    check_spec_err(
        &format!(
            "{base} bind(src = texture(w, h, format = r32uint), dst = storage_texture(w, h), hist = storage_texture(w, h, 2))"
        ),
        BLUR,
        Loc::BindingRole(0),
        "texels read as another type",
    );
    check_spec_err(
        &format!(
            "{base} bind(src = input(w), dst = storage_texture(w, h), hist = storage_texture(w, h, 2))"
        ),
        BLUR,
        Loc::BindingRole(0),
        "describe it with its extents: `src = texture(width, height)`",
    );
    check_spec_err(
        &format!(
            "{base} bind(src = texture(w, h), smp = input(w), dst = storage_texture(w, h), hist = storage_texture(w, h, 2))"
        ),
        BLUR,
        Loc::BindingRole(1),
        "samplers need no description",
    );
    check_spec_err(
        &format!(
            "{base} bind(src = texture(w, h), dst = storage_texture(w, h, format = rgba16float), hist = storage_texture(w, h, 2))"
        ),
        BLUR,
        Loc::BindingRole(1),
        "its format is `rgba8unorm`, not `rgba16float`",
    );
    check_spec_err(
        &format!(
            "{base} bind(src = texture(w, h), dst = storage_texture(w, h, range(0.0, 1.0)), hist = storage_texture(w, h, 2))"
        ),
        BLUR,
        Loc::BindingRole(1),
        "write-only",
    );
}

#[test]
fn fixed_size_values_must_match_the_scalars() {
    let wgsl = r#"
@group(0) @binding(0) var<storage, read> dims: vec2<u32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < dims.x * dims.y) { y[g.x] = f32(dims.x); }
}
"#;
    let base = r#"source = "", sizes(rows = 4, cols = 6), grid = (rows * cols), "#;
    let k = resolve_attr(
        &format!("{base} bind(dims = input(values(rows, cols)), y = output(rows * cols))"),
        wgsl,
    )
    .unwrap();
    assert!(matches!(&k.buffers[0].init, Some(Init::Values(v)) if v.len() == 2));
    check_spec_err(
        &format!("{base} bind(dims = input(values(rows)), y = output(rows * cols))"),
        wgsl,
        Loc::BindingRole(0),
        "holds 2 scalar(s); 1 value(s) given",
    );
    check_spec_err(
        &format!("{base} bind(dims = input(values(rows, cols)), y = input(rows, values(rows)))"),
        wgsl,
        Loc::BindingRole(1),
        "runtime-sized",
    );
}

#[test]
fn structured_distributions_must_fit_their_buffer() {
    let wgsl = r#"
@group(0) @binding(0) var<storage, read> mask: array<f32>;
@group(0) @binding(1) var<storage, read> probs: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> ids: array<u32>;
@group(0) @binding(3) var<storage, read> w: array<i32>;
@group(0) @binding(4) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    if (i < arrayLength(&y)) {
        y[i] = mask[i] + probs[i].x + f32(ids[i]) + f32(w[i]);
    }
}
"#;
    let attr = |mask: &str, w: &str| {
        format!(
            r#"source = "", sizes(heads = 2, rows = 4, cols = 8, vocab = 100),
            bind(mask = {mask}, probs = input(rows * cols, probabilities(4 * cols)),
                 ids = input(rows, range(0, vocab)), w = {w}, y = output(rows * cols)),
            grid = (rows * cols)"#
        )
    };
    let ok = attr(
        "input(heads * rows * cols, causal_mask(rows, cols))",
        "input(rows, bits())",
    );
    let k = resolve_attr(&ok, wgsl).unwrap();
    assert!(matches!(k.buffers[0].init, Some(Init::CausalMask(..))));
    // The wrong element type, on the distribution's token, with a hint.
    check_spec_err(
        &ok.replace(
            "input(rows, bits())",
            "input(rows, causal_mask(rows, cols))",
        ),
        wgsl,
        Loc::BindingRole(3),
        "fills float (`f32`, `f16`) scalars; binding `w` is `array<i32>`",
    );
    check_spec_err(
        &ok.replace("causal_mask(rows, cols))", "bits())"),
        wgsl,
        Loc::BindingRole(0),
        "`bits()` fills integers",
    );
    // A length that holds no whole number of masks, on the shape it fails on.
    check_spec_err(
        &ok.replace("heads * rows * cols,", "rows * cols + 1,"),
        wgsl,
        Loc::BindingRole(0),
        "repeats every 32 scalars, which does not divide the buffer's 33",
    );
    check_spec_err(
        &ok.replace("heads * rows * cols,", "rows * cols + 1,"),
        wgsl,
        Loc::BindingRole(0),
        "give the buffer a whole number of rows x cols masks",
    );
    // Rows of vec4s count scalars: each of `rows * cols` vec4 holds 4.
    check_spec_err(
        &ok.replace("probabilities(4 * cols)", "probabilities(3 * cols)"),
        wgsl,
        Loc::BindingRole(1),
        "repeats every 24 scalars",
    );
    check_spec_err(
        &ok.replace("causal_mask(rows, cols)", "causal_mask(rows, colz)"),
        wgsl,
        Loc::BindingRole(0),
        "size `colz` is not declared",
    );
}

/// SAXPY with a tunable override, to edit every part of a spec.
const SAXPY_WG: &str = r#"
struct Params { n: u32, a: f32 }
override WG: u32 = 64;
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < p.n) { y[g.x] = p.a * x[g.x] + y[g.x]; }
}
"#;

/// The attribute with `edit` replacing `from`.
fn saxpy_wg(from: &str, edit: &str) -> ResolvedKernel {
    let base = r#"source = "", sizes(n = 1000, m = 1000), bind(x = input(n), y = inout(n), p = uniform(n, 2.0)), grid = (n)"#;
    assert!(
        from.is_empty() || base.contains(from),
        "`{from}` is in the base"
    );
    let attr = if from.is_empty() {
        format!("{base}, {edit}")
    } else {
        base.replace(from, edit)
    };
    resolve_attr(&attr, SAXPY_WG).unwrap_or_else(|e| panic!("{attr}: {e}"))
}

#[test]
fn every_correctness_relevant_edit_changes_the_content_hash() {
    let base = saxpy_wg("", "flops = 2 * n").content_hash;
    let mut seen = std::collections::HashSet::new();
    for (from, edit) in [
        ("y = inout(n)", "y = output(n)"),
        ("x = input(n)", "x = input(m)"),
        ("x = input(n)", "x = input(n, range(0.0, 1.0))"),
        ("x = input(n)", "x = input(n, constant(1.0))"),
        ("x = input(n)", "x = input(n, causal_mask(1, n))"),
        ("x = input(n)", "x = input(n, causal_mask(n, 1))"),
        ("x = input(n)", "x = input(n, probabilities(n))"),
        ("uniform(n, 2.0)", "uniform(n, 3.0)"),
        ("uniform(n, 2.0)", "uniform(m, 2.0)"),
        ("", "tolerance = 1e-3"),
        ("", "verify_shapes = [(n = 77)]"),
        ("grid = (n)", "workgroups = (n / 64)"),
    ] {
        let hash = saxpy_wg(from, edit).content_hash;
        assert_ne!(
            hash, base,
            "`{from}` → `{edit}` must give the kernel a new content hash"
        );
        assert!(
            seen.insert(hash),
            "`{edit}` shares its hash with another edit"
        );
    }
    // Partial verify shapes are completed from `sizes(..)`, so a new default changes them too;
    // without verify shapes, a default only moves the tune shapes (speed).
    let verify = "sizes(n = 1000, m = 1000), verify_shapes = [(n = 77)]";
    assert_ne!(
        saxpy_wg("sizes(n = 1000, m = 1000)", verify).content_hash,
        saxpy_wg(
            "sizes(n = 1000, m = 1000)",
            &verify.replace("m = 1000", "m = 999")
        )
        .content_hash,
    );
    assert_eq!(
        saxpy_wg("sizes(n = 1000, m = 1000)", "sizes(n = 1000, m = 999)").content_hash,
        base,
    );
}

#[test]
fn speed_only_edits_keep_the_hash_and_change_the_tuning_record() {
    let base = saxpy_wg("", "flops = 2 * n");
    for (from, edit) in [
        ("", "tune_shapes = [(n = 4096)]"),
        ("", "params(WG = [32, 64, 128])"),
        ("", "tolerance = 1e-4"), // the default, written out
        ("flops = 2 * n", "flops = 3 * n"),
    ] {
        let edited = if from.is_empty() {
            saxpy_wg("", &format!("flops = 2 * n, {edit}"))
        } else {
            saxpy_wg("", edit)
        };
        assert_eq!(
            edited.content_hash, base.content_hash,
            "`{edit}` decides speed only"
        );
    }
    let retuned = saxpy_wg("", "tune_shapes = [(n = 4096)], params(WG = [32])");
    assert_eq!(
        base.tuning().changes(&retuned.tuning()),
        vec![
            "tune shapes changed from [(m = 1000, n = 1000)] to [(m = 1000, n = 4096)]",
            "params(WG = [32]) was added",
        ]
    );
}

#[test]
fn misspelled_names_get_a_suggestion() {
    let base = r#"source = "", sizes(rows = 1000), "#;
    check_spec_err(
        &format!("{base} bind(xs = input(rows), y = inout(rows), p = uniform(rows, 1.0))"),
        SAXPY,
        Loc::Binding(0),
        "did you mean `x`?",
    );
    check_spec_err(
        &format!("{base} bind(x = input(row), y = inout(rows), p = uniform(rows, 1.0))"),
        SAXPY,
        Loc::BindingLen(0),
        "did you mean `rows`?",
    );
    check_spec_err(
        &format!(
            "{base} bind(x = input(rows), y = inout(rows), p = uniform(rows, 1.0)), params(W = [1])"
        ),
        SAXPY_WG,
        Loc::Param(0),
        "did you mean `WG`?",
    );
    // Nothing close: no guess.
    match resolve_attr(
        &format!("{base} bind(zzz = input(rows), y = inout(rows), p = uniform(rows, 1.0))"),
        SAXPY,
    ) {
        Err(ResolveError::Spec(errors)) => assert!(
            errors
                .iter()
                .all(|e| !e.hint.as_deref().unwrap_or("").contains("did you mean")),
            "{errors:#?}"
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_baselines_own_constants_and_texture_specs_are_in_the_content_hash() {
    // An override without a default runs the baseline with its first candidate: that is the
    // reference, so reordering the candidates changes the hash; derived values and constraints
    // only change what the search explores.
    let template = |params: &str| {
        resolve_attr(
            &format!(
                r#"source = "", sizes(n = 4096), bind(x = input(n), y = output(n)),
                   workgroups = (cdiv(n, 256)), {params}"#
            ),
            TEMPLATE,
        )
        .unwrap()
    };
    let base = template("params(X = [16, 8], Y = [4, 8], THREADS = X * Y)");
    assert_ne!(
        template("params(X = [8, 16], Y = [4, 8], THREADS = X * Y)").content_hash,
        base.content_hash
    );
    let more = template(
        "params(X = [16, 8, 32], Y = [4, 8], THREADS = X * Y), constraints(THREADS <= 256)",
    );
    assert_eq!(more.content_hash, base.content_hash);
    let changes = base.tuning().changes(&more.tuning());
    assert_eq!(changes.len(), 2, "{changes:?}");
    assert!(changes[1].starts_with("constraints changed"), "{changes:?}");

    let blur = |src: &str| {
        resolve_attr(
            &format!(
                r#"source = "", sizes(w = 64, h = 32, layers = 3),
                   bind(src = {src}, dst = storage_texture(w, h),
                        hist = storage_texture(w, h, layers, range(0, 8))),
                   grid = (w, h)"#
            ),
            BLUR,
        )
        .unwrap()
        .content_hash
    };
    let a = blur("texture(w, h)");
    assert_ne!(blur("texture(w, h, format = rgba32float)"), a);
    assert_ne!(blur("texture(h, w)"), a);
    assert_eq!(blur("texture(w, h)"), a);
}

/// Kernels of one launch hash exactly as they did before launch sequences existed, so the
/// entries committed for them keep matching: the figures were computed before `stages` was added.
#[test]
fn a_kernel_of_one_launch_hashes_as_before_sequences_existed() {
    let saxpy = resolve_attr(
        r#"source = "", sizes(n = 1000), bind(x = input(n), y = inout(n), p = uniform(n, 2.0))"#,
        SAXPY,
    )
    .unwrap();
    let rows = resolve_attr(
        r#"source = "", sizes(n = 1000), bind(x = input(n), y = inout(n), p = uniform(n, 2.0)), workgroups = (cdiv(n, 64)), tolerance = 1e-3"#,
        SAXPY,
    )
    .unwrap();
    assert_eq!(
        [saxpy.content_hash.as_str(), rows.content_hash.as_str()],
        ["802e4a3bdda4b056", "6db38a5a058390e9"]
    );
}

/// A two-pass sum: per-workgroup partial sums into a scratch buffer, then one invocation.
const TWO_PASS: &str = r#"
override WG: u32 = 64;
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> partials: array<f32>;
@group(0) @binding(2) var<storage, read_write> total: array<f32>;
var<workgroup> acc: array<f32, WG>;

@compute @workgroup_size(WG)
fn partial(@builtin(global_invocation_id) g: vec3<u32>, @builtin(local_invocation_index) l: u32,
           @builtin(workgroup_id) w: vec3<u32>) {
    acc[l] = select(0.0, x[g.x], g.x < arrayLength(&x));
    workgroupBarrier();
    if (l == 0u) { var s = 0.0; for (var i = 0u; i < WG; i++) { s += acc[i]; } partials[w.x] = s; }
}

@compute @workgroup_size(1)
fn combine() {
    var s = 0.0;
    for (var i = 0u; i < (arrayLength(&x) + WG - 1u) / WG; i++) { s += partials[i]; }
    total[0] = s;
}
"#;

const TWO_PASS_ATTR: &str = r#"source = "", sizes(n = 1000),
    bind(x = input(n), partials = scratch(n), total = output(1)),
    stages = [(entry = "partial", workgroups = (cdiv(n, WG))), (entry = "combine", workgroups = (1))],
    params(WG = [64, 128])"#;

#[test]
fn a_launch_sequence_resolves_to_a_baseline_with_every_stage() {
    let k = resolve_attr(TWO_PASS_ATTR, TWO_PASS).unwrap();
    assert_eq!(k.baseline.entry, "partial");
    assert_eq!(k.baseline.workgroup_size, [64, 1, 1]);
    assert_eq!(k.baseline.then.len(), 1);
    let combine = &k.baseline.then[0];
    assert_eq!(combine.entry, "combine");
    assert_eq!(combine.workgroup_size, [1, 1, 1]);
    assert_eq!(combine.dispatch.to_string(), "workgroups(1, 1, 1)");
    assert_eq!(
        k.baseline.launch_rule(),
        "partial: workgroups(cdiv(n, WG), 1, 1); combine: workgroups(1, 1, 1)"
    );
    let shape: Shape = [("n".to_string(), 1000)].into_iter().collect();
    assert_eq!(
        k.baseline
            .launch_workgroups(|n| shape.get(n).copied(), 65535)
            .unwrap(),
        vec![[16, 1, 1], [1, 1, 1]]
    );
    assert_eq!(k.buffers[1].role, Role::Scratch);
    assert!(!k.buffers[1].is_compared());
    // The order of the stages is part of what the kernel computes.
    let swapped = TWO_PASS_ATTR.replace(
        r#"stages = [(entry = "partial", workgroups = (cdiv(n, WG))), (entry = "combine", workgroups = (1))]"#,
        r#"stages = [(entry = "combine", workgroups = (1)), (entry = "partial", workgroups = (cdiv(n, WG)))]"#,
    );
    assert_ne!(
        resolve_attr(&swapped, TWO_PASS).unwrap().content_hash,
        k.content_hash
    );
    // The cache entry's program reads back the same, stages included.
    let json = serde_json::to_string(&k.baseline).unwrap();
    assert_eq!(serde_json::from_str::<Program>(&json).unwrap(), k.baseline);
}

#[test]
fn a_bad_stage_is_reported_at_the_stage() {
    // An entry point the module does not have, first or later.
    check_spec_err(
        &TWO_PASS_ATTR.replace(r#"entry = "combine""#, r#"entry = "combin""#),
        TWO_PASS,
        Loc::Stage(1),
        "entry point `combin` not found; the module's compute entry points are `partial`, `combine`",
    );
    check_spec_err(
        &TWO_PASS_ATTR.replace(r#"entry = "partial""#, r#"entry = "partials""#),
        TWO_PASS,
        Loc::Stage(0),
        "each stage's `entry` must name a `@compute` function",
    );
    // A binding a stage uses that `bind(..)` leaves out: no default role is safe in a sequence.
    check_spec_err(
        &TWO_PASS_ATTR.replace("partials = scratch(n), ", ""),
        TWO_PASS,
        Loc::Stage(0),
        "stage 1 (`partial`) uses binding `partials`",
    );
    check_spec_err(
        &TWO_PASS_ATTR.replace("partials = scratch(n), ", ""),
        TWO_PASS,
        Loc::Stage(0),
        "`bind(partials = scratch(len))`",
    );
    // A launch rule over a name that is neither a size nor a parameter, at its stage.
    check_spec_err(
        &TWO_PASS_ATTR.replace("workgroups = (1)", "workgroups = (m)"),
        TWO_PASS,
        Loc::StageDispatch(1),
        "`m` is neither a size declared in `sizes(..)` nor a parameter",
    );
}

#[test]
fn a_variant_of_a_sequence_is_checked_at_every_stage() {
    let k = resolve_attr(TWO_PASS_ATTR, TWO_PASS).unwrap();
    let mut p = k.baseline.clone();
    p.constants = Cow::Owned(vec![(Cow::Borrowed("WG"), 128.0)]);
    let checked = crate::variant::check(&k, &p).unwrap();
    assert_eq!(checked.workgroup_size, [128, 1, 1]);
    assert_eq!(checked.workgroup_storage_bytes, 512);
    assert_eq!(checked.stages.len(), 1);
    assert_eq!(checked.stages[0].workgroup_size, [1, 1, 1]);
    // A later stage naming an entry point the variant lacks does not fit.
    let mut then = p.then.to_vec();
    then[0].entry = Cow::Borrowed("finish");
    p.then = then.into();
    assert!(matches!(
        crate::variant::check(&k, &p),
        Err(crate::variant::VariantError::Wgsl(ReflectError::Entry(m))) if m.contains("`finish`")
    ));
}

#[test]
fn derived_verification_shapes_keep_the_size_constraints_and_views_need_them() {
    let base = r#"path = "k.wgsl", sizes(n = 4096), bind(x = input(n), y = inout(n), p = uniform(n, 2.0)), grid = (n)"#;
    // Without a constraint: the odd neighbour.
    let free = resolve_attr(base, SAXPY).unwrap();
    assert_eq!(free.verify_shapes[0]["n"], 3583);
    // With one: the closest value below it that keeps it, still unseen by the search.
    let k = resolve_attr(&format!("{base}, constraints(n % 4 == 0)"), SAXPY).unwrap();
    assert_eq!(k.verify_shapes[0]["n"], 3580);
    assert_eq!(k.size_constraints().len(), 1);
    // An array<vec4<f32>> view of `x` is no interface change with the constraint, and is one
    // without it (naming the constraint that would allow it).
    let viewed = SAXPY
        .replace(
            "var<storage, read> x: array<f32>;",
            "var<storage, read> x: array<vec4<f32>>;",
        )
        .replace("p.a * x[g.x]", "p.a * x[g.x / 4u][g.x % 4u]");
    let r = reflect(&viewed, Some("main"), "v.wgsl").unwrap();
    assert!(k.mismatches(&r.interface).is_empty());
    let m = free.mismatches(&r.interface);
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(m[0].contains("constraints(n % 4 == 0)"), "{m:?}");
    // A vec3 "view" is never the same buffer.
    let vec3 = SAXPY
        .replace(
            "var<storage, read> x: array<f32>;",
            "var<storage, read> x: array<vec3<f32>>;",
        )
        .replace("p.a * x[g.x]", "p.a * x[g.x / 3u][g.x % 3u]");
    let r = reflect(&vec3, Some("main"), "v.wgsl").unwrap();
    assert_eq!(k.mismatches(&r.interface).len(), 1);
    // The other way round: a vec4 baseline read as scalars is the same buffer, with or without
    // a constraint; a vec4 of u32 is not.
    let vectors = reflect(&viewed, Some("main"), "v.wgsl").unwrap().interface;
    let scalars = reflect(SAXPY, Some("main"), "s.wgsl").unwrap().interface;
    assert!(vectors.mismatches(&scalars).is_empty());
    let words = SAXPY
        .replace(
            "var<storage, read> x: array<f32>;",
            "var<storage, read> x: array<u32>;",
        )
        .replace("p.a * x[g.x]", "p.a * bitcast<f32>(x[g.x])");
    let words = reflect(&words, Some("main"), "u.wgsl").unwrap().interface;
    assert_eq!(vectors.mismatches(&words).len(), 1);
}

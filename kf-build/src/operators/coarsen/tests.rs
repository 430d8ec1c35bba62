//! Tests of thread coarsening on the corpus.

use super::*;
use crate::operators::testkit::{self, apply, check_valid};

fn corpus_kernel(name: &str) -> kf_runtime::resolve::ResolvedKernel {
    testkit::corpus()
        .into_iter()
        .find(|k| k.name == name)
        .unwrap()
        .kernel
}

#[test]
fn the_corpus_fires_and_skips_as_its_headers_say() {
    let corpus = testkit::corpus();
    assert!(
        corpus
            .iter()
            .filter(|k| k.fires.iter().any(|f| f == "coarsen"))
            .count()
            >= 8
    );
    for k in &corpus {
        let result = apply(&Coarsen, &k.kernel, &testkit::lavapipe());
        if k.fires.iter().any(|f| f == "coarsen") {
            let rewrites = result.unwrap_or_else(|e| panic!("{}: skipped: {e}", k.name));
            assert_eq!(rewrites.len(), 6, "{}", k.name);
            for r in &rewrites {
                check_valid(&k.kernel, r);
                assert_eq!(r.program.dispatch.mode, DispatchMode::Grid);
            }
        } else if k.skips.iter().any(|f| f == "coarsen") {
            assert!(result.is_err(), "{}: must skip", k.name);
        }
    }
}

#[test]
fn saxpy_calls_the_original_body_k_times() {
    let kernel = corpus_kernel("saxpy.wgsl");
    let rewrites = apply(&Coarsen, &kernel, &testkit::lavapipe()).unwrap();
    let steps: Vec<&str> = rewrites.iter().map(|r| r.step.as_str()).collect();
    assert_eq!(
        steps,
        [
            "coarsen(2, contiguous, x)",
            "coarsen(2, strided, x)",
            "coarsen(4, contiguous, x)",
            "coarsen(4, strided, x)",
            "coarsen(8, contiguous, x)",
            "coarsen(8, strided, x)",
        ]
    );
    let four = &rewrites[2];
    let text = &four.program.wgsl;
    assert!(
        text.contains("\nfn kf_coarse_main(gid: vec3<u32>) {"),
        "{text}"
    );
    assert!(
        text.contains("        y[i] = p.a * x[i] + y[i];"),
        "the body is kept: {text}"
    );
    assert!(text.contains("@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) kf_gid: vec3<u32>) {"), "{text}");
    assert!(
        text.contains("kf_coarse_main(vec3<u32>(kf_gid.x * 4u + kf_k, kf_gid.y, kf_gid.z));"),
        "{text}"
    );
    assert_eq!(four.program.dispatch.to_string(), "grid((n + 3) / 4, 1, 1)");
    let strided = &rewrites[3].program.wgsl;
    for expected in [
        "override KF_COARSEN_WG: u32 = 64u;",
        "@compute @workgroup_size(KF_COARSEN_WG)",
        "let kf_stride = kf_groups.x * KF_COARSEN_WG;",
    ] {
        assert!(
            strided.contains(expected),
            "missing `{expected}`: {strided}"
        );
    }
    assert!(
        strided.contains(
            "kf_coarse_main(vec3<u32>(kf_gid.x + kf_k * kf_stride, kf_gid.y, kf_gid.z));"
        ),
        "{strided}"
    );
}

#[test]
fn the_coarsened_dimension_is_the_one_bounds_checked_and_contiguous() {
    let r = &apply(
        &Coarsen,
        &corpus_kernel("rmsnorm_while_gid_y.wgsl"),
        &testkit::lavapipe(),
    )
    .unwrap()[0];
    // The kernel's `while` loop reaches coarsen as a `for` (the canonical form).
    assert_eq!(
        r.step,
        "canon(for ×2, zero-init) → coarsen(2, contiguous, y)"
    );
    assert_eq!(r.program.dispatch.to_string(), "grid(1, (rows + 1) / 2, 1)");
    let r = &apply(
        &Coarsen,
        &corpus_kernel("add_2d.wgsl"),
        &testkit::lavapipe(),
    )
    .unwrap()[1];
    assert_eq!(r.step, "coarsen(2, strided, x)");
    let text = &r.program.wgsl;
    assert!(text.contains("@workgroup_size(KF_COARSEN_WG, 4)"), "{text}");
    assert!(
        text.contains("let kf_stride = kf_groups.x * KF_COARSEN_WG;"),
        "{text}"
    );
}

#[test]
fn unguarded_kernels_and_other_builtins_skip() {
    let unguarded = testkit::resolve(
        "K",
        "sizes(n = 1024), bind(x = input(n), y = output(n)), grid = (n)",
        "@group(0) @binding(0) var<storage, read> x: array<f32>;\n@group(0) @binding(1) var<storage, read_write> y: array<f32>;\n@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) { y[g.x] = 2.0 * x[g.x]; }\n",
    );
    let why = apply(&Coarsen, &unguarded, &testkit::lavapipe())
        .unwrap_err()
        .0;
    assert!(why.contains("no bounds test"), "{why}");
    // A guard after the store does not count.
    let late = testkit::resolve(
        "K",
        "sizes(n = 1024), bind(x = input(n), y = output(n)), grid = (n)",
        "@group(0) @binding(0) var<storage, read> x: array<f32>;\n@group(0) @binding(1) var<storage, read_write> y: array<f32>;\n@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) { y[g.x] = 2.0 * x[g.x]; if (g.x >= arrayLength(&y)) { return; } }\n",
    );
    assert!(apply(&Coarsen, &late, &testkit::lavapipe()).is_err());
    let why = apply(
        &Coarsen,
        &corpus_kernel("local_id_tiles.wgsl"),
        &testkit::lavapipe(),
    )
    .unwrap_err()
    .0;
    assert!(why.contains("LocalInvocationId"), "{why}");
}

#[test]
fn a_flattened_index_with_a_constant_extent_is_coarsened_within_the_original_ids() {
    let r = apply(
        &Coarsen,
        &corpus_kernel("gelu_flat_rows.wgsl"),
        &testkit::lavapipe(),
    )
    .unwrap();
    let strided4 = r
        .iter()
        .find(|r| r.step == "coarsen(4, strided, x)")
        .unwrap();
    // 64 ids per row, four per invocation: 16 invocations along x.
    assert_eq!(
        strided4.program.dispatch.to_string(),
        "grid(16, (n + 63) / 64, 1)"
    );
    let text = &strided4.program.wgsl;
    for expected in [
        "let kf_id = kf_gid.x + kf_k * kf_stride;",
        "if (kf_id < 64u) {",
        "kf_coarse_main(vec3<u32>(kf_id, kf_gid.y, kf_gid.z));",
    ] {
        assert!(text.contains(expected), "missing `{expected}`: {text}");
    }
    // A 48-wide row launched in 32-wide workgroups ran ids up to 63: the rewrite keeps them.
    let r = apply(
        &Coarsen,
        &corpus_kernel("scale_rows_ragged_wg.wgsl"),
        &testkit::lavapipe(),
    )
    .unwrap();
    let contiguous8 = r
        .iter()
        .find(|r| r.step == "coarsen(8, contiguous, x)")
        .unwrap();
    assert_eq!(
        contiguous8.program.dispatch.to_string(),
        "grid(8, (n + 47) / 48, 1)"
    );
    let text = &contiguous8.program.wgsl;
    assert!(text.contains("let kf_id = kf_gid.x * 8u + kf_k;"), "{text}");
    assert!(text.contains("if (kf_id < 64u) {"), "{text}");
}

#[test]
fn an_unguarded_id_with_a_size_dependent_extent_skips() {
    let k = testkit::resolve(
        "K",
        "sizes(n = 1000), bind(x = input(n), y = output(n), p = uniform(n)), grid = (n / 10, 10)",
        "struct P { n: u32 }\n@group(0) @binding(0) var<storage, read> x: array<f32>;\n@group(0) @binding(1) var<storage, read_write> y: array<f32>;\n@group(0) @binding(2) var<uniform> p: P;\n@compute @workgroup_size(20)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) { let i = g.y * 100u + g.x; if (i >= p.n) { return; } y[i] = x[i]; }\n",
    );
    let why = apply(&Coarsen, &k, &testkit::lavapipe()).unwrap_err().0;
    assert!(why.contains("not a constant"), "{why}");
}

#[test]
fn a_negated_early_exit_test_is_a_bounds_test() {
    // The `if (i >= n) { return; }` guard written as a wrapping `if (!(i >= n)) { .. }`, and as a
    // negated upper bound; the launch extent is a size, so only the test can make the ids past `n`
    // do nothing.
    for guard in ["!(i >= n)", "!(n <= i)", "!(i >= n || false)"] {
        let wgsl = format!(
            "@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> n: u32;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
    let i = gid.x;
    if ({guard}) {{ y[i] = 2.0 * x[i]; }}
}}
"
        );
        let k = testkit::resolve(
            "k.wgsl",
            "sizes(n = 100), bind(x = input(n), y = output(n), n = uniform(n)), grid = (n)",
            &wgsl,
        );
        let rws =
            apply(&Coarsen, &k, &testkit::lavapipe()).unwrap_or_else(|e| panic!("`{guard}`: {e}"));
        assert_eq!(rws.len(), 6, "{guard}");
    }
    // A negated lower bound does not keep the ids past `n` out; nor does a test whose branch
    // writes before the `return` naga gives the last statement of a function.
    let wgsl = "@group(0) @binding(0) var<storage, read_write> y: array<f32>;
@group(0) @binding(1) var<uniform> n: u32;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (!(gid.x < n)) { y[0] = 1.0; }
}
";
    let late = "@group(0) @binding(0) var<storage, read_write> y: array<f32>;
@group(0) @binding(1) var<uniform> n: u32;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= n) { y[0] = 1.0; return; }
}
";
    for wgsl in [wgsl, late] {
        let k = testkit::resolve(
            "k.wgsl",
            "sizes(n = 100), bind(y = output(n), n = uniform(n)), grid = (n)",
            wgsl,
        );
        let r = apply(&Coarsen, &k, &testkit::lavapipe());
        assert!(r.is_err(), "{wgsl}");
    }
}

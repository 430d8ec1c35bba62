//! Unit tests of the tune pipeline's pure parts: which `--tune-shape` applies to which kernel.

use super::*;
use kf_runtime::resolve::shape_text;

const WGSL: &str = r#"
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < arrayLength(&y)) { y[g.x] = 2.0 * x[g.x]; }
}
"#;

/// A kernel named `name` over `rows * cols` elements.
fn kernel(name: &str) -> ResolvedKernel {
    let attr = r#"source = "", sizes(rows = 1024, cols = 256), bind(x = input(rows * cols), y = output(rows * cols)), grid = (rows * cols)"#;
    let (spec, _) = kf_runtime::syntax::parse_spec(attr.parse().unwrap()).unwrap();
    kf_runtime::resolve::resolve(name, &spec, WGSL, "k.wgsl").unwrap()
}

fn args(shapes: &[&str]) -> Vec<String> {
    shapes.iter().map(|s| s.to_string()).collect()
}

/// The tune shapes `shapes` give kernel `name`, as text.
#[track_caller]
fn tuned(name: &str, shapes: &[&str]) -> Vec<String> {
    let k = with_tune_shapes(&kernel(name), &args(shapes)).unwrap();
    k.tune_shapes.iter().map(shape_text).collect()
}

#[test]
fn a_qualifier_is_the_identifier_before_the_first_colon() {
    let parse = |t| ShapeArg::parse(t).unwrap();
    assert_eq!(
        parse("rows=4,cols=8"),
        ShapeArg {
            kernel: None,
            sizes: "rows=4,cols=8"
        }
    );
    assert_eq!(
        parse(" GEMM :m=512,n=512"),
        ShapeArg {
            kernel: Some("GEMM"),
            sizes: "m=512,n=512"
        }
    );
    assert_eq!(
        parse("_K2:"),
        ShapeArg {
            kernel: Some("_K2"),
            sizes: ""
        }
    );
    for bad in ["rows=4:cols=8", "2K:n=1", ":n=1", "A B:n=1"] {
        let e = ShapeArg::parse(bad).unwrap_err();
        assert!(e.contains("is not a kernel name") && e.contains(bad), "{e}");
    }
}

#[test]
fn a_kernel_gets_the_unqualified_shapes_and_its_own_in_order() {
    let shapes = args(&["A:rows=1", "rows=2", "B:rows=3", "A:rows=4,cols=5"]);
    assert_eq!(
        shapes_for(&shapes, "A").unwrap(),
        ["rows=1", "rows=2", "rows=4,cols=5"]
    );
    assert_eq!(shapes_for(&shapes, "B").unwrap(), ["rows=2", "rows=3"]);
    assert_eq!(shapes_for(&shapes, "C").unwrap(), ["rows=2"]);
    assert!(shapes_for(&args(&["A:rows=1"]), "C").unwrap().is_empty());
}

#[test]
fn qualified_shapes_replace_only_their_kernels_tune_shapes() {
    let shapes = ["A:rows=8,cols=16", "B:rows=2"];
    assert_eq!(tuned("A", &shapes), ["(cols = 16, rows = 8)"]);
    assert_eq!(tuned("B", &shapes), ["(cols = 256, rows = 2)"]);
    // A kernel no shape applies to keeps the attribute's shapes and verification shapes.
    let c = kernel("C");
    assert_eq!(with_tune_shapes(&c, &args(&shapes)).unwrap(), c);
    // Unqualified shapes apply beside a kernel's own.
    assert_eq!(
        tuned("A", &["cols=4", "A:rows=8"]),
        ["(cols = 4, rows = 1024)", "(cols = 256, rows = 8)"]
    );
    // Derived verification shapes follow the kernel's new tune shapes.
    let a = with_tune_shapes(&kernel("A"), &args(&shapes)).unwrap();
    assert_eq!(
        a.verify_shapes,
        [kf_runtime::resolve::derive_verify_shape(
            &a.tune_shapes[0],
            &[]
        )]
    );
}

#[test]
fn a_shape_for_one_kernel_is_checked_only_against_that_kernel() {
    // `m` is no size of A, but the shape is B's.
    assert_eq!(tuned("A", &["B:m=512"]).len(), 1);
    let e = with_tune_shapes(&kernel("B"), &args(&["B:m=512"])).unwrap_err();
    assert!(
        e.contains("size `m`") && e.contains("kernel B") && e.contains("rows, cols"),
        "{e}"
    );
    let e = with_tune_shapes(&kernel("A"), &args(&["A:rows=0"])).unwrap_err();
    assert!(e.contains("length 0"), "{e}");
    let e = with_tune_shapes(&kernel("A"), &args(&["rows=4:cols=8"])).unwrap_err();
    assert!(e.contains("not a kernel name"), "{e}");
}

#[test]
fn a_qualifier_must_name_a_selected_kernel() {
    let found = ["GEMM", "GEMV", "SOFTMAX"];
    let selected = ["GEMM", "SOFTMAX"];
    let check = |shapes: &[&str]| check_shape_kernels(&args(shapes), &selected, &found);
    check(&["rows=4", "GEMM:m=8", "SOFTMAX:rows=2,cols=4"]).unwrap();
    let typo = check(&["GEMM:m=8", "GEM:m=8"]).unwrap_err();
    assert!(
        typo.contains("`GEM:m=8`")
            && typo.contains("kernel `GEM`")
            && typo.contains("not a kernel of the selection")
            && typo.contains("GEMM, SOFTMAX"),
        "{typo}"
    );
    let left_out = check(&["GEMV:rows=8"]).unwrap_err();
    assert!(
        left_out.contains("`GEMV`") && left_out.contains("selection leaves out"),
        "{left_out}"
    );
    let bad = check(&["1:rows=8"]).unwrap_err();
    assert!(bad.contains("not a kernel name"), "{bad}");
}

#[test]
fn candidates_the_adapter_could_not_launch_are_told_apart_from_wrong_ones() {
    let found = crate::discover::Found {
        package: "p".into(),
        crate_root: "/p".into(),
        name: "K".into(),
        file: "/p/src/lib.rs".into(),
        line: 1,
        skipped: None,
        spec: None,
        resolved: Err("unused".into()),
    };
    let mut k = KernelResult::new(&found);
    k.status = Status::Tuned;
    let stats = |proposed, correct, unlaunchable| crate::search::qd::OperatorStats {
        proposed,
        correct,
        improved: 1,
        unlaunchable,
    };
    k.operators.insert("widen".into(), stats(5, 3, 2));
    k.operators.insert("unroll".into(), stats(4, 4, 0));
    let text = k.text(false);
    assert!(
        text.contains("widen 5 made, 3 correct (2 could not be launched here), 1 improved"),
        "{text}"
    );
    assert!(
        text.contains("unroll 4 made, 4 correct, 1 improved"),
        "{text}"
    );
    // Runs recorded before the count existed read as none.
    let old: crate::search::qd::OperatorStats =
        serde_json::from_str(r#"{"proposed":1,"correct":0,"improved":0}"#).unwrap();
    assert_eq!(old.unlaunchable, 0);
}

#[test]
fn a_loop_that_keeps_the_counter_is_named_with_why() {
    let k = kernel("K");
    assert_eq!(
        loop_bound_note(&k.baseline),
        None,
        "no loop, nothing to say"
    );
    let mut program = k.baseline.clone();
    program.wgsl = r#"
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    var i = g.x;
    loop { if (x[i] < 0.0) { break; } i = i + 1u; }
    y[g.x] = f32(i);
}
"#
    .into();
    let note = loop_bound_note(&program).expect("a data-dependent loop keeps the counter");
    assert!(note.contains("exit test"), "{note}");
    program.wgsl = program
        .wgsl
        .replace("x[i] < 0.0", "i >= arrayLength(&x)")
        .into();
    assert_eq!(loop_bound_note(&program), None, "a counted loop is proven");
}

#[test]
fn the_notes_name_the_constraint_that_would_let_tile_take_an_unguarded_matmul() {
    let wgsl = r#"
struct Dims { m: u32, n: u32, k: u32 }
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;
@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    var acc = 0.0;
    for (var i = 0u; i < dims.k; i++) { acc += a[gid.y * dims.k + i] * b[i * dims.n + gid.x]; }
    c[gid.y * dims.n + gid.x] = acc;
}
"#;
    let notes = |constraints: &str| {
        let attr = format!(
            r#"source = "", sizes(m = 32, n = 32, k = 16), bind(a = input(m * k), b = input(k * n), c = output(m * n), dims = uniform(m, n, k)), grid = (n, m){constraints}"#
        );
        let (spec, _) = kf_runtime::syntax::parse_spec(attr.parse().unwrap()).unwrap();
        let k = kf_runtime::resolve::resolve("MM", &spec, wgsl, "mm.wgsl").unwrap();
        kernel_notes(&k).join("\n")
    };
    let loose = notes("");
    assert!(
        loose.contains("tile") && loose.contains("constraints(n % 8 == 0, m % 8 == 0)"),
        "{loose}"
    );
    // With the launch exact there is nothing to say of tile.
    let exact = notes(", constraints(m % 8 == 0, n % 8 == 0)");
    assert!(!exact.contains("tile"), "{exact}");
}

//! Lifting a workgroup size used in the body: the roles it proves and the literals it refuses.

use super::*;
use crate::operators::testing::{apply, kernel};

/// A sum reduction with a hard-coded 256-invocation workgroup, as people write it.
const REDUCE: &str = r#"
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> partial: array<f32>;
var<workgroup> tile: array<f32, 256>;
@compute @workgroup_size(256)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = arrayLength(&x);
    var acc = 0.0;
    for (var i = wid.x * 256u + lid.x; i < n; i += 256u * nwg.x) {
        acc += x[i];
    }
    tile[lid.x] = acc;
    workgroupBarrier();
    for (var s = 256u / 2u; s > 0u; s >>= 1u) {
        if (lid.x < s) {
            tile[lid.x] += tile[lid.x + s];
        }
        workgroupBarrier();
    }
    if (lid.x == 0u) {
        partial[wid.x] = tile[0];
    }
}
"#;
const ATTR: &str =
    r#"source = "", sizes(n = 4096), bind(x = input(n), partial = output(4)), workgroups = (4)"#;

/// One workgroup per row: the sum of each row does not depend on the workgroup size.
const ROWS: &str = r#"
struct Dims { rows: u32, cols: u32 }
@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> sums: array<f32>;
var<workgroup> tile: array<f32, 256>;
@compute @workgroup_size(256)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = wid.x;
    var acc = 0.0;
    for (var i = lid.x; i < dims.cols; i += 256u) {
        acc += x[row * dims.cols + i];
    }
    tile[lid.x] = acc;
    workgroupBarrier();
    for (var s = 256u / 2u; s > 0u; s >>= 1u) {
        if (lid.x < s) {
            tile[lid.x] += tile[lid.x + s];
        }
        workgroupBarrier();
    }
    if (lid.x == 0u) {
        sums[row] = tile[0];
    }
}
"#;
const ROWS_ATTR: &str = r#"source = "", sizes(rows = 4, cols = 1000), bind(dims = uniform(rows, cols), x = input(rows * cols), sums = output(rows)), workgroups = (rows)"#;

#[test]
fn a_row_reduction_with_a_literal_workgroup_is_lifted() {
    let k = kernel(ROWS, ROWS_ATTR);
    let rws = apply(&LiftWorkgroupSize, &k).unwrap();
    let w = &rws[0].program.wgsl;
    assert!(
        w.contains("var<workgroup> tile: array<f32, KF_WG_X>;"),
        "{w}"
    );
    assert!(
        w.contains("for (var i = lid.x; i < dims.cols; i += KF_WG_X)"),
        "{w}"
    );
    assert!(w.contains("var s = (KF_WG_X / 2u); s > 0u"), "{w}");
    assert!(w.contains("@workgroup_size(KF_WG_X)"), "{w}");
    assert_eq!(rws[0].program.workgroup_size, [256, 1, 1]);
    assert_eq!(
        rws[0].step,
        "lift-workgroup-size(array, block-stride, tree-reduction)"
    );
    assert_eq!(
        rws[0].params,
        vec![("KF_WG_X".to_owned(), vec![32.0, 64.0, 128.0, 256.0])]
    );
}

#[test]
fn a_global_index_built_from_the_workgroup_id_is_lifted() {
    let wgsl = r#"
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(128)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let i = wid.x * 128u + li;
    if (i < arrayLength(&x)) { y[i] = 2.0 * x[i]; }
}
"#;
    let k = kernel(
        wgsl,
        r#"source = "", sizes(n = 1000), bind(x = input(n), y = output(n)), grid = (n)"#,
    );
    let rws = apply(&LiftWorkgroupSize, &k).unwrap();
    assert!(rws[0].program.wgsl.contains("wid.x * KF_WG_X + li"));
    assert_eq!(rws[0].step, "lift-workgroup-size(workgroup-grid)");
}

#[test]
fn partial_sums_over_workgroup_sized_slices_are_refused() {
    let k = kernel(REDUCE, ATTR);
    let e = apply(&LiftWorkgroupSize, &k).unwrap_err();
    assert!(e.0.contains("combine their values"), "{e}");
}

#[test]
fn a_block_stride_loop_is_lifted() {
    let wgsl = REDUCE
        .replace("var i = wid.x * 256u + lid.x", "var i = lid.x")
        .replace("i += 256u * nwg.x", "i += 256u");
    let k = kernel(&wgsl, ATTR);
    let w = apply(&LiftWorkgroupSize, &k).unwrap()[0]
        .program
        .wgsl
        .to_string();
    assert!(
        w.contains("for (var i = lid.x; i < n; i += KF_WG_X)"),
        "{w}"
    );
}

#[test]
fn ambiguous_literals_are_refused() {
    let cases = [
        // 256 as a value with no workgroup role
        (
            REDUCE.replace("acc += x[i];", "acc += x[i] + 256.0;"),
            "not provably",
        ),
        (
            REDUCE.replace("acc += x[i];", "acc += x[i] * f32(256u / 2u);"),
            "computed from",
        ),
        // four workgroups' worth of stride: the count 4 is not in the kernel's terms
        (
            REDUCE.replace("256u * nwg.x", "256u * 4u"),
            "strides by 4 workgroups",
        ),
        (
            REDUCE.replace("256u * nwg.x", "1024u"),
            "strides by 4 workgroups",
        ),
        // an unrolled reduction step only right for 256
        (
            REDUCE.replace(
                "if (lid.x == 0u)",
                "if (lid.x < 128u) { tile[lid.x] += 1.0; }\n    if (lid.x == 0u)",
            ),
            "unrolled reduction",
        ),
        // a workgroup array of the same length not indexed per invocation
        (
            REDUCE
                .replace(
                    "var<workgroup> tile: array<f32, 256>;",
                    "var<workgroup> tile: array<f32, 256>;\nvar<workgroup> hist: array<f32, 256>;",
                )
                .replace(
                    "tile[lid.x] = acc;",
                    "tile[lid.x] = acc;\n    hist[u32(acc) % 7u] = 1.0;",
                ),
            "not indexed by the local invocation index",
        ),
    ];
    for (wgsl, why) in cases {
        let k = kernel(&wgsl, ATTR);
        let e = apply(&LiftWorkgroupSize, &k).unwrap_err();
        assert!(e.0.contains(why), "{why}: {e}");
    }
    let k = kernel(
        &REDUCE.replace("@workgroup_size(256)", "@workgroup_size(16, 16)"),
        ATTR,
    );
    assert!(apply(&LiftWorkgroupSize, &k).unwrap_err().0.contains("2-D"));
}

//! Pure tests of the row-scan operator: what it proves and refuses, and the shape of its rewrite.
//! Running the rewrites is `tests/it/operators.rs`'s job (every corpus kernel whose header says
//! `fires: scan`, evaluated on the adapter).

use super::*;
use crate::operators::testkit;

const HEAD: &str = "struct Dims { rows: u32, cols: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> dims: Dims;
";
const SPEC: &str = "sizes(rows = 4, cols = 64), bind(x = input(rows * cols), y = output(rows * cols), dims = uniform(rows, cols)), grid = (rows)";

fn kernel(body: &str) -> kf_runtime::resolve::ResolvedKernel {
    testkit::resolve(
        "scan.wgsl",
        SPEC,
        &format!(
            "{HEAD}@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) gid: vec3<u32>) {{\n{body}\n}}\n"
        ),
    )
}

fn apply(k: &kf_runtime::resolve::ResolvedKernel) -> Result<Vec<Rewrite>, Skip> {
    testkit::apply(&Scan, k, &testkit::lavapipe())
}

#[test]
fn a_running_sum_stored_every_step_becomes_a_workgroup_scan() {
    for body in [
        // for, `+=`, an early return.
        "if (gid.x >= dims.rows) { return; }
    var run = 0.0;
    for (var c = 0u; c < dims.cols; c++) {
        run += x[gid.x * dims.cols + c];
        y[gid.x * dims.cols + c] = run;
    }",
        // while, the sum spelled out, a wrapping if, the row through a let, a start value.
        "let row = gid.x;
    if (row < dims.rows) {
        let base = row * dims.cols;
        var acc = 1.5;
        var j = 0u;
        while (j < dims.cols) {
            acc = x[base + j] * 2.0 + acc;
            y[base + j] = acc * 0.5;
            j = j + 1u;
        }
    }",
    ] {
        let k = kernel(body);
        let rewrites = apply(&k).unwrap_or_else(|s| panic!("skipped: {s}\n{body}"));
        // lavapipe's limits admit both widths, each with and without subgroup operations.
        assert_eq!(rewrites.len(), 4);
        for r in &rewrites {
            let uses = r.program.wgsl.contains("subgroupInclusiveAdd(kfs_v)");
            assert_eq!(uses, r.step.contains("subgroups"), "{}", r.step);
        }
        for r in &rewrites {
            testkit::check_valid(&k, r);
            assert!(r.step.contains("float sums reassociated"), "{}", r.step);
            assert_eq!(r.program.dispatch.to_string(), "workgroups(rows, 1, 1)");
            let text = r.program.wgsl.as_ref();
            assert!(text.contains("@builtin(workgroup_id) kfs_gid"), "{text}");
            // The tile's total goes on to the next tile.
            assert!(
                text.contains("kfs_carry = kfs_carry + kfs_buf[")
                    || text.contains("kfs_carry = kfs_carry + kfs_total;"),
                "{text}"
            );
        }
    }
}

#[test]
fn an_exclusive_scan_stores_the_prefix_before_the_update() {
    // Stored before the update: the exclusive prefix; after: the inclusive one.
    let k = kernel(
        "if (gid.x >= dims.rows) { return; }
    var run = 0.0;
    for (var c = 0u; c < dims.cols; c++) {
        let v = x[gid.x * dims.cols + c];
        y[gid.x * dims.cols + c] = run;
        run += v;
    }",
    );
    let rewrites = apply(&k).unwrap_or_else(|s| panic!("skipped: {s}"));
    assert_eq!(rewrites.len(), 4);
    for r in &rewrites {
        testkit::check_valid(&k, r);
        let text = r.program.wgsl.as_ref();
        assert!(text.contains("= (kfs_exc);"), "{text}");
        if r.step.contains("subgroups") {
            assert!(text.contains("subgroupExclusiveAdd(kfs_v)"), "{text}");
        } else {
            assert!(
                text.contains("kfs_exc = kfs_carry + kfs_buf[kfs_lane - 1u];"),
                "{text}"
            );
        }
    }
}

#[test]
fn other_loops_are_refused_with_the_broken_premise() {
    let why = |body: &str| apply(&kernel(body)).unwrap_err().0;
    // A reduction stores only at the end: `reduce`'s pattern.
    assert!(
        why("var s = 0.0;
    for (var c = 0u; c < dims.cols; c++) { s += x[gid.x * dims.cols + c]; }
    y[gid.x] = s;")
        .contains("stores")
    );
    // A second running value besides the sum.
    assert!(
        why("var run = 0.0;
    var n = 0.0;
    for (var c = 0u; c < dims.cols; c++) {
        run += x[gid.x * dims.cols + c];
        n += 1.0;
        y[gid.x * dims.cols + c] = run / n;
    }")
        .contains("exactly one running value")
    );
    // A running maximum is not a sum.
    assert!(
        why("var m = -1e30;
    for (var c = 0u; c < dims.cols; c++) {
        m = max(m, x[gid.x * dims.cols + c]);
        y[gid.x * dims.cols + c] = m;
    }")
        .contains("acc + e")
    );
    // A recurrence that is not associative: the new value scales the old one.
    assert!(
        why("var e = 0.0;
    for (var c = 0u; c < dims.cols; c++) {
        e = 0.9 * e + x[gid.x * dims.cols + c];
        y[gid.x * dims.cols + c] = e;
    }")
        .contains("acc + e")
    );
    // The loop reads what it writes.
    assert!(
        why("var run = 0.0;
    for (var c = 1u; c < dims.cols; c++) {
        run += y[gid.x * dims.cols + c - 1u];
        y[gid.x * dims.cols + c] = run;
    }")
        .contains("reads a buffer it writes")
    );
}

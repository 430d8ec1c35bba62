//! Unrolling: which loops it takes, which it refuses, and the text it writes.

use super::*;
use crate::operators::testing::{apply, find, kernel};

const MATVEC: &str = r#"
struct Dims { rows: u32, k: u32 }
const TAPS: u32 = 5u;
@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.x;
    if (row >= dims.rows) { return; }
    var acc = 0.0;
    for (var i = 0u; i < dims.k; i++) {
        // `i` in a comment, and a shadowing-free body
        acc += a[row * dims.k + i] * f32(i % 3u);
    }
    for (var t: u32 = 0u; t < TAPS; t = t + 1u) { acc += f32(t); }
    y[row] = acc;
}
"#;
const ATTR: &str = r#"source = "", sizes(rows = 64, k = 16), bind(dims = uniform(rows, k), a = input(rows * k), y = output(rows)), grid = (rows)"#;

#[test]
fn a_uniform_bound_is_unrolled_by_each_factor_with_a_remainder() {
    let k = kernel(MATVEC, ATTR);
    let rws = apply(&Unroll, &k).unwrap();
    let x4 = find(&rws, "unroll(i@12, x4)");
    let w = &x4.program.wgsl;
    assert!(w.contains("var i: u32 = 0u;"), "{w}");
    assert!(w.contains("for (; (i + 3u) < dims.k; i += 4u)"), "{w}");
    assert!(
        w.contains("a[row * dims.k + (i + 2u)] * f32((i + 2u) % 3u)"),
        "{w}"
    );
    assert!(
        w.contains("// `i` in a comment"),
        "comments are copied, never edited: {w}"
    );
    assert!(
        w.contains("for (; i < dims.k; i += 1u)"),
        "remainder loop: {w}"
    );
    find(&rws, "unroll(i@12, x2)");
    find(&rws, "unroll(i@12, x8)");
    assert!(!rws.iter().any(|r| r.step == "unroll(i@12, full)"));
}

#[test]
fn a_constant_trip_count_is_unrolled_fully_with_literal_counters() {
    let k = kernel(MATVEC, ATTR);
    let rws = apply(&Unroll, &k).unwrap();
    let full = find(&rws, "unroll(t@16, full)");
    let w = &full.program.wgsl;
    for t in 0..5 {
        assert!(w.contains(&format!("{{ acc += f32({t}u); }}")), "{w}");
    }
    assert!(!w.contains("t < TAPS"), "{w}");
    find(&rws, "unroll(t@16, x2)");
    find(&rws, "unroll(t@16, x4)");
    assert!(
        !rws.iter().any(|r| r.step == "unroll(t@16, x8)"),
        "8 > 5 trips"
    );
}

#[test]
fn an_override_bound_is_unrolled_with_guards_and_a_remainder() {
    let wgsl = MATVEC.replace("const TAPS: u32 = 5u;", "override TAPS: u32 = 3u;");
    let k = kernel(&wgsl, ATTR);
    let rws = apply(&Unroll, &k).unwrap();
    let w = &find(&rws, "unroll(t@16, full)").program.wgsl;
    assert!(w.contains("if (2u < TAPS) { acc += f32(2u); }"), "{w}");
    assert!(
        w.contains("for (var t: u32 = 3u; t < TAPS; t += 1u)"),
        "{w}"
    );
}

#[test]
fn refuses_loops_it_cannot_copy() {
    let cases = [
        (
            "acc += a[row * dims.k + i] * f32(i % 3u);",
            "acc += a[i]; i += 1u;",
            "writes its counter",
        ),
        (
            "acc += a[row * dims.k + i] * f32(i % 3u);",
            "if (acc > 3.0) { break; }",
            "break",
        ),
        (
            "acc += a[row * dims.k + i] * f32(i % 3u);",
            "if (acc > 3.0) { continue; }",
            "continue",
        ),
        (
            "acc += a[row * dims.k + i] * f32(i % 3u);",
            "storageBarrier();",
            "barrier",
        ),
    ];
    for (from, to, why) in cases {
        let wgsl = MATVEC.replace(from, to).replace(
            "for (var t: u32 = 0u; t < TAPS; t = t + 1u) { acc += f32(t); }",
            "",
        );
        let k = kernel(&wgsl, ATTR);
        let e = apply(&Unroll, &k).unwrap_err();
        assert!(e.0.contains(why), "{why}: {e}");
    }
    // A bound the loop changes.
    let wgsl = MATVEC
        .replace(
            "for (var i = 0u; i < dims.k; i++) {",
            "var n = dims.k;\n    for (var i = 0u; i < n; i++) { n = n - 1u;",
        )
        .replace(
            "for (var t: u32 = 0u; t < TAPS; t = t + 1u) { acc += f32(t); }",
            "",
        );
    let e = apply(&Unroll, &kernel(&wgsl, ATTR)).unwrap_err();
    assert!(e.0.contains("bound changes"), "{e}");
}

#[test]
fn a_break_inside_a_nested_loop_or_switch_is_kept() {
    let wgsl = MATVEC.replace(
        "acc += a[row * dims.k + i] * f32(i % 3u);",
        "for (var j = 0u; j < 4u; j++) { if (j == i) { break; } acc += 1.0; }\n        switch (i) { case 1u: { break; } default: { acc += a[i]; } }",
    );
    let k = kernel(&wgsl, ATTR);
    let rws = apply(&Unroll, &k).unwrap();
    let w = &find(&rws, "unroll(i@12, x2)").program.wgsl;
    assert!(w.contains("if (j == (i + 1u)) { break; }"), "{w}");
    assert!(w.contains("switch ((i + 1u))"), "{w}");
}

#[test]
fn a_counter_initialised_at_run_time_keeps_its_initial_value() {
    let wgsl = MATVEC.replace(
        "for (var i = 0u; i < dims.k; i++)",
        "for (var i = row % 2u; i < dims.k; i += 2u)",
    );
    let k = kernel(&wgsl, ATTR);
    let rws = apply(&Unroll, &k).unwrap();
    let w = &find(&rws, "unroll(i@12, x2)").program.wgsl;
    assert!(w.contains("var i: u32 = row % 2u;"), "{w}");
    assert!(w.contains("for (; (i + 2u) < dims.k; i += 4u)"), "{w}");
}

/// A loop strided by an override (a lane count, as `reduce`'s lane groups write it) is unrolled
/// with the override kept by name, so any value the parameter search gives it stays right; a
/// signed counter with such a step is refused (a negative step would break the guard).
#[test]
fn a_step_that_is_an_override_is_kept_by_name() {
    const STRIDED: &str = r#"
override KF_GROUP: u32 = 4u;
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let sub = gid.x % KF_GROUP;
    var s = 0.0;
    for (var r = sub; r < 256u; r += KF_GROUP) {
        s += x[r];
    }
    y[gid.x] = s;
}
"#;
    let k = kernel(
        STRIDED,
        r#"source = "", sizes(n = 64), bind(x = input(256), y = output(n)), grid = (n), params(KF_GROUP = [2, 4, 8])"#,
    );
    let rws = apply(&Unroll, &k).unwrap();
    let x4 = find(&rws, "unroll(r@9, x4)");
    let w = &x4.program.wgsl;
    assert!(
        w.contains("for (; (r + (3u * KF_GROUP)) < 256u; r += (4u * KF_GROUP))"),
        "{w}"
    );
    assert!(w.contains("s += x[(r + KF_GROUP)];"), "{w}");
    assert!(
        w.contains("for (; r < 256u; r += KF_GROUP)"),
        "remainder: {w}"
    );
    assert!(
        !rws.iter().any(|r| r.step.ends_with("full)")),
        "no full unroll bakes in the override's value"
    );
    let signed = STRIDED
        .replace("KF_GROUP: u32 = 4u", "KF_GROUP: i32 = 4")
        .replace("gid.x % KF_GROUP", "i32(gid.x) % KF_GROUP")
        .replace("x[r]", "x[u32(r)]")
        .replace("r < 256u", "r < 256");
    let k = kernel(
        &signed,
        r#"source = "", sizes(n = 64), bind(x = input(256), y = output(n)), grid = (n), params(KF_GROUP = [2, 4, 8])"#,
    );
    assert!(apply(&Unroll, &k).is_err());
}

//! Hoisting: which loads leave the loop, and which must stay.

use super::*;
use crate::operators::testing::{apply, apply_to, kernel};

const MATVEC: &str = r#"
struct Dims { rows: u32, k: u32 }
struct Params { a: f32, b: f32 }
@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;
@group(0) @binding(4) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.x;
    if (row >= dims.rows) { return; }
    var acc = 0.0;
    for (var i = 0u; i < dims.k; i++) {
        let scale = params.a * 2.0;
        acc += a[row * dims.k + i] * scale + bias[row];
    }
    y[row] = acc;
}
"#;
const ATTR: &str = r#"source = "", sizes(rows = 64, k = 16), bind(dims = uniform(rows, k), a = input(rows * k), bias = input(rows), params = uniform(1.5, 2.0), y = output(rows)), grid = (rows)"#;

#[test]
fn invariant_loads_move_before_the_loop() {
    let k = kernel(MATVEC, ATTR);
    let rws = apply(&Hoist, &k).unwrap();
    assert_eq!(rws.len(), 1);
    let w = &rws[0].program.wgsl;
    assert_eq!(rws[0].step, "hoist(4 loads)", "{w}");
    assert!(w.contains("let kf_hoist0 = dims.k;\n    let kf_hoist1 = params.a * 2.0;\n    let kf_hoist2 = row * dims.k;\n    let kf_hoist3 = bias[row];\n    for (var i = 0u; i < kf_hoist0; i++) {"), "{w}");
    assert!(w.contains("let scale = kf_hoist1;"), "{w}");
    assert!(
        w.contains("acc += a[kf_hoist2 + i] * scale + kf_hoist3;"),
        "{w}"
    );
}

#[test]
fn loads_that_may_change_or_are_guarded_stay() {
    // (loop body, the load that must stay in the loop)
    let stays = [
        // read_write storage: the loop (or another invocation) may write it
        ("acc += y[row];", "y[row]"),
        // guarded by a condition inside the loop (the condition itself is invariant and moves)
        (
            "if (row + 1u < dims.rows) { acc += bias[row + 1u]; }",
            "bias[row + 1u]",
        ),
        // after a conditional break
        (
            "if (acc > 4.0) { break; }\n        acc += bias[row];",
            "bias[row]",
        ),
        // depends on the counter
        ("acc += bias[i];", "bias[i]"),
        // from a local the loop writes
        ("acc += bias[u32(acc)];", "bias[u32(acc)]"),
    ];
    for (body, load) in stays {
        let wgsl = MATVEC
            .replace(
                "for (var i = 0u; i < dims.k; i++)",
                "let n = dims.k;\n    for (var i = 0u; i < n; i++)",
            )
            .replace(
                "let scale = params.a * 2.0;\n        acc += a[row * dims.k + i] * scale + bias[row];",
                body,
            );
        let k = kernel(&wgsl, ATTR);
        match apply(&Hoist, &k) {
            Err(e) => assert!(e.0.contains("no loop-invariant load"), "{body}: {e}"),
            Ok(rws) => {
                let w = &rws[0].program.wgsl;
                assert!(
                    w.lines()
                        .filter(|l| l.contains("let kf_hoist"))
                        .all(|l| !l.contains(load)),
                    "{body}: hoisted {load}\n{w}"
                );
                assert!(w.contains(load), "{w}");
            }
        }
    }
}

#[test]
fn a_loop_without_loads_is_skipped_cheaply() {
    let k = kernel(
        "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n@compute @workgroup_size(1) fn main() { y[0] = 1.0; }",
        r#"source = "", sizes(n = 1), bind(y = output(n)), grid = (n)"#,
    );
    assert_eq!(apply(&Hoist, &k).unwrap_err().0, "no loop");
}

#[test]
fn a_second_application_moves_what_the_first_left_behind_a_let() {
    let wgsl = MATVEC.replace(
        "let scale = params.a * 2.0;\n        acc += a[row * dims.k + i] * scale + bias[row];",
        "let off = row * dims.k;\n        acc += a[off + i] + bias[off % 7u];",
    );
    let k = kernel(&wgsl, ATTR);
    let first = apply(&Hoist, &k).unwrap();
    let w = &first[0].program.wgsl;
    assert!(w.contains("let off = kf_hoist1;"), "{w}");
    assert!(
        w.contains("bias[off % 7u]"),
        "behind a `let` of the body: stays\n{w}"
    );
    // Whatever a second application does, it validates (apply_to checks it) and never loses
    // the first application's work.
    if let Ok(second) = apply_to(&Hoist, &k, &first[0].program) {
        assert!(second[0].program.wgsl.contains("let off = kf_hoist1;"));
    }
}

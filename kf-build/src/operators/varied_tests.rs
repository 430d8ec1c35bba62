//! The four loop/workgroup operators (unroll, hoist, reshape, lift) run over kernels with struct
//! builtins, helper functions, `while`/`loop` spellings, Unicode names and comments in odd places:
//! no panic, every rewrite validates with the baseline's interface, and each applies to the
//! others' rewrites.

use super::hoist::Hoist;
use super::lift::LiftWorkgroupSize;
use super::reshape::Reshape;
use super::testing::{apply, apply_to, kernel};
use super::unroll::Unroll;
use super::{Operator, Rewrite};

const VARIED: [(&str, &str); 4] = [
    (
        "struct Inputs { @builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) li: u32 }
@group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;
@group(0) @binding(2) var<uniform> n: u32;
fn sum4(base: u32) -> vec4<f32> {
    var s = vec4<f32>(0.0);
    for (var k = 0u; k < 4u; k++) { s += src[base + k] * f32(n); }
    return s;
}
@compute @workgroup_size(32, 2)
fn main(input: Inputs) {
    let i = input.gid.x + input.gid.y * 16u;
    if (i * 4u + 3u < n) { dst[i] = sum4(i * 4u); }
}",
        r#"source = "", sizes(m = 64), bind(src = input(m), dst = output(m / 4), n = uniform(m)), grid = (16, m / 64)"#,
    ),
    (
        "@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> n: u32;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    var acc = 0.0;
    var i = 0u;
    while (i < n) { acc += x[i] * x[g.x % n]; i++; }
    var j = 0u;
    loop { if (j >= 3u) { break; } acc += x[j]; continuing { j += 1u; } }
    for (var ü /* comment */ = 0u; ü < 3u; ü++) { acc += f32(ü); }
    if (g.x < n) { y[g.x] = acc; }
}",
        r#"source = "", sizes(n = 16), bind(x = input(n), y = output(n), n = uniform(n)), grid = (n)"#,
    ),
    (
        "@group(0) @binding(0) var<storage, read_write> y: array<i32>;
@compute @workgroup_size(8)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    var v = 0;
    for (var i = 10; i > 0; i--) { v += i; }
    for (var i = -3; i < 3; i += 2) { switch (i) { case 1: { v -= 1; } default: { v += i; } } }
    y[g.x] = v;
}",
        r#"source = "", sizes(n = 16), bind(y = output(n)), grid = (n)"#,
    ),
    (
        "const BLOCK = 64u;
var<workgroup> buf: array<u32, BLOCK>;
@group(0) @binding(0) var<storage, read_write> y: array<u32>;
@compute @workgroup_size(BLOCK)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) w: vec3<u32>) {
    buf[li] = li;
    workgroupBarrier();
    var s = 0u;
    for (var k = 0u; k < BLOCK; k += 1u) { s += buf[k]; }
    y[w.x * BLOCK + li] = s;
}",
        r#"source = "", sizes(n = 128), bind(y = output(n)), grid = (n)"#,
    ),
];

#[test]
fn the_operators_handle_varied_kernels() {
    let ops: [&dyn Operator; 4] = [&Unroll, &Hoist, &Reshape, &LiftWorkgroupSize];
    let mut made: Vec<String> = Vec::new();
    for (wgsl, attr) in VARIED {
        let k = kernel(wgsl, attr);
        for op in ops {
            // `apply` validates every rewrite against the baseline's interface.
            if let Ok(rws) = apply(op, &k) {
                made.extend(rws.iter().map(|r: &Rewrite| r.step.clone()));
            }
        }
    }
    for expected in [
        "unroll(k@7, full)",
        "hoist(1 loads)",
        "reshape(16x16)",
        "unroll(ü@11, full)",
        "unroll(i@6, x2)",
        "lift-workgroup-size(attribute)",
    ] {
        assert!(
            made.iter().any(|m| m == expected),
            "{expected} not in {made:?}"
        );
    }
    assert!(
        !made.iter().any(|m| m.starts_with("unroll(i@5")),
        "a decreasing loop: {made:?}"
    );
    // Every invocation sums the whole workgroup array: its result depends on the size.
    let (wgsl, attr) = VARIED[3];
    let e = apply(&LiftWorkgroupSize, &kernel(wgsl, attr)).unwrap_err();
    assert!(e.0.contains("not provably"), "{e}");
}

#[test]
fn operators_apply_to_each_others_rewrites() {
    let ops: [&dyn Operator; 4] = [&Unroll, &Hoist, &Reshape, &LiftWorkgroupSize];
    let mut chained = Vec::new();
    for (wgsl, attr) in VARIED {
        let k = kernel(wgsl, attr);
        for first in ops {
            let Ok(rws) = apply(first, &k) else { continue };
            for rw in rws.iter().take(2) {
                for second in ops {
                    // `apply_to` validates every second-level rewrite too.
                    if let Ok(more) = apply_to(second, &k, &rw.program) {
                        chained.extend(
                            more.into_iter()
                                .map(|m| format!("{} > {}", rw.step, m.step)),
                        );
                    }
                }
            }
        }
    }
    for expected in [
        "hoist(1 loads) > unroll(k@8, full)",
        "unroll(k@7, x2) > hoist(3 loads)",
        "reshape(8x8) > reshape(16x16)",
    ] {
        assert!(
            chained.iter().any(|c| c == expected),
            "{expected} not in {chained:?}"
        );
    }
}

//! `flash-attention` on the corpus: which kernels it rewrites, with which names and launch, and
//! which it leaves alone with what reason.

use super::*;
use crate::operators::testkit::{self, check_valid, kernel, own_step};

#[test]
fn attention_rows_become_flash_tiles_whatever_the_spelling() {
    for (name, s, d, q, k, v, out) in [
        (
            "attention_head_rows.wgsl",
            "attn.seq",
            "attn.d",
            "q",
            "k",
            "v",
            "out",
        ),
        (
            "attention_online_wide.wgsl",
            "dims.tokens",
            "dims.width",
            "queries",
            "keys",
            "values",
            "result",
        ),
    ] {
        let kernel = kernel(name);
        let rewrites = testkit::apply(&FlashAttention, &kernel, &testkit::h200())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        // 16 and 8 rows by tiles of 64 and 32 keys on 48 KiB, one scale each (the kernels take a
        // square root).
        assert_eq!(rewrites.len(), 4, "{name}");
        for r in &rewrites {
            let rows: u64 = if own_step(r).contains("(16 rows") {
                16
            } else {
                8
            };
            assert_eq!(check_valid(&kernel, r), [rows as u32 * 16, 1, 1], "{name}");
            assert!(
                own_step(r).starts_with("flash-attention(") && own_step(r).contains("1/sqrt(d)"),
                "{name}: {}",
                r.step
            );
            let wgsl = r.program.wgsl.as_ref();
            for needle in [
                format!("let kfa_s = {s};"),
                format!("let kfa_d = {d};"),
                format!("kfa_nk0.x = {k}[kfa_b + kfa_c + 0u];"),
                format!("kfa_nv0.w = {v}[kfa_b + kfa_c + 3u];"),
                format!("kfa_q15.w = {q}[kfa_qb + 60u + 3u];"),
                format!("{out}[kfa_h + kfa_i * kfa_d + kfa_c + 2u] = kfa_o.z;"),
            ] {
                assert!(wgsl.contains(&needle), "{name}: no `{needle}` in\n{wgsl}");
            }
            assert_eq!(
                r.program.dispatch.to_string(),
                kernel_dispatch(&kernel, rows)
            );
        }
        // lavapipe's 32 KiB hold the 32-key tiles only.
        let small = testkit::apply(&FlashAttention, &kernel, &testkit::lavapipe()).unwrap();
        assert_eq!(small.len(), 2, "{name}");
        assert!(
            small.iter().all(|r| r.step.contains("32-key tiles")),
            "{}",
            small[0].step
        );
    }
}

/// `cdiv(invocations, rows)` workgroups: the baseline's invocations along x, `rows` each.
fn kernel_dispatch(kernel: &kf_runtime::resolve::ResolvedKernel, rows: u64) -> String {
    let mut ops = super::super::grid_extent(&kernel.baseline, 0);
    ops.push(Op::Lit(rows));
    ops.push(Op::CeilDiv);
    kf_runtime::Dispatch {
        mode: kf_runtime::DispatchMode::Workgroups,
        size: [SizeExpr::from_ops(ops), SizeExpr::lit(1), SizeExpr::lit(1)],
    }
    .to_string()
}

#[test]
fn kernels_that_are_not_attention_are_left_alone() {
    for (name, why) in [
        // Two buffers written (scores through a scratch row).
        ("attention_decode_scratch.wgsl", "storage buffers written"),
        ("log_softmax_loop.wgsl", "buffers only read"),
        ("gemv_struct.wgsl", "no exponential"),
    ] {
        let kernel = kernel(name);
        let skip = testkit::apply(&FlashAttention, &kernel, &testkit::h200()).expect_err(name);
        assert!(skip.0.contains(why), "{name}: {skip}");
    }
}

/// The bindings and entry point signature of the inline attention kernels below (`struct P`
/// replaced by each test's uniform struct): Q, K, V, the output `o`, the uniform `p`, id `g`.
const QKVO: &str = "
struct P { .. }
@group(0) @binding(0) var<storage, read> q: array<f32>;
@group(0) @binding(1) var<storage, read> k: array<f32>;
@group(0) @binding(2) var<storage, read> v: array<f32>;
@group(0) @binding(3) var<storage, read_write> o: array<f32>;
@group(0) @binding(4) var<uniform> p: P;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
";

#[test]
fn a_uniform_scale_is_proposed_when_no_square_root_is_taken() {
    let wgsl = QKVO.replace(
        "struct P { .. }",
        "struct P { n: u32, d: u32, scale: f32, eps: f32 }",
    ) + r#"
    if (g.x >= p.n) { return; }
    var m = -1e30;
    for (var j = 0u; j < p.n; j++) {
        var s = 0.0;
        for (var c = 0u; c < p.d; c++) { s += q[g.x * p.d + c] * k[j * p.d + c]; }
        m = max(m, s * p.scale);
    }
    var l = 0.0;
    for (var c = 0u; c < p.d; c++) { o[g.x * p.d + c] = 0.0; }
    for (var j = 0u; j < p.n; j++) {
        var s = 0.0;
        for (var c = 0u; c < p.d; c++) { s += q[g.x * p.d + c] * k[j * p.d + c]; }
        let e = exp(s * p.scale - m);
        l += e;
        for (var c = 0u; c < p.d; c++) { o[g.x * p.d + c] += e * v[j * p.d + c]; }
    }
    for (var c = 0u; c < p.d; c++) { o[g.x * p.d + c] /= l; }
}
"#;
    let kernel = testkit::resolve(
        "scaled.wgsl",
        "sizes(n = 40, d = 16), bind(q = input(n * d), k = input(n * d), v = input(n * d), o = output(n * d), p = uniform(n, d, 0.25, 0.001)), grid = (n)",
        &wgsl,
    );
    let rewrites = testkit::apply(&FlashAttention, &kernel, &testkit::lavapipe()).unwrap();
    let steps: Vec<_> = rewrites.iter().map(|r| own_step(r).to_owned()).collect();
    // Two configurations fit lavapipe's 32 KiB, each with both f32 uniforms as the scale.
    assert_eq!(steps.len(), 4, "{steps:?}");
    assert!(steps[0].contains("scale p.scale"), "{steps:?}");
    assert!(steps[1].contains("scale p.eps"), "{steps:?}");
    for r in &rewrites {
        check_valid(&kernel, r);
    }
}

/// A causal kernel for the tests below: `BOUND` is the key loops' bound.
fn causal(bound: &str) -> kf_runtime::resolve::ResolvedKernel {
    let wgsl = QKVO.replace("struct P { .. }", "struct P { n: u32, d: u32 }")
        + r#"
    let i = g.x;
    if (i >= p.n) { return; }
    let scale = 1.0 / sqrt(f32(p.d));
    var m = -1e30;
    for (var j = 0u; BOUND; j++) {
        var s = 0.0;
        for (var c = 0u; c < p.d; c++) { s += q[i * p.d + c] * k[j * p.d + c]; }
        m = max(m, s * scale);
    }
    var l = 0.0;
    for (var c = 0u; c < p.d; c++) { o[i * p.d + c] = 0.0; }
    for (var j = 0u; BOUND; j++) {
        var s = 0.0;
        for (var c = 0u; c < p.d; c++) { s += q[i * p.d + c] * k[j * p.d + c]; }
        let e = exp(s * scale - m);
        l += e;
        for (var c = 0u; c < p.d; c++) { o[i * p.d + c] += e * v[j * p.d + c]; }
    }
    for (var c = 0u; c < p.d; c++) { o[i * p.d + c] /= l; }
}
"#;
    let wgsl = wgsl.replace("BOUND", bound);
    testkit::resolve(
        "causal.wgsl",
        "sizes(n = 40, d = 16), bind(q = input(n * d), k = input(n * d), v = input(n * d), o = output(n * d), p = uniform(n, d)), grid = (n)",
        &wgsl,
    )
}

#[test]
fn key_loops_that_stop_at_the_query_row_become_causal_tiles() {
    for bound in ["j <= i", "j < i + 1u", "j <= g.x", "i >= j"] {
        let kernel = causal(bound);
        let rewrites = testkit::apply(&FlashAttention, &kernel, &testkit::lavapipe())
            .unwrap_or_else(|e| panic!("{bound}: {e}"));
        assert_eq!(rewrites.len(), 2, "{bound}");
        for r in &rewrites {
            check_valid(&kernel, r);
            assert!(own_step(r).contains("causal"), "{bound}: {}", r.step);
            let wgsl = r.program.wgsl.as_ref();
            for needle in [
                // The sequence length from the row guard; keys up to the row; the tiles up to the
                // workgroup's last row.
                "let kfa_s = p.n;",
                "let kfa_kn = min(kfa_i + 1u, kfa_s);",
                "kfa_j0 < kfa_jend;",
                "kfa_j0 + kfa_j < kfa_kn)",
            ] {
                assert!(wgsl.contains(needle), "{bound}: no `{needle}` in\n{wgsl}");
            }
        }
    }
    // The operator corpus's causal kernel: its maximum starts at key 1 from key 0's score.
    let kernel = kernel("attention_rows_score_fn.wgsl");
    let rewrites = testkit::apply(&FlashAttention, &kernel, &testkit::lavapipe())
        .unwrap_or_else(|e| panic!("attention_rows_score_fn: {e}"));
    assert!(rewrites.iter().all(|r| own_step(r).contains("causal")));
}

#[test]
fn causal_kernels_are_refused_where_the_mask_is_not_the_row() {
    let why = |bound: &str| {
        testkit::apply(&FlashAttention, &causal(bound), &testkit::lavapipe())
            .unwrap_err()
            .0
    };
    // Keys past the row, or up to another invocation's row.
    assert!(
        why("j <= i + 1u").contains("does not count from 0 by 1 below a bound"),
        "{}",
        why("j <= i + 1u")
    );
    assert!(why("j < i").contains("varying bound"), "{}", why("j < i"));
}

//! Matrix products and attention: the gemm, gemv and attention classes of the corpus, each checked
//! against an f64 product on the CPU.

use super::*;
use crate::kernels;

/// The cases of this file, by kernel name.
pub fn cases() -> Vec<(&'static str, CaseFn)> {
    vec![
        ("ATTENTION_NAIVE", attention_naive),
        ("B2_CAUSAL_ATTENTION", b2_causal_attention),
        ("B2_GEMM_ALPHA_BETA", b2_gemm_alpha_beta),
        ("B2_GEMM_AT_B", b2_gemm_at_b),
        ("B2_GEMM_VEC4", b2_gemm_vec4),
        ("B2_GEMV_AT", b2_gemv_at),
        ("BMM_ZBATCH", bmm_zbatch),
        ("GEMV_VEC4", gemv_vec4),
        ("LINEAR_BIAS_WT", linear_bias_wt),
        ("MATMUL_PARAMS", matmul_params),
    ]
}

/// Attention over `heads` independent `[seq, d]` blocks of `q`, `k`, `v`: each query row's
/// scores `q_i . k_j / sqrt(d)` over the keys `j < seq` (or `j <= i` when `causal`), softmax,
/// then the weighted sum of the value rows; in f64.
fn attention(q: &[f32], k: &[f32], v: &[f32], seq: usize, d: usize, causal: bool) -> Vec<f32> {
    let mut out = vec![0f32; q.len()];
    let scale = 1.0 / (d as f64).sqrt();
    par_rows(&mut out, d, |row, o| {
        let (head, i) = (row / seq, row % seq);
        let base = head * seq * d;
        let keys = if causal { i + 1 } else { seq };
        let qi = &q[base + i * d..base + (i + 1) * d];
        let scores: Vec<f64> = (0..keys)
            .map(|j| {
                let kj = &k[base + j * d..base + (j + 1) * d];
                qi.iter()
                    .zip(kj)
                    .map(|(a, b)| f64::from(*a) * f64::from(*b))
                    .sum::<f64>()
                    * scale
            })
            .collect();
        let m = scores.iter().copied().fold(f64::MIN, f64::max);
        let p: Vec<f64> = scores.iter().map(|s| (s - m).exp()).collect();
        let denom: f64 = p.iter().sum();
        for (t, o) in o.iter_mut().enumerate() {
            let acc: f64 = (0..keys)
                .map(|j| p[j] * f64::from(v[base + j * d + t]))
                .sum();
            *o = (acc / denom) as f32;
        }
    });
    out
}

fn attention_naive(scale: Scale) -> Case {
    let (heads, seq, head_dim) = scale.pick((256, 64, 64), (4, 48, 32));
    let mut rng = Rng::new(1);
    let n = heads * seq * head_dim;
    let q = rng.unit(n);
    let k = rng.unit(n);
    let v = rng.unit(n);
    let out = attention(&q, &k, &v, seq, head_dim, false);
    Case {
        kernel: &kernels::ATTENTION_NAIVE,
        sizes: vec![
            ("heads", heads as u64),
            ("seq", seq as u64),
            ("head_dim", head_dim as u64),
        ],
        bindings: vec![
            ("q", storage(&q)),
            ("k", storage(&k)),
            ("v", storage(&v)),
            ("out", poisoned(n)),
            ("params", uniform(&[u(heads), u(seq), u(head_dim)])),
        ],
        // The header's `tolerance = 1e-3`.
        checks: vec![check("out", out, 1e-3)],
    }
}

fn b2_causal_attention(scale: Scale) -> Case {
    let (seq, d) = scale.pick((1024, 64), (64, 32));
    let mut rng = Rng::new(2);
    let q = rng.unit(seq * d);
    let k = rng.unit(seq * d);
    let v = rng.unit(seq * d);
    let out = attention(&q, &k, &v, seq, d, true);
    Case {
        kernel: &kernels::B2_CAUSAL_ATTENTION,
        sizes: vec![("seq", seq as u64), ("d", d as u64)],
        bindings: vec![
            ("q", storage(&q)),
            ("k", storage(&k)),
            ("v", storage(&v)),
            ("out", poisoned(seq * d)),
            ("cfg", uniform(&[u(seq), u(d)])),
        ],
        // The header's `tolerance = 1e-3`.
        checks: vec![check("out", out, 1e-3)],
    }
}

fn b2_gemm_alpha_beta(scale: Scale) -> Case {
    let (m, n, k) = scale.pick((1024, 1024, 1024), (40, 72, 64));
    let (alpha, beta) = (1.5f32, 0.5f32);
    let mut rng = Rng::new(3);
    let a = rng.unit(m * k);
    let b = rng.unit(k * n);
    let c_in = rng.unit(m * n);
    let c: Vec<f32> = matmul(&a, &b, m, n, k)
        .iter()
        .zip(&c_in)
        .map(|(p, c)| (f64::from(alpha) * p + f64::from(beta) * f64::from(*c)) as f32)
        .collect();
    Case {
        kernel: &kernels::B2_GEMM_ALPHA_BETA,
        sizes: vec![("m", m as u64), ("n", n as u64), ("k", k as u64)],
        bindings: vec![
            ("a", storage(&a)),
            ("b", storage(&b)),
            ("c_in", storage(&c_in)),
            ("c", poisoned(m * n)),
            ("gemm", uniform(&[u(m), u(n), u(k), f(alpha), f(beta)])),
        ],
        checks: vec![check("c", c, ACCUMULATED)],
    }
}

fn b2_gemm_at_b(scale: Scale) -> Case {
    let (m, n, k) = scale.pick((1024, 1024, 1024), (48, 64, 40));
    let mut rng = Rng::new(4);
    // `a` holds A^T, [k, m].
    let a_t = rng.unit(k * m);
    let b = rng.unit(k * n);
    let c = to_f32(matmul(&transposed(&a_t, k, m), &b, m, n, k));
    Case {
        kernel: &kernels::B2_GEMM_AT_B,
        sizes: vec![("m", m as u64), ("n", n as u64), ("k", k as u64)],
        bindings: vec![
            ("a", storage(&a_t)),
            ("b", storage(&b)),
            ("c", poisoned(m * n)),
            ("dims", uniform(&[u(m), u(n), u(k)])),
        ],
        checks: vec![check("c", c, ACCUMULATED)],
    }
}

fn b2_gemm_vec4(scale: Scale) -> Case {
    let (m, n, k) = scale.pick((1024, 1024, 1024), (64, 64, 64));
    let mut rng = Rng::new(5);
    // Rows of vec4s are rows of floats: the packing changes nothing in memory.
    let a = rng.unit(m * k);
    let b = rng.unit(k * n);
    let c = to_f32(matmul(&a, &b, m, n, k));
    Case {
        kernel: &kernels::B2_GEMM_VEC4,
        sizes: vec![("m", m as u64), ("n", n as u64), ("k", k as u64)],
        bindings: vec![
            ("a", storage(&a)),
            ("b", storage(&b)),
            ("c", poisoned(m * n)),
            ("dims", uniform(&[u(m), u(n), u(k)])),
        ],
        checks: vec![check("c", c, ACCUMULATED)],
    }
}

fn b2_gemv_at(scale: Scale) -> Case {
    let (rows, cols) = scale.pick((8192, 2048), (200, 96));
    let mut rng = Rng::new(6);
    let a = rng.unit(rows * cols);
    let x = rng.unit(rows);
    // y = A^T x is x^T A, a 1 x cols product.
    let y = to_f32(matmul(&x, &a, 1, cols, rows));
    Case {
        kernel: &kernels::B2_GEMV_AT,
        sizes: vec![("rows", rows as u64), ("cols", cols as u64)],
        bindings: vec![
            ("A", storage(&a)),
            ("x", storage(&x)),
            ("y", poisoned(cols)),
            // In bind group 1.
            ("shape", uniform(&[u(rows), u(cols)])),
        ],
        checks: vec![check("y", y, ACCUMULATED)],
    }
}

fn bmm_zbatch(scale: Scale) -> Case {
    let (batch, m, n, k) = scale.pick((128, 128, 512, 256), (4, 48, 40, 64));
    let mut rng = Rng::new(7);
    let a = rng.unit(batch * m * k);
    let b = rng.unit(batch * k * n);
    let mut c = Vec::with_capacity(batch * m * n);
    for i in 0..batch {
        c.extend(to_f32(matmul(
            &a[i * m * k..(i + 1) * m * k],
            &b[i * k * n..(i + 1) * k * n],
            m,
            n,
            k,
        )));
    }
    Case {
        kernel: &kernels::BMM_ZBATCH,
        sizes: vec![
            ("batch", batch as u64),
            ("m", m as u64),
            ("n", n as u64),
            ("k", k as u64),
        ],
        bindings: vec![
            ("lhs", storage(&a)),
            ("rhs", storage(&b)),
            ("result", poisoned(batch * m * n)),
            ("dims", uniform(&[u(batch), u(m), u(n), u(k)])),
        ],
        checks: vec![check("result", c, ACCUMULATED)],
    }
}

fn gemv_vec4(scale: Scale) -> Case {
    let (rows, cols) = scale.pick((8192, 2048), (96, 256));
    let mut rng = Rng::new(8);
    let a = rng.unit(rows * cols);
    let x = rng.unit(cols);
    let y = to_f32(matmul(&a, &x, rows, 1, cols));
    Case {
        kernel: &kernels::GEMV_VEC4,
        sizes: vec![("rows", rows as u64), ("cols", cols as u64)],
        bindings: vec![
            ("mat", storage(&a)),
            ("vec_x", storage(&x)),
            ("vec_y", poisoned(rows)),
            ("params", uniform(&[u(rows), u(cols)])),
        ],
        checks: vec![check("vec_y", y, ACCUMULATED)],
    }
}

fn linear_bias_wt(scale: Scale) -> Case {
    let (batch, inf, outf) = scale.pick((1024, 1024, 4096), (32, 96, 80));
    let mut rng = Rng::new(9);
    let x = rng.unit(batch * inf);
    let w = rng.unit(outf * inf);
    let bias = rng.unit(outf);
    // x @ W^T: W is [out, in], so its transpose is the [in, out] right-hand side.
    let y: Vec<f32> = matmul(&x, &transposed(&w, outf, inf), batch, outf, inf)
        .iter()
        .enumerate()
        .map(|(i, v)| (v + f64::from(bias[i % outf])) as f32)
        .collect();
    Case {
        kernel: &kernels::LINEAR_BIAS_WT,
        sizes: vec![
            ("batch", batch as u64),
            ("in_features", inf as u64),
            ("out_features", outf as u64),
        ],
        bindings: vec![
            ("x", storage(&x)),
            ("weight", storage(&w)),
            ("bias", storage(&bias)),
            ("y", poisoned(batch * outf)),
            ("params", uniform(&[u(batch), u(inf), u(outf)])),
        ],
        checks: vec![check("y", y, ACCUMULATED)],
    }
}

fn matmul_params(scale: Scale) -> Case {
    let (m, n, k) = scale.pick((1024, 1024, 1024), (64, 72, 64));
    let mut rng = Rng::new(10);
    let a = rng.unit(m * k);
    let b = rng.unit(k * n);
    let c = to_f32(matmul(&a, &b, m, n, k));
    Case {
        kernel: &kernels::MATMUL_PARAMS,
        sizes: vec![("m", m as u64), ("n", n as u64), ("k", k as u64)],
        bindings: vec![
            ("a", storage(&a)),
            ("b", storage(&b)),
            ("c", poisoned(m * n)),
            ("params", uniform(&[u(m), u(n), u(k)])),
        ],
        checks: vec![check("c", c, ACCUMULATED)],
    }
}

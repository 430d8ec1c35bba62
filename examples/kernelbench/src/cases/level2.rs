//! Level 2: fusions of a few operators, each with a CPU computation of what it must produce.

use super::level1::{conv3x3, layernorm_rows};
use super::*;
use crate::kernels;

/// The level-2 cases, by kernel name.
pub fn cases() -> Vec<(&'static str, CaseFn)> {
    vec![
        ("GEMM_BIAS_RELU", gemm_bias_relu),
        ("GEMM_GELU", gemm_gelu),
        ("CONV_RELU_POOL", conv_relu_pool),
        ("ADD_LAYERNORM", add_layernorm),
        ("ATTENTION_HEAD", attention_head),
        ("BIAS_GELU", bias_gelu),
        ("SILU_AND_MUL", silu_and_mul),
        ("GEMM_DIVIDE_SUM", gemm_divide_sum),
        ("GEMM_SIGMOID_LOGSUMEXP", gemm_sigmoid_logsumexp),
        ("CAUSAL_SOFTMAX", causal_softmax),
        ("SGEMM", sgemm),
    ]
}

fn gemm_bias_relu(scale: Scale) -> Case {
    let (batch, inf, outf) = scale.pick((1024, 1024, 4096), (20, 24, 30));
    let mut rng = Rng::new(101);
    let x = rng.floats(batch * inf, -1.0, 1.0);
    let w = rng.floats(outf * inf, -1.0, 1.0);
    let bias = rng.floats(outf, -1.0, 1.0);
    let mut y = linear(&x, &w, batch, inf, outf);
    for (i, v) in y.iter_mut().enumerate() {
        *v = (*v + f64::from(bias[i % outf])).max(0.0);
    }
    Case {
        kernel: &kernels::GEMM_BIAS_RELU,
        sizes: vec![
            ("batch", batch as u64),
            ("in_features", inf as u64),
            ("out_features", outf as u64),
        ],
        bindings: vec![
            storage(&x),
            storage(&w),
            storage(&bias),
            poisoned(batch * outf),
            uniform(&[U::U(batch as u64), U::U(inf as u64), U::U(outf as u64)]),
        ],
        checks: vec![check(3, to_f32(y), 1e-3)],
        reference: None,
    }
}

fn gemm_gelu(scale: Scale) -> Case {
    let (m, n, k) = scale.pick((2048, 2048, 1024), (21, 19, 16));
    let mut rng = Rng::new(102);
    let a = rng.floats(m * k, -1.0, 1.0);
    let b = rng.floats(k * n, -1.0, 1.0);
    let c: Vec<f32> = matmul(&a, &b, m, n, k)
        .into_iter()
        .map(|v| gelu(f64::from(v)) as f32)
        .collect();
    Case {
        kernel: &kernels::GEMM_GELU,
        sizes: vec![("m", m as u64), ("n", n as u64), ("k", k as u64)],
        bindings: vec![
            storage(&a),
            storage(&b),
            poisoned(m * n),
            uniform(&[U::U(m as u64), U::U(n as u64), U::U(k as u64)]),
        ],
        checks: vec![check(2, c, 1e-3)],
        reference: None,
    }
}

fn conv_relu_pool(scale: Scale) -> Case {
    let (batch, cin, cout, h, w) = scale.pick((8, 32, 64, 64, 64), (2, 3, 4, 10, 9));
    let mut rng = Rng::new(103);
    let x = rng.floats(batch * cin * h * w, -1.0, 1.0);
    let wt = rng.floats(cout * cin * 9, -1.0, 1.0);
    let bias = rng.floats(cout, -1.0, 1.0);
    let conv = conv3x3(&x, &wt, Some(&bias), batch, cin, cout, h, w);
    let (ph, pw) = (h / 2, w / 2);
    let mut y = vec![0f32; batch * cout * ph * pw];
    for plane in 0..batch * cout {
        for r in 0..ph {
            for c in 0..pw {
                let at = |dr: usize, dc: usize| {
                    conv[plane * h * w + (2 * r + dr) * w + 2 * c + dc].max(0.0)
                };
                y[(plane * ph + r) * pw + c] =
                    at(0, 0).max(at(0, 1)).max(at(1, 0)).max(at(1, 1)) as f32;
            }
        }
    }
    Case {
        kernel: &kernels::CONV_RELU_POOL,
        sizes: vec![
            ("batch", batch as u64),
            ("cin", cin as u64),
            ("cout", cout as u64),
            ("h", h as u64),
            ("w", w as u64),
        ],
        bindings: vec![
            storage(&x),
            storage(&wt),
            storage(&bias),
            poisoned(batch * cout * ph * pw),
            uniform(&[
                U::U(batch as u64),
                U::U(cin as u64),
                U::U(cout as u64),
                U::U(h as u64),
                U::U(w as u64),
            ]),
        ],
        checks: vec![check(3, y, 1e-3)],
        reference: None,
    }
}

fn add_layernorm(scale: Scale) -> Case {
    let (rows, cols) = scale.pick((4096, 2048), (10, 64));
    let mut rng = Rng::new(104);
    let x = rng.floats(rows * cols, -1.0, 1.0);
    let residual = rng.floats(rows * cols, -2.0, 2.0);
    let gamma = rng.floats(cols, -1.0, 1.0);
    let beta = rng.floats(cols, -1.0, 1.0);
    let h: Vec<f32> = x.iter().zip(&residual).map(|(a, b)| a + b).collect();
    let y = layernorm_rows(&h, &gamma, &beta, cols, 1e-5);
    Case {
        kernel: &kernels::ADD_LAYERNORM,
        sizes: vec![("rows", rows as u64), ("cols", cols as u64)],
        bindings: vec![
            storage(&x),
            storage(&residual),
            storage(&gamma),
            storage(&beta),
            poisoned(rows * cols),
            poisoned(rows * cols),
            uniform(&[U::U(rows as u64), U::U(cols as u64), U::F(1e-5)]),
        ],
        checks: vec![check(4, h, 0.0), check(5, y, 1e-4)],
        reference: None,
    }
}

fn attention_head(scale: Scale) -> Case {
    let (seq, d) = scale.pick((2048, 64), (24, 8));
    let mut rng = Rng::new(105);
    let q = rng.floats(seq * d, -1.0, 1.0);
    let k = rng.floats(seq * d, -1.0, 1.0);
    let v = rng.floats(seq * d, -1.0, 1.0);
    let s = 1.0 / (d as f64).sqrt();
    let mut out = vec![0f32; seq * d];
    par_rows(&mut out, d, |i, o| {
        let scores: Vec<f64> = (0..seq)
            .map(|j| {
                (0..d)
                    .map(|c| f64::from(q[i * d + c]) * f64::from(k[j * d + c]))
                    .sum::<f64>()
                    * s
            })
            .collect();
        let m = scores.iter().copied().fold(f64::MIN, f64::max);
        let p: Vec<f64> = scores.iter().map(|x| (x - m).exp()).collect();
        let denom: f64 = p.iter().sum();
        for (c, o) in o.iter_mut().enumerate() {
            *o = ((0..seq)
                .map(|j| p[j] * f64::from(v[j * d + c]))
                .sum::<f64>()
                / denom) as f32;
        }
    });
    Case {
        kernel: &kernels::ATTENTION_HEAD,
        sizes: vec![("seq", seq as u64), ("d", d as u64)],
        bindings: vec![
            storage(&q),
            storage(&k),
            storage(&v),
            poisoned(seq * d),
            uniform(&[U::U(seq as u64), U::U(d as u64)]),
        ],
        checks: vec![check(3, out, 1e-3)],
        reference: None,
    }
}

fn bias_gelu(scale: Scale) -> Case {
    let (rows, cols) = scale.pick((4096, 8192), (12, 40));
    let mut rng = Rng::new(106);
    let x = rng.floats(rows * cols, -4.0, 4.0);
    let bias = rng.floats(cols, -1.0, 1.0);
    let y: Vec<f32> = x
        .iter()
        .enumerate()
        .map(|(i, v)| gelu(f64::from(*v) + f64::from(bias[i % cols])) as f32)
        .collect();
    Case {
        kernel: &kernels::BIAS_GELU,
        sizes: vec![("rows", rows as u64), ("cols", cols as u64)],
        bindings: vec![
            storage(&x),
            storage(&bias),
            poisoned(rows * cols),
            uniform(&[U::U(rows as u64), U::U(cols as u64)]),
        ],
        checks: vec![check(2, y, 1e-4)],
        reference: None,
    }
}

fn silu_and_mul(scale: Scale) -> Case {
    let (tokens, inter) = scale.pick((2048, 8192), (5, 32));
    let mut rng = Rng::new(107);
    let gate_up = rng.floats(tokens * 2 * inter, -4.0, 4.0);
    let mut y = vec![0f32; tokens * inter];
    for t in 0..tokens {
        for j in 0..inter {
            let g = f64::from(gate_up[t * 2 * inter + j]);
            let u = f64::from(gate_up[t * 2 * inter + inter + j]);
            y[t * inter + j] = (g / (1.0 + (-g).exp()) * u) as f32;
        }
    }
    Case {
        kernel: &kernels::SILU_AND_MUL,
        sizes: vec![("tokens", tokens as u64), ("inter", inter as u64)],
        bindings: vec![
            storage(&gate_up),
            poisoned(tokens * inter),
            uniform(&[U::U(tokens as u64), U::U(inter as u64)]),
        ],
        checks: vec![check(1, y, 1e-4)],
        reference: None,
    }
}

fn gemm_divide_sum(scale: Scale) -> Case {
    let (batch, inf, hidden) = scale.pick((1024, 1024, 512), (10, 16, 12));
    let mut rng = Rng::new(108);
    let x = rng.floats(batch * inf, -1.0, 1.0);
    let w = rng.floats(hidden * inf, -1.0, 1.0);
    let z = linear(&x, &w, batch, inf, hidden);
    let y: Vec<f32> = z
        .chunks(hidden)
        .map(|r| (r.iter().map(|v| v / 2.0).sum::<f64>() * 1.5) as f32)
        .collect();
    Case {
        kernel: &kernels::GEMM_DIVIDE_SUM,
        sizes: vec![
            ("batch", batch as u64),
            ("in_features", inf as u64),
            ("hidden", hidden as u64),
        ],
        bindings: vec![
            storage(&x),
            storage(&w),
            poisoned(batch),
            uniform(&[
                U::U(batch as u64),
                U::U(inf as u64),
                U::U(hidden as u64),
                U::F(1.5),
            ]),
        ],
        checks: vec![check(2, y, 1e-3)],
        reference: None,
    }
}

fn gemm_sigmoid_logsumexp(scale: Scale) -> Case {
    let (batch, inf, hidden) = scale.pick((1024, 1024, 512), (10, 16, 12));
    let mut rng = Rng::new(109);
    let x = rng.floats(batch * inf, -1.0, 1.0);
    let w = rng.floats(hidden * inf, -1.0, 1.0);
    let bias = rng.floats(hidden, -1.0, 1.0);
    let z = linear(&x, &w, batch, inf, hidden);
    let y: Vec<f32> = z
        .chunks(hidden)
        .map(|r| {
            r.iter()
                .zip(&bias)
                .map(|(v, b)| (1.0 / (1.0 + (-(v + f64::from(*b))).exp())).exp())
                .sum::<f64>()
                .ln() as f32
        })
        .collect();
    Case {
        kernel: &kernels::GEMM_SIGMOID_LOGSUMEXP,
        sizes: vec![
            ("batch", batch as u64),
            ("in_features", inf as u64),
            ("hidden", hidden as u64),
        ],
        bindings: vec![
            storage(&x),
            storage(&w),
            storage(&bias),
            poisoned(batch),
            uniform(&[U::U(batch as u64), U::U(inf as u64), U::U(hidden as u64)]),
        ],
        checks: vec![check(3, y, 1e-4)],
        reference: None,
    }
}

fn causal_softmax(scale: Scale) -> Case {
    let (heads, seq) = scale.pick((16, 1024), (2, 20));
    let mut rng = Rng::new(110);
    let scores = rng.floats(heads * seq * seq, -30.0, 30.0);
    let mut probs = vec![0f32; heads * seq * seq];
    par_rows(&mut probs, seq, |row, out| {
        let q = row % seq;
        let s = &scores[row * seq..(row + 1) * seq];
        let m = s[..=q]
            .iter()
            .map(|v| f64::from(*v) * 0.125)
            .fold(f64::MIN, f64::max);
        let total: f64 = s[..=q]
            .iter()
            .map(|v| (f64::from(*v) * 0.125 - m).exp())
            .sum();
        for (j, o) in out.iter_mut().enumerate() {
            *o = if j <= q {
                ((f64::from(s[j]) * 0.125 - m).exp() / total) as f32
            } else {
                0.0
            };
        }
    });
    Case {
        kernel: &kernels::CAUSAL_SOFTMAX,
        sizes: vec![("heads", heads as u64), ("seq", seq as u64)],
        bindings: vec![
            storage(&scores),
            poisoned(heads * seq * seq),
            uniform(&[U::U(heads as u64), U::U(seq as u64), U::F(0.125)]),
        ],
        checks: vec![check(1, probs, 1e-4)],
        reference: None,
    }
}

fn sgemm(scale: Scale) -> Case {
    let (m, n, k) = scale.pick((2048, 1024, 512), (19, 23, 17));
    let mut rng = Rng::new(111);
    let a = rng.floats(m * k, -1.0, 1.0);
    let b = rng.floats(k * n, -1.0, 1.0);
    let c = rng.floats(m * n, -1.0, 1.0);
    let ab = matmul(&a, &b, m, n, k);
    let expected: Vec<f32> = ab
        .iter()
        .zip(&c)
        .map(|(ab, c)| (1.5 * f64::from(*ab) - 0.5 * f64::from(*c)) as f32)
        .collect();
    Case {
        kernel: &kernels::SGEMM,
        sizes: vec![("m", m as u64), ("n", n as u64), ("k", k as u64)],
        bindings: vec![
            storage(&a),
            storage(&b),
            storage(&c),
            uniform(&[
                U::U(m as u64),
                U::U(n as u64),
                U::U(k as u64),
                U::F(1.5),
                U::F(-0.5),
            ]),
        ],
        checks: vec![check(2, expected, 1e-3)],
        reference: None,
    }
}

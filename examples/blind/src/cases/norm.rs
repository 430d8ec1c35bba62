//! Softmax and normalisations: the softmax, layernorm and rmsnorm classes of the corpus, each
//! computed in f64 with the statistics the kernel uses (the population variance; `eps` added
//! under the square root, with the `f32` value the uniform carries).

use super::*;
use crate::kernels;

/// The cases of this file, by kernel name.
pub fn cases() -> Vec<(&'static str, CaseFn)> {
    vec![
        ("B2_GROUPNORM", b2_groupnorm),
        ("B2_LAYERNORM_WELFORD", b2_layernorm_welford),
        ("B2_RMSNORM_DOT_VEC4", b2_rmsnorm_dot_vec4),
        ("B2_SOFTMAX_ONLINE", b2_softmax_online),
        ("LAYERNORM_EPS", layernorm_eps),
        ("LOG_SOFTMAX_LOOP", log_softmax_loop),
        ("RMSNORM_WGID", rmsnorm_wgid),
        ("SOFTMAX_PARAMS", softmax_params),
        ("SOFTMAX_SELECT_I32", softmax_select_i32),
    ]
}

/// The mean and the population variance of `values`, in f64.
fn moments<'a>(values: impl Iterator<Item = &'a f32> + Clone) -> (f64, f64) {
    let n = values.clone().count() as f64;
    let mean = values.clone().map(|v| f64::from(*v)).sum::<f64>() / n;
    let var = values.map(|v| (f64::from(*v) - mean).powi(2)).sum::<f64>() / n;
    (mean, var)
}

/// LayerNorm of each `cols`-long row, then `* gamma + beta`.
fn layernorm_rows(x: &[f32], gamma: &[f32], beta: &[f32], cols: usize, eps: f32) -> Vec<f32> {
    let mut y = vec![0f32; x.len()];
    par_rows(&mut y, cols, |r, out| {
        let row = &x[r * cols..(r + 1) * cols];
        let (mean, var) = moments(row.iter());
        let rstd = 1.0 / (var + f64::from(eps)).sqrt();
        for i in 0..cols {
            out[i] = ((f64::from(row[i]) - mean) * rstd * f64::from(gamma[i]) + f64::from(beta[i]))
                as f32;
        }
    });
    y
}

/// RMSNorm of each `cols`-long row: `x / sqrt(mean(x^2) + eps) * weight`.
fn rmsnorm_rows(x: &[f32], weight: &[f32], cols: usize, eps: f32) -> Vec<f32> {
    let mut y = vec![0f32; x.len()];
    par_rows(&mut y, cols, |r, out| {
        let row = &x[r * cols..(r + 1) * cols];
        let ms = row.iter().map(|v| f64::from(*v).powi(2)).sum::<f64>() / cols as f64;
        let s = 1.0 / (ms + f64::from(eps)).sqrt();
        for i in 0..cols {
            out[i] = (f64::from(row[i]) * s * f64::from(weight[i])) as f32;
        }
    });
    y
}

fn b2_groupnorm(scale: Scale) -> Case {
    let (n, c, groups, hw) = scale.pick((16, 256, 32, 1024), (2, 16, 4, 49));
    let eps = 1e-5f32;
    let cpg = c / groups;
    let mut rng = Rng::new(301);
    let x = rng.unit(n * c * hw);
    let gamma = rng.unit(c);
    let beta = rng.unit(c);
    let mut y = vec![0f32; n * c * hw];
    // One row per (batch, group): a slab of `cpg` whole channels, contiguous in NCHW.
    par_rows(&mut y, cpg * hw, |slab, out| {
        let g = slab % groups;
        let xs = &x[slab * cpg * hw..(slab + 1) * cpg * hw];
        let (mean, var) = moments(xs.iter());
        let inv_std = 1.0 / (var + f64::from(eps)).sqrt();
        for (i, (o, v)) in out.iter_mut().zip(xs).enumerate() {
            let ch = g * cpg + i / hw;
            *o = ((f64::from(*v) - mean) * inv_std * f64::from(gamma[ch]) + f64::from(beta[ch]))
                as f32;
        }
    });
    Case {
        kernel: &kernels::B2_GROUPNORM,
        sizes: vec![
            ("n", n as u64),
            ("c", c as u64),
            ("groups", groups as u64),
            ("hw", hw as u64),
        ],
        bindings: vec![
            ("x", storage(&x)),
            ("gamma", storage(&gamma)),
            ("beta", storage(&beta)),
            ("y", poisoned(n * c * hw)),
            // `GroupNormParams` is batch, channels, spatial, num_groups, eps: the spec's
            // `uniform(n, c, hw, groups, 1e-5)`, spatial before the group count.
            ("p", uniform(&[u(n), u(c), u(hw), u(groups), f(eps)])),
        ],
        // The header's `tolerance = 1e-3`.
        checks: vec![check("y", y, 1e-3)],
    }
}

fn b2_layernorm_welford(scale: Scale) -> Case {
    let (rows, cols) = scale.pick((4096, 4096), (6, 257));
    let eps = 1e-5f32;
    let mut rng = Rng::new(302);
    let src = rng.floats(rows * cols, -3.0, 5.0);
    let gamma = rng.unit(cols);
    let beta = rng.unit(cols);
    // Welford's update is an order of operations; the mean and variance are the usual ones.
    let dst = layernorm_rows(&src, &gamma, &beta, cols, eps);
    Case {
        kernel: &kernels::B2_LAYERNORM_WELFORD,
        sizes: vec![("rows", rows as u64), ("cols", cols as u64)],
        bindings: vec![
            ("src", storage(&src)),
            ("gamma", storage(&gamma)),
            ("beta", storage(&beta)),
            ("dst", poisoned(rows * cols)),
            ("info", uniform(&[u(rows), u(cols), f(eps)])),
        ],
        // The header's `tolerance = 1e-3`.
        checks: vec![check("dst", dst, 1e-3)],
    }
}

fn b2_rmsnorm_dot_vec4(scale: Scale) -> Case {
    let (rows, cols) = scale.pick((4096, 4096), (8, 256));
    let eps = 1e-6f32;
    let mut rng = Rng::new(303);
    // vec4 rows are float rows: `cols / 4` vec4s each.
    let x = rng.unit(rows * cols);
    let weight = rng.unit(cols);
    let y = rmsnorm_rows(&x, &weight, cols, eps);
    Case {
        kernel: &kernels::B2_RMSNORM_DOT_VEC4,
        sizes: vec![("rows", rows as u64), ("cols", cols as u64)],
        bindings: vec![
            ("x", storage(&x)),
            ("weight", storage(&weight)),
            ("y", poisoned(rows * cols)),
            ("params", uniform(&[u(rows), u(cols), f(eps)])),
        ],
        checks: vec![check("y", y, ACCUMULATED)],
    }
}

fn b2_softmax_online(scale: Scale) -> Case {
    let (rows, cols) = scale.pick((4096, 4096), (8, 300));
    let mut rng = Rng::new(304);
    let x = rng.floats(rows * cols, -8.0, 8.0);
    Case {
        kernel: &kernels::B2_SOFTMAX_ONLINE,
        sizes: vec![("rows", rows as u64), ("cols", cols as u64)],
        bindings: vec![
            ("x", storage(&x)),
            ("y", poisoned(rows * cols)),
            ("uniforms", uniform(&[u(rows), u(cols)])),
        ],
        checks: vec![check("y", softmax_rows(&x, cols), POINTWISE)],
    }
}

fn layernorm_eps(scale: Scale) -> Case {
    let (rows, cols) = scale.pick((4096, 4096), (24, 384));
    let eps = 1e-5f32;
    let mut rng = Rng::new(305);
    let x = rng.floats(rows * cols, -3.0, 5.0);
    let gamma = rng.unit(cols);
    let beta = rng.unit(cols);
    let y = layernorm_rows(&x, &gamma, &beta, cols, eps);
    Case {
        kernel: &kernels::LAYERNORM_EPS,
        sizes: vec![("rows", rows as u64), ("cols", cols as u64)],
        bindings: vec![
            ("x", storage(&x)),
            ("gamma", storage(&gamma)),
            ("beta", storage(&beta)),
            ("y", poisoned(rows * cols)),
            ("params", uniform(&[u(rows), u(cols), f(eps)])),
        ],
        // The header's `tolerance = 1e-3`.
        checks: vec![check("y", y, 1e-3)],
    }
}

fn log_softmax_loop(scale: Scale) -> Case {
    let (rows, cols) = scale.pick((4096, 4096), (33, 500));
    let mut rng = Rng::new(306);
    let logits = rng.floats(rows * cols, -8.0, 8.0);
    let mut logprobs = vec![0f32; rows * cols];
    par_rows(&mut logprobs, cols, |r, out| {
        let row = &logits[r * cols..(r + 1) * cols];
        let m = row.iter().map(|v| f64::from(*v)).fold(f64::MIN, f64::max);
        let lse = m + row
            .iter()
            .map(|v| (f64::from(*v) - m).exp())
            .sum::<f64>()
            .ln();
        for (o, v) in out.iter_mut().zip(row) {
            *o = (f64::from(*v) - lse) as f32;
        }
    });
    Case {
        kernel: &kernels::LOG_SOFTMAX_LOOP,
        sizes: vec![("rows", rows as u64), ("cols", cols as u64)],
        bindings: vec![
            ("logits", storage(&logits)),
            ("logprobs", poisoned(rows * cols)),
            ("dims", uniform(&[u(rows), u(cols)])),
        ],
        checks: vec![check("logprobs", logprobs, POINTWISE)],
    }
}

fn rmsnorm_wgid(scale: Scale) -> Case {
    let (rows, dim) = scale.pick((4096, 4096), (50, 256));
    let eps = 1e-6f32;
    let mut rng = Rng::new(307);
    let hidden = rng.unit(rows * dim);
    let weight = rng.unit(dim);
    let normed = rmsnorm_rows(&hidden, &weight, dim, eps);
    Case {
        kernel: &kernels::RMSNORM_WGID,
        sizes: vec![("rows", rows as u64), ("dim", dim as u64)],
        bindings: vec![
            ("hidden", storage(&hidden)),
            ("weight", storage(&weight)),
            ("normed", poisoned(rows * dim)),
            // n_rows, dim, eps and a `u32` padding member, the spec's `uniform(rows, dim, 1e-6, 0)`.
            ("cfg", uniform(&[u(rows), u(dim), f(eps), u(0)])),
        ],
        // The header's `tolerance = 1e-3`.
        checks: vec![check("normed", normed, 1e-3)],
    }
}

fn softmax_params(scale: Scale) -> Case {
    let (rows, cols) = scale.pick((4096, 4096), (40, 300));
    let mut rng = Rng::new(308);
    let input = rng.floats(rows * cols, -8.0, 8.0);
    Case {
        kernel: &kernels::SOFTMAX_PARAMS,
        sizes: vec![("rows", rows as u64), ("cols", cols as u64)],
        bindings: vec![
            ("input", storage(&input)),
            ("output", poisoned(rows * cols)),
            ("params", uniform(&[u(rows), u(cols)])),
        ],
        checks: vec![check("output", softmax_rows(&input, cols), POINTWISE)],
    }
}

fn softmax_select_i32(scale: Scale) -> Case {
    let (rows, cols) = scale.pick((4096, 4096), (45, 256));
    let mut rng = Rng::new(309);
    let src = rng.floats(rows * cols, -6.0, 6.0);
    Case {
        kernel: &kernels::SOFTMAX_SELECT_I32,
        sizes: vec![("rows", rows as u64), ("cols", cols as u64)],
        bindings: vec![
            ("src", storage(&src)),
            ("dst", poisoned(rows * cols)),
            // `Shape` is two `i32`s.
            ("shape", uniform(&[i(rows), i(cols)])),
        ],
        checks: vec![check("dst", softmax_rows(&src, cols), POINTWISE)],
    }
}

//! Level 1: single operators, each with a CPU computation of what it must produce.

use super::*;
use crate::kernels;

/// The level-1 cases, by kernel name.
pub fn cases() -> Vec<(&'static str, CaseFn)> {
    vec![
        ("GEMM", gemm),
        ("GEMM_TALL_SKINNY", gemm_tall_skinny),
        ("GEMM_LARGE_K", gemm_large_k),
        ("GEMV", gemv),
        ("BMM", bmm),
        ("CONV2D", conv2d),
        ("DEPTHWISE_CONV", depthwise_conv),
        ("MAXPOOL2D", maxpool2d),
        ("AVGPOOL2D", avgpool2d),
        ("SUM_DIM1", sum_dim1),
        ("MAX_REDUCE", max_reduce),
        ("ARGMAX", argmax),
        ("SOFTMAX", softmax),
        ("LOG_SOFTMAX", log_softmax),
        ("LAYERNORM", layernorm),
        ("RMSNORM", rmsnorm),
        ("GELU", gelu_case),
        ("SILU", silu),
        ("TRANSPOSE", transpose),
        ("CUMSUM", cumsum),
        ("EMBEDDING", embedding),
    ]
}

fn gemm(scale: Scale) -> Case {
    let (m, n, k) = scale.pick((1024, 1024, 1024), (37, 70, 40));
    let mut rng = Rng::new(1);
    let a = rng.floats(m * k, -1.0, 1.0);
    let b = rng.floats(k * n, -1.0, 1.0);
    Case {
        kernel: &kernels::GEMM,
        sizes: vec![("m", m as u64), ("n", n as u64), ("k", k as u64)],
        bindings: vec![
            storage(&a),
            storage(&b),
            poisoned(m * n),
            uniform(&[U::U(m as u64), U::U(n as u64), U::U(k as u64)]),
        ],
        checks: vec![check(2, matmul(&a, &b, m, n, k), 1e-3)],
        reference: Some(Reference {
            label: "gemm_tiled.wgsl",
            wgsl: include_str!("../shaders/reference/gemm_tiled.wgsl"),
            workgroups: &["(n + 63) / 64", "(m + 63) / 64"],
            needs_subgroups: false,
        }),
    }
}

fn gemm_tall_skinny(scale: Scale) -> Case {
    let (m, n, k) = scale.pick((16384, 64, 1024), (300, 8, 24));
    let mut rng = Rng::new(2);
    let x = rng.floats(m * k, -1.0, 1.0);
    let w = rng.floats(k * n, -1.0, 1.0);
    Case {
        kernel: &kernels::GEMM_TALL_SKINNY,
        sizes: vec![("m", m as u64), ("n", n as u64), ("k", k as u64)],
        bindings: vec![
            storage(&x),
            storage(&w),
            poisoned(m * n),
            uniform(&[U::U(m as u64), U::U(n as u64), U::U(k as u64)]),
        ],
        checks: vec![check(2, matmul(&x, &w, m, n, k), 1e-3)],
        reference: None,
    }
}

fn gemm_large_k(scale: Scale) -> Case {
    let (m, n, k) = scale.pick((256, 256, 65536), (6, 10, 3000));
    let mut rng = Rng::new(3);
    let a = rng.floats(m * k, -1.0, 1.0);
    let b = rng.floats(k * n, -1.0, 1.0);
    Case {
        kernel: &kernels::GEMM_LARGE_K,
        sizes: vec![("m", m as u64), ("n", n as u64), ("k", k as u64)],
        bindings: vec![
            storage(&a),
            storage(&b),
            poisoned(m * n),
            uniform(&[U::U(m as u64), U::U(n as u64)]),
            uniform(&[U::U(k as u64)]),
        ],
        checks: vec![check(2, matmul(&a, &b, m, n, k), 1e-3)],
        reference: None,
    }
}

fn gemv(scale: Scale) -> Case {
    let (rows, cols) = scale.pick((8192, 2048), (100, 77));
    let mut rng = Rng::new(4);
    let a = rng.floats(rows * cols, -1.0, 1.0);
    let x = rng.floats(cols, -1.0, 1.0);
    Case {
        kernel: &kernels::GEMV,
        sizes: vec![("rows", rows as u64), ("cols", cols as u64)],
        bindings: vec![
            storage(&a),
            storage(&x),
            poisoned(rows),
            uniform(&[U::U(rows as u64), U::U(cols as u64)]),
        ],
        checks: vec![check(2, matmul(&a, &x, rows, 1, cols), 1e-3)],
        reference: None,
    }
}

fn bmm(scale: Scale) -> Case {
    let (batch, m, n, k) = scale.pick((128, 128, 512, 256), (3, 9, 17, 11));
    let mut rng = Rng::new(5);
    let a = rng.floats(batch * m * k, -1.0, 1.0);
    let b = rng.floats(batch * k * n, -1.0, 1.0);
    let mut c = Vec::with_capacity(batch * m * n);
    for i in 0..batch {
        c.extend(matmul(
            &a[i * m * k..(i + 1) * m * k],
            &b[i * k * n..(i + 1) * k * n],
            m,
            n,
            k,
        ));
    }
    Case {
        kernel: &kernels::BMM,
        sizes: vec![
            ("batch", batch as u64),
            ("m", m as u64),
            ("n", n as u64),
            ("k", k as u64),
        ],
        bindings: vec![
            storage(&a),
            storage(&b),
            poisoned(batch * m * n),
            uniform(&[
                U::U(batch as u64),
                U::U(m as u64),
                U::U(n as u64),
                U::U(k as u64),
            ]),
        ],
        checks: vec![check(2, c, 1e-3)],
        reference: None,
    }
}

/// 3x3, stride 1, zero padding 1, NCHW; `bias` per output channel when given.
#[allow(clippy::too_many_arguments)]
pub fn conv3x3(
    x: &[f32],
    w: &[f32],
    bias: Option<&[f32]>,
    batch: usize,
    cin: usize,
    cout: usize,
    h: usize,
    wd: usize,
) -> Vec<f64> {
    let mut out = vec![0f64; batch * cout * h * wd];
    par_rows(&mut out, h * wd, |plane, o| {
        let (n, oc) = (plane / cout, plane % cout);
        for oy in 0..h {
            for ox in 0..wd {
                let mut acc = bias.map_or(0.0, |b| f64::from(b[oc]));
                for ic in 0..cin {
                    for ky in 0..3 {
                        for kx in 0..3 {
                            let (iy, ix) = (oy + ky, ox + kx);
                            if iy < 1 || iy > h || ix < 1 || ix > wd {
                                continue;
                            }
                            let xv = x[((n * cin + ic) * h + iy - 1) * wd + ix - 1];
                            let wv = w[((oc * cin + ic) * 3 + ky) * 3 + kx];
                            acc += f64::from(xv) * f64::from(wv);
                        }
                    }
                }
                o[oy * wd + ox] = acc;
            }
        }
    });
    out
}

fn conv2d(scale: Scale) -> Case {
    let (batch, cin, cout, h, w) = scale.pick((8, 64, 128, 56, 56), (2, 3, 4, 9, 11));
    let mut rng = Rng::new(6);
    let x = rng.floats(batch * cin * h * w, -1.0, 1.0);
    let wt = rng.floats(cout * cin * 9, -1.0, 1.0);
    let y = to_f32(conv3x3(&x, &wt, None, batch, cin, cout, h, w));
    Case {
        kernel: &kernels::CONV2D,
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
            poisoned(batch * cout * h * w),
            uniform(&[
                U::U(batch as u64),
                U::U(cin as u64),
                U::U(cout as u64),
                U::U(h as u64),
                U::U(w as u64),
            ]),
        ],
        checks: vec![check(2, y, 1e-3)],
        reference: None,
    }
}

fn depthwise_conv(scale: Scale) -> Case {
    let (batch, channels, h, w) = scale.pick((8, 256, 56, 56), (2, 5, 7, 9));
    let mut rng = Rng::new(7);
    let x = rng.floats(batch * channels * h * w, -1.0, 1.0);
    let filt = rng.floats(channels * 9, -1.0, 1.0);
    let bias = rng.floats(channels, -1.0, 1.0);
    let mut y = vec![0f32; batch * channels * h * w];
    par_rows(&mut y, h * w, |plane, out| {
        let ch = plane % channels;
        let src = &x[plane * h * w..(plane + 1) * h * w];
        for r in 0..h {
            for c in 0..w {
                let mut s = f64::from(bias[ch]);
                for dy in 0..3 {
                    for dx in 0..3 {
                        let (rr, cc) = (r + dy, c + dx);
                        if rr >= 1 && rr <= h && cc >= 1 && cc <= w {
                            s += f64::from(src[(rr - 1) * w + cc - 1])
                                * f64::from(filt[ch * 9 + dy * 3 + dx]);
                        }
                    }
                }
                out[r * w + c] = s as f32;
            }
        }
    });
    Case {
        kernel: &kernels::DEPTHWISE_CONV,
        sizes: vec![
            ("batch", batch as u64),
            ("channels", channels as u64),
            ("h", h as u64),
            ("w", w as u64),
        ],
        bindings: vec![
            storage(&x),
            storage(&filt),
            storage(&bias),
            poisoned(batch * channels * h * w),
            uniform(&[
                U::U(batch as u64),
                U::U(channels as u64),
                U::U(h as u64),
                U::U(w as u64),
            ]),
        ],
        checks: vec![check(3, y, 1e-4)],
        reference: None,
    }
}

fn maxpool2d(scale: Scale) -> Case {
    let (planes, h, w) = scale.pick((512, 112, 112), (3, 9, 12));
    let (oh, ow) = (h / 2, w / 2);
    let mut rng = Rng::new(8);
    let x = rng.floats(planes * h * w, -1.0, 1.0);
    let mut y = vec![0f32; planes * oh * ow];
    for p in 0..planes {
        for r in 0..oh {
            for c in 0..ow {
                let at = |dr: usize, dc: usize| x[p * h * w + (2 * r + dr) * w + 2 * c + dc];
                y[(p * oh + r) * ow + c] = at(0, 0).max(at(0, 1)).max(at(1, 0)).max(at(1, 1));
            }
        }
    }
    Case {
        kernel: &kernels::MAXPOOL2D,
        sizes: vec![("planes", planes as u64), ("h", h as u64), ("w", w as u64)],
        bindings: vec![
            storage(&x),
            poisoned(planes * oh * ow),
            uniform(&[U::U(planes as u64), U::U(h as u64), U::U(w as u64)]),
        ],
        checks: vec![check(1, y, 0.0)],
        reference: None,
    }
}

fn avgpool2d(scale: Scale) -> Case {
    let (planes, h, w) = scale.pick((512, 112, 112), (3, 11, 8));
    let (oh, ow) = ((h - 3) / 2 + 1, (w - 3) / 2 + 1);
    let mut rng = Rng::new(9);
    let x = rng.floats(planes * h * w, -1.0, 1.0);
    let mut y = vec![0f32; planes * oh * ow];
    for p in 0..planes {
        for r in 0..oh {
            for c in 0..ow {
                let mut s = 0f64;
                for ky in 0..3 {
                    for kx in 0..3 {
                        s += f64::from(x[(p * h + 2 * r + ky) * w + 2 * c + kx]);
                    }
                }
                y[(p * oh + r) * ow + c] = (s / 9.0) as f32;
            }
        }
    }
    Case {
        kernel: &kernels::AVGPOOL2D,
        sizes: vec![("planes", planes as u64), ("h", h as u64), ("w", w as u64)],
        bindings: vec![
            storage(&x),
            poisoned(planes * oh * ow),
            uniform(&[U::U(planes as u64), U::U(h as u64), U::U(w as u64)]),
        ],
        checks: vec![check(1, y, 1e-5)],
        reference: None,
    }
}

fn sum_dim1(scale: Scale) -> Case {
    let (batch, rows, cols) = scale.pick((32, 1024, 1024), (3, 20, 33));
    let mut rng = Rng::new(10);
    let x = rng.floats(batch * rows * cols, -1.0, 1.0);
    let mut y = vec![0f32; batch * cols];
    par_rows(&mut y, cols, |b, out| {
        for (c, o) in out.iter_mut().enumerate() {
            *o = (0..rows)
                .map(|r| f64::from(x[(b * rows + r) * cols + c]))
                .sum::<f64>() as f32;
        }
    });
    Case {
        kernel: &kernels::SUM_DIM1,
        sizes: vec![
            ("batch", batch as u64),
            ("rows", rows as u64),
            ("cols", cols as u64),
        ],
        bindings: vec![
            storage(&x),
            poisoned(batch * cols),
            uniform(&[U::U(batch as u64), U::U(rows as u64), U::U(cols as u64)]),
        ],
        checks: vec![check(1, y, 1e-4)],
        reference: None,
    }
}

fn max_reduce(scale: Scale) -> Case {
    let (rows, cols) = scale.pick((8192, 4096), (50, 70));
    let mut rng = Rng::new(11);
    let x = rng.floats(rows * cols, -1.0, 1.0);
    let y: Vec<f32> = x
        .chunks(cols)
        .map(|r| r.iter().copied().fold(f32::MIN, f32::max))
        .collect();
    Case {
        kernel: &kernels::MAX_REDUCE,
        sizes: vec![("rows", rows as u64), ("cols", cols as u64)],
        bindings: vec![
            storage(&x),
            poisoned(rows),
            uniform(&[U::U(rows as u64)]),
            uniform(&[U::U(cols as u64)]),
        ],
        checks: vec![check(1, y, 0.0)],
        reference: None,
    }
}

fn argmax(scale: Scale) -> Case {
    let (rows, cols) = scale.pick((4096, 4096), (40, 90));
    let mut rng = Rng::new(12);
    let x = rng.floats(rows * cols, -1.0, 1.0);
    let idx: Vec<u32> = x
        .chunks(cols)
        .map(|r| {
            let mut best = 0;
            for (i, v) in r.iter().enumerate() {
                if *v > r[best] {
                    best = i;
                }
            }
            best as u32
        })
        .collect();
    Case {
        kernel: &kernels::ARGMAX,
        sizes: vec![("rows", rows as u64), ("cols", cols as u64)],
        bindings: vec![
            storage(&x),
            poisoned_u32(rows),
            uniform(&[U::U(rows as u64), U::U(cols as u64)]),
        ],
        checks: vec![Check {
            binding: 1,
            expected: Expected::U32(idx),
            tolerance: 0.0,
        }],
        reference: None,
    }
}

/// Row softmax in f64.
fn softmax_rows(x: &[f32], cols: usize, scale: f64) -> Vec<f32> {
    let mut y = vec![0f32; x.len()];
    par_rows(&mut y, cols, |r, out| {
        let row = &x[r * cols..(r + 1) * cols];
        let m = row
            .iter()
            .map(|v| f64::from(*v) * scale)
            .fold(f64::MIN, f64::max);
        let s: f64 = row.iter().map(|v| (f64::from(*v) * scale - m).exp()).sum();
        for (o, v) in out.iter_mut().zip(row) {
            *o = ((f64::from(*v) * scale - m).exp() / s) as f32;
        }
    });
    y
}

fn softmax(scale: Scale) -> Case {
    let (rows, cols) = scale.pick((4096, 4096), (20, 300));
    let mut rng = Rng::new(13);
    let x = rng.floats(rows * cols, -8.0, 8.0);
    Case {
        kernel: &kernels::SOFTMAX,
        sizes: vec![("rows", rows as u64), ("cols", cols as u64)],
        bindings: vec![
            storage(&x),
            poisoned(rows * cols),
            uniform(&[U::U(rows as u64), U::U(cols as u64)]),
        ],
        checks: vec![check(1, softmax_rows(&x, cols, 1.0), 1e-4)],
        reference: Some(Reference {
            label: "softmax_rowwise.wgsl",
            wgsl: include_str!("../shaders/reference/softmax_rowwise.wgsl"),
            workgroups: &["rows"],
            needs_subgroups: true,
        }),
    }
}

fn log_softmax(scale: Scale) -> Case {
    let (rows, cols) = scale.pick((2048, 8192), (30, 100));
    let mut rng = Rng::new(14);
    let x = rng.floats(rows * cols, -8.0, 8.0);
    let mut y = vec![0f32; rows * cols];
    par_rows(&mut y, cols, |r, out| {
        let row = &x[r * cols..(r + 1) * cols];
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
        kernel: &kernels::LOG_SOFTMAX,
        sizes: vec![("rows", rows as u64), ("cols", cols as u64)],
        bindings: vec![
            storage(&x),
            poisoned(rows * cols),
            uniform(&[U::U(rows as u64), U::U(cols as u64)]),
        ],
        checks: vec![check(1, y, 1e-4)],
        reference: None,
    }
}

/// LayerNorm of each row in f64, then `* gamma + beta`.
pub fn layernorm_rows(x: &[f32], gamma: &[f32], beta: &[f32], cols: usize, eps: f64) -> Vec<f32> {
    let mut y = vec![0f32; x.len()];
    par_rows(&mut y, cols, |r, out| {
        let row = &x[r * cols..(r + 1) * cols];
        let mean = row.iter().map(|v| f64::from(*v)).sum::<f64>() / cols as f64;
        let var = row
            .iter()
            .map(|v| (f64::from(*v) - mean).powi(2))
            .sum::<f64>()
            / cols as f64;
        let rstd = 1.0 / (var + eps).sqrt();
        for i in 0..cols {
            out[i] = ((f64::from(row[i]) - mean) * rstd * f64::from(gamma[i]) + f64::from(beta[i]))
                as f32;
        }
    });
    y
}

fn layernorm(scale: Scale) -> Case {
    let (rows, cols) = scale.pick((4096, 4096), (20, 300));
    let mut rng = Rng::new(15);
    let x = rng.floats(rows * cols, -3.0, 5.0);
    let gamma = rng.floats(cols, -1.0, 1.0);
    let beta = rng.floats(cols, -1.0, 1.0);
    let y = layernorm_rows(&x, &gamma, &beta, cols, 1e-5);
    Case {
        kernel: &kernels::LAYERNORM,
        sizes: vec![("rows", rows as u64), ("cols", cols as u64)],
        bindings: vec![
            storage(&x),
            storage(&gamma),
            storage(&beta),
            poisoned(rows * cols),
            uniform(&[U::U(rows as u64), U::U(cols as u64), U::F(1e-5)]),
        ],
        checks: vec![check(3, y, 1e-4)],
        reference: Some(Reference {
            label: "layernorm_rowwise.wgsl",
            wgsl: include_str!("../shaders/reference/layernorm_rowwise.wgsl"),
            workgroups: &["rows"],
            needs_subgroups: true,
        }),
    }
}

fn rmsnorm(scale: Scale) -> Case {
    let (rows, cols) = scale.pick((8192, 2048), (33, 64));
    let mut rng = Rng::new(16);
    let x = rng.floats(rows * cols, -1.0, 1.0);
    let weight = rng.floats(cols, -1.0, 1.0);
    let mut y = vec![0f32; rows * cols];
    par_rows(&mut y, cols, |r, out| {
        let row = &x[r * cols..(r + 1) * cols];
        let ms = row.iter().map(|v| f64::from(*v).powi(2)).sum::<f64>() / cols as f64;
        let s = 1.0 / (ms + 1e-6).sqrt();
        for i in 0..cols {
            out[i] = (f64::from(row[i]) * s * f64::from(weight[i])) as f32;
        }
    });
    Case {
        kernel: &kernels::RMSNORM,
        sizes: vec![("rows", rows as u64), ("cols", cols as u64)],
        bindings: vec![
            storage(&x),
            storage(&weight),
            poisoned(rows * cols),
            uniform(&[U::U(rows as u64), U::U(cols as u64)]),
            uniform(&[U::F(1e-6)]),
        ],
        checks: vec![check(2, y, 1e-4)],
        reference: None,
    }
}

fn gelu_case(scale: Scale) -> Case {
    let n = scale.pick(1 << 24, 10_000);
    let mut rng = Rng::new(17);
    let x = rng.floats(n, -5.0, 5.0);
    let y: Vec<f32> = x.iter().map(|v| gelu(f64::from(*v)) as f32).collect();
    Case {
        kernel: &kernels::GELU,
        sizes: vec![("n", n as u64)],
        bindings: vec![storage(&x), poisoned(n), uniform(&[U::U(n as u64)])],
        checks: vec![check(1, y, 1e-4)],
        reference: None,
    }
}

fn silu(scale: Scale) -> Case {
    let n = scale.pick(1 << 22, 1000);
    let mut rng = Rng::new(18);
    let x = rng.floats(n, -6.0, 6.0);
    let y: Vec<f32> = x
        .iter()
        .map(|v| {
            let v = f64::from(*v);
            (v / (1.0 + (-v).exp())) as f32
        })
        .collect();
    Case {
        kernel: &kernels::SILU,
        sizes: vec![("n", n as u64)],
        bindings: vec![storage(&x), poisoned(n), uniform(&[U::U(n as u64)])],
        checks: vec![check(1, y, 1e-4)],
        reference: None,
    }
}

fn transpose(scale: Scale) -> Case {
    let (rows, cols) = scale.pick((4096, 4096), (30, 47));
    let mut rng = Rng::new(19);
    let x = rng.floats(rows * cols, -1.0, 1.0);
    let mut y = vec![0f32; rows * cols];
    for r in 0..rows {
        for c in 0..cols {
            y[c * rows + r] = x[r * cols + c];
        }
    }
    Case {
        kernel: &kernels::TRANSPOSE,
        sizes: vec![("rows", rows as u64), ("cols", cols as u64)],
        bindings: vec![
            storage(&x),
            poisoned(rows * cols),
            uniform(&[U::U(rows as u64), U::U(cols as u64)]),
        ],
        checks: vec![check(1, y, 0.0)],
        reference: None,
    }
}

fn cumsum(scale: Scale) -> Case {
    let (rows, cols) = scale.pick((4096, 4096), (10, 200));
    let mut rng = Rng::new(20);
    let x = rng.floats(rows * cols, -1.0, 1.0);
    let mut y = vec![0f32; rows * cols];
    par_rows(&mut y, cols, |r, out| {
        let mut run = 0f64;
        for (o, v) in out.iter_mut().zip(&x[r * cols..(r + 1) * cols]) {
            run += f64::from(*v);
            *o = run as f32;
        }
    });
    Case {
        kernel: &kernels::CUMSUM,
        sizes: vec![("rows", rows as u64), ("cols", cols as u64)],
        bindings: vec![
            storage(&x),
            poisoned(rows * cols),
            uniform(&[U::U(rows as u64), U::U(cols as u64)]),
        ],
        checks: vec![check(1, y, 1e-3)],
        reference: None,
    }
}

fn embedding(scale: Scale) -> Case {
    let (tokens, vocab, dim) = scale.pick((4096, 32000, 2048), (7, 50, 24));
    let mut rng = Rng::new(21);
    let ids = rng.ints(tokens, vocab as u32);
    let table = rng.floats(vocab * dim, -1.0, 1.0);
    let y: Vec<f32> = ids
        .iter()
        .flat_map(|&id| table[id as usize * dim..(id as usize + 1) * dim].to_vec())
        .collect();
    Case {
        kernel: &kernels::EMBEDDING,
        sizes: vec![
            ("tokens", tokens as u64),
            ("vocab", vocab as u64),
            ("dim", dim as u64),
        ],
        bindings: vec![
            storage(&ids),
            storage(&table),
            poisoned(tokens * dim),
            uniform(&[U::U(tokens as u64), U::U(dim as u64)]),
        ],
        checks: vec![check(2, y, 0.0)],
        reference: None,
    }
}

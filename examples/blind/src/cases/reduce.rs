//! Reductions, arg-reductions and scans: the reduction, argreduce and scan classes of the corpus.
//! Sums are taken in f64; maxima and indices are exact, and the arg-reductions get inputs with
//! ties so the first-index rule is what decides.

use super::*;
use crate::kernels;

/// The cases of this file, by kernel name.
pub fn cases() -> Vec<(&'static str, CaseFn)> {
    vec![
        ("ARGMAX_ROWS", argmax_rows),
        ("B2_ARGMIN", b2_argmin),
        ("B2_COL_SUM", b2_col_sum),
        ("B2_EXCLUSIVE_SCAN_ROWS", b2_exclusive_scan_rows),
        ("B2_MEAN_COUNTDOWN", b2_mean_countdown),
        ("B2_ROW_MAX_LOOP", b2_row_max_loop),
        ("COL_SUM_STRIDED", col_sum_strided),
        ("CUMSUM_ROWS", cumsum_rows),
        ("ROW_MEAN", row_mean),
    ]
}

/// The first index of each row whose value `better` than every earlier one's, as the kernels'
/// strict compare keeps it: the first index among ties.
fn arg_rows(x: &[f32], cols: usize, better: fn(f32, f32) -> bool) -> Vec<u32> {
    x.chunks(cols)
        .map(|r| {
            let mut best = 0;
            for (i, v) in r.iter().enumerate() {
                if better(*v, r[best]) {
                    best = i;
                }
            }
            best as u32
        })
        .collect()
}

/// The f64 sum of each `cols`-long row of `x`.
fn row_sums(x: &[f32], cols: usize) -> Vec<f64> {
    x.chunks(cols)
        .map(|r| r.iter().map(|v| f64::from(*v)).sum())
        .collect()
}

/// The f64 sum of each column of row-major `x` (rows x cols).
fn col_sums(x: &[f32], cols: usize) -> Vec<f32> {
    let mut sums = vec![0f64; cols];
    for row in x.chunks(cols) {
        for (s, v) in sums.iter_mut().zip(row) {
            *s += f64::from(*v);
        }
    }
    to_f32(sums)
}

/// The running sum of each `cols`-long row of `x` in f64: inclusive (`x[0]` first) or
/// exclusive (`0` first, the row's last value left out).
fn scan_rows(x: &[f32], cols: usize, inclusive: bool) -> Vec<f32> {
    let mut y = vec![0f32; x.len()];
    par_rows(&mut y, cols, |r, out| {
        let mut run = 0f64;
        for (o, v) in out.iter_mut().zip(&x[r * cols..(r + 1) * cols]) {
            if inclusive {
                run += f64::from(*v);
                *o = run as f32;
            } else {
                *o = run as f32;
                run += f64::from(*v);
            }
        }
    });
    y
}

fn argmax_rows(scale: Scale) -> Case {
    let (rows, cols) = scale.pick((4096, 4096), (40, 500));
    let mut rng = Rng::new(201);
    let values = rng.coarse(rows * cols);
    Case {
        kernel: &kernels::ARGMAX_ROWS,
        sizes: vec![("rows", rows as u64), ("cols", cols as u64)],
        bindings: vec![
            ("values", storage(&values)),
            ("indices", poisoned_u32(rows)),
            ("size", uniform(&[u(rows), u(cols)])),
        ],
        checks: vec![check_u32("indices", arg_rows(&values, cols, |v, b| v > b))],
    }
}

fn b2_argmin(scale: Scale) -> Case {
    let (rows, cols) = scale.pick((4096, 4096), (16, 250));
    let mut rng = Rng::new(202);
    let values = rng.coarse(rows * cols);
    Case {
        kernel: &kernels::B2_ARGMIN,
        sizes: vec![("rows", rows as u64), ("cols", cols as u64)],
        bindings: vec![
            ("values", storage(&values)),
            ("indices", poisoned_u32(rows)),
            ("params", uniform(&[u(rows), u(cols)])),
        ],
        checks: vec![check_u32("indices", arg_rows(&values, cols, |v, b| v < b))],
    }
}

fn b2_col_sum(scale: Scale) -> Case {
    let (rows, cols) = scale.pick((4096, 4096), (150, 96));
    let mut rng = Rng::new(203);
    let x = rng.unit(rows * cols);
    Case {
        kernel: &kernels::B2_COL_SUM,
        sizes: vec![("rows", rows as u64), ("cols", cols as u64)],
        bindings: vec![
            ("x", storage(&x)),
            ("out", poisoned(cols)),
            // A read-only storage `vec2<u32>`, the spec's `input(values(rows, cols))`.
            ("shape", storage_u32(&[rows as u32, cols as u32])),
        ],
        checks: vec![check("out", col_sums(&x, cols), ACCUMULATED)],
    }
}

fn b2_exclusive_scan_rows(scale: Scale) -> Case {
    let (rows, cols) = scale.pick((4096, 2048), (20, 230));
    let mut rng = Rng::new(204);
    let x = rng.unit(rows * cols);
    Case {
        kernel: &kernels::B2_EXCLUSIVE_SCAN_ROWS,
        sizes: vec![("rows", rows as u64), ("cols", cols as u64)],
        bindings: vec![
            ("x", storage(&x)),
            ("out", poisoned(rows * cols)),
            // `ScanParams` is two `i32`s.
            ("params", uniform(&[i(rows), i(cols)])),
        ],
        // The header's `tolerance = 1e-3`.
        checks: vec![check("out", scan_rows(&x, cols, false), 1e-3)],
    }
}

fn b2_mean_countdown(scale: Scale) -> Case {
    let (rows, cols) = scale.pick((4096, 4096), (12, 200));
    let mut rng = Rng::new(205);
    let values = rng.unit(rows * cols);
    let means = row_sums(&values, cols)
        .into_iter()
        .map(|s| (s / cols as f64) as f32)
        .collect();
    Case {
        kernel: &kernels::B2_MEAN_COUNTDOWN,
        sizes: vec![("rows", rows as u64), ("cols", cols as u64)],
        // No uniform: the kernel takes both sizes from the buffers' lengths, so they are exact.
        bindings: vec![("values", storage(&values)), ("means", poisoned(rows))],
        checks: vec![check("means", means, ACCUMULATED)],
    }
}

fn b2_row_max_loop(scale: Scale) -> Case {
    let (rows, cols) = scale.pick((4096, 4096), (10, 333));
    let mut rng = Rng::new(206);
    let src = rng.unit(rows * cols);
    let dst = src
        .chunks(cols)
        .map(|r| r.iter().copied().fold(-3.4e38, f32::max))
        .collect();
    Case {
        kernel: &kernels::B2_ROW_MAX_LOOP,
        sizes: vec![("rows", rows as u64), ("cols", cols as u64)],
        bindings: vec![
            ("src", storage(&src)),
            ("dst", poisoned(rows)),
            // `Dims` is two `i32`s.
            ("dims", uniform(&[i(rows), i(cols)])),
        ],
        checks: vec![check("dst", dst, EXACT)],
    }
}

fn col_sum_strided(scale: Scale) -> Case {
    let (rows, cols) = scale.pick((4096, 4096), (150, 70));
    let mut rng = Rng::new(207);
    let x = rng.unit(rows * cols);
    Case {
        kernel: &kernels::COL_SUM_STRIDED,
        sizes: vec![("rows", rows as u64), ("cols", cols as u64)],
        bindings: vec![
            // Binding 0 here, before the matrix; `Dims` is two `i32`s.
            ("dims", uniform(&[i(rows), i(cols)])),
            ("x", storage(&x)),
            ("out", poisoned(cols)),
        ],
        checks: vec![check("out", col_sums(&x, cols), ACCUMULATED)],
    }
}

fn cumsum_rows(scale: Scale) -> Case {
    let (rows, cols) = scale.pick((4096, 2048), (30, 400));
    let mut rng = Rng::new(208);
    let x = rng.unit(rows * cols);
    Case {
        kernel: &kernels::CUMSUM_ROWS,
        sizes: vec![("rows", rows as u64), ("cols", cols as u64)],
        bindings: vec![
            ("x", storage(&x)),
            ("out", poisoned(rows * cols)),
            ("shape", uniform(&[u(rows), u(cols)])),
        ],
        // The header's `tolerance = 1e-3`.
        checks: vec![check("out", scan_rows(&x, cols, true), 1e-3)],
    }
}

fn row_mean(scale: Scale) -> Case {
    let (rows, cols) = scale.pick((4096, 4096), (64, 200));
    let mut rng = Rng::new(209);
    let data = rng.unit(rows * cols);
    let means = row_sums(&data, cols)
        .into_iter()
        .map(|s| (s / cols as f64) as f32)
        .collect();
    Case {
        kernel: &kernels::ROW_MEAN,
        sizes: vec![("rows", rows as u64), ("cols", cols as u64)],
        bindings: vec![
            ("data", storage(&data)),
            // The row count is the output's length, so it is exact.
            ("row_means", poisoned(rows)),
            // A `vec2<u32>` uniform: `.x` rows, `.y` cols.
            ("shape", uniform(&[u(rows), u(cols)])),
        ],
        checks: vec![check("row_means", means, ACCUMULATED)],
    }
}

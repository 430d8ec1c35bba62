//! Elementwise maps, gathers and transposes: the elementwise, gather and transpose classes of the
//! corpus. Copies are checked exactly; a map is computed in f64 from the `f32` value the kernel
//! applies it to.

use super::*;
use crate::kernels;

/// The cases of this file, by kernel name.
pub fn cases() -> Vec<(&'static str, CaseFn)> {
    vec![
        ("B2_BIAS_GELU_TANH", b2_bias_gelu_tanh),
        ("B2_GATHER_ROWS", b2_gather_rows),
        ("B2_SILU_FLAT2D", b2_silu_flat2d),
        ("B2_TRANSPOSE_I32", b2_transpose_i32),
        ("EMBEDDING_LOOKUP", embedding_lookup),
        ("GELU_TANH", gelu_tanh_case),
        ("RESIDUAL_RELU_VEC4", residual_relu_vec4),
        ("TRANSPOSE_GROUPS", transpose_groups),
    ]
}

/// The rows `ids` of `table` (rows of `dim`), one after another.
fn gather(table: &[f32], ids: &[u32], dim: usize) -> Vec<f32> {
    ids.iter()
        .flat_map(|&id| &table[id as usize * dim..(id as usize + 1) * dim])
        .copied()
        .collect()
}

fn b2_bias_gelu_tanh(scale: Scale) -> Case {
    let (rows, cols) = scale.pick((4096, 4096), (24, 160));
    let mut rng = Rng::new(401);
    let x = rng.floats(rows * cols, -4.0, 4.0);
    let bias = rng.unit(cols);
    let y = x
        .iter()
        .enumerate()
        // The sum is the kernel's `f32` add.
        .map(|(i, v)| gelu_tanh(f64::from(v + bias[i % cols])) as f32)
        .collect();
    Case {
        kernel: &kernels::B2_BIAS_GELU_TANH,
        sizes: vec![("rows", rows as u64), ("cols", cols as u64)],
        bindings: vec![
            ("x", storage(&x)),
            ("bias", storage(&bias)),
            ("y", poisoned(rows * cols)),
            ("dims", uniform(&[u(rows), u(cols)])),
        ],
        checks: vec![check("y", y, POINTWISE)],
    }
}

fn b2_gather_rows(scale: Scale) -> Case {
    let (count, vocab, dim) = scale.pick((4096, 32000, 1024), (40, 300, 64));
    let mut rng = Rng::new(402);
    // `range(0, vocab)`.
    let idx = rng.ints(count, vocab as u32);
    let table = rng.unit(vocab * dim);
    let out = gather(&table, &idx, dim);
    Case {
        kernel: &kernels::B2_GATHER_ROWS,
        sizes: vec![
            ("count", count as u64),
            ("vocab", vocab as u64),
            ("dim", dim as u64),
        ],
        bindings: vec![
            ("idx", storage_u32(&idx)),
            ("table", storage(&table)),
            ("out", poisoned(count * dim)),
            ("p", uniform(&[u(count), u(dim)])),
        ],
        checks: vec![check("out", out, EXACT)],
    }
}

fn b2_silu_flat2d(scale: Scale) -> Case {
    let n = scale.pick(4_000_000, 5000);
    let mut rng = Rng::new(403);
    let x = rng.floats(n, -6.0, 6.0);
    let y = x
        .iter()
        .map(|v| {
            let v = f64::from(*v);
            (v / (1.0 + (-v).exp())) as f32
        })
        .collect();
    Case {
        kernel: &kernels::B2_SILU_FLAT2D,
        sizes: vec![("n", n as u64)],
        // No uniform: the bound is `arrayLength(&y)`, so the output holds exactly `n`.
        bindings: vec![("x", storage(&x)), ("y", poisoned(n))],
        checks: vec![check("y", y, POINTWISE)],
    }
}

fn b2_transpose_i32(scale: Scale) -> Case {
    let (rows, cols) = scale.pick((4096, 4096), (56, 88));
    let mut rng = Rng::new(404);
    let src = rng.unit(rows * cols);
    Case {
        kernel: &kernels::B2_TRANSPOSE_I32,
        sizes: vec![("rows", rows as u64), ("cols", cols as u64)],
        bindings: vec![
            ("src", storage(&src)),
            ("dst", poisoned(rows * cols)),
            // `Dims` is two `i32`s.
            ("dims", uniform(&[i(rows), i(cols)])),
        ],
        checks: vec![check("dst", transposed(&src, rows, cols), EXACT)],
    }
}

fn embedding_lookup(scale: Scale) -> Case {
    let (tokens, vocab, dim) = scale.pick((4096, 32000, 2048), (40, 500, 64));
    let mut rng = Rng::new(405);
    // `range(0, vocab)`.
    let ids = rng.ints(tokens, vocab as u32);
    let table = rng.unit(vocab * dim);
    let out = gather(&table, &ids, dim);
    Case {
        kernel: &kernels::EMBEDDING_LOOKUP,
        sizes: vec![
            ("tokens", tokens as u64),
            ("vocab", vocab as u64),
            ("dim", dim as u64),
        ],
        bindings: vec![
            ("ids", storage_u32(&ids)),
            ("table", storage(&table)),
            ("out", poisoned(tokens * dim)),
            ("params", uniform(&[u(tokens), u(dim)])),
        ],
        checks: vec![check("out", out, EXACT)],
    }
}

fn gelu_tanh_case(scale: Scale) -> Case {
    let n = scale.pick(16_000_000, 10_000);
    let mut rng = Rng::new(406);
    let input = rng.floats(n, -5.0, 5.0);
    let output = input
        .iter()
        .map(|v| gelu_tanh(f64::from(*v)) as f32)
        .collect();
    Case {
        kernel: &kernels::GELU_TANH,
        sizes: vec![("n", n as u64)],
        // No uniform: the bound is `arrayLength(&input)`, so the input holds exactly `n`.
        bindings: vec![("input", storage(&input)), ("output", poisoned(n))],
        checks: vec![check("output", output, POINTWISE)],
    }
}

fn residual_relu_vec4(scale: Scale) -> Case {
    let n = scale.pick(16_000_000, 4096);
    let mut rng = Rng::new(407);
    // `n` floats are `n / 4` vec4s.
    let x = rng.unit(n);
    let residual = rng.unit(n);
    // One correctly rounded `f32` add and a max: exact.
    let out = x
        .iter()
        .zip(&residual)
        .map(|(a, b)| (a + b).max(0.0))
        .collect();
    Case {
        kernel: &kernels::RESIDUAL_RELU_VEC4,
        sizes: vec![("n", n as u64)],
        bindings: vec![
            ("x", storage(&x)),
            ("residual", storage(&residual)),
            ("out", poisoned(n)),
            // The element count in vec4s, the spec's `uniform(n / 4)`.
            ("params", uniform(&[u(n / 4)])),
        ],
        checks: vec![check("out", out, EXACT)],
    }
}

fn transpose_groups(scale: Scale) -> Case {
    let (rows, cols) = scale.pick((4096, 4096), (70, 90));
    let mut rng = Rng::new(408);
    let input = rng.unit(rows * cols);
    Case {
        kernel: &kernels::TRANSPOSE_GROUPS,
        sizes: vec![("rows", rows as u64), ("cols", cols as u64)],
        bindings: vec![
            // In bind group 1.
            ("Input", storage(&input)),
            ("Result", poisoned(rows * cols)),
            // `Dimensions` is dimY (rows), then dimX (cols).
            ("DimBuffer", uniform(&[u(rows), u(cols)])),
        ],
        checks: vec![check("Result", transposed(&input, rows, cols), EXACT)],
    }
}

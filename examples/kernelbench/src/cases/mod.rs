//! One [`Case`] per marked kernel: its sizes, the contents of every binding, and the outputs a CPU
//! computation says it must produce.
//!
//! Shapes come in two scales: [`Scale::Real`] is the spec's `sizes(..)` (what the suite is tuned
//! and benchmarked at) and [`Scale::Small`] is tiny and odd-sized, for CPU drivers such as Mesa's
//! lavapipe, which is slow and stops every shader loop after 65535 iterations per invocation.

pub mod level1;
pub mod level2;

use kf_runtime::Kernel;

/// Which shapes to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// The realistic shapes of each kernel's `sizes(..)`.
    Real,
    /// Tiny shapes that keep every invocation far under lavapipe's loop limit.
    Small,
}

impl Scale {
    /// `real` or `small`.
    pub fn pick<T>(self, real: T, small: T) -> T {
        match self {
            Scale::Real => real,
            Scale::Small => small,
        }
    }
}

/// The contents of one binding (group 0, in binding order).
pub enum Binding {
    /// A storage buffer.
    Storage(Vec<u8>),
    /// A uniform buffer.
    Uniform(Vec<u8>),
}

/// An output to compare after the run.
pub struct Check {
    /// Its binding index.
    pub binding: usize,
    /// What the CPU computed.
    pub expected: Expected,
    /// Relative tolerance (see [`compare`]).
    pub tolerance: f64,
}

/// Expected output values.
pub enum Expected {
    /// Floats, compared within the tolerance.
    F32(Vec<f32>),
    /// Integers, compared exactly.
    U32(Vec<u32>),
}

/// A hand-written reference version of a kernel, as named in its `reference(..)` spec.
pub struct Reference {
    /// File name, for the report line.
    pub label: &'static str,
    /// The WGSL (entry point `main`).
    pub wgsl: &'static str,
    /// Workgroup counts per dimension, the same expressions as the spec's launch rule.
    pub workgroups: &'static [&'static str],
    /// Whether it needs the SUBGROUP feature.
    pub needs_subgroups: bool,
}

/// A kernel with its inputs and expected outputs.
pub struct Case {
    /// The marked kernel.
    pub kernel: &'static Kernel,
    /// Named sizes for its launch rule.
    pub sizes: Vec<(&'static str, u64)>,
    /// Every binding's initial contents.
    pub bindings: Vec<Binding>,
    /// Outputs to compare.
    pub checks: Vec<Check>,
    /// The hand-written reference, if the kernel has one.
    pub reference: Option<Reference>,
}

/// Every case of the suite, by kernel name.
pub type CaseFn = fn(Scale) -> Case;

/// The suite, level 1 then level 2.
pub fn all() -> Vec<(&'static str, CaseFn)> {
    let mut all = level1::cases();
    all.extend(level2::cases());
    all
}

/// A small deterministic generator (splitmix64), so every run checks the same inputs.
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// `n` floats uniform in `[lo, hi)`.
    pub fn floats(&mut self, n: usize, lo: f32, hi: f32) -> Vec<f32> {
        (0..n)
            .map(|_| lo + (hi - lo) * ((self.next() >> 40) as f32 / (1u64 << 24) as f32))
            .collect()
    }

    /// `n` integers uniform in `[0, below)`.
    pub fn ints(&mut self, n: usize, below: u32) -> Vec<u32> {
        (0..n)
            .map(|_| (self.next() % u64::from(below)) as u32)
            .collect()
    }
}

/// A storage buffer holding `values`.
pub fn storage<T: bytemuck::Pod>(values: &[T]) -> Binding {
    Binding::Storage(bytemuck::cast_slice(values).to_vec())
}

/// An output buffer of `n` f32 (or u32) filled with poison.
pub fn poisoned(n: usize) -> Binding {
    Binding::Storage(0x7FC0_DEADu32.to_le_bytes().repeat(n))
}

/// An integer output buffer of `n` u32 filled with `0xDEADBEEF`.
pub fn poisoned_u32(n: usize) -> Binding {
    Binding::Storage(0xDEAD_BEEFu32.to_le_bytes().repeat(n))
}

/// One scalar of a uniform, in declaration order.
#[derive(Clone, Copy)]
pub enum U {
    /// A `u32` member.
    U(u64),
    /// An `f32` member.
    F(f32),
}

/// A uniform buffer with 4-byte members in order, padded to 16 bytes.
pub fn uniform(members: &[U]) -> Binding {
    let mut bytes: Vec<u8> = members
        .iter()
        .flat_map(|m| match *m {
            U::U(v) => (v as u32).to_le_bytes(),
            U::F(v) => v.to_le_bytes(),
        })
        .collect();
    bytes.resize(bytes.len().div_ceil(16).max(1) * 16, 0);
    Binding::Uniform(bytes)
}

/// Float output `binding` must equal `expected` within `tolerance`.
pub fn check(binding: usize, expected: Vec<f32>, tolerance: f64) -> Check {
    Check {
        binding,
        expected: Expected::F32(expected),
        tolerance,
    }
}

/// Compares `got` (raw bytes) with `expected`. Floats pass when every element's error is within
/// `tolerance` of its own magnitude, floored at 1 % of the largest expected magnitude (so values
/// near zero in a buffer of large values are not held to an impossible standard); NaN never
/// passes. Integers must be equal. Returns the first mismatch.
pub fn compare(got: &[u8], expected: &Expected, tolerance: f64) -> Result<(), String> {
    match expected {
        Expected::U32(want) => {
            let got: &[u32] = bytemuck::cast_slice(got);
            match got.iter().zip(want).position(|(g, w)| g != w) {
                None => Ok(()),
                Some(i) => Err(format!(
                    "MISMATCH at {i}: got {} expected {}",
                    got[i], want[i]
                )),
            }
        }
        Expected::F32(want) => {
            let got: &[f32] = bytemuck::cast_slice(got);
            let scale = want.iter().fold(0f64, |m, v| m.max(f64::from(v.abs())));
            let floor = (scale * 1e-2).max(f64::MIN_POSITIVE);
            let bad = got.iter().zip(want).position(|(g, w)| {
                let (g, w) = (f64::from(*g), f64::from(*w));
                // NaN never compares as close.
                let close = (g - w).abs() <= tolerance * w.abs().max(floor);
                !close
            });
            match bad {
                None => Ok(()),
                Some(i) => Err(format!(
                    "MISMATCH at {i}: got {} expected {}",
                    got[i], want[i]
                )),
            }
        }
    }
}

/// Runs `f(row_index, row)` over the `row_len`-long rows of `out` on every core.
pub fn par_rows<T: Send>(out: &mut [T], row_len: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    let rows = out.len() / row_len.max(1);
    if rows == 0 {
        return;
    }
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(rows);
    let per = rows.div_ceil(threads);
    std::thread::scope(|s| {
        for (t, chunk) in out.chunks_mut(per * row_len).enumerate() {
            let f = &f;
            s.spawn(move || {
                for (i, row) in chunk.chunks_mut(row_len).enumerate() {
                    f(t * per + i, row);
                }
            });
        }
    });
}

/// `C = A * B` for row-major `a` (m x k) and `b` (k x n), accumulated in f64.
pub fn matmul(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
    let mut c = vec![0f32; m * n];
    par_rows(&mut c, n, |r, row| {
        let mut acc = vec![0f64; n];
        for i in 0..k {
            let av = f64::from(a[r * k + i]);
            for (acc, bv) in acc.iter_mut().zip(&b[i * n..(i + 1) * n]) {
                *acc += av * f64::from(*bv);
            }
        }
        for (c, acc) in row.iter_mut().zip(&acc) {
            *c = *acc as f32;
        }
    });
    c
}

/// `x * W^T` for row-major `x` (rows x inner) and `w` (outs x inner), in f64.
pub fn linear(x: &[f32], w: &[f32], rows: usize, inner: usize, outs: usize) -> Vec<f64> {
    let mut y = vec![0f64; rows * outs];
    par_rows(&mut y, outs, |r, row| {
        let xr = &x[r * inner..(r + 1) * inner];
        for (o, y) in row.iter_mut().enumerate() {
            let wr = &w[o * inner..(o + 1) * inner];
            *y = xr
                .iter()
                .zip(wr)
                .map(|(a, b)| f64::from(*a) * f64::from(*b))
                .sum();
        }
    });
    y
}

/// GELU, tanh approximation.
pub fn gelu(v: f64) -> f64 {
    0.5 * v * (1.0 + (0.797_884_560_802_865_4 * (v + 0.044715 * v * v * v)).tanh())
}

/// Converts f64 results to f32.
pub fn to_f32(v: Vec<f64>) -> Vec<f32> {
    v.into_iter().map(|x| x as f32).collect()
}

//! One [`Case`] per kernel of the blind corpus: its sizes, the contents of every binding, and the
//! outputs a CPU computation says it must produce.
//!
//! Shapes come in two scales: [`Scale::Real`] is the `sizes(..)` of the kernel's attribute in
//! `kernels.rs` (what the corpus is tuned at) and [`Scale::Small`] is the `sizes(..)` of the
//! `// spec:` line in the kernel's header, the CI shape, for CPU drivers such as Mesa's lavapipe,
//! which is slow and stops every shader loop after 65535 iterations per invocation: at the real
//! `seq = 1024`, B2_CAUSAL_ATTENTION's query rows past about 330 run longer than that and come
//! back NaN there, and lavapipe cannot bind EMBEDDING_LOOKUP's 250 MiB table (the app skips it).
//!
//! Each reference follows the WGSL as written (the corpus is never adjusted), in f64 where the
//! kernel accumulates, so a case checks what the kernel computes, not what its author meant; the
//! header's first line and the kernel agree for all 45. Inputs respect the header's `range(..)`
//! (floats default to `[-1, 1)`, as the tuner's); uniforms are packed member by member as the
//! kernel's struct declares them (`u32`, `i32` or `f32`).
//!
//! The cases are split by class: `linalg` (GEMM, GEMV, attention), `conv` (convolutions,
//! pooling, image filters), `reduce` (row and column reductions, arg-reductions, scans), `norm`
//! (softmax, LayerNorm, GroupNorm, RMSNorm) and `pointwise` (elementwise, gathers, transposes).

pub mod conv;
pub mod linalg;
pub mod norm;
pub mod pointwise;
pub mod reduce;

use kf_runtime::Kernel;

/// Which shapes to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// The realistic shapes of each kernel's attribute in `kernels.rs`.
    Real,
    /// The CI shapes of each kernel's header, far under lavapipe's loop limit.
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

/// The contents of one binding.
pub enum Binding {
    /// A storage buffer.
    Storage(Vec<u8>),
    /// A uniform buffer.
    Uniform(Vec<u8>),
}

/// An output to compare after the run.
pub struct Check {
    /// The WGSL variable of its binding.
    pub binding: &'static str,
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

/// A kernel with its inputs and expected outputs.
pub struct Case {
    /// The marked kernel.
    pub kernel: &'static Kernel,
    /// Named sizes for its launch rule (and its size constraints).
    pub sizes: Vec<(&'static str, u64)>,
    /// Every binding's initial contents, by WGSL variable name: the kernels put their bindings in
    /// any order and in more than one bind group, and the name is what the spec binds too.
    pub bindings: Vec<(&'static str, Binding)>,
    /// Outputs to compare.
    pub checks: Vec<Check>,
}

/// Every case of the corpus, by kernel name.
pub type CaseFn = fn(Scale) -> Case;

/// The corpus in the order of `kernels::ALL` (file order).
pub fn all() -> Vec<(&'static str, CaseFn)> {
    let mut all = linalg::cases();
    all.extend(conv::cases());
    all.extend(reduce::cases());
    all.extend(norm::cases());
    all.extend(pointwise::cases());
    let position = |name: &str| crate::kernels::ALL.iter().position(|k| k.name == name);
    all.sort_by_key(|(name, _)| position(name));
    all
}

/// No tolerance: a copy, a max, an index or a single correctly rounded add.
pub const EXACT: f64 = 0.0;
/// A pointwise function or a short sum (the tuner's default tolerance, `1e-4`).
pub const POINTWISE: f64 = 1e-4;
/// A long f32 accumulation (a dot product, a convolution, a reduction over a row) checked
/// against f64: its rounding grows with the length, so the suite allows `1e-3`, as
/// `examples/kernelbench` does for its GEMMs and scans.
pub const ACCUMULATED: f64 = 1e-3;

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

    /// `n` floats uniform in the default range `[-1, 1)`.
    pub fn unit(&mut self, n: usize) -> Vec<f32> {
        self.floats(n, -1.0, 1.0)
    }

    /// `n` floats in `[-1, 1)` on a grid of 16 values, so a row of a few hundred holds its
    /// extremes several times and an arg-reduction's tie rule decides the answer.
    pub fn coarse(&mut self, n: usize) -> Vec<f32> {
        self.ints(n, 16)
            .into_iter()
            .map(|v| (v as f32 - 8.0) / 8.0)
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
pub fn storage(values: &[f32]) -> Binding {
    Binding::Storage(values.iter().flat_map(|v| v.to_le_bytes()).collect())
}

/// A storage buffer holding `values` as `u32`.
pub fn storage_u32(values: &[u32]) -> Binding {
    Binding::Storage(values.iter().flat_map(|v| v.to_le_bytes()).collect())
}

/// An output buffer of `n` f32 filled with poison (a NaN), so an element the kernel never
/// writes cannot pass.
pub fn poisoned(n: usize) -> Binding {
    Binding::Storage(0x7FC0_DEADu32.to_le_bytes().repeat(n))
}

/// An integer output buffer of `n` u32 filled with `0xDEADBEEF`.
pub fn poisoned_u32(n: usize) -> Binding {
    Binding::Storage(0xDEAD_BEEFu32.to_le_bytes().repeat(n))
}

/// One scalar member of a uniform, in declaration order.
#[derive(Clone, Copy)]
pub enum Member {
    /// A `u32` member.
    U(u64),
    /// An `i32` member.
    I(i64),
    /// An `f32` member.
    F(f32),
}

/// A uniform buffer with 4-byte members in order (a `vec2<u32>` is two `u32`s), padded to 16
/// bytes.
pub fn uniform(members: &[Member]) -> Binding {
    let mut bytes: Vec<u8> = members
        .iter()
        .flat_map(|m| match *m {
            Member::U(v) => u32::try_from(v).expect("a u32 member").to_le_bytes(),
            Member::I(v) => i32::try_from(v).expect("an i32 member").to_le_bytes(),
            Member::F(v) => v.to_le_bytes(),
        })
        .collect();
    bytes.resize(bytes.len().div_ceil(16).max(1) * 16, 0);
    Binding::Uniform(bytes)
}

/// `n` as a `u32` uniform member.
pub fn u(n: usize) -> Member {
    Member::U(n as u64)
}

/// `n` as an `i32` uniform member.
pub fn i(n: usize) -> Member {
    Member::I(n as i64)
}

/// `v` as an `f32` uniform member.
pub fn f(v: f32) -> Member {
    Member::F(v)
}

/// Float output `binding` must equal `expected` within `tolerance`.
pub fn check(binding: &'static str, expected: Vec<f32>, tolerance: f64) -> Check {
    Check {
        binding,
        expected: Expected::F32(expected),
        tolerance,
    }
}

/// Integer output `binding` must equal `expected` exactly.
pub fn check_u32(binding: &'static str, expected: Vec<u32>) -> Check {
    Check {
        binding,
        expected: Expected::U32(expected),
        tolerance: EXACT,
    }
}

/// Compares `got` (raw bytes) with `expected`. Floats pass when every element's error is within
/// `tolerance` of its own magnitude, floored at 1 % of the largest expected magnitude (so values
/// near zero in a buffer of large values are not held to an impossible standard); NaN never
/// passes. Integers must be equal. Returns the first mismatch.
pub fn compare(got: &[u8], expected: &Expected, tolerance: f64) -> Result<(), String> {
    let words: Vec<[u8; 4]> = got
        .chunks_exact(4)
        .map(|w| [w[0], w[1], w[2], w[3]])
        .collect();
    match expected {
        Expected::U32(want) => {
            let got: Vec<u32> = words.into_iter().map(u32::from_le_bytes).collect();
            if got.len() != want.len() {
                return Err(format!("{} values, expected {}", got.len(), want.len()));
            }
            match got.iter().zip(want).position(|(g, w)| g != w) {
                None => Ok(()),
                Some(i) => Err(format!(
                    "MISMATCH at {i}: got {} expected {}",
                    got[i], want[i]
                )),
            }
        }
        Expected::F32(want) => {
            let got: Vec<f32> = words.into_iter().map(f32::from_le_bytes).collect();
            if got.len() != want.len() {
                return Err(format!("{} values, expected {}", got.len(), want.len()));
            }
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
pub fn matmul(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f64> {
    let mut c = vec![0f64; m * n];
    par_rows(&mut c, n, |r, row| {
        for i in 0..k {
            let av = f64::from(a[r * k + i]);
            for (c, bv) in row.iter_mut().zip(&b[i * n..(i + 1) * n]) {
                *c += av * f64::from(*bv);
            }
        }
    });
    c
}

/// The transpose of row-major `x` (rows x cols).
pub fn transposed(x: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut t = vec![0f32; rows * cols];
    for r in 0..rows {
        for c in 0..cols {
            t[c * rows + r] = x[r * cols + c];
        }
    }
    t
}

/// Row softmax in f64 of `x` (rows of `cols`).
pub fn softmax_rows(x: &[f32], cols: usize) -> Vec<f32> {
    let mut y = vec![0f32; x.len()];
    par_rows(&mut y, cols, |r, out| {
        let row = &x[r * cols..(r + 1) * cols];
        let m = row.iter().map(|v| f64::from(*v)).fold(f64::MIN, f64::max);
        let s: f64 = row.iter().map(|v| (f64::from(*v) - m).exp()).sum();
        for (o, v) in out.iter_mut().zip(row) {
            *o = ((f64::from(*v) - m).exp() / s) as f32;
        }
    });
    y
}

/// GELU, tanh approximation (the form every GELU kernel of the corpus writes).
pub fn gelu_tanh(v: f64) -> f64 {
    0.5 * v * (1.0 + (0.797_884_560_802_865_4 * (v + 0.044715 * v * v * v)).tanh())
}

/// Converts f64 results to f32.
pub fn to_f32(v: Vec<f64>) -> Vec<f32> {
    v.into_iter().map(|x| x as f32).collect()
}

#[cfg(test)]
mod tests;

//! The structured input distributions (`causal_mask(rows, cols)`, `probabilities(cols)`,
//! `bits()`), as one pure rule per scalar that the tuner's harness and the runtime's measure mode
//! both call, so the two never disagree about what a spec's inputs look like.
//!
//! Kernels that take structured inputs (an attention mask, rows of probabilities, packed integer
//! weights) meet uniform noise only in testing; these distributions give them inputs like the
//! ones they run on.
//!
//! Every value is a function of the buffer's random stream and the scalar's index in address order
//! (the index over the whole buffer, not over a part of it): the harness generates a buffer in
//! fixed parts on every core, and a part must not need the values of any other part. A row of
//! probabilities is normalised by its own sum, which a [`Sampler`] computes from the row's index
//! once per row it visits, so a row split between two parts is the same row in both.
//!
//! Invariant: [`Sampler::value`] depends only on the pattern, the stream, the index and the
//! scalar type, never on which indices were asked before.

use crate::expr::ExprError;
use crate::interface::{BufferLayout, Scalar};
use crate::spec::{Init, Shape};
use std::fmt;

/// A structured distribution evaluated on one shape: its sizes are numbers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pattern {
    /// `causal_mask(rows, cols)`: row-major `rows × cols` blocks, repeated over the buffer; the
    /// element at row `r`, column `c` of a block is `0.0` when `c <= r` and `-inf` above the
    /// diagonal.
    CausalMask {
        /// Rows of one block.
        rows: u64,
        /// Columns of one block.
        cols: u64,
    },
    /// `probabilities(cols)`: consecutive rows of `cols` scalars, each non-negative and summing
    /// to 1 (uniform over the simplex: exponential weights divided by their sum).
    Probabilities {
        /// Scalars per row.
        cols: u64,
    },
    /// `bits()`: integers uniform over the whole range of their type (every bit random).
    Bits,
}

/// What a pattern asks of a buffer's scalars.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needs {
    /// Floats (`f32`, `f16`): the mask holds `-inf`, probabilities are fractions.
    Floats,
    /// Integers (`u32`, `i32`, ..).
    Integers,
}

impl Needs {
    /// What `init` fills, or `None` for a distribution that fits any scalar.
    pub fn of(init: &Init) -> Option<Needs> {
        match init {
            Init::CausalMask(..) | Init::Probabilities(_) => Some(Needs::Floats),
            Init::Bits => Some(Needs::Integers),
            Init::Range(..) | Init::Constant(_) | Init::Values(_) => None,
        }
    }

    /// Whether a scalar of type `scalar` can hold it.
    pub fn accepts(self, scalar: Scalar) -> bool {
        match self {
            Needs::Floats => matches!(scalar, Scalar::F32 | Scalar::F16),
            Needs::Integers => !scalar.is_float(),
        }
    }
}

impl fmt::Display for Needs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Needs::Floats => "float (`f32`, `f16`)",
            Needs::Integers => "integer (`u32`, `i32`)",
        })
    }
}

impl Pattern {
    /// The pattern of `init` on `shape`, or `None` for the other distributions.
    pub fn of(init: &Init, shape: &Shape) -> Result<Option<Pattern>, ExprError> {
        let eval = |e: &crate::expr::SizeExpr| e.eval(|n| shape.get(n).copied());
        Ok(Some(match init {
            Init::CausalMask(rows, cols) => Pattern::CausalMask {
                rows: eval(rows)?,
                cols: eval(cols)?,
            },
            Init::Probabilities(cols) => Pattern::Probabilities { cols: eval(cols)? },
            Init::Bits => Pattern::Bits,
            Init::Range(..) | Init::Constant(_) | Init::Values(_) => return Ok(None),
        }))
    }

    /// The scalar type it fills.
    pub fn needs(&self) -> Needs {
        match self {
            Pattern::CausalMask { .. } | Pattern::Probabilities { .. } => Needs::Floats,
            Pattern::Bits => Needs::Integers,
        }
    }

    /// Scalars in one block (a mask) or row (probabilities): the buffer's scalar count must be a
    /// multiple of it.
    pub fn period(&self) -> u64 {
        match *self {
            Pattern::CausalMask { rows, cols } => rows.saturating_mul(cols),
            Pattern::Probabilities { cols } => cols,
            Pattern::Bits => 1,
        }
    }

    /// Whether a buffer laid out as `layout` with `len` array elements can hold the pattern: every
    /// scalar of the type it fills, and a whole number of blocks or rows. `Err` says why not.
    pub fn check(&self, layout: &BufferLayout, len: u64) -> Result<(), String> {
        let needs = self.needs();
        let fields = layout.array.iter().flat_map(|a| &a.fields);
        if let Some(f) = layout
            .header
            .iter()
            .chain(fields)
            .find(|f| !needs.accepts(f.scalar))
        {
            return Err(format!(
                "{} fills {needs} scalars, not `{}`",
                self.name(),
                format!("{:?}", f.scalar).to_lowercase()
            ));
        }
        let period = self.period();
        if period == 0 {
            return Err(format!("{} has a size of 0", self.name()));
        }
        let scalars = layout.scalar_count(len);
        if !scalars.is_multiple_of(period) {
            return Err(format!(
                "{} repeats every {period} scalars, which does not divide the buffer's {scalars}",
                self.name()
            ));
        }
        Ok(())
    }

    fn name(&self) -> &'static str {
        match self {
            Pattern::CausalMask { .. } => "`causal_mask(rows, cols)`",
            Pattern::Probabilities { .. } => "`probabilities(cols)`",
            Pattern::Bits => "`bits()`",
        }
    }

    /// Whether the values depend on the trial's seed (a mask does not).
    pub fn seeded(&self) -> bool {
        !matches!(self, Pattern::CausalMask { .. })
    }
}

/// The values of a [`Pattern`] on one random stream, asked scalar by scalar.
#[derive(Clone, Debug)]
pub struct Sampler {
    pattern: Pattern,
    stream: u64,
    /// The last row of probabilities visited and its sum of weights.
    row: Option<(u64, f64)>,
}

impl Sampler {
    /// A sampler of `pattern` on `stream` (the buffer's random stream for the trial).
    pub fn new(pattern: Pattern, stream: u64) -> Sampler {
        Sampler {
            pattern,
            stream,
            row: None,
        }
    }

    /// The value of the scalar number `index` (in address order over the buffer), of type
    /// `scalar`, as the caller writes it (a float, or an integer in the type's range).
    pub fn value(&mut self, index: u64, scalar: Scalar) -> f64 {
        match self.pattern {
            Pattern::CausalMask { rows, cols } => {
                let at = index % (rows * cols);
                if at % cols <= at / cols {
                    0.0
                } else {
                    f64::NEG_INFINITY
                }
            }
            Pattern::Probabilities { cols } => {
                let row = index / cols;
                let sum = match self.row {
                    Some((r, sum)) if r == row => sum,
                    _ => {
                        let sum = (row * cols..(row + 1) * cols)
                            .map(|i| weight(self.stream, i))
                            .sum::<f64>();
                        self.row = Some((row, sum));
                        sum
                    }
                };
                if sum > 0.0 {
                    weight(self.stream, index) / sum
                } else {
                    // Every weight of the row drew 0 (a chance of 2^-53 per scalar).
                    1.0 / cols as f64
                }
            }
            Pattern::Bits => {
                let raw = mix(self.stream, index);
                match scalar {
                    Scalar::U32 => f64::from(raw as u32),
                    Scalar::I32 => f64::from(raw as u32 as i32),
                    Scalar::U16 => f64::from(raw as u16),
                    Scalar::I16 => f64::from(raw as u16 as i16),
                    Scalar::U8 => f64::from(raw as u8),
                    Scalar::I8 => f64::from(raw as u8 as i8),
                    // Not an integer: `Pattern::check` refuses it; a finite value all the same.
                    _ => (raw >> 11) as f64 / (1u64 << 53) as f64,
                }
            }
        }
    }
}

/// An exponential weight, `-ln(1 - u)` for `u` uniform in [0, 1): divided by the sum of its row,
/// a row of them is uniform over the probability simplex.
fn weight(stream: u64, index: u64) -> f64 {
    let unit = (mix(stream, index) >> 11) as f64 / (1u64 << 53) as f64;
    -(1.0 - unit).ln()
}

/// 64 random bits for the scalar `index` of `stream` (SplitMix64's finaliser over both).
fn mix(stream: u64, index: u64) -> u64 {
    let mut z = stream ^ index.wrapping_add(1).wrapping_mul(0xD1B5_4A32_D192_ED03);
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(pattern: Pattern, n: u64, scalar: Scalar) -> Vec<f64> {
        let mut s = Sampler::new(pattern, 42);
        (0..n).map(|i| s.value(i, scalar)).collect()
    }

    #[test]
    fn the_causal_mask_is_zero_on_and_below_the_diagonal_and_minus_infinity_above() {
        let (rows, cols, blocks) = (5, 7, 3);
        let v = values(
            Pattern::CausalMask { rows, cols },
            blocks * rows * cols,
            Scalar::F32,
        );
        for (i, x) in v.iter().enumerate() {
            let i = i as u64;
            let (r, c) = ((i / cols) % rows, i % cols);
            let want = if c <= r { 0.0 } else { f64::NEG_INFINITY };
            assert_eq!(*x, want, "block {} row {r} col {c}", i / (rows * cols));
        }
        // Wider than tall and taller than wide.
        let v = values(Pattern::CausalMask { rows: 2, cols: 3 }, 6, Scalar::F32);
        assert_eq!(v[..3], [0.0, f64::NEG_INFINITY, f64::NEG_INFINITY]);
        assert_eq!(v[3..], [0.0, 0.0, f64::NEG_INFINITY]);
        let v = values(Pattern::CausalMask { rows: 3, cols: 1 }, 3, Scalar::F32);
        assert_eq!(v, [0.0, 0.0, 0.0]);
    }

    #[test]
    fn probability_rows_are_non_negative_and_sum_to_one_in_f32() {
        for cols in [1, 2, 17, 1000] {
            let rows = 40;
            let v = values(Pattern::Probabilities { cols }, rows * cols, Scalar::F32);
            for row in v.chunks(cols as usize) {
                let f: Vec<f32> = row.iter().map(|x| *x as f32).collect();
                assert!(f.iter().all(|x| *x >= 0.0 && x.is_finite()), "{f:?}");
                let sum: f32 = f.iter().sum();
                let bound = cols as f32 * f32::EPSILON;
                assert!((sum - 1.0).abs() <= bound, "cols {cols}: sum {sum}");
            }
            if cols > 1 {
                assert!(v.iter().any(|x| *x != v[0]), "not a constant row");
            }
        }
    }

    #[test]
    fn values_do_not_depend_on_where_a_caller_starts() {
        // A row of probabilities split between two parts of the buffer is the same row in both.
        for pattern in [
            Pattern::Probabilities { cols: 9 },
            Pattern::CausalMask { rows: 4, cols: 3 },
            Pattern::Bits,
        ] {
            let all = values(pattern, 90, Scalar::F32);
            let mut late = Sampler::new(pattern, 42);
            for i in (0..90).rev() {
                assert_eq!(
                    late.value(i, Scalar::F32).to_bits(),
                    all[i as usize].to_bits()
                );
            }
        }
    }

    #[test]
    fn bits_reach_the_whole_range_of_the_type() {
        let v = values(Pattern::Bits, 4096, Scalar::U32);
        assert!(
            v.iter()
                .all(|x| *x >= 0.0 && *x <= f64::from(u32::MAX) && x.fract() == 0.0)
        );
        assert!(
            v.iter().any(|x| *x >= f64::from(1u32 << 31)),
            "high bit set"
        );
        assert!(
            v.iter().any(|x| *x < f64::from(1u32 << 31)),
            "high bit clear"
        );
        // Every bit is set somewhere and clear somewhere.
        let (or, and) = v
            .iter()
            .fold((0u32, u32::MAX), |(o, a), x| (o | *x as u32, a & *x as u32));
        assert_eq!((or, and), (u32::MAX, 0));
        let v = values(Pattern::Bits, 4096, Scalar::I32);
        assert!(v.iter().any(|x| *x < 0.0) && v.iter().any(|x| *x > 0.0));
        assert!(
            v.iter()
                .all(|x| (f64::from(i32::MIN)..=f64::from(i32::MAX)).contains(x))
        );
        // Another stream, other values.
        let mut other = Sampler::new(Pattern::Bits, 43);
        assert_ne!(other.value(0, Scalar::U32), v[0]);
    }

    #[test]
    fn check_refuses_the_wrong_scalar_and_a_period_that_does_not_divide() {
        use crate::interface::{ArrayLayout, Field};
        let array = |scalar, width: u32| BufferLayout {
            header: vec![],
            header_size: 0,
            array: Some(ArrayLayout {
                stride: 4 * width,
                fields: (0..width)
                    .map(|k| Field {
                        offset: 4 * k,
                        scalar,
                    })
                    .collect(),
                count: None,
            }),
        };
        let mask = Pattern::CausalMask { rows: 4, cols: 8 };
        assert!(mask.check(&array(Scalar::F32, 1), 64).is_ok());
        assert!(mask.check(&array(Scalar::F16, 1), 64).is_ok());
        // vec4 elements: 16 elements hold 64 scalars, two masks.
        assert!(mask.check(&array(Scalar::F32, 4), 16).is_ok());
        let wrong = mask.check(&array(Scalar::U32, 1), 64).unwrap_err();
        assert!(
            wrong.contains("float") && wrong.contains("`u32`"),
            "{wrong}"
        );
        let short = mask.check(&array(Scalar::F32, 1), 48).unwrap_err();
        assert!(short.contains("does not divide the buffer's 48"), "{short}");
        let empty = Pattern::CausalMask { rows: 0, cols: 8 };
        assert!(empty.check(&array(Scalar::F32, 1), 8).is_err());
        let bits = Pattern::Bits.check(&array(Scalar::F32, 1), 3).unwrap_err();
        assert!(bits.contains("integer"), "{bits}");
        assert!(Pattern::Bits.check(&array(Scalar::I32, 1), 3).is_ok());
        let p = Pattern::Probabilities { cols: 5 };
        assert!(p.check(&array(Scalar::F32, 1), 10).is_ok());
        assert!(!mask.seeded() && Pattern::Bits.seeded() && p.seeded());
    }
}

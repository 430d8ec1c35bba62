//! The rules behind every verdict on a variant, written once: the tuner's evaluator, its search
//! and the runtime's measure mode all call them, so "correct" and "faster" mean the same thing in
//! each.
//!
//! - **Poison.** Outputs start as a NaN pattern (floats) or `0xDEADBEEF` (integers), padding as
//!   `0xA5`, so an element a variant forgets to write fails unless the baseline forgot it too.
//! - **Comparison.** Floats pass when both the relative L2 error of the whole buffer and every
//!   element's error are within the tolerance; an element's error is relative to its own
//!   magnitude but never to less than 1 % of the buffer's largest value, so results near zero in a
//!   buffer of large values are not held to an impossible standard. NaN must meet NaN and ±Inf
//!   the same ±Inf. Integers must be equal. Normalized 8-bit channels may differ by one step
//!   (1/255, 1/127): two correct kernels that round a value on either side of a step both wrote
//!   the right texel. A reference that is constant or all zero cannot tell a correct kernel from a
//!   constant fill, so the comparison refuses to judge it; one that mixes finite values with
//!   infinities (a masked output) can, and is judged. A comparison that fails only by the size of
//!   its finite errors names the tolerance that would accept it.
//! - **Timing statistics.** Median, quantiles (linear interpolation) and the spread: half the
//!   interquartile range relative to the median.
//! - **Noise margin.** A speedup counts only above 1 + the largest measured spread, and never
//!   below [`MIN_MARGIN`].
//!
//! The comparison is built from two accumulators, [`Scan`] (what the reference says about its
//! scale and whether it can be judged) and [`Errors`] (the differences), each over any run of
//! scalars and merged in order, so the tuner can scan a large buffer in parallel parts and the
//! runtime in one pass and still reach the same verdict.
//!
//! Invariant: pure functions of bytes and numbers; no GPU, no clock, no randomness.

use crate::interface::{BufferLayout, Scalar};
use half::f16;

/// Poison for f32 outputs: a quiet NaN with a recognisable payload.
pub const POISON_F32: u32 = 0x7FC0_DEAD;
/// Poison for f16 outputs.
pub const POISON_F16: u16 = 0x7E5A;
/// Poison for integer outputs.
pub const POISON_INT: u32 = 0xDEAD_BEEF;
/// Poison for padding bytes (and 8-bit scalars).
pub const POISON_PAD: u8 = 0xA5;

/// Writes the poison of `scalar` at `offset`.
pub fn poison_scalar(bytes: &mut [u8], offset: usize, scalar: Scalar) {
    let o = offset;
    match scalar {
        Scalar::F32 => bytes[o..o + 4].copy_from_slice(&POISON_F32.to_le_bytes()),
        Scalar::F16 => bytes[o..o + 2].copy_from_slice(&POISON_F16.to_le_bytes()),
        Scalar::U32 | Scalar::I32 => bytes[o..o + 4].copy_from_slice(&POISON_INT.to_le_bytes()),
        Scalar::U16 | Scalar::I16 => {
            bytes[o..o + 2].copy_from_slice(&(POISON_INT as u16).to_le_bytes())
        }
        Scalar::Unorm8 | Scalar::Snorm8 | Scalar::U8 | Scalar::I8 => bytes[o] = POISON_PAD,
    }
}

/// A buffer of `size` bytes laid out as `layout` with `len` array elements, every scalar
/// poisoned and every other byte [`POISON_PAD`].
pub fn poisoned(layout: &BufferLayout, len: u64, size: usize) -> Vec<u8> {
    let mut bytes = vec![POISON_PAD; size];
    for (offset, scalar) in layout.scalars(len) {
        poison_scalar(&mut bytes, offset as usize, scalar);
    }
    bytes
}

/// A scalar read from a buffer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ScalarValue {
    /// A float (f32, f16 or a normalized channel), widened.
    Float(f64),
    /// An integer, as raw bits.
    Int(u32),
}

/// Reads the scalar at `offset`.
pub fn read_scalar(bytes: &[u8], offset: usize, scalar: Scalar) -> ScalarValue {
    let b4 = |o: usize| -> [u8; 4] { bytes[o..o + 4].try_into().expect("4 bytes") };
    let b2 = |o: usize| -> [u8; 2] { bytes[o..o + 2].try_into().expect("2 bytes") };
    match scalar {
        Scalar::F32 => ScalarValue::Float(f64::from(f32::from_le_bytes(b4(offset)))),
        Scalar::F16 => ScalarValue::Float(f16::from_le_bytes(b2(offset)).to_f64()),
        Scalar::U32 | Scalar::I32 => ScalarValue::Int(u32::from_le_bytes(b4(offset))),
        Scalar::U16 | Scalar::I16 => ScalarValue::Int(u32::from(u16::from_le_bytes(b2(offset)))),
        Scalar::U8 | Scalar::I8 => ScalarValue::Int(u32::from(bytes[offset])),
        Scalar::Unorm8 => ScalarValue::Float(f64::from(bytes[offset]) / 255.0),
        Scalar::Snorm8 => ScalarValue::Float((f64::from(bytes[offset] as i8) / 127.0).max(-1.0)),
    }
}

/// Floor of an element's error denominator, as a fraction of the buffer's largest magnitude.
pub const SCALE_FLOOR: f64 = 1e-2;
/// Mismatches a comparison names.
pub const FIRST_MISMATCHES: usize = 5;

/// One mismatching element.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    /// Scalar index in the buffer (the element index for `array<f32>`).
    pub index: u64,
    /// Expected (baseline) value.
    pub expected: String,
    /// Actual (candidate) value.
    pub actual: String,
}

/// A value as a mismatch report shows it; poison says it was probably never written.
pub fn show(v: ScalarValue) -> String {
    match v {
        ScalarValue::Float(f) if f.is_nan() => "NaN (never written?)".to_owned(),
        ScalarValue::Float(f) => format!("{f:.6e}"),
        ScalarValue::Int(i) if i == POISON_INT => format!("{i:#x} (never written?)"),
        ScalarValue::Int(i) => i.to_string(),
    }
}

/// The outcome of comparing one buffer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Comparison {
    /// Scalars compared.
    pub scalars: u64,
    /// Scalars out of tolerance.
    pub mismatched: u64,
    /// The first few mismatches.
    pub first: Vec<Mismatch>,
    /// Relative L2 error over finite floats.
    pub rel_l2: f64,
    /// Largest elementwise error relative to max(|expected|, 1 % of the scale).
    pub max_rel_elem: f64,
    /// The finite element with that largest error, when one differs at all.
    pub worst: Option<Mismatch>,
    /// Mismatches no tolerance accepts: NaN against a number, infinities that differ, unequal
    /// integers.
    pub hard: u64,
    /// Why the reference cannot be judged, if it cannot.
    pub degenerate: Option<String>,
}

impl Comparison {
    /// The comparison of a reference scanned as `scan` whose differences are `errors`.
    pub fn of(scan: &Scan, errors: Errors) -> Comparison {
        Comparison {
            scalars: errors.scalars,
            mismatched: errors.mismatched,
            first: errors.first,
            rel_l2: if errors.ref2 > 0.0 {
                (errors.diff2 / errors.ref2).sqrt()
            } else if errors.diff2 > 0.0 {
                f64::INFINITY
            } else {
                0.0
            },
            max_rel_elem: errors.max_rel_elem,
            worst: errors.worst,
            hard: errors.hard,
            degenerate: scan.degenerate(),
        }
    }

    /// Whether the buffers agree.
    pub fn ok(&self, tolerance: f64) -> bool {
        self.mismatched == 0 && self.rel_l2 <= tolerance
    }

    /// The smallest tolerance at which these buffers agree, when only the size of finite
    /// differences stands in the way (no NaN, infinity or integer mismatch, a judgeable
    /// reference): the larger of the worst element's error and the relative L2 error.
    pub fn needed_tolerance(&self) -> Option<f64> {
        (self.hard == 0 && self.degenerate.is_none()).then(|| self.max_rel_elem.max(self.rel_l2))
    }

    /// A distilled description of the differences.
    pub fn describe(&self, tolerance: f64) -> String {
        let mut s = format!(
            "{} of {} values differ (relative L2 error {:.3e}, tolerance {:.1e})",
            self.mismatched, self.scalars, self.rel_l2, tolerance
        );
        for m in &self.first {
            s.push_str(&format!(
                "\n  [{}] expected {} got {}",
                m.index, m.expected, m.actual
            ));
        }
        s
    }
}

/// Compares `candidate` against `reference`, both laid out as `layout` with `len` array
/// elements, in one pass over the scalars (the tuner scans large buffers in parallel parts with
/// the same accumulators).
pub fn compare(
    layout: &BufferLayout,
    len: u64,
    reference: &[u8],
    candidate: &[u8],
    tolerance: f64,
) -> Comparison {
    let mut scan = Scan::default();
    for (offset, scalar) in layout.scalars(len) {
        scan.add(read_scalar(reference, offset as usize, scalar));
    }
    let floor = scan.floor();
    let mut errors = Errors::default();
    for (index, (offset, scalar)) in layout.scalars(len).enumerate() {
        errors.add(
            index as u64,
            scalar,
            read_scalar(reference, offset as usize, scalar),
            read_scalar(candidate, offset as usize, scalar),
            floor,
            tolerance,
        );
    }
    Comparison::of(&scan, errors)
}

/// What a reference's values say about the scale of the buffer and whether it can be judged.
#[derive(Clone, Debug)]
pub struct Scan {
    scale: f64,
    first_float: Option<f64>,
    floats_constant: bool,
    any_float: bool,
    /// Whether `+inf` (bit 0) and `-inf` (bit 1) occur: a reference that mixes them with finite
    /// values (a masked output: 0 below the diagonal, -inf above) tells any constant fill apart.
    infinities: u8,
    first_int: Option<u32>,
    ints_constant: bool,
    any_int: bool,
    /// How many scalars were scanned: one value cannot vary within its buffer, so it is judged
    /// by its value in each trial (new inputs every trial) instead of being called constant.
    scalars: u64,
}

impl Default for Scan {
    fn default() -> Self {
        Scan {
            scale: 0.0,
            first_float: None,
            floats_constant: true,
            any_float: false,
            infinities: 0,
            first_int: None,
            ints_constant: true,
            any_int: false,
            scalars: 0,
        }
    }
}

impl Scan {
    /// Adds the reference's next scalar.
    #[inline]
    pub fn add(&mut self, v: ScalarValue) {
        self.scalars += 1;
        match v {
            ScalarValue::Float(f) if f.is_finite() => {
                self.any_float = true;
                self.scale = self.scale.max(f.abs());
                match self.first_float {
                    None => self.first_float = Some(f),
                    Some(x) if x != f => self.floats_constant = false,
                    Some(_) => {}
                }
            }
            ScalarValue::Float(f) if f.is_infinite() => {
                self.infinities |= if f > 0.0 { 1 } else { 2 };
            }
            ScalarValue::Float(_) => {}
            ScalarValue::Int(i) => {
                self.any_int = true;
                match self.first_int {
                    None => self.first_int = Some(i),
                    Some(x) if x != i => self.ints_constant = false,
                    Some(_) => {}
                }
            }
        }
    }

    /// This scan followed by `next`, the scan of the scalars after it.
    pub fn then(self, next: Scan) -> Scan {
        let same = |a: Option<f64>, b: Option<f64>| a.zip(b).is_none_or(|(a, b)| a == b);
        Scan {
            scale: self.scale.max(next.scale),
            first_float: self.first_float.or(next.first_float),
            floats_constant: self.floats_constant
                && next.floats_constant
                && same(self.first_float, next.first_float),
            any_float: self.any_float || next.any_float,
            infinities: self.infinities | next.infinities,
            first_int: self.first_int.or(next.first_int),
            ints_constant: self.ints_constant
                && next.ints_constant
                && self
                    .first_int
                    .zip(next.first_int)
                    .is_none_or(|(a, b)| a == b),
            any_int: self.any_int || next.any_int,
            scalars: self.scalars + next.scalars,
        }
    }

    /// The smallest denominator of an element's relative error: 1 % of the largest magnitude.
    pub fn floor(&self) -> f64 {
        (self.scale * SCALE_FLOOR).max(f64::MIN_POSITIVE)
    }

    /// Why the reference cannot be judged, if it cannot.
    pub fn degenerate(&self) -> Option<String> {
        let kinds = u32::from(self.any_float) + self.infinities.count_ones();
        // A single value (a greedy decoder's argmax index, a total) is judged as it is: only
        // its absence, or a float zero, which no relative error can be taken against, is not.
        let single = self.scalars == 1;
        let floats_degenerate =
            (!self.any_float || (self.floats_constant && !single) || self.scale < 1e-30)
                && kinds < 2;
        let ints_degenerate = !self.any_int || (self.ints_constant && !single);
        (floats_degenerate && ints_degenerate).then(|| {
            match (self.any_float, self.any_int, self.first_float) {
                (false, false, _) => "the baseline wrote no finite value".to_owned(),
                (true, _, Some(v)) if self.scale < 1e-30 || self.floats_constant => {
                    format!("every value the baseline wrote is {v}")
                }
                _ => "the baseline's output is constant".to_owned(),
            }
        })
    }
}

/// The differences found in some of the scalars.
#[derive(Clone, Debug, Default)]
pub struct Errors {
    scalars: u64,
    mismatched: u64,
    first: Vec<Mismatch>,
    diff2: f64,
    ref2: f64,
    max_rel_elem: f64,
    worst: Option<Mismatch>,
    hard: u64,
}

impl Errors {
    /// Compares the buffer's scalar number `index`: `r` the reference's, `c` the candidate's,
    /// with `floor` from the reference's [`Scan::floor`].
    #[inline]
    pub fn add(
        &mut self,
        index: u64,
        scalar: Scalar,
        r: ScalarValue,
        c: ScalarValue,
        floor: f64,
        tolerance: f64,
    ) {
        self.scalars += 1;
        let mut hard = true;
        let bad = match (r, c) {
            (ScalarValue::Float(r), ScalarValue::Float(c)) => {
                if r.is_nan() || c.is_nan() {
                    !(r.is_nan() && c.is_nan())
                } else if r.is_infinite() || c.is_infinite() {
                    r != c
                } else {
                    hard = false;
                    let mut err = (r - c).abs();
                    // One step of a normalized 8-bit channel is rounding, not a wrong value.
                    if scalar.quantum().is_some_and(|q| err <= q * 1.001) {
                        err = 0.0;
                    }
                    self.diff2 += err * err;
                    self.ref2 += r * r;
                    let rel = err / r.abs().max(floor);
                    if rel > self.max_rel_elem {
                        self.max_rel_elem = rel;
                        self.worst = Some(Mismatch {
                            index,
                            expected: show(ScalarValue::Float(r)),
                            actual: show(ScalarValue::Float(c)),
                        });
                    }
                    rel > tolerance
                }
            }
            (ScalarValue::Int(r), ScalarValue::Int(c)) => r != c,
            _ => true,
        };
        if bad {
            self.mismatched += 1;
            self.hard += u64::from(hard);
            if self.first.len() < FIRST_MISMATCHES {
                self.first.push(Mismatch {
                    index,
                    expected: show(r),
                    actual: show(c),
                });
            }
        }
    }

    /// These errors followed by `next`, those of the scalars after them.
    pub fn then(mut self, next: Errors) -> Errors {
        self.scalars += next.scalars;
        self.mismatched += next.mismatched;
        let room = FIRST_MISMATCHES - self.first.len().min(FIRST_MISMATCHES);
        self.first.extend(next.first.into_iter().take(room));
        self.diff2 += next.diff2;
        self.ref2 += next.ref2;
        if next.max_rel_elem > self.max_rel_elem {
            self.max_rel_elem = next.max_rel_elem;
            self.worst = next.worst;
        }
        self.hard += next.hard;
        self
    }
}

/// How many times the kernel's tolerance a miss may need and still count as one by a hair,
/// worth telling the user about.
pub const NEAR_MISS_FACTOR: f64 = 100.0;

/// Whether a comparison that needs tolerance `needed` misses `tolerance` by a hair.
pub fn is_near_miss(needed: f64, tolerance: f64) -> bool {
    needed.is_finite() && needed <= tolerance * NEAR_MISS_FACTOR
}

/// `x` rounded up to the next value of the form 1, 2 or 5 times a power of ten, strictly above
/// it (a tolerance is exceeded by an error greater than it, and `x` is itself rounded).
pub fn clean_tolerance(x: f64) -> f64 {
    if !(x.is_finite() && x > 0.0) {
        return x;
    }
    let mut exp = x.log10().floor() as i32;
    let mantissa = x / 10f64.powi(exp);
    let step = match [1u32, 2, 5, 10]
        .into_iter()
        .find(|&m| f64::from(m) > mantissa * (1.0 + 1e-9))
    {
        Some(10) | None => {
            exp += 1;
            1
        }
        Some(m) => m,
    };
    // Through the decimal text, so the value prints as `5e-4`, not `5.000000000000001e-4`.
    format!("{step}e{exp}").parse().unwrap_or(x)
}

/// The `q` quantile of `v` with linear interpolation (0 for an empty slice).
pub fn quantile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    sorted_quantile(&s, q)
}

fn sorted_quantile(s: &[f64], q: f64) -> f64 {
    let pos = q * (s.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    s[lo] + (s[hi] - s[lo]) * (pos - lo as f64)
}

/// Median of `v` (0 for an empty slice).
pub fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// The median of `v` and its spread: half the interquartile range relative to the median
/// (`(1, 1)` for an empty slice: no evidence, all noise).
pub fn median_and_spread(v: &[f64]) -> (f64, f64) {
    if v.is_empty() {
        return (1.0, 1.0);
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let m = sorted_quantile(&s, 0.5);
    let half_iqr = (sorted_quantile(&s, 0.75) - sorted_quantile(&s, 0.25)) / 2.0;
    (m, half_iqr / m.max(f64::MIN_POSITIVE))
}

/// Smallest speedup margin that counts, whatever the measured noise.
pub const MIN_MARGIN: f64 = 0.02;

/// The margin a speedup must clear: the largest of the measured spreads, at least
/// [`MIN_MARGIN`].
pub fn margin(spreads: impl IntoIterator<Item = f64>) -> f64 {
    spreads.into_iter().fold(MIN_MARGIN, f64::max)
}

/// Whether `speedup` beats the baseline by more than `margin`.
pub fn beats(speedup: f64, margin: f64) -> bool {
    speedup > 1.0 + margin
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.25), 2.0);
        let (m, s) = median_and_spread(&[0.8, 0.9, 1.0, 1.1, 1.2]);
        assert!(
            (m - 1.0).abs() < 1e-12 && (s - 0.1).abs() < 1e-12,
            "{m} {s}"
        );
        assert_eq!(median_and_spread(&[]), (1.0, 1.0));
    }

    #[test]
    fn the_margin_is_the_largest_spread_and_at_least_the_floor() {
        assert_eq!(margin([]), MIN_MARGIN);
        assert_eq!(margin([0.01, 0.05, 0.03]), 0.05);
        assert!(beats(1.06, 0.05));
        assert!(!beats(1.05, 0.05));
    }

    #[test]
    fn tolerances_round_up_to_one_two_or_five_times_a_power_of_ten() {
        for (x, clean) in [
            (2.4e-4, 5e-4),
            (1.1e-4, 2e-4),
            (4.4e-7, 5e-7),
            (6e-3, 1e-2),
            (2.2e-6, 5e-6),
            (9.99e-5, 1e-4),
        ] {
            assert_eq!(clean_tolerance(x), clean, "{x}");
            assert!(clean_tolerance(x) > x);
        }
        // A value already clean moves up a step: an error equal to it would pass, but `x` is
        // itself rounded.
        assert_eq!(clean_tolerance(1e-4), 2e-4);
        assert_eq!(format!("{:e}", clean_tolerance(2.4e-4)), "5e-4");
        assert!(is_near_miss(2.4e-4, 1e-4) && !is_near_miss(2e-2, 1e-4));
        assert!(!is_near_miss(f64::INFINITY, 1e-4));
    }

    #[test]
    fn poison_reads_back_as_never_written() {
        let layout = BufferLayout {
            header: vec![],
            header_size: 0,
            array: Some(crate::interface::ArrayLayout {
                stride: 4,
                fields: vec![crate::interface::Field {
                    offset: 0,
                    scalar: Scalar::U32,
                }],
                count: None,
            }),
        };
        let bytes = poisoned(&layout, 2, 8);
        assert_eq!(
            show(read_scalar(&bytes, 4, Scalar::U32)),
            "0xdeadbeef (never written?)"
        );
        let mut f = [0u8; 4];
        poison_scalar(&mut f, 0, Scalar::F32);
        assert_eq!(
            show(read_scalar(&f, 0, Scalar::F32)),
            "NaN (never written?)"
        );
    }
}

//! Comparing a candidate's output buffer with the baseline's.
//!
//! Floats pass when both the relative L2 error of the whole buffer and every element's error are
//! within the tolerance; an element's error is relative to its own magnitude but never to less than
//! 1 % of the buffer's largest value, so results near zero in a buffer of large values are not held
//! to an impossible standard. NaN must meet NaN and ±Inf the same ±Inf. Integers must be equal.
//! Normalized 8-bit texture channels may differ by one step (1/255, 1/127): two correct kernels
//! that round a value on either side of a step both wrote the right texel.
//! A reference that is constant or all zero cannot tell a correct kernel from a constant fill, so
//! the comparison refuses to judge and says so; one that mixes finite values with infinities (a
//! masked output: 0 where the mask lets a value through, -inf where it does not) can, and is
//! judged.
//!
//! Invariant: a mismatch report names the first offending elements with expected and actual values
//! — that log is what a user (or a later LLM prompt) reads to fix the kernel.

use super::inputs::{ScalarValue, read_scalar};
use super::parts::{Part, parts};
use kf_runtime::interface::{BufferLayout, Scalar};
use rayon::prelude::*;
use std::ops::Range;

/// Floor of an element's error denominator, as a fraction of the buffer's largest magnitude.
const SCALE_FLOOR: f64 = 1e-2;
/// Mismatches a report names.
const FIRST_MISMATCHES: usize = 5;

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

fn show(v: ScalarValue) -> String {
    match v {
        ScalarValue::Float(f) if f.is_nan() => "NaN (never written?)".to_owned(),
        ScalarValue::Float(f) => format!("{f:.6e}"),
        ScalarValue::Int(i) if i == super::inputs::POISON_INT => format!("{i:#x} (never written?)"),
        ScalarValue::Int(i) => i.to_string(),
    }
}

/// Compares `candidate` against `reference`, both laid out as `layout` with `len` array elements.
///
/// The buffers are scanned in the fixed parts of [`super::parts`], in parallel, and the per-part
/// results merged in part order: the first mismatches reported are the buffer's first.
pub fn compare(
    layout: &BufferLayout,
    len: u64,
    reference: &[u8],
    candidate: &[u8],
    tolerance: f64,
) -> Comparison {
    let parts = parts(layout, len);
    let plain = plain_f32(layout);
    let scan = parts
        .par_iter()
        .map(|p| match plain_range(plain, layout, p) {
            Some(bytes) => Scan::of_f32(&reference[bytes]),
            None => Scan::of(p.scalars(layout), reference),
        })
        .collect::<Vec<_>>()
        .into_iter()
        .fold(Scan::default(), Scan::then);
    let mut out = Comparison::default();
    let kinds = u32::from(scan.any_float) + scan.infinities.count_ones();
    let floats_degenerate =
        (!scan.any_float || scan.floats_constant || scan.scale < 1e-30) && kinds < 2;
    let ints_degenerate = !scan.any_int || scan.ints_constant;
    if floats_degenerate && ints_degenerate {
        out.degenerate = Some(match (scan.any_float, scan.any_int, scan.first_float) {
            (false, false, _) => "the baseline wrote no finite value".to_owned(),
            (true, _, Some(v)) if scan.scale < 1e-30 || scan.floats_constant => {
                format!("every value the baseline wrote is {v}")
            }
            _ => "the baseline's output is constant".to_owned(),
        });
    }
    let floor = (scan.scale * SCALE_FLOOR).max(f64::MIN_POSITIVE);
    let errors = parts
        .par_iter()
        .map(|p| match plain_range(plain, layout, p) {
            Some(bytes) => Errors::of_f32(
                p.first_index(layout),
                &reference[bytes.clone()],
                &candidate[bytes],
                floor,
                tolerance,
            ),
            None => Errors::of(
                p.scalars(layout),
                p.first_index(layout),
                reference,
                candidate,
                floor,
                tolerance,
            ),
        })
        .collect::<Vec<_>>()
        .into_iter()
        .fold(Errors::default(), Errors::then);
    out.scalars = errors.scalars;
    out.mismatched = errors.mismatched;
    out.first = errors.first;
    out.max_rel_elem = errors.max_rel_elem;
    out.worst = errors.worst;
    out.hard = errors.hard;
    out.rel_l2 = if errors.ref2 > 0.0 {
        (errors.diff2 / errors.ref2).sqrt()
    } else if errors.diff2 > 0.0 {
        f64::INFINITY
    } else {
        0.0
    };
    out
}

/// Whether the array is of plain `f32` (one field, 4 bytes apart), the common case, which is
/// read as a run of `f32` without a per-scalar layout lookup.
fn plain_f32(layout: &BufferLayout) -> bool {
    layout.array.as_ref().is_some_and(|a| {
        a.stride == 4
            && matches!(a.fields.as_slice(), [f] if f.offset == 0 && f.scalar == Scalar::F32)
    })
}

/// The bytes of a run of elements of a plain `f32` array.
fn plain_range(plain: bool, layout: &BufferLayout, part: &Part) -> Option<Range<usize>> {
    match part {
        Part::Elements { range, .. } if plain => {
            let base = layout.header_size as usize;
            Some(base + 4 * range.start as usize..base + 4 * range.end as usize)
        }
        _ => None,
    }
}

/// The `f32` values of plain bytes.
fn f32s(bytes: &[u8]) -> impl Iterator<Item = ScalarValue> + '_ {
    bytes
        .chunks_exact(4)
        .map(|b| ScalarValue::Float(f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))))
}

/// What the reference's values say about the scale of the buffer and whether it is degenerate.
struct Scan {
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
        }
    }
}

impl Scan {
    fn of(scalars: impl Iterator<Item = (u64, Scalar)>, reference: &[u8]) -> Scan {
        let mut s = Scan::default();
        for (offset, scalar) in scalars {
            s.add(read_scalar(reference, offset as usize, scalar));
        }
        s
    }

    /// [`Scan::of`] a run of plain `f32`.
    fn of_f32(reference: &[u8]) -> Scan {
        let mut s = Scan::default();
        for v in f32s(reference) {
            s.add(v);
        }
        s
    }

    #[inline]
    fn add(&mut self, v: ScalarValue) {
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
    fn then(self, next: Scan) -> Scan {
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
        }
    }
}

/// The differences found in some of the scalars.
#[derive(Default)]
struct Errors {
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
    /// Compares `scalars`, the first of which is the buffer's scalar number `index`.
    fn of(
        scalars: impl Iterator<Item = (u64, Scalar)>,
        index: u64,
        reference: &[u8],
        candidate: &[u8],
        floor: f64,
        tolerance: f64,
    ) -> Errors {
        let mut out = Errors::default();
        for (i, (offset, scalar)) in scalars.enumerate() {
            let r = read_scalar(reference, offset as usize, scalar);
            let c = read_scalar(candidate, offset as usize, scalar);
            out.add(index + i as u64, scalar, r, c, floor, tolerance);
        }
        out
    }

    /// [`Errors::of`] runs of plain `f32`.
    fn of_f32(
        index: u64,
        reference: &[u8],
        candidate: &[u8],
        floor: f64,
        tolerance: f64,
    ) -> Errors {
        let mut out = Errors::default();
        for (i, (r, c)) in f32s(reference).zip(f32s(candidate)).enumerate() {
            out.add(index + i as u64, Scalar::F32, r, c, floor, tolerance);
        }
        out
    }

    /// Compares the buffer's scalar number `index`.
    #[inline]
    fn add(
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
            (ScalarValue::Float(rf), ScalarValue::Float(cf)) => {
                if rf.is_nan() || cf.is_nan() {
                    !(rf.is_nan() && cf.is_nan())
                } else if rf.is_infinite() || cf.is_infinite() {
                    rf != cf
                } else {
                    hard = false;
                    let (r, c) = (rf, cf);
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
    fn then(mut self, next: Errors) -> Errors {
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

#[cfg(test)]
mod tests {
    use super::*;
    use kf_runtime::interface::{ArrayLayout, Field};

    fn layout(scalar: Scalar) -> BufferLayout {
        BufferLayout {
            header: vec![],
            header_size: 0,
            array: Some(ArrayLayout {
                stride: 4,
                fields: vec![Field { offset: 0, scalar }],
                count: None,
            }),
        }
    }

    fn f(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[track_caller]
    fn check(r: &[f32], c: &[f32], ok: bool) -> Comparison {
        let cmp = compare(&layout(Scalar::F32), r.len() as u64, &f(r), &f(c), 1e-4);
        assert_eq!(cmp.ok(1e-4), ok, "{}", cmp.describe(1e-4));
        cmp
    }

    #[test]
    fn float_tolerance_scales_with_magnitude() {
        check(&[1000.0, -2000.0, 3.0], &[1000.01, -2000.0, 3.0], true);
        check(&[1000.0, -2000.0, 3.0], &[1001.0, -2000.0, 3.0], false);
        // An element near zero is judged against 1 % of the largest value.
        check(&[1000.0, 0.0001, 3.0], &[1000.0, 0.0002, 3.0], true);
        check(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0 * (1.0 + 3e-4)], false);
    }

    #[test]
    fn nan_and_inf_must_match() {
        check(&[f32::NAN, 1.0, 2.0], &[f32::NAN, 1.0, 2.0], true);
        let c = check(&[1.0, 2.0, 3.0], &[f32::NAN, 2.0, 3.0], false);
        assert!(
            c.describe(1e-4).contains("[0] expected 1.000000e0 got NaN"),
            "{}",
            c.describe(1e-4)
        );
        check(
            &[f32::INFINITY, 1.0, 2.0],
            &[f32::NEG_INFINITY, 1.0, 2.0],
            false,
        );
        check(&[f32::INFINITY, 1.0, 2.0], &[f32::INFINITY, 1.0, 2.0], true);
    }

    #[test]
    fn degenerate_references_are_flagged() {
        let c = check(&[0.0, 0.0, 0.0], &[0.0, 0.0, 0.0], true);
        assert!(
            c.degenerate
                .as_deref()
                .unwrap()
                .contains("every value the baseline wrote is 0")
        );
        let c = check(&[2.0, 2.0], &[2.0, 2.0], true);
        assert!(c.degenerate.is_some());
        let c = check(&[f32::NAN, f32::NAN], &[f32::NAN, f32::NAN], true);
        assert_eq!(
            c.degenerate.as_deref(),
            Some("the baseline wrote no finite value")
        );
        assert!(check(&[1.0, 2.0], &[1.0, 2.0], true).degenerate.is_none());
        // All -inf is as constant as all 0.
        let inf = f32::NEG_INFINITY;
        assert!(check(&[inf, inf], &[inf, inf], true).degenerate.is_some());
    }

    #[test]
    fn a_masked_reference_of_zeros_and_minus_infinity_is_judged() {
        // A causal mask applied to zeros: 0 on and below the diagonal, -inf above.
        let inf = f32::NEG_INFINITY;
        let masked = [0.0, inf, 0.0, 0.0];
        let c = check(&masked, &masked, true);
        assert!(c.degenerate.is_none(), "{:?}", c.degenerate);
        // A constant fill, or the mask's transpose, is wrong.
        check(&masked, &[0.0; 4], false);
        check(&masked, &[0.0, 0.0, inf, 0.0], false);
        check(&masked, &[inf; 4], false);
        // The same with +inf and finite values that do not vary.
        let c = check(&[1.0, f32::INFINITY], &[1.0, f32::INFINITY], true);
        assert!(c.degenerate.is_none());
    }

    #[test]
    fn normalized_channels_may_differ_by_one_step() {
        let l = BufferLayout {
            header: vec![],
            header_size: 0,
            array: Some(ArrayLayout {
                stride: 1,
                fields: vec![Field {
                    offset: 0,
                    scalar: Scalar::Unorm8,
                }],
                count: None,
            }),
        };
        let r = [10u8, 200, 128, 0];
        assert!(compare(&l, 4, &r, &[11, 199, 128, 0], 1e-4).ok(1e-4));
        let two_steps = compare(&l, 4, &r, &[12, 200, 128, 0], 1e-4);
        assert!(!two_steps.ok(1e-4));
        assert_eq!(two_steps.mismatched, 1);
    }

    #[test]
    fn mismatches_across_parts_are_counted_and_the_first_named_in_order() {
        use crate::harness::parts::PART_ELEMENTS;
        let n = 3 * PART_ELEMENTS as usize + 5;
        let r: Vec<f32> = (0..n).map(|i| (i % 97) as f32 + 1.0).collect();
        let mut c = r.clone();
        let wrong = [
            3 * PART_ELEMENTS as usize + 4,
            2 * PART_ELEMENTS as usize + 1,
            3,
            PART_ELEMENTS as usize + 7,
            PART_ELEMENTS as usize + 8,
            PART_ELEMENTS as usize + 9,
            5,
        ];
        for &i in &wrong {
            c[i] += 1.0;
        }
        let cmp = compare(&layout(Scalar::F32), n as u64, &f(&r), &f(&c), 1e-4);
        assert_eq!(cmp.scalars, n as u64);
        assert_eq!(cmp.mismatched, wrong.len() as u64);
        let mut sorted = wrong.to_vec();
        sorted.sort();
        let named: Vec<u64> = cmp.first.iter().map(|m| m.index).collect();
        let first: Vec<u64> = sorted[..5].iter().map(|&i| i as u64).collect();
        assert_eq!(named, first);
        // The same on one thread: the parts, not the threads, decide.
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
            .install(|| compare(&layout(Scalar::F32), n as u64, &f(&r), &f(&c), 1e-4));
        assert_eq!(one, cmp);
    }

    #[test]
    fn a_reference_constant_within_each_part_but_not_across_is_judged() {
        use crate::harness::parts::PART_ELEMENTS;
        let n = 2 * PART_ELEMENTS as usize;
        let mut r = vec![2.0f32; n];
        assert!(check(&r, &r, true).degenerate.is_some());
        r[PART_ELEMENTS as usize..].fill(3.0);
        assert!(check(&r, &r, true).degenerate.is_none());
        // The scale comes from every part: an element near zero in the first part is judged
        // against 1 % of the largest value, which sits in the last part.
        let mut r = vec![1.0f32; n];
        r[0] = 0.01;
        let mut c = r.clone();
        c[0] = 0.0101;
        check(&r, &c, false);
        r[n - 1] = 300.0;
        c[n - 1] = 300.0;
        check(&r, &c, true);
    }

    #[test]
    fn plain_f32_arrays_are_judged_like_any_layout() {
        let r = [1.0f32, f32::NAN, f32::INFINITY, -2.0, 0.001, 5.0, 7.0, 0.0];
        let c = [
            1.0f32,
            f32::NAN,
            f32::INFINITY,
            -2.5,
            0.0011,
            f32::NAN,
            7.0,
            1e-9,
        ];
        // The same scalars as fields of a struct, which takes the general path.
        let fields = BufferLayout {
            header: (0..r.len() as u32)
                .map(|i| Field {
                    offset: 4 * i,
                    scalar: Scalar::F32,
                })
                .collect(),
            header_size: 4 * r.len() as u32,
            array: None,
        };
        let plain = compare(&layout(Scalar::F32), r.len() as u64, &f(&r), &f(&c), 1e-4);
        let general = compare(&fields, 0, &f(&r), &f(&c), 1e-4);
        assert_eq!(plain, general);
        assert_eq!(plain.mismatched, 3, "{}", plain.describe(1e-4));
    }

    #[test]
    fn a_miss_by_rounding_names_the_tolerance_that_accepts_it_and_others_none() {
        let r = [1.0f32, 2.0, 4.0, 8.0];
        let mut c = r;
        c[2] = 4.0 * (1.0 + 2.4e-4);
        let cmp = check(&r, &c, false);
        assert_eq!(cmp.hard, 0);
        let worst = cmp.worst.as_ref().expect("a worst element");
        assert_eq!(worst.index, 2);
        let needed = cmp.needed_tolerance().expect("only rounding");
        assert!((needed - 2.4e-4).abs() < 1e-6, "{needed}");
        // At the tolerance it names, the same buffers agree.
        assert!(compare(&layout(Scalar::F32), 4, &f(&r), &f(&c), needed).ok(needed));
        // A NaN, an infinity or an integer that differs passes at no tolerance.
        c[0] = f32::NAN;
        let cmp = check(&r, &c, false);
        assert_eq!((cmp.hard, cmp.needed_tolerance()), (1, None));
        let i = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let ints = compare(&layout(Scalar::U32), 2, &i(&[1, 2]), &i(&[1, 3]), 1e-4);
        assert_eq!(ints.needed_tolerance(), None);
    }

    #[test]
    fn integers_are_exact() {
        let r: Vec<u8> = [1u32, 2, 3].iter().flat_map(|x| x.to_le_bytes()).collect();
        let c: Vec<u8> = [1u32, 2, 4].iter().flat_map(|x| x.to_le_bytes()).collect();
        let cmp = compare(&layout(Scalar::U32), 3, &r, &c, 1e-4);
        assert_eq!(cmp.mismatched, 1);
        assert!(compare(&layout(Scalar::U32), 3, &r, &r, 1e-4).ok(1e-4));
    }
}

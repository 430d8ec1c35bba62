//! Comparing a candidate's output buffer with the baseline's, by the rule of
//! [`kf_runtime::verdict`] (tolerance scaled to the output, NaN/Inf matching, one step of a
//! normalized channel, degenerate references refused, the tolerance a rounding miss needs).
//!
//! What this module adds is speed: a buffer is scanned in the fixed parts of [`super::parts`], on
//! every core, with the verdict's accumulators merged in part order, so the verdict and the
//! mismatches named are those of one pass over the buffer.
//!
//! The evaluator runs it on a candidate's outputs only when they were read back: most trials
//! are decided by the first pass on the GPU ([`super::gpu_compare`]), whose pass implies a pass
//! here, and everything it does not pass comes here. [`scan`] is also what the runner keeps of
//! each reference (its floor, whether it can be judged), computed once per kernel, shape and
//! seed.
//!
//! Invariant: a mismatch report names the first offending elements with expected and actual values
//! — that log is what a user (or a later LLM prompt) reads to fix the kernel.

use super::parts::{Part, parts};
use kf_runtime::interface::{BufferLayout, Scalar};
pub use kf_runtime::verdict::Scan;
pub use kf_runtime::verdict::{Comparison, Mismatch};
use kf_runtime::verdict::{Errors, ScalarValue, read_scalar};
use rayon::prelude::*;
use std::ops::Range;

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
    let scan = scan(layout, len, reference);
    let floor = scan.floor();
    let errors = parts
        .par_iter()
        .map(|p| match plain_range(plain, layout, p) {
            Some(bytes) => {
                let mut out = Errors::default();
                let first = p.first_index(layout);
                let pairs = f32s(&reference[bytes.clone()]).zip(f32s(&candidate[bytes]));
                for (i, (r, c)) in pairs.enumerate() {
                    out.add(first + i as u64, Scalar::F32, r, c, floor, tolerance);
                }
                out
            }
            None => {
                let mut out = Errors::default();
                let first = p.first_index(layout);
                for (i, (offset, scalar)) in p.scalars(layout).enumerate() {
                    let r = read_scalar(reference, offset as usize, scalar);
                    let c = read_scalar(candidate, offset as usize, scalar);
                    out.add(first + i as u64, scalar, r, c, floor, tolerance);
                }
                out
            }
        })
        .collect::<Vec<_>>()
        .into_iter()
        .fold(Errors::default(), Errors::then);
    Comparison::of(&scan, errors)
}

/// What `reference`, laid out as `layout` with `len` array elements, says about its scale and
/// whether it can be judged, scanned in the same parts as [`compare`].
pub fn scan(layout: &BufferLayout, len: u64, reference: &[u8]) -> Scan {
    let plain = plain_f32(layout);
    parts(layout, len)
        .par_iter()
        .map(|p| match plain_range(plain, layout, p) {
            Some(bytes) => scan_of(f32s(&reference[bytes])),
            None => scan_of(
                p.scalars(layout)
                    .map(|(o, s)| read_scalar(reference, o as usize, s)),
            ),
        })
        .collect::<Vec<_>>()
        .into_iter()
        .fold(Scan::default(), Scan::then)
}

fn scan_of(values: impl Iterator<Item = ScalarValue>) -> Scan {
    let mut s = Scan::default();
    for v in values {
        s.add(v);
    }
    s
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

/// A plain array of 4-byte `scalar`s, no header (for tests).
#[cfg(test)]
pub(crate) fn plain_layout(scalar: Scalar) -> BufferLayout {
    use kf_runtime::interface::{ArrayLayout, Field};
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

#[cfg(test)]
mod tests {
    use super::*;
    use kf_runtime::interface::{ArrayLayout, Field};

    use super::plain_layout as layout;

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
    fn a_single_value_is_judged_by_its_value() {
        // One scalar cannot vary within its buffer; each trial's new inputs vary it.
        assert!(check(&[3.5], &[3.5], true).degenerate.is_none());
        check(&[3.5], &[2.5], false);
        // A zero still has no scale to take a relative error against.
        assert!(check(&[0.0], &[0.0], true).degenerate.is_some());
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
        use crate::evaluate::parts::PART_ELEMENTS;
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
        use crate::evaluate::parts::PART_ELEMENTS;
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

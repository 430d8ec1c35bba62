//! Wider views of scalar buffers: when a variant may declare an `array<f32>` binding as
//! `array<vec4<f32>>`.
//!
//! Why. A GPU moves memory fastest in 16-byte accesses, and WGSL reads a buffer only through the
//! type its binding declares: there are no pointer casts. An elementwise kernel over `array<f32>`
//! therefore issues 4-byte loads and stores, and on an H200 stops near 55 % of the copy bandwidth
//! that 16-byte accesses reach. A variant may declare the same binding with a wider element
//! instead. The buffer, the bind group and its layout stay the user's (layouts carry no element
//! type, only a kind), so the user's app binds the variant exactly as it binds the baseline.
//!
//! When it is the same buffer. A view regroups `w` consecutive elements into one: the layouts must
//! say so field for field ([`regrouping`]). The variant then sees `len / w` elements, so the view
//! is only faithful when the length is a multiple of `w` for *every* size the app may dispatch
//! with — not only on the shapes a tune happens to run. That is a promise only the spec can make,
//! through `constraints(..)` over sizes (`constraints(n % 4 == 0)`); [`known_divisor`] proves the
//! length's divisibility from those, and the runtime refuses a dispatch whose sizes break a size
//! constraint ([`check_sizes`]), so the promise holds wherever a variant runs.
//!
//! The other way round needs no promise: a variant may read an `array<vec4<f32>>` binding as
//! `array<f32>` (the baseline's array is the variant's regrouped), since every length in vectors
//! is a whole number of scalars. `tile` reads vector operands that way.

use crate::expr::{Op, SizeExpr};
use crate::interface::BufferLayout;
use crate::params::{BinOp, ParamExpr};
use std::collections::BTreeMap;

/// How many baseline elements one element of `variant` holds, when `variant` is `baseline`'s array
/// regrouped: no header, the same scalars at the same offsets repeated `w` times per element, and
/// for a fixed-size array a count `w` times smaller. `None` when the layouts differ otherwise (or
/// are equal: a regrouping has `w >= 2`).
pub fn regrouping(baseline: &BufferLayout, variant: &BufferLayout) -> Option<u32> {
    if !baseline.header.is_empty()
        || !variant.header.is_empty()
        || baseline.header_size != 0
        || variant.header_size != 0
    {
        return None;
    }
    let (b, v) = (baseline.array.as_ref()?, variant.array.as_ref()?);
    if b.stride == 0 || !v.stride.is_multiple_of(b.stride) {
        return None;
    }
    let w = v.stride / b.stride;
    if w < 2 || v.fields.len() != b.fields.len() * w as usize {
        return None;
    }
    let expected = (0..w).flat_map(|i| {
        b.fields.iter().map(move |f| crate::interface::Field {
            offset: f.offset + i * b.stride,
            scalar: f.scalar,
        })
    });
    if !expected.eq(v.fields.iter().copied()) {
        return None;
    }
    match (b.count, v.count) {
        (None, None) => Some(w),
        (Some(n), Some(m)) if n.is_multiple_of(w) && n / w == m => Some(w),
        _ => None,
    }
}

/// The constraints that name only sizes (the ones an app's dispatch can break; those over
/// overrides constrain the search instead).
pub fn size_only<'a>(constraints: &'a [ParamExpr], sizes: &[&str]) -> Vec<&'a ParamExpr> {
    constraints
        .iter()
        .filter(|c| {
            let names = c.names();
            !names.is_empty() && names.iter().all(|n| sizes.contains(n))
        })
        .collect()
}

/// The equalities the constraints promise, each as its two sides: every `a == b` standing alone
/// or in a conjunction (a disjunction promises neither side).
fn equalities<'a>(constraints: &[&'a ParamExpr]) -> Vec<(&'a ParamExpr, &'a ParamExpr)> {
    fn walk<'a>(e: &'a ParamExpr, out: &mut Vec<(&'a ParamExpr, &'a ParamExpr)>) {
        match e {
            ParamExpr::Binary(BinOp::And, a, b) => {
                walk(a, out);
                walk(b, out);
            }
            ParamExpr::Binary(BinOp::Eq, a, b) => out.push((a, b)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for c in constraints {
        walk(c, &mut out);
    }
    out
}

/// What the constraints promise about divisibility: for each size, a number it is always a multiple
/// of (from `n % K == 0`, `0 == n % K`, and conjunctions of those; `K` a constant).
pub fn size_divisors(constraints: &[&ParamExpr]) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for (a, b) in equalities(constraints) {
        let rem = match (a, b) {
            (r, ParamExpr::Int(0)) | (ParamExpr::Int(0), r) => r,
            _ => continue,
        };
        let ParamExpr::Binary(BinOp::Rem, n, k) = rem else {
            continue;
        };
        let (ParamExpr::Name(n), Ok(k)) = (n.as_ref(), k.eval(&|_| None)) else {
            continue;
        };
        if k > 0 {
            let d = out.entry(n.clone()).or_insert(1);
            *d = lcm(*d, k as u64);
        }
    }
    out
}

/// The sizes the constraints pin to one value (`n == 16`, `16 == n`, and conjunctions of those):
/// a launch or a length over these alone is a constant on every dispatch the runtime accepts.
pub fn pinned_sizes(constraints: &[&ParamExpr]) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for (a, b) in equalities(constraints) {
        let ((ParamExpr::Name(name), value) | (value, ParamExpr::Name(name))) = (a, b) else {
            continue;
        };
        if let Ok(v) = value.eval(&|_| None)
            && let Ok(v) = u64::try_from(v)
        {
            out.insert(name.clone(), v);
        }
    }
    out
}

/// A number `len` is a multiple of for every value of its sizes the divisors allow (0 when it is
/// always 0, 1 when nothing is known).
pub fn known_divisor(len: &SizeExpr, divisors: &BTreeMap<String, u64>) -> u64 {
    let mut stack: Vec<u64> = Vec::new();
    for op in len.ops() {
        let d = match op {
            Op::Lit(v) => *v,
            Op::Size(n) => divisors.get(n.as_ref()).copied().unwrap_or(1),
            _ => {
                let (Some(b), Some(a)) = (stack.pop(), stack.pop()) else {
                    return 1;
                };
                match op {
                    Op::Add | Op::Sub | Op::Min | Op::Max => gcd(a, b),
                    // `a·b` is a multiple of both; on overflow keep the larger as the divisor.
                    Op::Mul => a.checked_mul(b).unwrap_or(a.max(b)),
                    Op::Div | Op::Rem | Op::CeilDiv => 1,
                    Op::Lit(_) | Op::Size(_) => unreachable!("handled above"),
                }
            }
        };
        stack.push(d);
    }
    match stack.as_slice() {
        [d] => *d,
        _ => 1,
    }
}

/// Whether `len` is provably a multiple of `w`.
pub fn multiple_of(len: &SizeExpr, divisors: &BTreeMap<String, u64>, w: u64) -> bool {
    w != 0 && known_divisor(len, divisors).is_multiple_of(w)
}

/// The size constraint that would make `len` a multiple of `w`, written on the size it is best
/// written on: the last factor of a product (`rows * cols` → `cols % 4 == 0`), else the first
/// size named; `None` for a constant length.
pub fn suggested_constraint(len: &SizeExpr, w: u32) -> Option<String> {
    let name = match len.ops() {
        [.., Op::Size(n), Op::Mul] => n.to_string(),
        _ => len.names().next()?.to_owned(),
    };
    Some(format!("{name} % {w} == 0"))
}

/// Checks sizes an app dispatches with against the kernel's size constraints; the error names the
/// first one broken.
pub fn check_sizes(
    constraints: &[ParamExpr],
    lookup: &dyn Fn(&str) -> Option<u64>,
) -> Result<(), String> {
    for c in constraints {
        let holds = c.eval(&|n| lookup(n).map(|v| v as i64));
        match holds {
            Ok(v) if v != 0 => {}
            Ok(_) => {
                let given: Vec<String> = c
                    .names()
                    .iter()
                    .filter_map(|n| lookup(n).map(|v| format!("{n} = {v}")))
                    .collect();
                return Err(format!(
                    "the sizes ({}) break the kernel's constraint `{c}`; its variants may rely on it (e.g. to read 16 bytes at a time)",
                    given.join(", ")
                ));
            }
            Err(e) => return Err(format!("cannot check the constraint `{c}`: {e}")),
        }
    }
    Ok(())
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

fn lcm(a: u64, b: u64) -> u64 {
    if a == 0 || b == 0 {
        return 0;
    }
    (a / gcd(a, b)).saturating_mul(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interface::{ArrayLayout, Field, Scalar};
    use std::borrow::Cow;

    fn array(stride: u32, scalars: &[(u32, Scalar)], count: Option<u32>) -> BufferLayout {
        BufferLayout {
            header: Vec::new(),
            header_size: 0,
            array: Some(ArrayLayout {
                stride,
                fields: scalars
                    .iter()
                    .map(|&(offset, scalar)| Field { offset, scalar })
                    .collect(),
                count,
            }),
        }
    }

    #[test]
    fn a_vec4_array_is_a_regrouped_f32_array_and_nothing_else_is() {
        let f = Scalar::F32;
        let scalars = array(4, &[(0, f)], None);
        let vec4 = array(16, &[(0, f), (4, f), (8, f), (12, f)], None);
        let vec2 = array(8, &[(0, f), (4, f)], None);
        assert_eq!(regrouping(&scalars, &vec4), Some(4));
        assert_eq!(regrouping(&scalars, &vec2), Some(2));
        assert_eq!(regrouping(&vec2, &vec4), Some(2));
        assert_eq!(regrouping(&scalars, &scalars), None);
        // vec3 has a stride of 16 and three fields: not four scalars in a row.
        let vec3 = array(16, &[(0, f), (4, f), (8, f)], None);
        assert_eq!(regrouping(&scalars, &vec3), None);
        // Another scalar type is another buffer content.
        let u = Scalar::U32;
        let uvec4 = array(16, &[(0, u), (4, u), (8, u), (12, u)], None);
        assert_eq!(regrouping(&scalars, &uvec4), None);
        // Fixed sizes: 64 scalars are 16 vectors, not 15.
        let fixed = array(4, &[(0, f)], Some(64));
        let fixed4 = array(16, &[(0, f), (4, f), (8, f), (12, f)], Some(16));
        let short = array(16, &[(0, f), (4, f), (8, f), (12, f)], Some(15));
        assert_eq!(regrouping(&fixed, &fixed4), Some(4));
        assert_eq!(regrouping(&fixed, &short), None);
        assert_eq!(regrouping(&fixed, &vec4), None);
    }

    fn expr(ops: Vec<Op>) -> SizeExpr {
        SizeExpr::from_ops(ops)
    }

    fn name(n: &str) -> Op {
        Op::Size(Cow::Owned(n.to_owned()))
    }

    fn rem_zero(n: &str, k: i64) -> ParamExpr {
        ParamExpr::Binary(
            BinOp::Eq,
            Box::new(ParamExpr::Binary(
                BinOp::Rem,
                Box::new(ParamExpr::Name(n.into())),
                Box::new(ParamExpr::Int(k)),
            )),
            Box::new(ParamExpr::Int(0)),
        )
    }

    #[test]
    fn divisibility_follows_from_size_constraints_through_products_and_sums() {
        let c = [
            rem_zero("n", 4),
            ParamExpr::Binary(
                BinOp::And,
                Box::new(rem_zero("cols", 8)),
                Box::new(rem_zero("cols", 3)),
            ),
        ];
        let refs: Vec<&ParamExpr> = c.iter().collect();
        let d = size_divisors(&refs);
        assert_eq!(d["n"], 4);
        assert_eq!(d["cols"], 24);
        let n = expr(vec![name("n")]);
        assert!(multiple_of(&n, &d, 4));
        assert!(!multiple_of(&n, &d, 8));
        // rows * cols: a multiple of 24 whatever rows is.
        let rc = expr(vec![name("rows"), name("cols"), Op::Mul]);
        assert!(multiple_of(&rc, &d, 4));
        // rows alone: nothing known.
        assert!(!multiple_of(&expr(vec![name("rows")]), &d, 4));
        // n + 2 is not; n + 8 is; n / 2 is not known.
        assert!(!multiple_of(
            &expr(vec![name("n"), Op::Lit(2), Op::Add]),
            &d,
            4
        ));
        assert!(multiple_of(
            &expr(vec![name("n"), Op::Lit(8), Op::Add]),
            &d,
            4
        ));
        assert!(!multiple_of(
            &expr(vec![name("n"), Op::Lit(2), Op::Div]),
            &d,
            4
        ));
        // 4 * rows, whatever rows.
        assert!(multiple_of(
            &expr(vec![Op::Lit(4), name("rows"), Op::Mul]),
            &d,
            4
        ));
        // A constraint that is not a divisibility promise promises nothing.
        let other = ParamExpr::Binary(
            BinOp::Gt,
            Box::new(ParamExpr::Name("n".into())),
            Box::new(ParamExpr::Int(4)),
        );
        assert!(size_divisors(&[&other]).is_empty());
    }

    #[test]
    fn sizes_pinned_by_equalities_under_conjunctions_either_way_round() {
        let eq =
            |a: ParamExpr, b: ParamExpr| ParamExpr::Binary(BinOp::Eq, Box::new(a), Box::new(b));
        let c = [
            ParamExpr::Binary(
                BinOp::And,
                Box::new(eq(ParamExpr::Name("n".into()), ParamExpr::Int(2))),
                Box::new(eq(ParamExpr::Int(14), ParamExpr::Name("h".into()))),
            ),
            // Not a pin: a bound, a disjunction, a size equal to another size.
            ParamExpr::Binary(
                BinOp::Gt,
                Box::new(ParamExpr::Name("w".into())),
                Box::new(ParamExpr::Int(4)),
            ),
            ParamExpr::Binary(
                BinOp::Or,
                Box::new(eq(ParamExpr::Name("c".into()), ParamExpr::Int(8))),
                Box::new(eq(ParamExpr::Name("c".into()), ParamExpr::Int(16))),
            ),
            eq(ParamExpr::Name("k".into()), ParamExpr::Name("n".into())),
        ];
        let refs: Vec<&ParamExpr> = c.iter().collect();
        let pinned = size_divisors(&refs);
        assert!(pinned.is_empty());
        let pinned = pinned_sizes(&refs);
        assert_eq!(pinned.len(), 2, "{pinned:?}");
        assert_eq!((pinned["n"], pinned["h"]), (2, 14));
    }

    #[test]
    fn a_dispatch_that_breaks_a_size_constraint_is_named() {
        let c = [rem_zero("n", 4)];
        assert!(check_sizes(&c, &|_| Some(4096)).is_ok());
        let e = check_sizes(&c, &|_| Some(4094)).unwrap_err();
        assert!(e.contains("n = 4094") && e.contains("n % 4 == 0"), "{e}");
        assert!(
            check_sizes(&c, &|_| None)
                .unwrap_err()
                .contains("cannot check")
        );
    }

    #[test]
    fn only_constraints_over_sizes_alone_are_size_constraints() {
        let over_param = ParamExpr::Binary(
            BinOp::Eq,
            Box::new(ParamExpr::Binary(
                BinOp::Rem,
                Box::new(ParamExpr::Name("n".into())),
                Box::new(ParamExpr::Name("TILE".into())),
            )),
            Box::new(ParamExpr::Int(0)),
        );
        let c = [rem_zero("n", 4), over_param];
        let kept = size_only(&c, &["n"]);
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].to_string(), "n % 4 == 0");
    }
}

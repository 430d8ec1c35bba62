//! Buffer contents for measurement (seeded inputs, uniform values, poisoned outputs) and the
//! comparison of a variant's outputs with the baseline's.
//!
//! Inputs follow the spec's distribution (the structured ones through the very rule the harness
//! calls, [`crate::distribution`]), or uniform in [-1, 1) for floats. Poison and the comparison
//! are [`crate::verdict`]'s, the rules the tuner's harness calls too: outputs start poisoned, so an
//! element a variant forgets to write fails unless the baseline forgot it too, and a baseline
//! output that is constant cannot tell a correct variant from a constant fill, so the comparison
//! refuses to judge it.
//!
//! The random stream is SplitMix64 per buffer (seeded from the trial seed and the binding name):
//! the values only need to be reproducible and spread, and the runtime keeps its dependencies
//! few.
//!
//! Invariant: contents depend only on the plan, the shape and the seed.

use crate::distribution::{Needs, Pattern, Sampler};
use crate::interface::{BufferLayout, Scalar};
use crate::plan::PlanBuffer;
use crate::spec::{Init, Role, Shape};
use crate::verdict;
use half::f16;

/// The bytes of `buffer` on `shape` for the trial `seed`.
pub fn contents(buffer: &PlanBuffer, shape: &Shape, seed: u64) -> Result<Vec<u8>, String> {
    let size = buffer.byte_size(shape).map_err(|e| e.to_string())? as usize;
    let len = buffer.len_on(shape).map_err(|e| e.to_string())?;
    let eval = |v: &crate::spec::Value| v.eval(shape).map_err(|e| e.to_string());
    let mut bytes = vec![0u8; size];
    match (buffer.role, &buffer.init) {
        (Role::Output | Role::Scratch, _) => return Ok(poison(&buffer.layout, len, size)),
        (Role::Sampler, _) => return Ok(Vec::new()),
        (Role::Uniform, _) => {
            for ((offset, scalar), value) in buffer.layout.scalars(0).zip(&buffer.values) {
                write_scalar(&mut bytes, offset as usize, scalar, eval(value)?);
            }
        }
        (Role::Input | Role::Inout, Some(Init::Values(values))) => {
            for ((offset, scalar), value) in buffer.layout.scalars(len).zip(values) {
                write_scalar(&mut bytes, offset as usize, scalar, eval(value)?);
            }
        }
        (Role::Input | Role::Inout, Some(init)) if Needs::of(init).is_some() => {
            let pattern = Pattern::of(init, shape)
                .map_err(|e| e.to_string())?
                .expect("a structured distribution");
            pattern.check(&buffer.layout, len)?;
            let mut sampler = Sampler::new(pattern, stream_seed(seed, &buffer.name));
            for (index, (offset, scalar)) in buffer.layout.scalars(len).enumerate() {
                let v = sampler.value(index as u64, scalar);
                write_scalar(&mut bytes, offset as usize, scalar, v);
            }
        }
        (Role::Input | Role::Inout, init) => {
            let (range, constant) = match init {
                Some(Init::Range(lo, hi)) => (Some((eval(lo)?, eval(hi)?)), None),
                Some(Init::Constant(v)) => (None, Some(eval(v)?)),
                _ => (None, None),
            };
            let mut rng = SplitMix(stream_seed(seed, &buffer.name));
            for (offset, scalar) in buffer.layout.scalars(len) {
                let v = match constant {
                    Some(c) => c,
                    None => {
                        let (lo, hi) = range.unwrap_or_else(|| default_range(scalar));
                        rng.sample(scalar, lo, hi)
                    }
                };
                write_scalar(&mut bytes, offset as usize, scalar, v);
            }
        }
    }
    Ok(bytes)
}

fn poison(layout: &BufferLayout, len: u64, size: usize) -> Vec<u8> {
    verdict::poisoned(layout, len, size)
}

fn default_range(scalar: Scalar) -> (f64, f64) {
    match scalar {
        Scalar::F32 | Scalar::F16 | Scalar::Snorm8 => (-1.0, 1.0),
        Scalar::Unorm8 => (0.0, 1.0),
        Scalar::U32 => (0.0, 1024.0),
        Scalar::I32 => (-512.0, 512.0),
        Scalar::U8 => (0.0, 256.0),
        Scalar::I8 => (-128.0, 128.0),
        Scalar::U16 => (0.0, 65536.0),
        Scalar::I16 => (-32768.0, 32768.0),
    }
}

/// SplitMix64 (Steele, Lea and Flood): a tiny, well-mixed generator for reproducible inputs.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn sample(&mut self, scalar: Scalar, lo: f64, hi: f64) -> f64 {
        if scalar.is_float() {
            if hi > lo {
                lo + (hi - lo) * self.unit()
            } else {
                lo
            }
        } else {
            let (lo, hi) = (lo.ceil() as i64, hi.ceil() as i64);
            if hi > lo {
                let span = (hi - lo) as u64;
                (lo + (self.next() % span) as i64) as f64
            } else {
                lo as f64
            }
        }
    }
}

fn stream_seed(seed: u64, name: &str) -> u64 {
    // FNV-1a over the name, mixed with the seed: a distinct, reproducible stream per buffer.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h ^ seed.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

fn write_scalar(bytes: &mut [u8], offset: usize, scalar: Scalar, v: f64) {
    match scalar {
        Scalar::F32 => bytes[offset..offset + 4].copy_from_slice(&(v as f32).to_le_bytes()),
        Scalar::F16 => bytes[offset..offset + 2].copy_from_slice(&f16::from_f64(v).to_le_bytes()),
        Scalar::U32 => bytes[offset..offset + 4].copy_from_slice(&(v as u32).to_le_bytes()),
        Scalar::I32 => bytes[offset..offset + 4].copy_from_slice(&(v as i32).to_le_bytes()),
        Scalar::U16 => bytes[offset..offset + 2].copy_from_slice(&(v as u16).to_le_bytes()),
        Scalar::I16 => bytes[offset..offset + 2].copy_from_slice(&(v as i16).to_le_bytes()),
        Scalar::U8 => bytes[offset] = v as u8,
        Scalar::I8 => bytes[offset] = (v as i8) as u8,
        Scalar::Unorm8 => bytes[offset] = (v.clamp(0.0, 1.0) * 255.0).round() as u8,
        Scalar::Snorm8 => bytes[offset] = ((v.clamp(-1.0, 1.0) * 127.0).round() as i8) as u8,
    }
}

/// Compares a variant's buffer with the baseline's (see the module docs); `Err` says how they
/// differ, naming the first differing element.
pub fn compare(
    layout: &BufferLayout,
    len: u64,
    baseline: &[u8],
    variant: &[u8],
    tolerance: f64,
) -> Result<(), String> {
    let cmp = verdict::compare(layout, len, baseline, variant, tolerance);
    if let Some(why) = cmp.degenerate {
        return Err(format!("{why}, so the check cannot judge"));
    }
    if cmp.ok(tolerance) {
        return Ok(());
    }
    let at = cmp
        .first
        .first()
        .map(|m| {
            format!(
                "; first at [{}]: expected {} got {}",
                m.index, m.expected, m.actual
            )
        })
        .unwrap_or_default();
    Err(format!(
        "{} values differ (relative L2 error {:.3e}, tolerance {tolerance:.1e}){at}",
        cmp.mismatched, cmp.rel_l2
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::SizeExpr;
    use crate::interface::{ArrayLayout, Field};
    use crate::spec::Value;

    fn layout(scalar: Scalar) -> BufferLayout {
        BufferLayout {
            header: vec![],
            header_size: 0,
            array: Some(ArrayLayout {
                stride: scalar.size(),
                fields: vec![Field { offset: 0, scalar }],
                count: None,
            }),
        }
    }

    fn buffer(role: Role, scalar: Scalar, init: Option<Init>) -> PlanBuffer {
        PlanBuffer {
            group: 0,
            binding: 0,
            name: "x".into(),
            role,
            layout: layout(scalar),
            len: Some(SizeExpr::size("n")),
            init,
            values: vec![],
            uniform: false,
            not_a_buffer: false,
        }
    }

    fn shape(n: u64) -> Shape {
        [("n".to_string(), n)].into_iter().collect()
    }

    fn floats(bytes: &[u8]) -> Vec<f32> {
        bytes
            .chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    #[test]
    fn inputs_follow_their_distribution_and_are_reproducible() {
        let b = buffer(
            Role::Input,
            Scalar::F32,
            Some(Init::Range(Value::Float(2.0), Value::Float(3.0))),
        );
        let a = contents(&b, &shape(1000), 7).unwrap();
        assert_eq!(a, contents(&b, &shape(1000), 7).unwrap());
        assert_ne!(a, contents(&b, &shape(1000), 8).unwrap());
        let v = floats(&a);
        assert!(v.iter().all(|x| (2.0..3.0).contains(x)), "{v:?}");
        assert!(v.iter().any(|x| *x < 2.2) && v.iter().any(|x| *x > 2.8));
        // Indices stay inside their range.
        let idx = buffer(
            Role::Input,
            Scalar::U32,
            Some(Init::Range(
                Value::Size(SizeExpr::lit(0)),
                Value::Size(SizeExpr::size("n")),
            )),
        );
        let bytes = contents(&idx, &shape(10), 1).unwrap();
        assert!(
            bytes
                .chunks(4)
                .all(|c| u32::from_le_bytes(c.try_into().unwrap()) < 10)
        );
        // Outputs are poisoned.
        let out = contents(&buffer(Role::Output, Scalar::F32, None), &shape(3), 1).unwrap();
        assert!(floats(&out).iter().all(|x| x.is_nan()));
    }

    #[test]
    fn structured_inputs_follow_the_shared_rule() {
        let shape: Shape = [("n".to_string(), 24), ("rows".to_string(), 3)]
            .into_iter()
            .chain([("cols".to_string(), 4)])
            .collect();
        let cols = SizeExpr::size("cols");
        let mask = buffer(
            Role::Input,
            Scalar::F32,
            Some(Init::CausalMask(SizeExpr::size("rows"), cols.clone())),
        );
        let m = floats(&contents(&mask, &shape, 1).unwrap());
        assert_eq!(m, floats(&contents(&mask, &shape, 2).unwrap()), "no seed");
        for (i, x) in m.iter().enumerate() {
            let (r, c) = ((i / 4) % 3, i % 4);
            assert_eq!(*x, if c <= r { 0.0 } else { f32::NEG_INFINITY }, "[{i}]");
        }
        let probs = buffer(Role::Input, Scalar::F32, Some(Init::Probabilities(cols)));
        let p = floats(&contents(&probs, &shape, 1).unwrap());
        for row in p.chunks(4) {
            assert!(row.iter().all(|x| *x >= 0.0));
            assert!((row.iter().sum::<f32>() - 1.0).abs() <= 4.0 * f32::EPSILON);
        }
        let bits = buffer(Role::Input, Scalar::U32, Some(Init::Bits));
        let big = [("n".to_string(), 256)].into_iter().collect();
        let words = contents(&bits, &big, 1).unwrap();
        assert!(
            words.chunks(4).any(|c| c[3] & 0x80 != 0),
            "the high bit is reached"
        );
        // A layout the pattern does not fit is an error, not a panic.
        let odd = [("n".to_string(), 7), ("rows".to_string(), 3)]
            .into_iter()
            .chain([("cols".to_string(), 4)])
            .collect();
        assert!(
            contents(&mask, &odd, 1)
                .unwrap_err()
                .contains("does not divide")
        );
    }

    fn f(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn comparison_uses_the_tolerance_and_refuses_constant_baselines() {
        let l = layout(Scalar::F32);
        let base = [1.0, 2.0, -3.0, f32::NAN];
        assert_eq!(compare(&l, 4, &f(&base), &f(&base), 1e-4), Ok(()));
        let close = [1.00001, 2.0, -3.0, f32::NAN];
        assert_eq!(compare(&l, 4, &f(&base), &f(&close), 1e-4), Ok(()));
        let wrong = [1.0, 2.5, -3.0, f32::NAN];
        let e = compare(&l, 4, &f(&base), &f(&wrong), 1e-4).unwrap_err();
        assert!(e.contains("first at [1]"), "{e}");
        let unwritten = [1.0, 2.0, -3.0, 0.0];
        assert!(compare(&l, 4, &f(&base), &f(&unwritten), 1e-4).is_err());
        let e = compare(&l, 3, &f(&[5.0; 3]), &f(&[5.0; 3]), 1e-4).unwrap_err();
        assert!(e.contains("cannot judge"), "{e}");
        // A masked output (0 below the diagonal, -inf above) is judged: a constant fill fails.
        let inf = f32::NEG_INFINITY;
        let masked = f(&[0.0, inf, 0.0, 0.0]);
        assert_eq!(compare(&l, 4, &masked, &masked, 1e-4), Ok(()));
        assert!(compare(&l, 4, &masked, &f(&[0.0; 4]), 1e-4).is_err());
        assert!(compare(&l, 2, &f(&[inf; 2]), &f(&[inf; 2]), 1e-4).is_err());
        let ints = layout(Scalar::U32);
        let a: Vec<u8> = [1u32, 2, 3].iter().flat_map(|x| x.to_le_bytes()).collect();
        let b: Vec<u8> = [1u32, 2, 4].iter().flat_map(|x| x.to_le_bytes()).collect();
        assert!(compare(&ints, 3, &a, &a, 0.0).is_ok());
        assert!(compare(&ints, 3, &a, &b, 0.0).is_err());
    }
}

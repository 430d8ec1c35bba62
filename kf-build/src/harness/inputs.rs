//! Buffer contents for a trial: random inputs from a seed, uniform values from the spec, and a
//! poison pattern for outputs.
//!
//! Each buffer gets its own random stream derived from the trial seed and the binding's name, so a
//! trial is reproducible from `(shape, seed)` alone and two buffers never share values. Outputs are
//! filled with a NaN pattern (floats) or `0xDEADBEEF` (integers): an element the kernel does not
//! write keeps the poison and fails the comparison unless the baseline also left it unwritten.
//! Textures are filled the same way through their tightly packed texel layout; 8-bit channels,
//! which have no NaN, are poisoned with `0xA5`.
//!
//! Invariant: contents depend only on the plan, the shape and the seed — never on earlier trials.

use half::f16;
use kf_runtime::interface::Scalar;
use kf_runtime::resolve::BufferPlan;
use kf_runtime::spec::{Init, Role, Shape};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Poison for f32 outputs: a quiet NaN with a recognisable payload.
pub const POISON_F32: u32 = 0x7FC0_DEAD;
/// Poison for f16 outputs.
pub const POISON_F16: u16 = 0x7E5A;
/// Poison for integer outputs.
pub const POISON_INT: u32 = 0xDEAD_BEEF;
/// Poison for padding bytes.
pub const POISON_PAD: u8 = 0xA5;

/// The bytes of `plan`'s buffer for one trial.
pub fn contents(plan: &BufferPlan, shape: &Shape, seed: u64) -> Result<Vec<u8>, String> {
    let size = plan.byte_size(shape).map_err(|e| e.to_string())? as usize;
    let len = plan.len_on(shape).map_err(|e| e.to_string())?;
    match plan.role {
        Role::Output | Role::Scratch => Ok(poison(plan, shape)?),
        Role::Sampler => Ok(Vec::new()),
        Role::Uniform => {
            let mut bytes = vec![0u8; size];
            for ((offset, scalar), value) in plan.binding.layout.scalars(0).zip(&plan.values) {
                let v = value.eval(shape).map_err(|e| e.to_string())?;
                write_scalar(&mut bytes, offset as usize, scalar, v);
            }
            Ok(bytes)
        }
        Role::Input | Role::Inout if matches!(plan.init, Some(Init::Values(_))) => {
            let Some(Init::Values(values)) = &plan.init else {
                unreachable!("matched above")
            };
            let mut bytes = vec![0u8; size];
            for ((offset, scalar), value) in plan.layout().scalars(len).zip(values) {
                let v = value.eval(shape).map_err(|e| e.to_string())?;
                write_scalar(&mut bytes, offset as usize, scalar, v);
            }
            Ok(bytes)
        }
        Role::Input | Role::Inout => {
            let mut bytes = vec![0u8; size];
            let mut rng = StdRng::seed_from_u64(stream_seed(seed, &plan.binding.name));
            let (lo, hi, constant) = match &plan.init {
                Some(Init::Range(lo, hi)) => (
                    lo.eval(shape).map_err(|e| e.to_string())?,
                    hi.eval(shape).map_err(|e| e.to_string())?,
                    None,
                ),
                Some(Init::Constant(v)) => {
                    (0.0, 0.0, Some(v.eval(shape).map_err(|e| e.to_string())?))
                }
                Some(Init::Values(_)) | None => (f64::NAN, f64::NAN, None),
            };
            for (offset, scalar) in plan.layout().scalars(len) {
                let v = match constant {
                    Some(c) => c,
                    None => {
                        let (lo, hi) = if lo.is_nan() {
                            default_range(scalar)
                        } else {
                            (lo, hi)
                        };
                        sample(&mut rng, scalar, lo, hi)
                    }
                };
                write_scalar(&mut bytes, offset as usize, scalar, v);
            }
            Ok(bytes)
        }
    }
}

/// The poison pattern for `plan`'s buffer on `shape`.
pub fn poison(plan: &BufferPlan, shape: &Shape) -> Result<Vec<u8>, String> {
    let size = plan.byte_size(shape).map_err(|e| e.to_string())? as usize;
    let len = plan.len_on(shape).map_err(|e| e.to_string())?;
    let mut bytes = vec![POISON_PAD; size];
    for (offset, scalar) in plan.layout().scalars(len) {
        let o = offset as usize;
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
    Ok(bytes)
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

fn sample(rng: &mut StdRng, scalar: Scalar, lo: f64, hi: f64) -> f64 {
    if scalar.is_float() {
        if hi > lo {
            rng.random_range(lo..hi)
        } else {
            lo
        }
    } else {
        let (lo, hi) = (lo.ceil() as i64, hi.ceil() as i64);
        if hi > lo {
            rng.random_range(lo..hi) as f64
        } else {
            lo as f64
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

/// Writes `v` as `scalar` at `offset`.
pub fn write_scalar(bytes: &mut [u8], offset: usize, scalar: Scalar, v: f64) {
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

/// A scalar read from a buffer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ScalarValue {
    /// f32 or f16, widened.
    Float(f64),
    /// u32 or i32, as raw bits.
    Int(u32),
}

/// Reads the scalar at `offset`.
pub fn read_scalar(bytes: &[u8], offset: usize, scalar: Scalar) -> ScalarValue {
    match scalar {
        Scalar::F32 => ScalarValue::Float(f64::from(f32::from_le_bytes(
            bytes[offset..offset + 4].try_into().expect("4 bytes"),
        ))),
        Scalar::F16 => ScalarValue::Float(
            f16::from_le_bytes(bytes[offset..offset + 2].try_into().expect("2 bytes")).to_f64(),
        ),
        Scalar::U32 | Scalar::I32 => ScalarValue::Int(u32::from_le_bytes(
            bytes[offset..offset + 4].try_into().expect("4 bytes"),
        )),
        Scalar::U16 | Scalar::I16 => ScalarValue::Int(u32::from(u16::from_le_bytes(
            bytes[offset..offset + 2].try_into().expect("2 bytes"),
        ))),
        Scalar::U8 | Scalar::I8 => ScalarValue::Int(u32::from(bytes[offset])),
        Scalar::Unorm8 => ScalarValue::Float(f64::from(bytes[offset]) / 255.0),
        Scalar::Snorm8 => ScalarValue::Float((f64::from(bytes[offset] as i8) / 127.0).max(-1.0)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kf_runtime::expr::SizeExpr;
    use kf_runtime::interface::{ArrayLayout, BindingInterface, BindingKind, BufferLayout, Field};
    use kf_runtime::spec::Value;

    fn plan(role: Role, init: Option<Init>) -> BufferPlan {
        BufferPlan {
            binding: BindingInterface {
                group: 0,
                binding: 0,
                name: "x".into(),
                kind: BindingKind::StorageReadWrite,
                ty: "array<f32>".into(),
                layout: BufferLayout {
                    header: vec![],
                    header_size: 0,
                    array: Some(ArrayLayout {
                        stride: 4,
                        fields: vec![Field {
                            offset: 0,
                            scalar: Scalar::F32,
                        }],
                        count: None,
                    }),
                },
            },
            role,
            len: Some(SizeExpr::size("n")),
            init,
            values: vec![],
            extent: vec![],
            format: None,
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
    fn inputs_are_reproducible_and_seed_dependent() {
        let p = plan(Role::Input, None);
        let a = contents(&p, &shape(100), 1).unwrap();
        assert_eq!(a, contents(&p, &shape(100), 1).unwrap());
        assert_ne!(a, contents(&p, &shape(100), 2).unwrap());
        let v = floats(&a);
        assert!(v.iter().all(|x| (-1.0..1.0).contains(x)));
        assert!(v.iter().any(|x| *x != v[0]), "not constant");
    }

    #[test]
    fn ranges_and_constants_apply() {
        let p = plan(
            Role::Input,
            Some(Init::Range(
                Value::Float(10.0),
                Value::Size(SizeExpr::size("n")),
            )),
        );
        assert!(
            floats(&contents(&p, &shape(12), 3).unwrap())
                .iter()
                .all(|x| (10.0..12.0).contains(x))
        );
        let p = plan(Role::Inout, Some(Init::Constant(Value::Float(0.5))));
        assert!(
            floats(&contents(&p, &shape(5), 3).unwrap())
                .iter()
                .all(|x| *x == 0.5)
        );
    }

    #[test]
    fn fixed_size_values_fill_each_scalar_in_order() {
        let mut p = plan(
            Role::Input,
            Some(Init::Values(vec![
                Value::Size(SizeExpr::size("rows")),
                Value::Size(SizeExpr::parse("cols * 2").unwrap()),
            ])),
        );
        p.len = None;
        p.binding.ty = "vec2<u32>".into();
        p.binding.layout = BufferLayout {
            header: vec![
                Field {
                    offset: 0,
                    scalar: Scalar::U32,
                },
                Field {
                    offset: 4,
                    scalar: Scalar::U32,
                },
            ],
            header_size: 8,
            array: None,
        };
        let shape: Shape = [("rows".to_string(), 3), ("cols".to_string(), 5)]
            .into_iter()
            .collect();
        let bytes = contents(&p, &shape, 1).unwrap();
        let words: Vec<u32> = bytes
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(words, vec![3, 10]);
    }

    #[test]
    fn textures_fill_and_poison_every_channel_of_every_texel() {
        use kf_runtime::interface::{TexelFormat, TextureAccess, TextureDim};
        let mut p = plan(Role::Input, None);
        p.len = None;
        p.binding.kind = BindingKind::StorageTexture {
            dim: TextureDim::D2,
            format: TexelFormat::Rgba8unorm,
            access: TextureAccess::Read,
        };
        p.extent = vec![SizeExpr::size("n"), SizeExpr::lit(3)];
        p.format = Some(TexelFormat::Rgba8unorm);
        let bytes = contents(&p, &shape(5), 7).unwrap();
        assert_eq!(bytes.len(), 5 * 3 * 4, "tightly packed rgba8 texels");
        assert!(bytes.iter().any(|b| *b != bytes[0]), "random texels");
        let unorm = read_scalar(&bytes, 1, Scalar::Unorm8);
        assert!(matches!(unorm, ScalarValue::Float(v) if (0.0..=1.0).contains(&v)));
        p.role = Role::Output;
        assert!(
            contents(&p, &shape(5), 7)
                .unwrap()
                .iter()
                .all(|b| *b == POISON_PAD)
        );
        p.format = Some(TexelFormat::Rg32float);
        let poisoned = contents(&p, &shape(2), 7).unwrap();
        assert_eq!(poisoned.len(), 2 * 3 * 8);
        assert!(floats(&poisoned).iter().all(|v| v.is_nan()));
    }

    #[test]
    fn outputs_are_poisoned() {
        let p = plan(Role::Output, None);
        let bytes = contents(&p, &shape(3), 9).unwrap();
        assert_eq!(bytes.len(), 12);
        for c in bytes.chunks(4) {
            assert_eq!(u32::from_le_bytes(c.try_into().unwrap()), POISON_F32);
            assert!(f32::from_le_bytes(c.try_into().unwrap()).is_nan());
        }
    }
}

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
//! Large buffers are generated in parallel: the array's elements are split into the fixed parts
//! of [`super::parts`], and each part draws from its own stream, derived from the buffer's stream
//! and the part's number, so the values do not depend on how many threads generated them.
//!
//! A worker keeps what it generated in a [`Cache`], keyed by kernel, shape and seed (and without
//! the seed for buffers that do not depend on it, such as poisoned outputs): the same trial's
//! contents serve the baseline's run and the candidate's, and every later evaluation of the same
//! kernel. Buffers on the GPU are still created fresh from these bytes for every run.
//!
//! Invariant: contents depend only on the plan, the shape and the seed — never on earlier trials.

use super::parts::PART_ELEMENTS;
use half::f16;
use kf_runtime::distribution::{Needs, Pattern, Sampler};
use kf_runtime::interface::{ArrayLayout, Scalar};
use kf_runtime::resolve::{BufferPlan, shape_text};
use kf_runtime::spec::{Init, Role, Shape};
use rand::rngs::StdRng;
use rand::{Rng, RngCore, SeedableRng};
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;

pub use kf_runtime::verdict::{
    POISON_F16, POISON_F32, POISON_INT, POISON_PAD, ScalarValue, poison_scalar, read_scalar,
};

/// The bytes of every buffer of a trial, in the kernel's binding order, shared between runs.
pub type Contents = Vec<Arc<Vec<u8>>>;

/// Bytes of generated contents a [`Cache`] holds before it starts over.
const CACHE_BYTES: usize = 1 << 30;

/// Content hash, shape, seed (for a buffer that depends on it) and binding index.
type CacheKey = (String, String, Option<u64>, usize);

/// Contents generated in this process, kept for the next trial that needs them.
#[derive(Default)]
pub struct Cache {
    held: HashMap<CacheKey, Arc<Vec<u8>>>,
    bytes: usize,
}

impl Cache {
    /// The contents of the buffers `plans` of the kernel with content hash `kernel` for the
    /// trial `(shape, seed)`, generated or reused; an error names the index of the binding that
    /// failed.
    pub fn contents(
        &mut self,
        kernel: &str,
        plans: &[BufferPlan],
        shape: &Shape,
        seed: u64,
    ) -> Result<Contents, (usize, String)> {
        let shape_key = shape_text(shape);
        let mut out = Vec::with_capacity(plans.len());
        for (i, plan) in plans.iter().enumerate() {
            let key = (
                kernel.to_owned(),
                shape_key.clone(),
                seeded(plan).then_some(seed),
                i,
            );
            if let Some(bytes) = self.held.get(&key) {
                out.push(bytes.clone());
                continue;
            }
            let bytes = Arc::new(contents(plan, shape, seed).map_err(|e| (i, e))?);
            if self.bytes + bytes.len() > CACHE_BYTES {
                self.held.clear();
                self.bytes = 0;
            }
            self.bytes += bytes.len();
            self.held.insert(key, bytes.clone());
            out.push(bytes);
        }
        Ok(out)
    }
}

/// Whether a buffer's contents depend on the trial's seed.
fn seeded(plan: &BufferPlan) -> bool {
    matches!(plan.role, Role::Input | Role::Inout)
        && !matches!(
            plan.init,
            Some(Init::Values(_) | Init::Constant(_) | Init::CausalMask(..))
        )
}

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
        Role::Input | Role::Inout if plan.init.as_ref().is_some_and(|i| Needs::of(i).is_some()) => {
            let init = plan.init.as_ref().expect("matched above");
            let pattern = Pattern::of(init, shape)
                .map_err(|e| e.to_string())?
                .expect("a structured distribution");
            let layout = plan.layout();
            pattern.check(&layout, len)?;
            let mut sampler = Sampler::new(pattern, stream_seed(seed, &plan.binding.name));
            let mut bytes = vec![0u8; size];
            for (k, f) in layout.header.iter().enumerate() {
                let v = sampler.value(k as u64, f.scalar);
                write_scalar(&mut bytes, f.offset as usize, f.scalar, v);
            }
            if let Some(a) = &layout.array {
                let n = a.count.map_or(len, u64::from) as usize;
                let (first, width) = (layout.header.len() as u64, a.fields.len() as u64);
                let array = &mut bytes[layout.header_size as usize..];
                // Each part gets its own sampler; a value depends on its index alone.
                fill_elements(
                    a,
                    n,
                    array,
                    |_| sampler.clone(),
                    |sampler, bytes, at, element| {
                        for (k, f) in a.fields.iter().enumerate() {
                            let v = sampler.value(first + element * width + k as u64, f.scalar);
                            write_scalar(bytes, at + f.offset as usize, f.scalar, v);
                        }
                    },
                );
            }
            Ok(bytes)
        }
        Role::Input | Role::Inout => {
            let (lo, hi, constant) = match &plan.init {
                Some(Init::Range(lo, hi)) => (
                    lo.eval(shape).map_err(|e| e.to_string())?,
                    hi.eval(shape).map_err(|e| e.to_string())?,
                    None,
                ),
                Some(Init::Constant(v)) => {
                    (0.0, 0.0, Some(v.eval(shape).map_err(|e| e.to_string())?))
                }
                Some(
                    Init::Values(_) | Init::CausalMask(..) | Init::Probabilities(_) | Init::Bits,
                )
                | None => (f64::NAN, f64::NAN, None),
            };
            let value = |rng: &mut StdRng, scalar: Scalar| match constant {
                Some(c) => c,
                None => {
                    let (lo, hi) = if lo.is_nan() {
                        default_range(scalar)
                    } else {
                        (lo, hi)
                    };
                    sample(rng, scalar, lo, hi)
                }
            };
            let layout = plan.layout();
            let stream = stream_seed(seed, &plan.binding.name);
            let mut bytes = vec![0u8; size];
            let mut rng = StdRng::seed_from_u64(part_seed(stream, None));
            for f in &layout.header {
                write_scalar(
                    &mut bytes,
                    f.offset as usize,
                    f.scalar,
                    value(&mut rng, f.scalar),
                );
            }
            if let Some(a) = &layout.array {
                let n = a.count.map_or(len, u64::from) as usize;
                let array = &mut bytes[layout.header_size as usize..];
                fill_elements(
                    a,
                    n,
                    array,
                    |k| StdRng::seed_from_u64(part_seed(stream, Some(k))),
                    |rng, bytes, at, _| {
                        for f in &a.fields {
                            let v = value(rng, f.scalar);
                            write_scalar(bytes, at + f.offset as usize, f.scalar, v);
                        }
                    },
                );
            }
            Ok(bytes)
        }
    }
}

/// The poison pattern for `plan`'s buffer on `shape`.
pub fn poison(plan: &BufferPlan, shape: &Shape) -> Result<Vec<u8>, String> {
    let size = plan.byte_size(shape).map_err(|e| e.to_string())? as usize;
    let len = plan.len_on(shape).map_err(|e| e.to_string())?;
    let layout = plan.layout();
    let mut bytes = vec![POISON_PAD; size];
    for f in &layout.header {
        poison_scalar(&mut bytes, f.offset as usize, f.scalar);
    }
    if let Some(a) = &layout.array {
        // Every element is poisoned alike: one element's pattern, copied.
        let mut pattern = vec![POISON_PAD; a.stride as usize];
        let n = a.count.map_or(len, u64::from) as usize;
        let array = &mut bytes[layout.header_size as usize..];
        if regular(a) {
            for f in &a.fields {
                poison_scalar(&mut pattern, f.offset as usize, f.scalar);
            }
            fill_elements(
                a,
                n,
                array,
                |_| (),
                |_, bytes, at, _| bytes[at..at + pattern.len()].copy_from_slice(&pattern),
            );
        } else {
            fill_elements(
                a,
                n,
                array,
                |_| (),
                |_, bytes, at, _| {
                    for f in &a.fields {
                        poison_scalar(bytes, at + f.offset as usize, f.scalar);
                    }
                },
            );
        }
    }
    Ok(bytes)
}

/// Whether every field of an element lies within its stride, so elements own disjoint bytes.
fn regular(a: &ArrayLayout) -> bool {
    a.stride > 0
        && a.fields
            .iter()
            .all(|f| f.offset + f.scalar.size() <= a.stride)
}

/// Writes the first `n` elements of `array` (the buffer's bytes from the array's start): `fill`
/// gets the state of the element's part (`start(k)` for the `k`-th part of [`PART_ELEMENTS`]
/// elements), bytes, the element's offset in them, and the element's index in the array. Parts
/// run in parallel when elements own disjoint bytes, one after the other otherwise; each part sees
/// its elements in order, so the result is the same either way.
fn fill_elements<S>(
    a: &ArrayLayout,
    n: usize,
    array: &mut [u8],
    start: impl Fn(u64) -> S + Sync,
    fill: impl Fn(&mut S, &mut [u8], usize, u64) + Sync,
) {
    let stride = a.stride as usize;
    let part = PART_ELEMENTS as usize;
    if regular(a) {
        array[..n * stride]
            .par_chunks_mut(part * stride)
            .enumerate()
            .for_each(|(k, bytes)| {
                let mut state = start(k as u64);
                for (j, at) in (0..bytes.len()).step_by(stride).enumerate() {
                    fill(&mut state, bytes, at, (k * part + j) as u64);
                }
            });
    } else {
        for k in 0..n.div_ceil(part) {
            let mut state = start(k as u64);
            for i in k * part..((k + 1) * part).min(n) {
                fill(&mut state, array, i * stride, i as u64);
            }
        }
    }
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
            // 32 random bits per value: more than an f32 holds, and half the generator's work
            // of a 64-bit draw.
            let unit = f64::from(rng.next_u32()) * (1.0 / 4_294_967_296.0);
            (lo + (hi - lo) * unit).min(hi.next_down())
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

/// The seed of one part's stream: `None` for the header, `Some(k)` for the `k`-th run of
/// elements (splitmix64 over the buffer's stream and the part, so neighbouring parts' streams
/// are unrelated).
fn part_seed(stream: u64, part: Option<u64>) -> u64 {
    let mut z = stream
        ^ part
            .map_or(0, |k| k.wrapping_add(1))
            .wrapping_mul(0xD1B5_4A32_D192_ED03);
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
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

    /// A struct buffer: a header (u32, f32, padding) then elements of (f32, f16, padding).
    fn structs(role: Role) -> BufferPlan {
        let mut p = plan(role, None);
        p.binding.ty = "Data".into();
        p.binding.layout = BufferLayout {
            header: vec![
                Field {
                    offset: 0,
                    scalar: Scalar::U32,
                },
                Field {
                    offset: 4,
                    scalar: Scalar::F32,
                },
            ],
            header_size: 16,
            array: Some(ArrayLayout {
                stride: 8,
                fields: vec![
                    Field {
                        offset: 0,
                        scalar: Scalar::F32,
                    },
                    Field {
                        offset: 4,
                        scalar: Scalar::F16,
                    },
                ],
                count: None,
            }),
        };
        p
    }

    fn on_threads<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(f)
    }

    #[test]
    fn parallel_generation_does_not_depend_on_the_number_of_threads() {
        let n = 3 * PART_ELEMENTS + 17;
        for p in [
            plan(Role::Input, None),
            structs(Role::Inout),
            structs(Role::Output),
        ] {
            let one = on_threads(1, || contents(&p, &shape(n), 5).unwrap());
            let four = on_threads(4, || contents(&p, &shape(n), 5).unwrap());
            assert_eq!(one, four, "{:?}", p.role);
            assert_eq!(one.len() as u64, p.byte_size(&shape(n)).unwrap());
        }
    }

    #[test]
    fn every_part_draws_its_own_values_within_the_range() {
        let n = 2 * PART_ELEMENTS;
        let v = floats(&contents(&plan(Role::Input, None), &shape(n), 5).unwrap());
        let (first, second) = v.split_at(PART_ELEMENTS as usize);
        assert_ne!(first, second, "two parts repeat one stream");
        assert!(v.iter().all(|x| (-1.0..1.0).contains(x)));
        // Another seed changes every part.
        let w = floats(&contents(&plan(Role::Input, None), &shape(n), 6).unwrap());
        assert_ne!(&w[..8], &v[..8]);
        assert_ne!(&w[PART_ELEMENTS as usize..][..8], &second[..8]);
        // A struct's header and fields are written, its padding stays zero.
        let p = structs(Role::Input);
        let bytes = contents(&p, &shape(5), 5).unwrap();
        assert_eq!(&bytes[8..16], &[0; 8], "header padding");
        assert!(matches!(read_scalar(&bytes, 0, Scalar::U32), ScalarValue::Int(i) if i < 1024));
        for e in 0..5 {
            let at = 16 + 8 * e;
            assert_eq!(&bytes[at + 6..at + 8], &[0, 0], "element padding");
            assert!(
                matches!(read_scalar(&bytes, at + 4, Scalar::F16), ScalarValue::Float(v) if (-1.0..=1.0).contains(&v))
            );
        }
    }

    #[test]
    fn poison_fills_every_scalar_and_pads_the_rest() {
        let n = PART_ELEMENTS + 3;
        let bytes = contents(&structs(Role::Output), &shape(n), 1).unwrap();
        // What poisoning one scalar at a time writes.
        let mut expected = vec![POISON_PAD; bytes.len()];
        for (offset, scalar) in structs(Role::Output).layout().scalars(n) {
            poison_scalar(&mut expected, offset as usize, scalar);
        }
        assert_eq!(bytes, expected);
        assert_eq!(
            read_scalar(&bytes, 0, Scalar::U32),
            ScalarValue::Int(POISON_INT)
        );
        let last = 16 + 8 * (n as usize - 1);
        assert!(
            matches!(read_scalar(&bytes, last, Scalar::F32), ScalarValue::Float(v) if v.is_nan())
        );
        assert!(
            matches!(read_scalar(&bytes, last + 4, Scalar::F16), ScalarValue::Float(v) if v.is_nan())
        );
    }

    #[test]
    fn the_cache_reuses_contents_and_shares_poison_across_seeds() {
        let mut out = plan(Role::Output, None);
        out.binding.name = "y".into();
        let k = vec![plan(Role::Input, None), out];
        let mut cache = Cache::default();
        let a = cache.contents("a", &k, &shape(10), 1).unwrap();
        let again = cache.contents("a", &k, &shape(10), 1).unwrap();
        assert!(Arc::ptr_eq(&a[0], &again[0]) && Arc::ptr_eq(&a[1], &again[1]));
        assert_eq!(*a[0], contents(&k[0], &shape(10), 1).unwrap());
        assert_eq!(*a[1], contents(&k[1], &shape(10), 1).unwrap());
        let b = cache.contents("a", &k, &shape(10), 2).unwrap();
        assert_ne!(a[0], b[0], "another seed, other inputs");
        assert!(
            Arc::ptr_eq(&a[1], &b[1]),
            "the poison does not depend on the seed"
        );
        let other_shape = cache.contents("a", &k, &shape(11), 1).unwrap();
        assert_eq!(other_shape[0].len(), 44);
        let other_kernel = cache.contents("b", &k, &shape(10), 1).unwrap();
        assert!(!Arc::ptr_eq(&a[0], &other_kernel[0]));
    }

    fn sized(pairs: &[(&str, u64)]) -> Shape {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    fn words(bytes: &[u8]) -> Vec<u32> {
        bytes
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    /// An `array<u32>` or `array<i32>` of `n` elements.
    fn integers(scalar: Scalar, init: Init) -> BufferPlan {
        let mut p = plan(Role::Input, Some(init));
        p.binding.ty = format!("array<{}>", format!("{scalar:?}").to_lowercase());
        p.binding.layout.array.as_mut().unwrap().fields[0].scalar = scalar;
        p
    }

    #[test]
    fn the_causal_mask_is_exact_for_every_element_of_every_head() {
        let (heads, rows, cols) = (20, 37, 53);
        let mut p = plan(
            Role::Input,
            Some(Init::CausalMask(
                SizeExpr::size("rows"),
                SizeExpr::size("cols"),
            )),
        );
        p.len = Some(SizeExpr::parse("heads * rows * cols").unwrap());
        let shape = sized(&[("heads", heads), ("rows", rows), ("cols", cols)]);
        // More than one part, so parts meet inside a row.
        assert!(heads * rows * cols > PART_ELEMENTS);
        let v = floats(&contents(&p, &shape, 1).unwrap());
        assert_eq!(v.len() as u64, heads * rows * cols);
        for (i, x) in v.iter().enumerate() {
            let i = i as u64;
            let (r, c) = ((i / cols) % rows, i % cols);
            if c <= r {
                assert_eq!(x.to_bits(), 0f32.to_bits(), "[{i}] row {r} col {c}");
            } else {
                assert_eq!(*x, f32::NEG_INFINITY, "[{i}] row {r} col {c}");
            }
        }
        assert_eq!(v, floats(&contents(&p, &shape, 2).unwrap()), "seed-free");
        let one = on_threads(1, || contents(&p, &shape, 1).unwrap());
        assert_eq!(floats(&one), v);
        assert!(!seeded(&p));
        // A length that is not a whole number of masks.
        let odd = sized(&[("heads", heads), ("rows", rows), ("cols", cols + 1)]);
        p.len = Some(SizeExpr::parse("heads * rows * cols - 1").unwrap());
        assert!(
            contents(&p, &odd, 1)
                .unwrap_err()
                .contains("does not divide")
        );
    }

    #[test]
    fn every_probability_row_is_non_negative_and_sums_to_one() {
        let (rows, cols) = (300, 1000);
        let mut p = plan(
            Role::Input,
            Some(Init::Probabilities(SizeExpr::size("cols"))),
        );
        p.len = Some(SizeExpr::parse("rows * cols").unwrap());
        let shape = sized(&[("rows", rows), ("cols", cols)]);
        let bytes = contents(&p, &shape, 4).unwrap();
        let v = floats(&bytes);
        for (r, row) in v.chunks(cols as usize).enumerate() {
            assert!(row.iter().all(|x| *x >= 0.0 && x.is_finite()), "row {r}");
            let sum: f32 = row.iter().sum();
            assert!(
                (sum - 1.0).abs() <= cols as f32 * f32::EPSILON,
                "row {r} sums to {sum}"
            );
        }
        assert_ne!(v[..8], v[cols as usize..][..8], "rows differ");
        assert_ne!(bytes, contents(&p, &shape, 5).unwrap(), "seeded");
        // Parts split rows (1000 does not divide the part size): the same on any thread count.
        assert_ne!(PART_ELEMENTS % cols, 0);
        let one = on_threads(1, || contents(&p, &shape, 4).unwrap());
        assert_eq!(one, bytes);
    }

    #[test]
    fn token_ids_from_a_range_stay_below_the_vocabulary_and_cover_it() {
        let vocab = 50;
        let ids = Init::Range(
            Value::Size(SizeExpr::lit(0)),
            Value::Size(SizeExpr::size("vocab")),
        );
        for scalar in [Scalar::U32, Scalar::I32] {
            let p = integers(scalar, ids.clone());
            let shape = sized(&[("n", 5000), ("vocab", vocab)]);
            let v = words(&contents(&p, &shape, 1).unwrap());
            assert!(v.iter().all(|x| (*x as u64) < vocab), "{scalar:?}");
            let seen: std::collections::HashSet<u32> = v.into_iter().collect();
            assert_eq!(seen.len() as u64, vocab, "{scalar:?}: every id occurs");
        }
    }

    #[test]
    fn bits_reach_every_bit_of_a_word() {
        let n = PART_ELEMENTS + 5;
        for scalar in [Scalar::U32, Scalar::I32] {
            let p = integers(scalar, Init::Bits);
            let v = words(&contents(&p, &shape(n), 1).unwrap());
            assert!(
                v.iter().any(|x| x & 0x8000_0000 != 0),
                "{scalar:?}: high bit"
            );
            let (or, and) = v.iter().fold((0, u32::MAX), |(o, a), x| (o | x, a & x));
            assert_eq!((or, and), (u32::MAX, 0), "{scalar:?}: every bit varies");
            let four = on_threads(4, || contents(&p, &shape(n), 1).unwrap());
            assert_eq!(words(&four), v);
        }
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

//! A first pass of the comparison on the GPU, so a candidate whose outputs pass is never read
//! back.
//!
//! Why: at production shapes an output holds tens of millions of scalars, and every verification
//! trial (seeds, unseen shapes, the rerun, the re-verification after timing) read the candidate's
//! whole output back and compared it on the host. On an H200 the read-back and the comparison of
//! a 4096² softmax took more than the kernel's timing, and the GPU idled long enough between two
//! timings to lose its clock. Here the baseline's outputs stay on the GPU (the runner keeps them
//! beside their bytes) and a compute pass compares the candidate's against them where they lie;
//! only a few words per workgroup come back.
//!
//! The rule is not written again. The GPU answers one question, "does every element pass the
//! verdict's test with room to spare?", and the host decides:
//!
//! - **Pass on the GPU ⇒ pass on the host.** The shader tests each element of a plain `f32`,
//!   `u32` or `i32` array against a tolerance tightened by [`MARGIN`] and rounded down to `f32`,
//!   with the verdict's floor (1 % of the reference's largest magnitude, from the host's
//!   [`kf_runtime::verdict::Scan`]) rounded down to `f32`. Integers, NaN and infinities are
//!   tested on the bits, so no shader arithmetic ever sees a NaN or an infinity (WGSL lets an
//!   implementation assume they do not occur). Subnormal values that differ are suspect (a GPU
//!   may flush them). [`merge`] adds the per-workgroup sums in `f64` and passes the relative L2
//!   error only with a margin ([`L2_MARGIN`], plus an absolute slack per element for flushed
//!   underflows). The proof is at [`Params::new`] and [`merge`]; the tests below check it on
//!   boundary elements.
//! - **Anything else goes to the host.** A suspect element, a non-finite partial sum, a layout
//!   that is not a plain scalar array (structs, vectors with padding, 8-bit channels with their
//!   one-step quantum, headers), a texture, a tolerance or floor outside the range the proof
//!   covers: the runner then reads the outputs back and runs today's [`super::compare`], so a
//!   failure, a near miss and the worst elements are reported exactly as before.
//!
//! The figures of a pass (the relative L2 error and the largest element error, which fill
//! `VerifyStats`) come from `f32` arithmetic: accurate to a few `f32` roundings, not bit for bit
//! the host's.
//!
//! Invariant: the shader only reads the reference and the candidate; nothing the candidate can
//! bind is ever written here.

use kf_runtime::interface::{BufferLayout, Scalar};

/// How much the shader tightens the tolerance, relatively: an element within this much of the
/// tolerance is left to the host. It covers the `f32` roundings of the shader's test (a
/// subtraction and a product, each within 2⁻²³ relatively in any rounding mode Vulkan allows)
/// and the host's `f64` roundings, with a wide berth.
pub const MARGIN: f64 = 1.0 / 65536.0;

/// How much the relative L2 test is tightened on the squared sums: covers the `f32` roundings of
/// a sum of at most [`PER_THREAD`] terms and a tree of 8 levels (under 2⁻¹⁵ relatively).
pub const L2_MARGIN: f64 = 1.0 / 1024.0;

/// Absolute slack per element added to the squared-difference sum: covers a square or a partial
/// sum that underflowed below `f32`'s smallest normal (2⁻¹²⁶) and was flushed to zero.
const L2_SLACK: f64 = 1.0 / (1u128 << 120) as f64;

/// The smallest product of the tightened tolerance and the floor the proof covers: products
/// above it are normal `f32` values, and a difference too small to be normal (flushed to zero on
/// some GPUs) is below 2⁻²⁶ of the tolerance relatively.
const MIN_TOL_FLOOR: f64 = 1.0 / (1u128 << 100) as f64;

/// Invocations per workgroup.
pub const WORKGROUP: u32 = 256;
/// Elements each invocation visits (strided by [`WORKGROUP`], so reads are coalesced).
pub const PER_THREAD: u32 = 64;
/// Elements one workgroup covers.
pub const CHUNK: u64 = WORKGROUP as u64 * PER_THREAD as u64;
/// Bytes of one workgroup's partial result.
const PARTIAL_BYTES: u64 = 20;

/// The shader. Buffers are read as `u32` words: NaN, infinities and subnormals are recognised
/// on the bits before any value is used as a float.
pub const WGSL: &str = r#"
struct Params { n: u32, ints: u32, floor: f32, tol: f32 }
struct Partial { suspect: u32, worst: u32, max_rel: f32, diff2: f32, ref2: f32 }

@group(0) @binding(0) var<storage, read> reference: array<u32>;
@group(0) @binding(1) var<storage, read> candidate: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;
@group(0) @binding(3) var<storage, read_write> partials: array<Partial>;

const WG: u32 = 256u;
const PER_THREAD: u32 = 64u;

var<workgroup> w_suspect: array<u32, 256>;
var<workgroup> w_worst: array<u32, 256>;
var<workgroup> w_max: array<f32, 256>;
var<workgroup> w_diff2: array<f32, 256>;
var<workgroup> w_ref2: array<f32, 256>;

var<private> suspect: u32;
var<private> worst: u32;
var<private> max_rel: f32;
var<private> diff2: f32;
var<private> ref2: f32;

fn is_nan(b: u32) -> bool { return (b & 0x7fffffffu) > 0x7f800000u; }
fn is_inf(b: u32) -> bool { return (b & 0x7fffffffu) == 0x7f800000u; }
fn is_subnormal(b: u32) -> bool { return (b & 0x7f800000u) == 0u && (b & 0x007fffffu) != 0u; }

// The verdict's test of element `i`, tightened: anything it does not pass counts as suspect.
fn visit(i: u32) {
    let rb = reference[i];
    let cb = candidate[i];
    if params.ints != 0u {
        if rb != cb { suspect += 1u; }
        return;
    }
    let rn = is_nan(rb);
    let cn = is_nan(cb);
    if rn || cn {
        if !(rn && cn) { suspect += 1u; }
        return;
    }
    if is_inf(rb) || is_inf(cb) {
        if rb != cb { suspect += 1u; }
        return;
    }
    if rb != cb && (is_subnormal(rb) || is_subnormal(cb)) {
        suspect += 1u;
        return;
    }
    let r = bitcast<f32>(rb);
    let c = bitcast<f32>(cb);
    let m = max(abs(r), params.floor);
    let d = abs(r - c);
    if !(d <= params.tol * m) {
        suspect += 1u;
        return;
    }
    diff2 += d * d;
    ref2 += r * r;
    let rel = d / m;
    if rel > max_rel {
        max_rel = rel;
        worst = i;
    }
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    suspect = 0u;
    worst = 0xffffffffu;
    max_rel = 0.0;
    diff2 = 0.0;
    ref2 = 0.0;
    let base = group.x * (WG * PER_THREAD);
    for (var k = 0u; k < PER_THREAD; k += 1u) {
        let i = base + k * WG + lid;
        if i < params.n {
            visit(i);
        }
    }
    w_suspect[lid] = suspect;
    w_worst[lid] = worst;
    w_max[lid] = max_rel;
    w_diff2[lid] = diff2;
    w_ref2[lid] = ref2;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s / 2u) {
        if lid < s {
            let o = lid + s;
            w_suspect[lid] += w_suspect[o];
            w_diff2[lid] += w_diff2[o];
            w_ref2[lid] += w_ref2[o];
            if w_max[o] > w_max[lid] || (w_max[o] == w_max[lid] && w_worst[o] < w_worst[lid]) {
                w_max[lid] = w_max[o];
                w_worst[lid] = w_worst[o];
            }
        }
        workgroupBarrier();
    }
    if lid == 0u {
        partials[group.x] = Partial(w_suspect[0], w_worst[0], w_max[0], w_diff2[0], w_ref2[0]);
    }
}
"#;

/// The array elements of a plain scalar array (no header, one `f32`, `u32` or `i32` field at
/// offset 0, 4 bytes apart), and whether they are integers; `None` for any other layout.
pub fn plain(layout: &BufferLayout, len: u64) -> Option<(u64, bool)> {
    if !layout.header.is_empty() || layout.header_size != 0 {
        return None;
    }
    let a = layout.array.as_ref()?;
    let [f] = a.fields.as_slice() else {
        return None;
    };
    if a.stride != 4 || f.offset != 0 {
        return None;
    }
    let ints = match f.scalar {
        Scalar::F32 => false,
        Scalar::U32 | Scalar::I32 => true,
        _ => return None,
    };
    Some((a.count.map_or(len, u64::from), ints))
}

/// `x` rounded down to an `f32` (toward zero, for positive `x`).
fn f32_below(x: f64) -> f32 {
    let f = x as f32;
    if f64::from(f) > x { f.next_down() } else { f }
}

/// The shader's parameters for one buffer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Array elements.
    pub n: u32,
    /// Whether the elements are integers (compared bit for bit).
    pub ints: bool,
    /// The verdict's floor, rounded down to `f32`.
    pub floor: f32,
    /// The tolerance tightened by [`MARGIN`], rounded down to `f32`.
    pub tol: f32,
    /// The kernel's tolerance, for [`merge`].
    pub tolerance: f64,
}

impl Params {
    /// The parameters for `n` elements (`ints` or `f32`), judged against `tolerance` with the
    /// reference's `floor` ([`kf_runtime::verdict::Scan::floor`]); `None` where the proof below
    /// does not hold, and the host must compare.
    ///
    /// Proof that an `f32` element the shader passes passes the verdict (`u = 2⁻²³` bounds the
    /// relative error of one `f32` operation rounded to nearest or toward zero, `ε = 2⁻⁵³` that
    /// of one `f64` operation on the host):
    /// - NaN, infinities and integers are decided on the bits exactly as the verdict decides
    ///   them (NaN meets NaN whatever its payload; an infinity meets the same infinity; an
    ///   integer its equal). A subnormal that differs from its counterpart is suspect.
    /// - Otherwise both values are finite and normal or zero. `m = max(|r|, floor₃₂)` is exact
    ///   and `m ≤ M = max(|r|, floor)`, since `floor₃₂ ≤ floor`. The shader passes when
    ///   `fl(|r − c|) ≤ fl(tol₃₂ · m)`. `tol₃₂ · m ≥ tol₃₂ · floor₃₂ ≥ 2⁻¹⁰⁰` is normal and, as
    ///   `tol ≤ 1`, finite: `fl(tol₃₂ · m) ≤ tol₃₂ · m · (1 + u)`. If `|r − c| ≥ 2⁻¹²⁶` its
    ///   rounding is normal: `|r − c| ≤ fl(|r − c|) / (1 − u) ≤ tol₃₂ · M · (1 + u) / (1 − u)`,
    ///   and the host's `rel = fl(fl(|r − c|) / M) ≤ tol · (1 − MARGIN)(1 + u)/(1 − u)(1 + ε)²
    ///   < tol`. If `|r − c| < 2⁻¹²⁶` (perhaps flushed to 0), `rel < 2⁻¹²⁶ (1 + ε)² / floor ≤
    ///   tol · 2⁻²⁶ (1 + ε)² < tol`, since `tol · floor ≥ 2⁻¹⁰⁰`.
    /// - `-0.0` against `0.0` differs in bits but not in value: `|r − c| = 0` on both sides.
    pub fn new(n: u64, ints: bool, floor: f64, tolerance: f64) -> Option<Params> {
        let n = u32::try_from(n).ok().filter(|&n| n > 0)?;
        if ints {
            return Some(Params {
                n,
                ints,
                floor: 0.0,
                tol: 0.0,
                tolerance,
            });
        }
        if !(tolerance > 0.0 && tolerance <= 1.0 && floor.is_finite()) {
            return None;
        }
        let floor32 = f32_below(floor);
        let tol = f32_below(tolerance * (1.0 - MARGIN));
        let normal = |x: f32| x.is_normal() && x > 0.0;
        (normal(floor32) && normal(tol) && f64::from(tol) * f64::from(floor32) >= MIN_TOL_FLOOR)
            .then_some(Params {
                n,
                ints,
                floor: floor32,
                tol,
                tolerance,
            })
    }

    /// Workgroups the shader needs.
    pub fn groups(&self) -> u32 {
        u64::from(self.n).div_ceil(CHUNK) as u32
    }

    /// The uniform's bytes.
    fn bytes(&self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[0..4].copy_from_slice(&self.n.to_le_bytes());
        b[4..8].copy_from_slice(&u32::from(self.ints).to_le_bytes());
        b[8..12].copy_from_slice(&self.floor.to_le_bytes());
        b[12..16].copy_from_slice(&self.tol.to_le_bytes());
        b
    }
}

/// One workgroup's result.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Partial {
    /// Elements the shader did not pass.
    pub suspect: u32,
    /// The element with the largest error (`u32::MAX` when none differs).
    pub worst: u32,
    /// That error, relative to `max(|r|, floor)`.
    pub max_rel: f32,
    /// Sum of the squared differences of the elements passed.
    pub diff2: f32,
    /// Sum of the squared reference values of the elements passed.
    pub ref2: f32,
}

impl Partial {
    fn read(b: &[u8]) -> Partial {
        let w = |i: usize| u32::from_le_bytes(b[4 * i..4 * i + 4].try_into().expect("4 bytes"));
        Partial {
            suspect: w(0),
            worst: w(1),
            max_rel: f32::from_bits(w(2)),
            diff2: f32::from_bits(w(3)),
            ref2: f32::from_bits(w(4)),
        }
    }
}

/// A buffer the GPU found within the tolerance: the figures `VerifyStats` records (to `f32`
/// accuracy).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Passed {
    /// Relative L2 error.
    pub rel_l2: f64,
    /// Largest element error relative to `max(|r|, floor)`.
    pub max_rel_elem: f64,
}

/// The verdict of the partial results: `Some` when every element passed and (for floats) the
/// relative L2 error passes with room, `None` when the host must compare.
///
/// The L2 test: the host passes when `Σ(r − c)² ≤ tol² · Σr²` (sums in `f64` over the elements
/// whose values are both finite, which are exactly those the shader sums). Each `f32` term and
/// partial sum is within `(PER_THREAD + 8 + 3) · u` of its exact value relatively, or flushed
/// below 2⁻¹²⁶ absolutely; so the exact squared difference is at most
/// `diff2 · (1 + L2_MARGIN) + n · 2⁻¹²⁰`, and the exact squared reference at least
/// `ref2 · (1 − L2_MARGIN)` (a flushed term only makes `ref2` smaller, which is the safe side).
/// A sum that is not finite is left to the host.
pub fn merge(params: &Params, partials: &[Partial]) -> Option<Passed> {
    if partials.iter().any(|p| p.suspect != 0) {
        return None;
    }
    if params.ints {
        return Some(Passed {
            rel_l2: 0.0,
            max_rel_elem: 0.0,
        });
    }
    let mut diff2 = 0.0f64;
    let mut ref2 = 0.0f64;
    let mut max_rel = 0.0f64;
    for p in partials {
        if !(p.diff2.is_finite() && p.ref2.is_finite() && p.max_rel.is_finite()) {
            return None;
        }
        diff2 += f64::from(p.diff2);
        ref2 += f64::from(p.ref2);
        max_rel = max_rel.max(f64::from(p.max_rel));
    }
    let tol2 = params.tolerance * params.tolerance;
    let slack = f64::from(params.n) * L2_SLACK;
    if diff2 * (1.0 + L2_MARGIN) + slack > tol2 * ref2 * (1.0 - L2_MARGIN) {
        return None;
    }
    Some(Passed {
        rel_l2: if ref2 > 0.0 {
            (diff2 / ref2).sqrt()
        } else {
            0.0
        },
        max_rel_elem: max_rel,
    })
}

/// The compiled shader, made once per worker.
pub struct GpuCompare {
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
}

/// A comparison encoded and submitted, whose partials are read back by [`Pending::finish`].
pub struct Pending {
    params: Params,
    read: wgpu::Buffer,
}

impl GpuCompare {
    /// Compiles the shader on `device`, or says why the adapter refused it (the runner then
    /// compares every output on the host). An error here stays in its scope, so it is never
    /// blamed on a candidate.
    pub fn new(device: &wgpu::Device) -> Result<GpuCompare, String> {
        let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
        // Built as the programs are, without wgpu's loop counter (its loops are counted).
        let (module, _) = kf_runtime::shader_module(device, "kernelfoundry compare", WGSL, &[]);
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("kernelfoundry compare"),
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        let layout = pipeline.get_bind_group_layout(0);
        match pollster::block_on(validation.pop()) {
            Some(e) => Err(e.to_string()),
            None => Ok(GpuCompare { pipeline, layout }),
        }
    }

    /// Whether `buffer` can hold `params.n` words and the dispatch fits the adapter.
    pub fn fits(&self, limits: &wgpu::Limits, params: &Params, buffer: &wgpu::Buffer) -> bool {
        buffer.size() >= 4 * u64::from(params.n)
            && params.groups() <= limits.max_compute_workgroups_per_dimension
    }

    /// Encodes the comparison of `candidate` with `reference` into `encoder`, and the copy of
    /// its partials into a buffer [`Pending::map`] maps.
    pub fn encode(
        &self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        params: Params,
        reference: &wgpu::Buffer,
        candidate: &wgpu::Buffer,
    ) -> Pending {
        use wgpu::util::DeviceExt;
        let uniform = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("compare params"),
            contents: &params.bytes(),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let bytes = PARTIAL_BYTES * u64::from(params.groups());
        let partials = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("compare partials"),
            size: bytes,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let read = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("compare read back"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let words = wgpu::BufferSize::new(4 * u64::from(params.n));
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("compare"),
            layout: &self.layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: reference,
                        offset: 0,
                        size: words,
                    }),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: candidate,
                        offset: 0,
                        size: words,
                    }),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: uniform.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 3,
                    resource: partials.as_entire_binding(),
                },
            ],
        });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("compare"),
                timestamp_writes: None,
            });
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &bind_group, &[]);
            pass.dispatch_workgroups(params.groups(), 1, 1);
        }
        encoder.copy_buffer_to_buffer(&partials, 0, &read, 0, bytes);
        Pending { params, read }
    }
}

impl Pending {
    /// Requests the read-back mapping (after submitting, before waiting).
    pub fn map(&self) {
        self.read.slice(..).map_async(wgpu::MapMode::Read, |_| {});
    }

    /// The verdict of the mapped partials (after waiting), see [`merge`].
    pub fn finish(self) -> Option<Passed> {
        let partials: Vec<Partial> = {
            let view = self.read.slice(..).get_mapped_range().ok()?;
            view.chunks_exact(PARTIAL_BYTES as usize)
                .map(Partial::read)
                .collect()
        };
        self.read.unmap();
        merge(&self.params, &partials)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::compare::{compare, scan};
    use crate::evaluate::protocol::AdapterSelector;
    use crate::gpu::{self, Gpu};
    use kf_runtime::interface::Field;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    #[test]
    fn the_shader_is_valid_wgsl() {
        let module = naga::front::wgsl::parse_str(WGSL).expect("parses");
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::empty(),
        )
        .validate(&module)
        .expect("validates");
        assert!(WGSL.contains(&format!("const WG: u32 = {WORKGROUP}u;")));
        assert!(WGSL.contains(&format!("const PER_THREAD: u32 = {PER_THREAD}u;")));
        assert!(WGSL.contains(&format!("@workgroup_size({WORKGROUP})")));
    }

    use super::super::compare::plain_layout as layout;

    #[test]
    fn only_plain_scalar_arrays_are_compared_on_the_gpu() {
        assert_eq!(plain(&layout(Scalar::F32), 7), Some((7, false)));
        assert_eq!(plain(&layout(Scalar::U32), 7), Some((7, true)));
        assert_eq!(plain(&layout(Scalar::I32), 7), Some((7, true)));
        for s in [Scalar::F16, Scalar::Unorm8, Scalar::Snorm8, Scalar::U8] {
            assert_eq!(plain(&layout(s), 7), None, "{s:?}");
        }
        let mut vec3 = layout(Scalar::F32);
        vec3.array.as_mut().unwrap().stride = 16;
        assert_eq!(plain(&vec3, 7), None);
        let mut header = layout(Scalar::F32);
        header.header = vec![Field {
            offset: 0,
            scalar: Scalar::U32,
        }];
        header.header_size = 4;
        assert_eq!(plain(&header, 7), None);
    }

    #[test]
    fn parameters_outside_the_proof_leave_the_comparison_to_the_host() {
        assert!(Params::new(10, false, 0.01, 1e-4).is_some());
        assert!(Params::new(0, false, 0.01, 1e-4).is_none());
        assert!(Params::new(u64::from(u32::MAX) + 1, false, 0.01, 1e-4).is_none());
        // A tolerance above 1 (a product that could overflow), zero, NaN.
        for tol in [2.0, 0.0, f64::NAN, -1e-4] {
            assert!(Params::new(10, false, 0.01, tol).is_none(), "{tol}");
        }
        // A floor too small for the tightened tolerance times it to stay a normal f32.
        assert!(Params::new(10, false, f64::MIN_POSITIVE, 1e-4).is_none());
        assert!(Params::new(10, false, 1e-27, 1e-4).is_none());
        assert!(Params::new(10, false, 1e-20, 1e-4).is_some());
        // Integers need neither.
        assert!(Params::new(10, true, f64::MIN_POSITIVE, 0.0).is_some());
        // Both rounded down: never looser than the verdict.
        let p = Params::new(10, false, 0.3, 1e-4).unwrap();
        assert!(f64::from(p.floor) <= 0.3 && f64::from(p.tol) < 1e-4 * (1.0 - MARGIN) + 1e-20);
    }

    #[test]
    fn the_l2_test_passes_only_with_room() {
        let p = Params::new(1000, false, 0.01, 1e-4).unwrap();
        let part = |diff2: f32, ref2: f32| Partial {
            suspect: 0,
            worst: 0,
            max_rel: 1e-5,
            diff2,
            ref2,
        };
        // rel_l2 = 1e-4 exactly: the host would pass it, the GPU leaves it to the host.
        assert_eq!(merge(&p, &[part(1e-8, 1.0)]), None);
        let ok = merge(&p, &[part(0.9e-8, 1.0)]).expect("within the margin");
        assert!((ok.rel_l2 - 0.9e-8f64.sqrt()).abs() < 1e-9);
        assert_eq!(merge(&p, &[part(0.0, 0.0)]), None);
        assert_eq!(merge(&p, &[part(0.0, f32::INFINITY)]), None);
        let suspect = Partial {
            suspect: 1,
            ..part(0.0, 1.0)
        };
        assert_eq!(merge(&p, &[part(0.0, 1.0), suspect]), None);
        let ints = Params::new(4, true, 0.0, 1e-4).unwrap();
        assert!(merge(&ints, &[Partial::default()]).is_some());
    }

    fn open() -> Gpu {
        gpu::open(&AdapterSelector(None)).expect(
            "no adapter: the GPU comparison tests need one (install lavapipe, mesa-vulkan-drivers)",
        )
    }

    /// The adapter and the comparison's pipeline on it.
    fn open_check() -> (Gpu, GpuCompare) {
        let gpu = open();
        let check = GpuCompare::new(&gpu.device).expect("the shader builds");
        (gpu, check)
    }

    /// [`agree`] on two `f32` buffers.
    #[track_caller]
    fn agree_f32(
        gpu: &Gpu,
        check: &GpuCompare,
        r: &[f32],
        c: &[f32],
        tolerance: f64,
    ) -> (Option<Passed>, bool) {
        agree(
            gpu,
            check,
            Scalar::F32,
            &bytes_f32(r),
            &bytes_f32(c),
            tolerance,
        )
    }

    /// The GPU's verdict on `candidate` against `reference`, both `f32` or both 32-bit integers.
    fn on_gpu(
        gpu: &Gpu,
        check: &GpuCompare,
        scalar: Scalar,
        reference: &[u8],
        candidate: &[u8],
        tolerance: f64,
    ) -> Option<Passed> {
        use wgpu::util::DeviceExt;
        let l = layout(scalar);
        let n = reference.len() as u64 / 4;
        let (n, ints) = plain(&l, n).expect("plain");
        let floor = scan(&l, n, reference).floor();
        let params = Params::new(n, ints, floor, tolerance)?;
        let buffer = |bytes: &[u8]| {
            gpu.device
                .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: None,
                    contents: bytes,
                    usage: wgpu::BufferUsages::STORAGE,
                })
        };
        let (r, c) = (buffer(reference), buffer(candidate));
        assert!(check.fits(&gpu.limits(), &params, &r));
        let mut encoder = gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        let pending = check.encode(&gpu.device, &mut encoder, params, &r, &c);
        gpu.queue.submit([encoder.finish()]);
        pending.map();
        gpu.device
            .poll(wgpu::PollType::wait_indefinitely())
            .expect("poll");
        assert_eq!(gpu.take_uncaptured(), Vec::<String>::new());
        pending.finish()
    }

    fn bytes_f32(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    /// The GPU's verdict against the host's on the same buffers: a pass on the GPU must be a
    /// pass on the host, and its figures close to the host's.
    #[track_caller]
    fn agree(
        gpu: &Gpu,
        check: &GpuCompare,
        scalar: Scalar,
        r: &[u8],
        c: &[u8],
        tolerance: f64,
    ) -> (Option<Passed>, bool) {
        let n = r.len() as u64 / 4;
        let host = compare(&layout(scalar), n, r, c, tolerance);
        let gpu_verdict = on_gpu(gpu, check, scalar, r, c, tolerance);
        if let Some(p) = gpu_verdict {
            assert!(
                host.ok(tolerance),
                "the GPU passed what the host fails: {}",
                host.describe(tolerance)
            );
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-5 * b.abs().max(1e-30) + 1e-12;
            assert!(close(p.rel_l2, host.rel_l2), "{p:?} vs {host:?}");
            assert!(
                close(p.max_rel_elem, host.max_rel_elem),
                "{p:?} vs {host:?}"
            );
        }
        (gpu_verdict, host.ok(tolerance))
    }

    #[test]
    fn random_buffers_with_errors_around_the_tolerance_agree_with_the_host() {
        let (gpu, check) = open_check();
        let tol = 1e-4;
        let mut rng = StdRng::seed_from_u64(17);
        // Sizes around a workgroup's chunk, so the last workgroup is partial.
        for n in [
            1usize,
            255,
            257,
            CHUNK as usize - 1,
            CHUNK as usize + 3,
            70_001,
        ] {
            let r: Vec<f32> = (0..n).map(|_| rng.random_range(-4.0f32..4.0)).collect();
            // Identical outputs pass on the GPU.
            let (g, h) = agree_f32(&gpu, &check, &r, &r, tol);
            assert!(g.is_some() && h, "n = {n}");
            // Small honest rounding everywhere passes on both.
            let c: Vec<f32> = r
                .iter()
                .map(|x| x * (1.0 + rng.random_range(-1e-6f32..1e-6)))
                .collect();
            let (g, h) = agree_f32(&gpu, &check, &r, &c, tol);
            assert!(g.is_some() && h, "n = {n}");
            // One element injected at, just inside and just outside the tolerance: the GPU
            // never passes what the host fails, and passes what is clearly inside.
            let floor = scan(&layout(Scalar::F32), n as u64, &bytes_f32(&r)).floor();
            let at = rng.random_range(0..n);
            for factor in [
                0.5,
                0.99,
                0.999,
                1.0 - 1e-5,
                1.0,
                1.0 + 1e-7,
                1.0 + 1e-5,
                1.001,
                2.0,
            ] {
                let mut c = r.clone();
                let m = f64::from(r[at].abs()).max(floor);
                c[at] = (f64::from(r[at]) + tol * factor * m) as f32;
                let (g, h) = agree_f32(&gpu, &check, &r, &c, tol);
                // (A buffer of one element has the element's error as its L2 error, which the
                // GPU passes only with `L2_MARGIN` to spare.)
                if factor <= 0.99 || (factor <= 0.999 && n > 1) {
                    assert!(g.is_some() && h, "n = {n}, factor {factor}");
                }
                if factor >= 1.001 {
                    assert!(g.is_none() && !h, "n = {n}, factor {factor}");
                }
            }
        }
    }

    #[test]
    fn elements_at_every_f32_step_around_the_tolerance_never_pass_the_gpu_alone() {
        let (gpu, check) = open_check();
        let tol = 1e-3;
        // References of several magnitudes, and elements below the floor (1 % of 1000).
        let values = [1.0f32, 3.7, -1000.0, 0.001, -0.5, 7.25];
        for &v in &values {
            let mut r = vec![1000.0f32, -2.0, 0.25];
            r.push(v);
            let floor = scan(&layout(Scalar::F32), r.len() as u64, &bytes_f32(&r)).floor();
            let m = f64::from(v.abs()).max(floor);
            // The f32 candidates nearest the boundary, 40 steps on either side.
            let mut c0 = (f64::from(v) + tol * m) as f32;
            for _ in 0..40 {
                c0 = c0.next_down();
            }
            let mut passed_gpu = 0;
            let mut passed_host = 0;
            let mut c = c0;
            for _ in 0..80 {
                let mut cand = r.clone();
                *cand.last_mut().unwrap() = c;
                let (g, h) = agree_f32(&gpu, &check, &r, &cand, tol);
                passed_gpu += usize::from(g.is_some());
                passed_host += usize::from(h);
                c = c.next_up();
            }
            // The host's boundary lies inside the window; `agree` checked each step the GPU
            // passed against the host.
            assert!(passed_host > 0 && passed_host < 80, "{v}");
            assert!(passed_gpu <= passed_host, "{v}");
            // Outside the margin, inside the tolerance: the GPU passes.
            let mut cand = r.clone();
            *cand.last_mut().unwrap() = (f64::from(v) + tol * (1.0 - 8.0 * MARGIN) * m) as f32;
            let (g, h) = agree_f32(&gpu, &check, &r, &cand, tol);
            assert!(g.is_some() && h, "{v}");
        }
    }

    #[test]
    fn nan_infinities_signed_zeros_and_subnormals_follow_the_rule() {
        let (gpu, check) = open_check();
        let tol = 1e-4;
        let base = [1.0f32, -2.0, 3.0, 0.5];
        let cases: Vec<(f32, f32, bool)> = vec![
            // NaN meets NaN whatever its payload; a number does not meet NaN.
            (f32::NAN, f32::NAN, true),
            (f32::NAN, f32::from_bits(0x7FC0_DEAD), true),
            (f32::from_bits(0xFFC0_0001), f32::NAN, true),
            (1.0, f32::NAN, false),
            (f32::NAN, 1.0, false),
            // Infinities must match.
            (f32::INFINITY, f32::INFINITY, true),
            (f32::NEG_INFINITY, f32::NEG_INFINITY, true),
            (f32::INFINITY, f32::NEG_INFINITY, false),
            (f32::INFINITY, f32::MAX, false),
            (1.0, f32::INFINITY, false),
            // -0.0 and 0.0 are the same value.
            (0.0, -0.0, true),
            (-0.0, 0.0, true),
            // Subnormals equal in bits pass; differing ones are the host's to judge.
            (1e-40, 1e-40, true),
            (1e-40, 2e-40, false),
            (0.0, 1e-40, false),
            // Values that overflow the difference.
            (f32::MAX, -f32::MAX, false),
        ];
        for (rv, cv, gpu_passes) in cases {
            let mut r = base.to_vec();
            let mut c = base.to_vec();
            r.push(rv);
            c.push(cv);
            let (g, h) = agree_f32(&gpu, &check, &r, &c, tol);
            assert_eq!(g.is_some(), gpu_passes, "{rv:e} vs {cv:e} (host: {h})");
        }
    }

    #[test]
    fn integers_pass_only_when_equal() {
        let (gpu, check) = open_check();
        let ints = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let r: Vec<u32> = (0..70_000u32)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        for scalar in [Scalar::U32, Scalar::I32] {
            let (g, h) = agree(&gpu, &check, scalar, &ints(&r), &ints(&r), 1e-4);
            assert!(g.is_some() && h);
            for at in [0, 16_383, 16_384, 69_999] {
                let mut c = r.clone();
                c[at] ^= 1;
                let (g, h) = agree(&gpu, &check, scalar, &ints(&r), &ints(&c), 1e-4);
                assert!(g.is_none() && !h, "{at}");
            }
        }
    }

    #[test]
    fn a_buffer_of_small_values_passes_only_when_its_l2_error_does() {
        // Elements below the floor may each err by up to tol · floor, which the relative L2
        // error of the buffer does not allow when most of the buffer is small.
        let (gpu, check) = open_check();
        let tol = 1e-3;
        let mut r = vec![0.01f32; 100_000];
        r[0] = 100.0;
        let floor = 1.0; // 1 % of 100
        let c: Vec<f32> = r
            .iter()
            .enumerate()
            .map(|(i, &x)| {
                if i == 0 {
                    x
                } else {
                    x + (0.9 * tol * floor) as f32
                }
            })
            .collect();
        let (g, h) = agree_f32(&gpu, &check, &r, &c, tol);
        assert!(!h && g.is_none());
    }
}

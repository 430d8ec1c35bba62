//! Measured ceilings of an adapter: copy bandwidth and f32 FMA rate.
//!
//! The roofline cap (a candidate claiming more bandwidth than the adapter can copy is a measurement
//! error or a cheat) and the roofline verdict (memory- or compute-bound, and how close to the
//! ceiling) both need these numbers, and spec sheets are not measurements. Copy bandwidth is
//! measured at several working-set sizes and the largest is kept, because small working sets run
//! from cache and an honest kernel on a small shape can be faster than DRAM.
//!
//! A single measurement can be low (a busy machine, a clock still ramping up), and a low ceiling
//! would reject honest kernels. So every probe repeats the copy measurement and keeps the best
//! round; stored ceilings are merged with new measurements by keeping the best of both
//! ([`Ceilings::merge`]); they carry the tool version and the time of measurement, and are
//! measured again when either no longer matches ([`Ceilings::is_current`]); and the evaluator
//! re-measures the copy bandwidth itself when a candidate appears to beat it
//! ([`measure_copy`]), before it gives any verdict.
//!
//! Invariant: every number here was measured on the adapter named in the record, by the method
//! recorded beside it; merging only ever keeps measured numbers.

pub use super::protocol::{CEILINGS_FORMAT_VERSION as FORMAT_VERSION, Ceilings, CopyPoint};
use super::runner::Timestamps;
use crate::gpu::Gpu;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use wgpu::util::DeviceExt;

/// Rounds of the copy measurement per probe; the best round counts.
pub const COPY_ROUNDS: u32 = 3;

/// Stored ceilings older than this are measured again.
pub const MAX_AGE: Duration = Duration::from_secs(30 * 24 * 3600);

/// Seconds since the Unix epoch.
pub fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Ceilings {
    /// Whether these ceilings can be used as they are at time `now` (seconds since the epoch):
    /// measured by this tool version, in this format, less than [`MAX_AGE`] ago.
    pub fn is_current(&self, now: u64) -> bool {
        self.format_version == FORMAT_VERSION
            && self.tool_version == env!("CARGO_PKG_VERSION")
            && self.measured_at > 0
            && now.saturating_sub(self.measured_at) < MAX_AGE.as_secs()
    }

    /// Keeps the best of `self` and `other` (two measurements of the same adapter by the same
    /// method): the larger bandwidth at every working-set size, the larger FMA rate, the newer
    /// time. A ceiling is a bound, so the best measurement is the truest one.
    pub fn merge(&mut self, other: &Ceilings) {
        for p in &other.copy_by_size {
            match self.copy_by_size.iter_mut().find(|q| q.bytes == p.bytes) {
                Some(q) if q.gbps >= p.gbps => {}
                Some(q) => *q = p.clone(),
                None => self.copy_by_size.push(p.clone()),
            }
        }
        self.copy_by_size.sort_by_key(|p| p.bytes);
        self.copy_gbps = self
            .copy_by_size
            .iter()
            .map(|p| p.gbps)
            .fold(self.copy_gbps.max(other.copy_gbps), f64::max);
        self.fma_gflops = self.fma_gflops.max(other.fma_gflops);
        self.measured_at = self.measured_at.max(other.measured_at);
        self.probes = self.probes.saturating_add(other.probes);
    }
}

const COPY_WGSL: &str = r#"
@group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
    let i = g.x + g.y * nw.x * 256u;
    if (i < arrayLength(&src)) {
        dst[i] = src[i];
    }
}
"#;

/// One shape of the FMA probe: `chains` independent `vec4<f32>` chains, the loop body written out
/// `unroll` times, `iters` iterations. Every shape does the same work per invocation.
#[derive(Clone, Copy, Debug, PartialEq)]
struct FmaShape {
    chains: u32,
    unroll: u32,
    iters: u32,
}

impl FmaShape {
    /// FLOPs of one invocation (2 per scalar `fma`).
    fn flops(self) -> u64 {
        u64::from(self.chains * self.unroll * self.iters) * 4 * 2
    }

    /// The probe kernel of this shape.
    fn wgsl(self) -> String {
        let mut w = String::from(
            "@group(0) @binding(0) var<storage, read_write> out: array<vec4<f32>>;\n\
             @compute @workgroup_size(256)\n\
             fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {\n\
             \x20   let i = g.x + g.y * nw.x * 256u;\n\
             \x20   let s = f32(i) * 1e-7;\n",
        );
        for c in 0..self.chains {
            w.push_str(&format!(
                "    var a{c} = vec4<f32>(s, s + 1.0, s + 2.0, s + 3.0) + {}.0 * 0.1;\n",
                c
            ));
        }
        w.push_str("    let m = vec4<f32>(0.9999);\n    let c = vec4<f32>(0.0001);\n");
        w.push_str(&format!(
            "    for (var k = 0u; k < {}u; k++) {{\n",
            self.iters
        ));
        for _ in 0..self.unroll {
            for c in 0..self.chains {
                w.push_str(&format!("        a{c} = fma(a{c}, m, c);\n"));
            }
        }
        w.push_str("    }\n    if (i < arrayLength(&out)) {\n        out[i] = ");
        let sum: Vec<String> = (0..self.chains).map(|c| format!("a{c}")).collect();
        w.push_str(&sum.join(" + "));
        w.push_str(";\n    }\n}\n");
        w
    }
}

/// The FMA probe's shapes; the fastest counts, since a ceiling is a bound and a compiler may
/// schedule one shape better than another. A CPU driver gets the first only (it is slow there and
/// its rate hardly depends on the shape).
const FMA_SHAPES: [FmaShape; 3] = [
    FmaShape {
        chains: 8,
        unroll: 1,
        iters: 512,
    },
    FmaShape {
        chains: 16,
        unroll: 4,
        iters: 64,
    },
    FmaShape {
        chains: 8,
        unroll: 8,
        iters: 64,
    },
];

/// A 2-D grid of 256-wide workgroups covering `invocations`.
fn grid(invocations: u64) -> (u32, u32) {
    let groups = invocations.div_ceil(256);
    let x = groups.min(32768);
    (x as u32, groups.div_ceil(x) as u32)
}

struct Bench<'a> {
    gpu: &'a Gpu,
    pipeline: wgpu::ComputePipeline,
    bind_group: wgpu::BindGroup,
    counts: (u32, u32),
}

impl Bench<'_> {
    /// Keeps the GPU busy with this kernel before a measurement (see `runner::sustain_load`).
    fn sustain(&self) -> Result<(), String> {
        let duration = super::runner::sustain_duration(self.gpu.is_cpu());
        super::runner::sustain_load(self.gpu, duration, |encoder, reps| {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: None,
                timestamp_writes: None,
            });
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &self.bind_group, &[]);
            for _ in 0..reps {
                pass.dispatch_workgroups(self.counts.0, self.counts.1, 1);
            }
        })
    }

    fn median_ns(&self, warmup: u32, samples: u32) -> Result<(f64, &'static str), String> {
        let device = &self.gpu.device;
        let stamps = self.gpu.timestamps.then(|| Timestamps::new(device));
        let period = f64::from(self.gpu.queue.get_timestamp_period());
        let mut times = Vec::new();
        for i in 0..warmup + samples {
            let mut encoder = device.create_command_encoder(&Default::default());
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: None,
                    timestamp_writes: stamps.as_ref().map(Timestamps::pass_writes),
                });
                pass.set_pipeline(&self.pipeline);
                pass.set_bind_group(0, &self.bind_group, &[]);
                pass.dispatch_workgroups(self.counts.0, self.counts.1, 1);
            }
            if let Some(t) = &stamps {
                t.resolve(&mut encoder);
            }
            let t0 = Instant::now();
            self.gpu.queue.submit([encoder.finish()]);
            if let Some(t) = &stamps {
                t.map();
            }
            device
                .poll(wgpu::PollType::wait_indefinitely())
                .map_err(|e| e.to_string())?;
            let wall = t0.elapsed().as_nanos() as f64;
            let ns = stamps.as_ref().map_or(wall, |t| t.take() as f64 * period);
            if i >= warmup {
                times.push(if ns > 0.0 { ns } else { wall });
            }
        }
        let method = if stamps.is_some() {
            "timestamp-query"
        } else {
            "wall-clock"
        };
        Ok((super::runner::median(&times), method))
    }
}

/// The probe's pipeline, built as the kernels it is compared with are (without wgpu's loop
/// counter, its loops being proven to end).
fn pipeline(gpu: &Gpu, wgsl: &str) -> Result<wgpu::ComputePipeline, String> {
    let (module, _) = kf_runtime::shader_module(&gpu.device, "probe", wgsl, &[]);
    Ok(gpu
        .device
        .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("probe"),
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        }))
}

fn samples_for(gpu: &Gpu) -> (u32, u32) {
    if gpu.is_cpu() { (1, 5) } else { (3, 20) }
}

/// Measures copy bandwidth at several working-set sizes, `rounds` times, keeping the best round
/// per size. Returns the points and the timing method.
pub fn measure_copy(gpu: &Gpu, rounds: u32) -> Result<(Vec<CopyPoint>, &'static str), String> {
    let device = &gpu.device;
    let limits = gpu.limits();
    let cpu = gpu.is_cpu();
    let (warmup, samples) = samples_for(gpu);
    let max_bytes =
        limits
            .max_storage_buffer_binding_size
            .min(if cpu { 64 << 20 } else { 1 << 30 });
    let sizes: Vec<u64> = [1u64 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20, 1 << 30]
        .into_iter()
        .filter(|&s| s <= max_bytes)
        .collect();

    let copy = pipeline(gpu, COPY_WGSL)?;
    let mut copy_by_size: Vec<CopyPoint> = Vec::new();
    let mut method = "wall-clock";
    for bytes in sizes {
        let src = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("probe src"),
            contents: &vec![1u8; bytes as usize],
            usage: wgpu::BufferUsages::STORAGE,
        });
        let dst = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("probe dst"),
            size: bytes,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &copy.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: src.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: dst.as_entire_binding(),
                },
            ],
        });
        let bench = Bench {
            gpu,
            pipeline: copy.clone(),
            bind_group,
            counts: grid(bytes / 16),
        };
        bench.sustain()?;
        let mut best: Option<CopyPoint> = None;
        for _ in 0..rounds.max(1) {
            let (ns, m) = bench.median_ns(warmup, samples)?;
            method = m;
            let point = CopyPoint {
                bytes,
                gbps: 2.0 * bytes as f64 / ns.max(1.0),
                median_ns: ns,
            };
            if best.as_ref().is_none_or(|b| point.gbps > b.gbps) {
                best = Some(point);
            }
        }
        copy_by_size.extend(best);
    }
    let errors = gpu.take_uncaptured();
    if !errors.is_empty() {
        return Err(format!(
            "the copy probe raised errors: {}",
            errors.join("; ")
        ));
    }
    Ok((copy_by_size, method))
}

/// Measures copy bandwidth (best of [`COPY_ROUNDS`]) and FMA rate on `gpu`.
pub fn measure(gpu: &Gpu) -> Result<Ceilings, String> {
    let device = &gpu.device;
    let cpu = gpu.is_cpu();
    let (warmup, samples) = samples_for(gpu);
    let (copy_by_size, method) = measure_copy(gpu, COPY_ROUNDS)?;

    let invocations: u64 = if cpu { 1 << 14 } else { 1 << 21 };
    let out = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("probe fma"),
        size: invocations * 16,
        usage: wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    });
    let shapes = if cpu {
        &FMA_SHAPES[..1]
    } else {
        &FMA_SHAPES[..]
    };
    let mut fma_gflops: f64 = 0.0;
    for shape in shapes {
        let fma = pipeline(gpu, &shape.wgsl())?;
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &fma.get_bind_group_layout(0),
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: out.as_entire_binding(),
            }],
        });
        let bench = Bench {
            gpu,
            pipeline: fma,
            bind_group,
            counts: grid(invocations),
        };
        bench.sustain()?;
        let (ns, _) = bench.median_ns(warmup, samples)?;
        let rate = (invocations * shape.flops()) as f64 / ns.max(1.0);
        log::info!("FMA probe {shape:?}: {rate:.0} GFLOP/s");
        fma_gflops = fma_gflops.max(rate);
    }
    let errors = gpu.take_uncaptured();
    if !errors.is_empty() {
        return Err(format!(
            "the probe kernels raised errors: {}",
            errors.join("; ")
        ));
    }
    Ok(Ceilings {
        format_version: FORMAT_VERSION,
        tool_version: env!("CARGO_PKG_VERSION").to_owned(),
        adapter: gpu.report.clone(),
        copy_gbps: copy_by_size.iter().map(|p| p.gbps).fold(0.0, f64::max),
        copy_by_size,
        fma_gflops,
        method: method.to_owned(),
        samples,
        measured_at: now_secs(),
        probes: 1,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn every_fma_probe_shape_is_valid_wgsl_and_does_the_same_work() {
        for shape in FMA_SHAPES {
            let module = naga::front::wgsl::parse_str(&shape.wgsl())
                .unwrap_or_else(|e| panic!("{shape:?}: {e}\n{}", shape.wgsl()));
            naga::valid::Validator::new(
                naga::valid::ValidationFlags::all(),
                naga::valid::Capabilities::all(),
            )
            .validate(&module)
            .unwrap_or_else(|e| panic!("{shape:?}: {e:?}"));
            assert_eq!(shape.flops(), FMA_SHAPES[0].flops(), "{shape:?}");
            let fmas = shape.wgsl().matches("= fma(").count() as u32;
            assert_eq!(fmas, shape.chains * shape.unroll, "{shape:?}");
        }
        // The first shape is the probe as it was: 8 chains of 512 iterations.
        assert_eq!(FMA_SHAPES[0].flops(), 512 * 8 * 4 * 2);
    }

    pub(crate) fn ceilings(points: &[(u64, f64)], fma: f64, at: u64) -> Ceilings {
        Ceilings {
            format_version: FORMAT_VERSION,
            tool_version: env!("CARGO_PKG_VERSION").to_owned(),
            adapter: serde_json::from_value(serde_json::json!({
                "index": 0,
                "key": "0123456789abcdef",
                "name": "test", "vendor": 0, "device": 0, "device_type": "Cpu",
                "driver": "", "driver_info": "", "backend": "vulkan",
                "limits": {},
                "features": []
            }))
            .unwrap(),
            copy_gbps: points.iter().map(|p| p.1).fold(0.0, f64::max),
            copy_by_size: points
                .iter()
                .map(|&(bytes, gbps)| CopyPoint {
                    bytes,
                    gbps,
                    median_ns: 1.0,
                })
                .collect(),
            fma_gflops: fma,
            method: "timestamp-query".into(),
            samples: 5,
            measured_at: at,
            probes: 1,
        }
    }

    #[test]
    fn merging_keeps_the_best_of_both_measurements() {
        let mut a = ceilings(&[(1 << 20, 10.0), (4 << 20, 30.0)], 100.0, 5);
        let b = ceilings(
            &[(1 << 20, 20.0), (4 << 20, 25.0), (16 << 20, 40.0)],
            90.0,
            9,
        );
        a.merge(&b);
        let got: Vec<(u64, f64)> = a.copy_by_size.iter().map(|p| (p.bytes, p.gbps)).collect();
        assert_eq!(
            got,
            vec![(1 << 20, 20.0), (4 << 20, 30.0), (16 << 20, 40.0)]
        );
        assert_eq!(a.copy_gbps, 40.0);
        assert_eq!(a.fma_gflops, 100.0);
        assert_eq!((a.measured_at, a.probes), (9, 2));
        // A pessimistic record merged with a real measurement becomes the real one.
        let mut low = ceilings(&[(1 << 20, 1e-6)], 1e-6, 1);
        low.copy_gbps = 1e-6;
        low.merge(&b);
        assert_eq!(low.copy_gbps, 40.0);
    }

    #[test]
    fn stale_records_are_not_current() {
        let now = 1_000_000_000;
        assert!(ceilings(&[(1, 1.0)], 1.0, now - 10).is_current(now));
        assert!(
            !ceilings(&[(1, 1.0)], 1.0, 0).is_current(now),
            "no timestamp"
        );
        assert!(
            !ceilings(&[(1, 1.0)], 1.0, now - MAX_AGE.as_secs() - 1).is_current(now),
            "too old"
        );
        let mut other = ceilings(&[(1, 1.0)], 1.0, now);
        other.tool_version = "0.0.0-other".into();
        assert!(!other.is_current(now), "another tool version");
    }
}

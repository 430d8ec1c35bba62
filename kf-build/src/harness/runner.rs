//! The evaluation itself, as run inside the worker process: compile, check, verify, time.
//!
//! Order matters and follows the fitness ladder: text (0) → naga validation (1) → interface (3) →
//! limits and pipeline (2) → verification trials (4) → timing (2 on errors) → re-verification (4)
//! → roofline cap (2). Each trial uses freshly created buffers whose outputs are poisoned; baseline
//! outputs for a `(shape, seed)` are cached because the baseline is trusted and its inputs are a
//! pure function of the seed. Baseline and candidate are timed in pairs in a random order, rotating
//! through enough input sets (together larger than any last-level cache) that caches do not
//! flatter either of them.
//!
//! Invariant: nothing from one run (buffers, bind groups) is visible to another run, so a
//! candidate cannot read the reference's result or its own previous output.

use super::compare::{Comparison, compare};
use super::inputs;
use super::{
    CHECKS, Candidate, Ceilings, EvalPlan, EvalReport, EvalRequest, Fitness, Reason, Roofline,
    ShapeTime, Trial, VerifyStats,
};
use crate::gpu::Gpu;
use kf_runtime::resolve::{ReflectError, ResolvedKernel, shape_text};
use kf_runtime::spec::{Role, Shape};
use kf_runtime::variant::{self, VariantError};
use kf_runtime::{Program, bind_group_layouts, build_pipeline, check_limits};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::HashMap;
use std::time::{Duration, Instant};
use wgpu::util::DeviceExt;

/// A compiled program with the bind group layouts of the baseline's interface.
struct Compiled {
    pipeline: wgpu::ComputePipeline,
    program: Program,
}

/// Buffers and bind groups for one run.
struct Bound {
    buffers: Vec<wgpu::Buffer>,
    bind_groups: Vec<wgpu::BindGroup>,
}

/// Evaluates candidates on one device; lives as long as the worker.
pub struct Runner {
    gpu: Gpu,
    /// Compiled baselines by content hash.
    baselines: HashMap<String, Compiled>,
    /// Baseline outputs by (content hash, shape, seed): one `Vec<u8>` per compared buffer.
    references: HashMap<(String, String, u64), Vec<Vec<u8>>>,
    /// Pipeline layouts by content hash.
    layouts: HashMap<String, (Vec<wgpu::BindGroupLayout>, wgpu::PipelineLayout)>,
}

/// Bytes of input sets rotated while timing on a GPU: more than the largest last-level caches.
const ROTATION_BYTES: u64 = 256 << 20;
/// The same on a CPU adapter, whose last-level cache is smaller and whose memory is the host's.
const ROTATION_BYTES_CPU: u64 = 64 << 20;

/// Bytes of baseline outputs kept for reuse across evaluations.
const REFERENCE_CACHE_BYTES: usize = 1 << 30;

/// Turns the failure of a check into an early report.
type Step<T> = Result<T, (Reason, String)>;

impl Runner {
    /// A runner on an open device.
    pub fn new(gpu: Gpu) -> Self {
        Runner {
            gpu,
            baselines: HashMap::new(),
            references: HashMap::new(),
            layouts: HashMap::new(),
        }
    }

    /// The device.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Runs one evaluation to completion.
    pub fn evaluate(&mut self, req: &EvalRequest) -> EvalReport {
        let start = Instant::now();
        let mut report = match self.evaluate_inner(req) {
            Ok(report) => report,
            Err((reason, log)) => EvalReport::failed(&req.candidate.id, reason, log),
        };
        if let Some(lost) = self.gpu.lost() {
            report = EvalReport::failed(&req.candidate.id, Reason::DeviceLost, lost);
        }
        report.wall_ms = start.elapsed().as_secs_f64() * 1e3;
        report
    }

    fn evaluate_inner(&mut self, req: &EvalRequest) -> Step<EvalReport> {
        let kernel = &req.kernel;
        self.gpu.take_uncaptured();
        let candidate = self.compile_candidate(kernel, &req.candidate)?;
        self.ensure_baseline(kernel)?;
        let workgroup_size = candidate.program.workgroup_size;
        let workgroup_bytes = candidate.program.workgroup_storage_bytes;

        let mut stats = VerifyStats::default();
        for trial in &req.plan.verify {
            self.verify_trial(kernel, &candidate, trial, &mut stats)?;
        }
        if let Some(first) = req.plan.verify.first() {
            self.verify_rerun(kernel, &candidate, first, &mut stats)?;
        }

        let mut timings = Vec::new();
        for shape in &req.plan.time_shapes {
            timings.push(self.time_shape(kernel, &candidate, shape, &req.plan)?);
        }
        if let Some(trial) = &req.plan.reverify {
            self.verify_trial(kernel, &candidate, trial, &mut stats)
                .map_err(|(reason, log)| {
                    let reason = if reason == Reason::WrongValues {
                        Reason::ChangedAfterTiming
                    } else {
                        reason
                    };
                    (
                        reason,
                        format!("after the timing loop, with new inputs: {log}"),
                    )
                })?;
        }

        let roofline = match (&req.ceilings, timings.first()) {
            (Some(c), Some(t)) => Some(roofline(c, t)),
            _ => None,
        };
        if let Some(c) = &req.ceilings {
            for t in &timings {
                if t.achieved_gbps > c.copy_gbps * 1.1 {
                    return Err((
                        Reason::ExceedsRoofline,
                        format!(
                            "on shape {} the candidate would move {} bytes in {:.0} ns = {:.1} GB/s, above the adapter's measured copy ceiling of {:.1} GB/s (+10 %); rejected as a measurement error",
                            shape_text(&t.shape),
                            t.bytes,
                            t.candidate_ns,
                            t.achieved_gbps,
                            c.copy_gbps
                        ),
                    ));
                }
            }
        }

        let speedup = (!timings.is_empty()).then(|| {
            let log_sum: f64 = timings.iter().map(|t| t.speedup.ln()).sum();
            (log_sum / timings.len() as f64).exp()
        });
        let noise = timings.iter().map(|t| t.spread).reduce(f64::max);
        stats.checks = CHECKS
            .iter()
            .filter(|c| {
                (req.ceilings.is_some() || **c != "roofline-cap")
                    && (!timings.is_empty() || !c.contains("timing"))
                    && (req.plan.reverify.is_some() || **c != "reverify-after-timing")
            })
            .map(|c| c.to_string())
            .collect();
        Ok(EvalReport {
            candidate: req.candidate.id.clone(),
            fitness: Fitness::correct(speedup),
            failure: None,
            workgroup_size: Some(workgroup_size),
            workgroup_storage_bytes: Some(workgroup_bytes),
            timings,
            noise,
            verification: stats,
            roofline,
            wall_ms: 0.0,
        })
    }

    /// Levels 0–3 and the pipeline: everything that can be decided without running.
    fn compile_candidate(
        &mut self,
        kernel: &ResolvedKernel,
        candidate: &Candidate,
    ) -> Step<Compiled> {
        let checked = variant::check(kernel, &candidate.program).map_err(|e| {
            let reason = match &e {
                VariantError::Empty => Reason::NoCode,
                VariantError::Wgsl(ReflectError::Parse { .. }) => Reason::Parse,
                VariantError::Wgsl(ReflectError::Validation { .. }) => Reason::Validation,
                VariantError::Wgsl(ReflectError::Entry(_)) => Reason::EntryPoint,
                VariantError::Wgsl(_) | VariantError::Interface(_) => Reason::InterfaceMismatch,
                VariantError::UndeclaredSize(_) => Reason::Dispatch,
                _ => Reason::Pipeline,
            };
            (reason, e.to_string())
        })?;
        let mut program = candidate.program.clone();
        program.workgroup_size = checked.workgroup_size;
        program.workgroup_storage_bytes = checked.workgroup_storage_bytes;
        let limits = self.gpu.limits();
        check_limits(&program, &limits).map_err(|m| (Reason::LimitsExceeded, m))?;
        let layout = self.pipeline_layout(kernel);
        let pipeline = build_pipeline(&self.gpu.device, &layout, &program, &candidate.id)
            .map_err(|m| (Reason::Pipeline, m))?;
        Ok(Compiled { pipeline, program })
    }

    fn pipeline_layout(&mut self, kernel: &ResolvedKernel) -> wgpu::PipelineLayout {
        let device = &self.gpu.device;
        self.layouts
            .entry(kernel.content_hash.clone())
            .or_insert_with(|| {
                let slots: Vec<_> = kernel
                    .interface
                    .bindings
                    .iter()
                    .map(|b| (b.group, b.binding, b.kind))
                    .collect();
                let bgls = bind_group_layouts(device, &kernel.name, &slots);
                let refs: Vec<Option<&wgpu::BindGroupLayout>> = bgls.iter().map(Some).collect();
                let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                    label: Some("kernelfoundry"),
                    bind_group_layouts: &refs,
                    immediate_size: 0,
                });
                (bgls, layout)
            })
            .1
            .clone()
    }

    fn ensure_baseline(&mut self, kernel: &ResolvedKernel) -> Step<()> {
        if self.baselines.contains_key(&kernel.content_hash) {
            return Ok(());
        }
        let layout = self.pipeline_layout(kernel);
        let pipeline = build_pipeline(&self.gpu.device, &layout, &kernel.baseline, "baseline")
            .map_err(|m| {
                (
                    Reason::Pipeline,
                    format!("the baseline itself does not build on this adapter: {m}"),
                )
            })?;
        self.baselines.insert(
            kernel.content_hash.clone(),
            Compiled {
                pipeline,
                program: kernel.baseline.clone(),
            },
        );
        Ok(())
    }

    fn workgroups(&self, program: &Program, shape: &Shape) -> Step<[u32; 3]> {
        program
            .dispatch
            .workgroups(
                program.workgroup_size,
                |n| shape.get(n).copied(),
                self.gpu.limits().max_compute_workgroups_per_dimension,
            )
            .map_err(|e| {
                (
                    Reason::Dispatch,
                    format!("on shape {}: {e}", shape_text(shape)),
                )
            })
    }

    /// Creates fresh buffers holding `contents` and bind groups for them.
    fn bind(&self, kernel: &ResolvedKernel, contents: &[Vec<u8>]) -> Step<Bound> {
        let limits = self.gpu.limits();
        let device = &self.gpu.device;
        let mut buffers = Vec::with_capacity(contents.len());
        for (plan, data) in kernel.buffers.iter().zip(contents) {
            let max = if plan.role == Role::Uniform {
                limits.max_uniform_buffer_binding_size
            } else {
                limits.max_storage_buffer_binding_size
            };
            if data.len() as u64 > max {
                return Err((
                    Reason::Runtime,
                    format!(
                        "binding `{}` needs {} bytes, above the adapter's binding limit of {max}; use smaller shapes",
                        plan.binding.name,
                        data.len()
                    ),
                ));
            }
            let usage = if plan.role == Role::Uniform {
                wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST
            } else {
                wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST
            };
            buffers.push(
                device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some(&plan.binding.name),
                    contents: data,
                    usage,
                }),
            );
        }
        let (bgls, _) = &self.layouts[&kernel.content_hash];
        let bind_groups = bgls
            .iter()
            .enumerate()
            .map(|(g, bgl)| {
                let entries: Vec<wgpu::BindGroupEntry> = kernel
                    .buffers
                    .iter()
                    .zip(&buffers)
                    .filter(|(p, _)| p.binding.group == g as u32)
                    .map(|(p, b)| wgpu::BindGroupEntry {
                        binding: p.binding.binding,
                        resource: b.as_entire_binding(),
                    })
                    .collect();
                device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: None,
                    layout: bgl,
                    entries: &entries,
                })
            })
            .collect();
        Ok(Bound {
            buffers,
            bind_groups,
        })
    }

    fn trial_contents(kernel: &ResolvedKernel, shape: &Shape, seed: u64) -> Step<Vec<Vec<u8>>> {
        kernel
            .buffers
            .iter()
            .map(|p| {
                inputs::contents(p, shape, seed).map_err(|e| {
                    (
                        Reason::Runtime,
                        format!("binding `{}` on {}: {e}", p.binding.name, shape_text(shape)),
                    )
                })
            })
            .collect()
    }

    /// Encodes one dispatch, optionally with pass timestamps, and submits it.
    fn submit(
        &self,
        compiled: &Compiled,
        bound: &Bound,
        counts: [u32; 3],
        timestamps: Option<&Timestamps>,
        read_back: &[(usize, &wgpu::Buffer)],
    ) {
        let device = &self.gpu.device;
        let mut encoder =
            device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: None,
                timestamp_writes: timestamps.map(Timestamps::pass_writes),
            });
            pass.set_pipeline(&compiled.pipeline);
            for (i, bg) in bound.bind_groups.iter().enumerate() {
                pass.set_bind_group(i as u32, bg, &[]);
            }
            pass.dispatch_workgroups(counts[0], counts[1], counts[2]);
        }
        if let Some(t) = timestamps {
            t.resolve(&mut encoder);
        }
        for (idx, staging) in read_back {
            encoder.copy_buffer_to_buffer(&bound.buffers[*idx], 0, staging, 0, staging.size());
        }
        self.gpu.queue.submit([encoder.finish()]);
    }

    fn wait(&self) -> Step<()> {
        self.gpu
            .device
            .poll(wgpu::PollType::wait_indefinitely())
            .map(|_| ())
            .map_err(|e| (Reason::Runtime, format!("waiting for the GPU failed: {e}")))?;
        if let Some(lost) = self.gpu.lost() {
            return Err((Reason::DeviceLost, lost));
        }
        let errors = self.gpu.take_uncaptured();
        if !errors.is_empty() {
            return Err((Reason::Runtime, errors.join("\n")));
        }
        Ok(())
    }

    /// Runs `compiled` once on fresh buffers and returns the compared buffers' bytes.
    fn run_once(
        &self,
        kernel: &ResolvedKernel,
        compiled: &Compiled,
        shape: &Shape,
        contents: &[Vec<u8>],
    ) -> Step<Vec<Vec<u8>>> {
        let bound = self.bind(kernel, contents)?;
        self.run_bound(kernel, compiled, shape, &bound)
    }

    /// Runs `compiled` on existing buffers and returns the compared buffers' bytes.
    fn run_bound(
        &self,
        kernel: &ResolvedKernel,
        compiled: &Compiled,
        shape: &Shape,
        bound: &Bound,
    ) -> Step<Vec<Vec<u8>>> {
        let counts = self.workgroups(&compiled.program, shape)?;
        let device = &self.gpu.device;
        let staging: Vec<(usize, wgpu::Buffer)> = kernel
            .buffers
            .iter()
            .enumerate()
            .filter(|(_, p)| p.is_compared())
            .map(|(i, _)| {
                (
                    i,
                    device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some("read back"),
                        size: bound.buffers[i].size(),
                        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                        mapped_at_creation: false,
                    }),
                )
            })
            .collect();
        let refs: Vec<(usize, &wgpu::Buffer)> = staging.iter().map(|(i, b)| (*i, b)).collect();
        self.submit(compiled, bound, counts, None, &refs);
        for (_, b) in &staging {
            b.slice(..).map_async(wgpu::MapMode::Read, |_| {});
        }
        self.wait()?;
        staging
            .iter()
            .map(|(_, b)| {
                let view = b
                    .slice(..)
                    .get_mapped_range()
                    .map_err(|e| (Reason::Runtime, format!("reading results back failed: {e}")))?;
                Ok(view.to_vec())
            })
            .collect()
    }

    /// The baseline's outputs for a trial, computed once per (kernel, shape, seed).
    fn reference(
        &mut self,
        kernel: &ResolvedKernel,
        trial: &Trial,
        contents: &[Vec<u8>],
    ) -> Step<Vec<Vec<u8>>> {
        let key = (
            kernel.content_hash.clone(),
            shape_text(&trial.shape),
            trial.seed,
        );
        if let Some(r) = self.references.get(&key) {
            return Ok(r.clone());
        }
        let baseline = &self.baselines[&kernel.content_hash];
        let outputs = self
            .run_once(kernel, baseline, &trial.shape, contents)
            .map_err(|(r, m)| {
                (
                    r,
                    format!(
                        "the baseline failed on {} seed {}: {m}",
                        shape_text(&trial.shape),
                        trial.seed
                    ),
                )
            })?;
        let held: usize = self.references.values().flatten().map(Vec::len).sum();
        if held > REFERENCE_CACHE_BYTES {
            self.references.clear();
        }
        self.references.insert(key, outputs.clone());
        Ok(outputs)
    }

    /// Compares a candidate's outputs with the reference; `context` prefixes the log.
    fn judge(
        kernel: &ResolvedKernel,
        trial: &Trial,
        reference: &[Vec<u8>],
        got: &[Vec<u8>],
        context: &str,
        stats: &mut VerifyStats,
    ) -> Step<()> {
        let compared: Vec<_> = kernel.buffers.iter().filter(|p| p.is_compared()).collect();
        let mut degenerate = Vec::new();
        let mut judged = 0;
        for ((plan, r), c) in compared.iter().zip(reference).zip(got) {
            let len = plan.len_on(&trial.shape).unwrap_or(0);
            let cmp: Comparison = compare(&plan.binding.layout, len, r, c, kernel.tolerance);
            if let Some(why) = &cmp.degenerate {
                degenerate.push(format!("`{}`: {why}", plan.binding.name));
                continue;
            }
            judged += 1;
            stats.max_rel_l2 = stats.max_rel_l2.max(cmp.rel_l2);
            stats.max_rel_elem = stats.max_rel_elem.max(cmp.max_rel_elem);
            if !cmp.ok(kernel.tolerance) {
                return Err((
                    Reason::WrongValues,
                    format!(
                        "{context}output `{}` on shape {} seed {}: {}",
                        plan.binding.name,
                        shape_text(&trial.shape),
                        trial.seed,
                        cmp.describe(kernel.tolerance)
                    ),
                ));
            }
        }
        if judged == 0 {
            return Err((
                Reason::DegenerateReference,
                format!(
                    "cannot judge on shape {} seed {}: the baseline's outputs are degenerate ({}); give the inputs a distribution that makes the output vary, e.g. `input(n, range(-4.0, 4.0))`",
                    shape_text(&trial.shape),
                    trial.seed,
                    degenerate.join("; ")
                ),
            ));
        }
        stats.trials += 1;
        Ok(())
    }

    fn verify_trial(
        &mut self,
        kernel: &ResolvedKernel,
        candidate: &Compiled,
        trial: &Trial,
        stats: &mut VerifyStats,
    ) -> Step<()> {
        let contents = Self::trial_contents(kernel, &trial.shape, trial.seed)?;
        let reference = self.reference(kernel, trial, &contents)?;
        let got = self.run_once(kernel, candidate, &trial.shape, &contents)?;
        Self::judge(kernel, trial, &reference, &got, "", stats)
    }

    /// Runs the candidate twice on the same buffers with different inputs, as an application that
    /// reuses its buffers would: the second run's outputs must not depend on what the first left.
    fn verify_rerun(
        &mut self,
        kernel: &ResolvedKernel,
        candidate: &Compiled,
        first: &Trial,
        stats: &mut VerifyStats,
    ) -> Step<()> {
        let second = Trial {
            shape: first.shape.clone(),
            seed: first.seed ^ 0x0057_A1E0,
        };
        let a = Self::trial_contents(kernel, &first.shape, first.seed)?;
        let b = Self::trial_contents(kernel, &second.shape, second.seed)?;
        let reference = self.reference(kernel, &second, &b)?;
        let bound = self.bind(kernel, &a)?;
        self.run_bound(kernel, candidate, &first.shape, &bound)?;
        for ((plan, buffer), data) in kernel.buffers.iter().zip(&bound.buffers).zip(&b) {
            if matches!(plan.role, Role::Input | Role::Inout | Role::Uniform) {
                self.gpu.queue.write_buffer(buffer, 0, data);
            }
        }
        let got = self.run_bound(kernel, candidate, &second.shape, &bound)?;
        Self::judge(
            kernel,
            &second,
            &reference,
            &got,
            "run again on the same buffers with new inputs (the outputs still held the previous run's results): ",
            stats,
        )
    }

    /// Times baseline and candidate in interleaved pairs on `shape`.
    fn time_shape(
        &mut self,
        kernel: &ResolvedKernel,
        candidate: &Compiled,
        shape: &Shape,
        plan: &EvalPlan,
    ) -> Step<ShapeTime> {
        let baseline = &self.baselines[&kernel.content_hash];
        let programs = [baseline, candidate];
        let counts = [
            self.workgroups(&baseline.program, shape)?,
            self.workgroups(&candidate.program, shape)?,
        ];
        // Input sets rotated between samples: enough of them that together they exceed any
        // last-level cache, so a run never starts with its data already cached (two at least).
        let set_bytes: u64 = kernel
            .buffers
            .iter()
            .map(|p| p.byte_size(shape).unwrap_or(0))
            .sum::<u64>()
            .max(1);
        let rotation = if self.gpu.is_cpu() {
            ROTATION_BYTES_CPU
        } else {
            ROTATION_BYTES
        };
        let n_sets = rotation.div_ceil(set_bytes).clamp(2, 16) as usize;
        // Two distinct contents alternate over the buffer sets: what defeats a cache is the
        // addresses, and generating inputs is the slow part on the host.
        let contents = [
            Self::trial_contents(kernel, shape, 0x5EED_0000)?,
            Self::trial_contents(kernel, shape, 0x5EED_0001)?,
        ];
        let mut sets: Vec<Vec<Bound>> = Vec::new();
        for _program in 0..2 {
            let mut program_sets = Vec::with_capacity(n_sets);
            for i in 0..n_sets {
                program_sets.push(self.bind(kernel, &contents[i % 2])?);
            }
            sets.push(program_sets);
        }
        let stamps = self
            .gpu
            .timestamps
            .then(|| Timestamps::new(&self.gpu.device));
        let period = f64::from(self.gpu.queue.get_timestamp_period());
        let mut rng = StdRng::seed_from_u64(plan.order_seed);
        let mut samples: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
        for i in 0..(plan.warmup + plan.samples.max(1)) {
            let first = usize::from(rng.random_bool(0.5));
            for which in [first, 1 - first] {
                let bound = &sets[which][i as usize % n_sets];
                let t0 = Instant::now();
                self.submit(programs[which], bound, counts[which], stamps.as_ref(), &[]);
                if let Some(t) = &stamps {
                    t.map();
                }
                self.wait()?;
                let wall = t0.elapsed();
                let ns = match &stamps {
                    Some(t) => {
                        let ticks = t.take();
                        let ns = ticks as f64 * period;
                        if ns > 0.0 { ns } else { wall.as_nanos() as f64 }
                    }
                    None => wall.as_nanos() as f64,
                };
                if i >= plan.warmup {
                    samples[which].push(ns);
                }
            }
        }
        let ratios: Vec<f64> = samples[0]
            .iter()
            .zip(&samples[1])
            .map(|(b, c)| b / c.max(1.0))
            .collect();
        let (speedup, spread) = median_and_spread(&ratios);
        let (baseline_ns, baseline_spread) = median_and_spread(&samples[0]);
        let (candidate_ns, candidate_spread) = median_and_spread(&samples[1]);
        let bytes: u64 = kernel
            .buffers
            .iter()
            .map(|p| {
                let size = p.byte_size(shape).unwrap_or(0);
                match p.role {
                    Role::Input | Role::Output => size,
                    Role::Inout => 2 * size,
                    Role::Scratch | Role::Uniform => 0,
                }
            })
            .sum();
        let flops = kernel
            .flops
            .as_ref()
            .and_then(|f| f.eval(|n| shape.get(n).copied()).ok());
        Ok(ShapeTime {
            shape: shape.clone(),
            baseline_ns,
            candidate_ns,
            speedup,
            spread,
            baseline_spread,
            candidate_spread,
            samples: plan.samples.max(1),
            method: if stamps.is_some() {
                "timestamp-query"
            } else {
                "wall-clock"
            }
            .to_owned(),
            bytes,
            achieved_gbps: bytes as f64 / candidate_ns.max(1.0),
            achieved_gflops: flops.map(|f| f as f64 / candidate_ns.max(1.0)),
        })
    }
}

/// Pass timestamp query set with its resolve and read-back buffers.
pub(crate) struct Timestamps {
    query_set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    read: wgpu::Buffer,
}

impl Timestamps {
    pub(crate) fn new(device: &wgpu::Device) -> Self {
        Timestamps {
            query_set: device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("timing"),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            }),
            resolve: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamp resolve"),
                size: 16,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }),
            read: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamp read"),
                size: 16,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
        }
    }

    /// The pass's timestamp writes: start and end of the pass.
    pub(crate) fn pass_writes(&self) -> wgpu::ComputePassTimestampWrites<'_> {
        wgpu::ComputePassTimestampWrites {
            query_set: &self.query_set,
            beginning_of_pass_write_index: Some(0),
            end_of_pass_write_index: Some(1),
        }
    }

    /// Resolves the pair into the read-back buffer (encode after the pass).
    pub(crate) fn resolve(&self, encoder: &mut wgpu::CommandEncoder) {
        encoder.resolve_query_set(&self.query_set, 0..2, &self.resolve, 0);
        encoder.copy_buffer_to_buffer(&self.resolve, 0, &self.read, 0, 16);
    }

    /// Requests the read-back mapping (call after submitting, before waiting).
    pub(crate) fn map(&self) {
        self.read.slice(..).map_async(wgpu::MapMode::Read, |_| {});
    }

    /// Reads the mapped pair and unmaps; ticks between the two.
    pub(crate) fn take(&self) -> u64 {
        let ticks = {
            let Ok(view) = self.read.slice(..).get_mapped_range() else {
                return 0;
            };
            let t0 = u64::from_le_bytes(view[0..8].try_into().expect("8 bytes"));
            let t1 = u64::from_le_bytes(view[8..16].try_into().expect("8 bytes"));
            t1.saturating_sub(t0)
        };
        self.read.unmap();
        ticks
    }
}

/// Median of a sample (0 for an empty one).
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

/// Median and half the interquartile range relative to the median.
pub fn median_and_spread(v: &[f64]) -> (f64, f64) {
    if v.is_empty() {
        return (1.0, 1.0);
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let q = |p: f64| {
        let pos = p * (s.len() - 1) as f64;
        let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
        s[lo] + (s[hi] - s[lo]) * (pos - lo as f64)
    };
    let m = q(0.5);
    (m, ((q(0.75) - q(0.25)) / 2.0) / m.max(f64::MIN_POSITIVE))
}

fn roofline(c: &Ceilings, t: &ShapeTime) -> Roofline {
    Roofline::place(c, t.achieved_gbps, t.achieved_gflops)
}

/// How long a worker may take for `request` before it is killed, given how long the baseline
/// evaluation of the same kernel took.
pub fn default_timeout(baseline_wall: Duration) -> Duration {
    (baseline_wall * 10).clamp(Duration::from_secs(10), Duration::from_secs(300))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_spread_of_ratios() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        let (m, s) = median_and_spread(&[1.0, 1.0, 1.0, 1.0]);
        assert_eq!((m, s), (1.0, 0.0));
        let (m, s) = median_and_spread(&[0.8, 0.9, 1.0, 1.1, 1.2]);
        assert!(
            (m - 1.0).abs() < 1e-12 && (s - 0.1).abs() < 1e-12,
            "{m} {s}"
        );
    }
}

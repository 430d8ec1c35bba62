//! The evaluation itself, as run inside the worker process: compile, check, verify, time.
//!
//! Order matters and follows the fitness ladder: text (0) → naga validation (1) → interface (3) →
//! limits and pipeline (2) → verification trials (4) → timing (2 on errors) → re-verification (4)
//! → roofline cap (2). The cap counts only traffic every correct kernel must move (`traffic`);
//! when a candidate appears to beat the copy ceiling, the runner measures the ceiling again (best
//! of several rounds, kept for the rest of the session), times the shape again and re-verifies,
//! and only a candidate that still beats it is rejected. Each trial uses freshly created buffers whose outputs are poisoned; baseline
//! outputs for a `(shape, seed)` are cached because the baseline is trusted and its inputs are a
//! pure function of the seed, and so are the generated contents (`inputs::Cache`) and their GPU
//! copies (`resources::Masters`), from which each run's fresh buffers are filled. Baseline and candidate are timed in pairs in a random order, rotating
//! through enough input sets (together larger than any last-level cache) that caches do not
//! flatter either of them; those sets stay resident between evaluations of a kernel on a shape,
//! everything a run can write restored before each timing. The clock ramp before a timing is
//! paid once per batch of evaluations, again only after the GPU idled (`sustain_before`); a
//! short top-up between two timings (none by default, `TOP_UP`) is skipped when the GPU ran
//! without pause (`after_gap`).
//!
//! A candidate's outputs are compared on the GPU first ([`gpu_compare`]), against the baseline's
//! output buffers, which stay on the GPU beside their bytes: only a few words per workgroup come
//! back, so the host neither reads tens of MiB back nor leaves the GPU idle long enough to lose
//! its clock between two timings. A pass there implies a pass by the host's rule; anything else
//! (a suspect element, a layout the GPU comparison does not cover) reads the outputs back and is
//! judged by [`compare`] exactly as before. The bound traffic of the roofline cap is computed
//! once per (kernel, shape).
//!
//! Invariant: nothing from one run (buffers, bind groups) is visible to another run, so a
//! candidate cannot read the reference's result or its own previous output (a resident timing
//! set holds only what it was created with when a timing starts; its outputs are never judged).

use super::compare::{Comparison, Scan, compare, scan};
use super::gpu_compare::{self, GpuCompare, Passed};
use super::inputs::{self, Contents};
use super::resources::{Masters, Resource};
use super::{
    CHECKS, Candidate, Ceilings, EvalPlan, EvalReport, EvalRequest, Fitness, Reason, Roofline,
    ShapeTime, ToleranceMiss, Trial, UNSEEN_SHAPES, VerifyStats, WorstElement,
};
use crate::gpu::Gpu;
use kf_runtime::resolve::{ReflectError, ResolvedKernel, shape_text};
use kf_runtime::spec::{Role, Shape};
use kf_runtime::variant::{self, VariantError};
use kf_runtime::{
    Program, WorkspaceBinding, bind_group_layouts, bind_workspace, build_pipelines, check_limits,
    pipeline_layout, workspace_layout,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A trial of a kernel: content hash, shape, seed.
type TrialKey = (String, String, u64);

/// The timing's buffer sets of one shape: baseline's, then candidate's.
type TimingSets = Vec<Vec<Bound>>;

/// The baseline's outputs for one trial, one entry per compared buffer: their bytes, what each
/// says about its scale ([`Scan`]: the floor of the comparison, whether it can be judged), and
/// the baseline's own output buffers, kept on the GPU for the comparison there
/// ([`gpu_compare`]; `None` for a texture). Nothing binds those buffers again but the
/// comparison, which only reads them.
struct Reference {
    bytes: Vec<Vec<u8>>,
    scans: Vec<Scan>,
    buffers: Vec<Option<wgpu::Buffer>>,
}

/// A candidate's outputs as the judge sees them.
enum Outputs {
    /// Every compared buffer passed on the GPU (`Some`, with its figures) or has a degenerate
    /// reference (`None`, not judged): nothing was read back.
    Passed(Vec<Option<Passed>>),
    /// The compared buffers' bytes, read back for the host's comparison.
    Bytes(Vec<Vec<u8>>),
}

/// A compiled program with the bind group layouts of the baseline's interface.
struct Compiled {
    /// One pipeline per launch of `program`: a launch sequence is run, verified and timed whole.
    pipelines: Vec<wgpu::ComputePipeline>,
    program: Program,
    /// The layout of the program's workspace group, when it binds buffers of its own
    /// ([`kf_runtime::Workspace`]).
    workspace: Option<wgpu::BindGroupLayout>,
}

impl Compiled {
    /// Records every launch in `pass`, in order, with the counts of [`Runner::workgroups`].
    fn record(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        bind_groups: &[wgpu::BindGroup],
        workspace: Option<&WorkspaceBinding>,
        counts: &[[u32; 3]],
    ) {
        for (pipeline, counts) in self.pipelines.iter().zip(counts) {
            pass.set_pipeline(pipeline);
            for (i, bg) in bind_groups.iter().enumerate() {
                pass.set_bind_group(i as u32, bg, &[]);
            }
            if let Some(w) = workspace {
                pass.set_bind_group(w.group, &w.bind_group, &[]);
            }
            pass.dispatch_workgroups(counts[0], counts[1], counts[2]);
        }
    }

    /// Fresh workspace buffers for a run on `shape`, poisoned like outputs: a program must write
    /// what it reads there, within the run (nothing survives from one trial to the next).
    fn workspace(&self, device: &wgpu::Device, shape: &Shape) -> Step<Option<WorkspaceBinding>> {
        let Some(layout) = &self.workspace else {
            return Ok(None);
        };
        bind_workspace(
            device,
            layout,
            &self.program,
            |n| shape.get(n).copied(),
            kf_runtime::verdict::POISON_F32,
        )
        .map_err(|e| {
            (
                Reason::Dispatch,
                format!("workspace on {}: {e}", shape_text(shape)),
            )
        })
    }
}

/// Buffers, textures, samplers and bind groups for one run.
struct Bound {
    resources: Vec<Resource>,
    bind_groups: Vec<wgpu::BindGroup>,
}

/// Evaluates candidates on one device; lives as long as the worker.
pub struct Runner {
    gpu: Gpu,
    /// Compiled baselines by content hash.
    baselines: HashMap<String, Compiled>,
    /// Baseline outputs by (content hash, shape, seed), on the host and on the GPU.
    references: HashMap<TrialKey, Arc<Reference>>,
    /// The comparison on the GPU, compiled on first use (or why the adapter refused it).
    gpu_compare: Option<Result<GpuCompare, String>>,
    /// The bound traffic by (content hash, shape) (see [`Self::bound_traffic`]).
    traffic: HashMap<(String, String), u64>,
    /// Trial contents generated so far, reused by later trials and evaluations.
    inputs: inputs::Cache,
    /// The same contents on the GPU, copied into each run's fresh buffers.
    masters: Masters,
    /// Pipeline layouts by content hash.
    layouts: HashMap<String, (Vec<wgpu::BindGroupLayout>, wgpu::PipelineLayout)>,
    /// The best ceilings this runner has measured itself (after an apparent exceedance).
    measured: Option<Ceilings>,
    /// Re-measurements of the ceiling so far (bounded, so cheats cannot make every evaluation
    /// re-probe).
    reprobes: u32,
    /// Test hook: copy bandwidth this runner's measurements are clamped to.
    test_copy_cap: Option<f64>,
    /// Test hook: the factor the next evaluation's candidate timings are divided by (see
    /// [`Runner::speed_up_for_tests`]); 1 otherwise.
    test_speedup: f64,
    /// Where the current evaluation's time goes.
    phases: Phases,
    /// The figures of the last comparison that failed only by the size of its finite errors
    /// (see [`ToleranceMiss`]); cleared by every comparison that fails otherwise.
    miss: Option<ToleranceMiss>,
    /// The timing's buffer sets by (content hash, shape), with their bytes (see
    /// [`Self::timing_sets`]).
    resident: HashMap<(String, String), (u64, TimingSets)>,
    /// When the GPU last ended a sustained load (a ramp or a timing loop), for [`sustain_before`].
    last_load: Option<Instant>,
    /// The fastest baseline median per (content hash, shape) in this worker, the reference of
    /// the [`CLOCK_FELL`] check.
    baseline_best: HashMap<(String, String), f64>,
    /// Candidates compiled ahead of their evaluations by [`Self::prepare`], by candidate id,
    /// with the program each was compiled from.
    prepared: HashMap<String, (Program, Step<Compiled>)>,
}

/// How far above the copy ceiling the bound traffic may appear before the ceiling is measured
/// again. The copy ceiling counts bytes read plus written while the bound counts only bytes no
/// correct kernel avoids, so an honest kernel stays far under this.
pub const CAP_MARGIN: f64 = 1.5;
/// Re-measurements of the ceiling one runner does at most.
const MAX_REPROBES: u32 = 4;

/// Bytes of input sets rotated while timing on a GPU: more than the largest last-level caches.
const ROTATION_BYTES: u64 = 256 << 20;
/// The same on a CPU adapter, whose last-level cache is smaller and whose memory is the host's.
const ROTATION_BYTES_CPU: u64 = 64 << 20;
/// Bytes of timing buffer sets kept between evaluations (see `Runner::timing_sets`): the sets
/// of a few (kernel, shape) pairs at most, since both programs rotate [`ROTATION_BYTES`] each.
const RESIDENT_BYTES: u64 = 1 << 30;

/// How long the GPU is kept busy before timing (see [`sustain_load`]); `KERNELFOUNDRY_WARM_MS`
/// overrides it.
const SUSTAIN_GPU: Duration = Duration::from_millis(400);
/// The GPU work of one command buffer while sustaining the load.
const SUSTAIN_BATCH: Duration = Duration::from_millis(8);

/// How long the GPU may have been idle since its last sustained load (the previous timing loop
/// or ramp in this worker) for the next timing to skip the ramp; `KERNELFOUNDRY_RAMP_IDLE_MS`
/// overrides it.
///
/// Why 250 ms: on the H200 the clock took about 0.25 s of sustained load to rise (BENCHMARKS.md,
/// "the clock ramp"). How fast it falls again under Vulkan was not measured; a governor that
/// needs that long under load to raise the clock is assumed to need at least as long at idle to
/// lower it. The assumption is checked on every timing that skips the ramp: a baseline slower
/// than its best time in this worker by [`CLOCK_FELL`] is timed again after the full ramp.
/// Within a batch of evaluations the gap between two timings (compile, verification trials,
/// the search's next step) is well under this, so the ramp is paid once per batch.
const RAMP_IDLE: Duration = Duration::from_millis(250);
/// The load before a timing that skips the ramp, to keep the GPU busy across the host's gap
/// between two timings; `KERNELFOUNDRY_TOP_UP_MS` sets it (see [`top_up`]).
///
/// Why none: measured on an H100 (BENCHMARKS.md, "The top-up before each timing"), over the
/// 406 timings of eight tunes (four kernels, two rounds), dropping the 16 ms top-up raised the
/// evaluations per second by 1.2–2.8× and changed nothing else: no timing found its baseline
/// slower than before (the [`CLOCK_FELL`] check), the first sample of a timing was as close to
/// the best as with the top-up (within 3 %), and the tunes ended on the same variants within
/// 1 %. A gap of tens of milliseconds between two timings did not let that GPU's clock fall; a
/// longer idle gets the full ramp ([`RAMP_IDLE`]), and a fallen clock is still caught by
/// [`CLOCK_FELL`].
const TOP_UP: Duration = Duration::ZERO;
/// An idle gap this short since the end of the last timing means the GPU ran without pause: the
/// rest of a screened timing follows its cheap samples after only the screening's arithmetic on
/// the host, far less than any clock governor's reaction, so it needs no top-up.
const CONTINUOUS: Duration = Duration::from_millis(2);

/// The load to run before a timing, `planned` by [`sustain_before`], once the GPU has idled
/// `gap` since the last timing ended (measured right before the load): a top-up is dropped when
/// the gap is under [`CONTINUOUS`]; a full ramp is always kept. The check against a fallen clock
/// ([`CLOCK_FELL`]) still applies to a timing that skipped the top-up.
pub(crate) fn after_gap(planned: Duration, gap: Option<Duration>, top_up: Duration) -> Duration {
    match gap {
        Some(g) if planned <= top_up && g < CONTINUOUS => Duration::ZERO,
        _ => planned,
    }
}

/// A baseline this much slower than its fastest median in this worker, timed without the full
/// ramp, is taken as a clock that fell while idle: the shape is ramped and timed again. The
/// clock ramp made the same kernel 4–5× slower; the noise of a median of samples is a few
/// percent.
const CLOCK_FELL: f64 = 1.25;

/// How long to sustain the load before a timing: `full` (see [`sustain_duration`]) when the GPU
/// has not run a sustained load in this worker yet (`since_load` is `None`) or has idled longer
/// than `ramp_idle` since, else only the short `top_up` (never more than `full`).
pub(crate) fn sustain_before(
    full: Duration,
    since_load: Option<Duration>,
    ramp_idle: Duration,
    top_up: Duration,
) -> Duration {
    match since_load {
        Some(idle) if idle <= ramp_idle => top_up.min(full),
        _ => full,
    }
}

/// [`TOP_UP`], or `KERNELFOUNDRY_TOP_UP_MS` (0 drops the top-up; the check against a fallen
/// clock, [`CLOCK_FELL`], still guards every timing that skipped the full ramp).
fn top_up() -> Duration {
    std::env::var("KERNELFOUNDRY_TOP_UP_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(TOP_UP, Duration::from_millis)
}

/// [`RAMP_IDLE`], or `KERNELFOUNDRY_RAMP_IDLE_MS`.
fn ramp_idle() -> Duration {
    std::env::var("KERNELFOUNDRY_RAMP_IDLE_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(RAMP_IDLE, Duration::from_millis)
}

/// The relative margin by which a screened candidate must miss its bar, beyond its noise, to
/// keep its cheap timing: run-to-run differences of a median speedup on a GPU are a few percent.
const SCREEN_MARGIN: f64 = 0.10;
/// How many spreads (half interquartile ranges of the per-pair speedups) the screening adds to a
/// candidate's speedup before comparing it with the bar.
const SCREEN_SPREADS: f64 = 3.0;

/// Whether a candidate timed cheaply is clearly slower than `below`: the geometric mean of its
/// per-shape `speedups`, raised by [`SCREEN_SPREADS`] times its `noise` (the largest spread of a
/// shape) and then by [`SCREEN_MARGIN`], still falls short of it. A timing with no shapes or
/// with a non-finite figure is never screened out.
pub(crate) fn screened_out(speedups: &[f64], noise: f64, below: f64) -> bool {
    if speedups.is_empty() || !noise.is_finite() || !below.is_finite() {
        return false;
    }
    let mean = (speedups.iter().map(|s| s.ln()).sum::<f64>() / speedups.len() as f64).exp();
    mean.is_finite() && (mean + SCREEN_SPREADS * noise) * (1.0 + SCREEN_MARGIN) < below
}

/// How long to sustain the load before timing: [`SUSTAIN_GPU`] on a GPU, nothing on a CPU adapter
/// (whose clock does not depend on a GPU's idle state), or `KERNELFOUNDRY_WARM_MS`.
pub(crate) fn sustain_duration(cpu: bool) -> Duration {
    match std::env::var("KERNELFOUNDRY_WARM_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        Some(ms) => Duration::from_millis(ms),
        None if cpu => Duration::ZERO,
        None => SUSTAIN_GPU,
    }
}

/// Keeps the GPU busy for `duration`: command buffers in which `encode` records `reps`
/// repetitions of its work, `reps` adjusted so each holds about [`SUSTAIN_BATCH`] of GPU time
/// (the host's round trip then is a small share and the GPU stays busy). Used before every
/// timing, by the evaluator and by the ceilings probe.
///
/// Why: a discrete GPU idles at a fraction of its clock and raises it only after a sustained
/// load. Measured on an H200 (Vulkan), a row-wise softmax ran at 11.8 ms per launch for the first
/// ~0.25 s of back-to-back samples and at 2.3 ms from then on; kernels shorter than a few
/// milliseconds never reached the higher clock within their samples at all, so a speedup
/// depended on how long the GPU had been idle before. BENCHMARKS.md has the measurement.
pub(crate) fn sustain_load(
    gpu: &Gpu,
    duration: Duration,
    encode: impl Fn(&mut wgpu::CommandEncoder, u32),
) -> Result<(), String> {
    let start = Instant::now();
    let mut reps = 1u32;
    while start.elapsed() < duration {
        let t = Instant::now();
        let mut encoder = gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        encode(&mut encoder, reps);
        gpu.queue.submit([encoder.finish()]);
        gpu.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| e.to_string())?;
        let took = t.elapsed().max(Duration::from_micros(1)).as_secs_f64();
        // The next command buffer holds a batch, or what is left of the duration if that is
        // less: a short top-up is not stretched by a whole batch past its end.
        let left = duration.saturating_sub(start.elapsed());
        reps = next_reps(reps, took, SUSTAIN_BATCH.min(left).as_secs_f64());
    }
    Ok(())
}

/// How many repetitions the next command buffer of a sustained load records for `target`
/// seconds of GPU work, when `reps` took `took` seconds (at least one, at most 4096).
fn next_reps(reps: u32, took: f64, target: f64) -> u32 {
    ((f64::from(reps) * target / took).round() as u32).clamp(1, 4096)
}

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
            gpu_compare: None,
            traffic: HashMap::new(),
            inputs: inputs::Cache::default(),
            masters: Masters::default(),
            layouts: HashMap::new(),
            measured: None,
            reprobes: 0,
            test_copy_cap: None,
            test_speedup: 1.0,
            phases: Phases::default(),
            miss: None,
            resident: HashMap::new(),
            last_load: None,
            prepared: HashMap::new(),
            baseline_best: HashMap::new(),
        }
    }

    /// Test hook: every copy bandwidth this runner measures is clamped to `gbps`, so a test can
    /// exercise a cap that still holds after re-measurement.
    pub fn clamp_copy_for_tests(&mut self, gbps: f64) {
        self.test_copy_cap = Some(gbps);
    }

    /// Test hook: the candidate timings of the evaluations that follow are divided by `factor`
    /// (the baseline's are kept), as if the candidate ran that much faster; 1 turns it off. A
    /// test that needs a tuned variant to win sets it, so the outcome never hinges on timing
    /// luck on a loaded machine; everything else (verification, the noise margin measured with
    /// the baseline against itself) runs as it would.
    pub fn speed_up_for_tests(&mut self, factor: f64) {
        self.test_speedup = factor;
    }

    /// The best-known ceilings: the request's merged with what this runner measured.
    fn best_ceilings(&self, requested: Option<&Ceilings>) -> Option<Ceilings> {
        match (requested, &self.measured) {
            (Some(r), Some(m)) if r.adapter.key == m.adapter.key => {
                let mut best = r.clone();
                best.merge(m);
                Some(best)
            }
            (Some(r), _) => Some(r.clone()),
            (None, _) => None,
        }
    }

    /// Measures the copy bandwidth again (best of several rounds) and merges it into `known`.
    fn remeasure(&mut self, known: &Ceilings) -> Result<Ceilings, String> {
        let (mut points, method) =
            super::probe::measure_copy(&self.gpu, super::probe::COPY_ROUNDS)?;
        if let Some(cap) = self.test_copy_cap {
            for p in &mut points {
                p.gbps = p.gbps.min(cap);
            }
        }
        let fresh = Ceilings {
            copy_gbps: points.iter().map(|p| p.gbps).fold(0.0, f64::max),
            copy_by_size: points,
            fma_gflops: 0.0,
            method: method.to_owned(),
            measured_at: super::probe::now_secs(),
            probes: 1,
            ..known.clone()
        };
        let mut best = known.clone();
        best.merge(&fresh);
        match &mut self.measured {
            Some(m) => m.merge(&best),
            None => self.measured = Some(best.clone()),
        }
        Ok(best)
    }

    /// The device.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Runs one evaluation to completion.
    pub fn evaluate(&mut self, req: &EvalRequest) -> EvalReport {
        let start = Instant::now();
        self.miss = None;
        let mut report = match self.evaluate_inner(req) {
            Ok(report) => report,
            Err((reason, log)) => {
                let mut report = EvalReport::failed(&req.candidate.id, reason, log);
                if let Some(f) = &mut report.failure
                    && matches!(reason, Reason::WrongValues | Reason::ChangedAfterTiming)
                {
                    f.miss = self.miss.take();
                }
                report
            }
        };
        if let Some(lost) = self.gpu.lost() {
            report = EvalReport::failed(&req.candidate.id, Reason::DeviceLost, lost);
        }
        let wall = start.elapsed();
        report.wall_ms = wall.as_secs_f64() * 1e3;
        let phases = self.phases.take(wall);
        let text = phases
            .iter()
            .map(|(name, ms)| format!("{name} {ms:.0} ms"))
            .collect::<Vec<_>>()
            .join(", ");
        log::debug!(
            "evaluation of {} took {:.0} ms: {text}",
            req.candidate.id,
            report.wall_ms
        );
        Diagnostics::from_env().phases(report.wall_ms, &phases);
        report
    }

    fn evaluate_inner(&mut self, req: &EvalRequest) -> Step<EvalReport> {
        let kernel = &req.kernel;
        self.gpu.take_uncaptured();
        let t = Instant::now();
        let candidate = self.compile_candidate(kernel, &req.candidate)?;
        self.ensure_baseline(kernel)?;
        self.phases.add(Phase::Compile, t);
        let workgroup_size = candidate.program.workgroup_size;
        let workgroup_bytes = candidate.program.workgroup_storage_bytes;

        let mut stats = VerifyStats::default();
        if let Err((reason, log)) = self.verify(kernel, &candidate, &req.plan, &mut stats) {
            // Outputs outside the tolerance by a hair (rounding) are still wrong values, but the
            // user is told what the tolerance costs: the candidate is timed all the same.
            return match self.miss.take() {
                Some(miss) if reason == Reason::WrongValues && miss.is_near() => {
                    let timings = req
                        .plan
                        .time_shapes
                        .iter()
                        .map(|shape| self.time_shape(kernel, &candidate, shape, &req.plan))
                        .collect::<Step<Vec<_>>>()
                        .unwrap_or_default();
                    Ok(near_miss_report(req, reason, log, miss, timings))
                }
                miss => {
                    self.miss = miss;
                    Err((reason, log))
                }
            };
        }

        let mut timings = self.time_screened(kernel, &candidate, &req.plan)?;
        if let Some(trial) = &req.plan.reverify
            && let Err((reason, log)) = self.verify_trial(kernel, &candidate, trial, &mut stats)
        {
            let log = format!("after the timing loop, with new inputs: {log}");
            return match (reason, self.miss.take()) {
                (Reason::WrongValues, Some(miss)) if miss.is_near() => Ok(near_miss_report(
                    req,
                    Reason::ChangedAfterTiming,
                    log,
                    miss,
                    timings,
                )),
                (Reason::WrongValues, miss) => {
                    self.miss = miss;
                    Err((Reason::ChangedAfterTiming, log))
                }
                (reason, _) => Err((reason, log)),
            };
        }

        let mut ceilings = self.best_ceilings(req.ceilings.as_ref());
        let mut remeasured = false;
        for slot in timings.iter_mut() {
            let Some(known) = ceilings.clone() else { break };
            if !exceeds(&known, slot) {
                continue;
            }
            // An apparent exceedance is first a measurement question: a ceiling measured on a
            // busy machine, or a lucky sample. Measure the ceiling again, time again, verify
            // again; only a candidate that still beats the best-known ceiling is rejected.
            let first = slot.clone();
            if self.reprobes < MAX_REPROBES {
                self.reprobes += 1;
                match self.remeasure(&known) {
                    Ok(best) => {
                        ceilings = Some(best);
                        remeasured = true;
                    }
                    Err(e) => log::warn!("re-measuring the copy ceiling failed: {e}"),
                }
            }
            let again = self.time_shape(kernel, &candidate, &first.shape, &req.plan)?;
            if let Some(trial) = &req.plan.reverify {
                self.verify_trial(kernel, &candidate, trial, &mut stats)
                    .map_err(|(reason, log)| {
                        (
                            if reason == Reason::WrongValues {
                                Reason::ChangedAfterTiming
                            } else {
                                reason
                            },
                            format!("after timing again, with new inputs: {log}"),
                        )
                    })?;
            }
            let best = ceilings.as_ref().expect("known ceilings");
            if exceeds(best, &again) {
                return Err((
                    Reason::ExceedsRoofline,
                    format!(
                        "on shape {} the candidate must move at least {} bytes (the output scalars the baseline writes), in {:.0} ns = {:.1} GB/s, and timed again {:.0} ns = {:.1} GB/s; the adapter's copy ceiling, measured again, is {:.1} GB/s (+{:.0} %); rejected as a measurement error or a cheat",
                        shape_text(&first.shape),
                        first.min_bytes,
                        first.candidate_ns,
                        first.min_gbps,
                        again.candidate_ns,
                        again.min_gbps,
                        best.copy_gbps,
                        (CAP_MARGIN - 1.0) * 100.0
                    ),
                ));
            }
            *slot = again;
        }
        let roofline = match (&ceilings, timings.first()) {
            (Some(c), Some(t)) => Some(roofline(c, t)),
            _ => None,
        };

        let speedup = (!timings.is_empty()).then(|| {
            let log_sum: f64 = timings.iter().map(|t| t.speedup.ln()).sum();
            (log_sum / timings.len() as f64).exp()
        });
        let noise = timings.iter().map(|t| t.spread).reduce(f64::max);
        // A shape counts as unseen only if the search never ran it: a verify shape equal to a
        // tune shape (a size of 1 or 2 has no odd neighbour below it) is not.
        let unseen = req
            .plan
            .verify
            .iter()
            .any(|t| !kernel.tune_shapes.contains(&t.shape));
        stats.checks = CHECKS
            .iter()
            .filter(|c| {
                (unseen || **c != UNSEEN_SHAPES)
                    && (req.ceilings.is_some() || **c != "roofline-cap")
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
            ceilings: if remeasured { ceilings } else { None },
            wall_ms: 0.0,
        })
    }

    /// The verification trials before timing, then the rerun on reused buffers.
    fn verify(
        &mut self,
        kernel: &ResolvedKernel,
        candidate: &Compiled,
        plan: &EvalPlan,
        stats: &mut VerifyStats,
    ) -> Step<()> {
        for trial in &plan.verify {
            self.verify_trial(kernel, candidate, trial, stats)?;
        }
        if let Some(first) = plan.verify.first() {
            self.verify_rerun(kernel, candidate, first, stats)?;
        }
        Ok(())
    }

    /// Times every shape of the plan: first with the screen's few samples when the plan has a
    /// screen, and only then, unless the candidate is clearly slower than the screen's bar (see
    /// [`screened_out`]), with the plan's samples.
    fn time_screened(
        &mut self,
        kernel: &ResolvedKernel,
        candidate: &Compiled,
        plan: &EvalPlan,
    ) -> Step<Vec<ShapeTime>> {
        if let Some(screen) = plan.screen.filter(|s| s.samples < plan.samples) {
            let quick = EvalPlan {
                samples: screen.samples,
                ..plan.clone()
            };
            let none = [Vec::new(), Vec::new()];
            let mut timings = Vec::new();
            for shape in &plan.time_shapes {
                timings.push(self.time_shape_from(kernel, candidate, shape, &quick, &none)?);
            }
            let speedups: Vec<f64> = timings.iter().map(|(t, _)| t.speedup).collect();
            let noise = timings.iter().map(|(t, _)| t.spread).fold(0.0, f64::max);
            if screened_out(&speedups, noise, screen.below) {
                return Ok(timings.into_iter().map(|(t, _)| t).collect());
            }
            // The cheap samples count towards the full timing, which takes the rest (the GPU is
            // warm: no warm-up runs again).
            let rest = EvalPlan {
                warmup: 0,
                samples: plan.samples - screen.samples,
                order_seed: plan.order_seed.wrapping_add(1),
                ..plan.clone()
            };
            let mut full = Vec::new();
            for (shape, (_, prior)) in plan.time_shapes.iter().zip(&timings) {
                full.push(
                    self.time_shape_from(kernel, candidate, shape, &rest, prior)?
                        .0,
                );
            }
            return Ok(full);
        }
        let mut timings = Vec::new();
        for shape in &plan.time_shapes {
            timings.push(self.time_shape(kernel, candidate, shape, plan)?);
        }
        Ok(timings)
    }

    /// Levels 0–3 and the pipeline: everything that can be decided without running.
    fn compile_candidate(
        &mut self,
        kernel: &ResolvedKernel,
        candidate: &Candidate,
    ) -> Step<Compiled> {
        if let Some((program, compiled)) = self.prepared.remove(&candidate.id)
            && program == candidate.program
        {
            return compiled;
        }
        let layout = self.pipeline_layout(kernel);
        let bgls = self.layouts[&kernel.content_hash].0.clone();
        compile(
            &self.gpu.device,
            (&layout, &bgls),
            &self.gpu.limits(),
            kernel,
            candidate,
        )
    }

    /// Compiles the candidates of a batch ahead of their evaluations, on one thread each (naga's
    /// checks and the driver's compiler are host work, and the evaluations that follow are
    /// serialized on the GPU anyway): each evaluation then takes its compiled pipelines instead
    /// of compiling. What an evaluation reports is unchanged, failures included, since the same
    /// function compiles either way; a candidate whose compilation panics is left out and
    /// compiled again by its evaluation, which then fails on its own. Anything prepared and not
    /// evaluated yet is dropped. Gives how many were prepared.
    pub fn prepare(&mut self, requests: &[EvalRequest]) -> usize {
        let start = Instant::now();
        self.prepared.clear();
        self.gpu.take_uncaptured();
        let layouts: Vec<(wgpu::PipelineLayout, Vec<wgpu::BindGroupLayout>)> = requests
            .iter()
            .map(|r| {
                let layout = self.pipeline_layout(&r.kernel);
                (layout, self.layouts[&r.kernel.content_hash].0.clone())
            })
            .collect();
        let limits = self.gpu.limits();
        let device = &self.gpu.device;
        let compiled: Vec<Option<Step<Compiled>>> = std::thread::scope(|scope| {
            let handles: Vec<_> = requests
                .iter()
                .zip(&layouts)
                .map(|(r, layout)| {
                    let limits = &limits;
                    scope.spawn(move || {
                        compile(
                            device,
                            (&layout.0, &layout.1),
                            limits,
                            &r.kernel,
                            &r.candidate,
                        )
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().ok()).collect()
        });
        for (r, c) in requests.iter().zip(compiled) {
            if let Some(c) = c {
                self.prepared
                    .insert(r.candidate.id.clone(), (r.candidate.program.clone(), c));
            }
        }
        Diagnostics::from_env().prepared(start.elapsed(), self.prepared.len());
        self.prepared.len()
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
        let pipelines = build_pipelines(&self.gpu.device, &layout, &kernel.baseline, "baseline")
            .map_err(|m| {
                (
                    Reason::Pipeline,
                    format!("the baseline itself does not build on this adapter: {m}"),
                )
            })?;
        self.baselines.insert(
            kernel.content_hash.clone(),
            Compiled {
                pipelines,
                program: kernel.baseline.clone(),
                workspace: None,
            },
        );
        Ok(())
    }

    fn workgroups(&self, program: &Program, shape: &Shape) -> Step<Vec<[u32; 3]>> {
        program
            .launch_workgroups(
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

    /// Creates fresh buffers (filled on the GPU from their masters), textures and samplers
    /// holding `contents`, and bind groups for them.
    fn bind(
        &self,
        kernel: &ResolvedKernel,
        shape: &Shape,
        contents: &[Arc<Vec<u8>>],
    ) -> Step<Bound> {
        let t = Instant::now();
        let device = &self.gpu.device;
        let mut encoder =
            device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        let mut resources = Vec::with_capacity(contents.len());
        for (plan, data) in kernel.buffers.iter().zip(contents) {
            resources.push(
                Resource::create_copied(&self.gpu, plan, shape, data, &self.masters, &mut encoder)
                    .map_err(|m| (Reason::Runtime, m))?,
            );
        }
        self.gpu.queue.submit([encoder.finish()]);
        let (bgls, _) = &self.layouts[&kernel.content_hash];
        let bind_groups = bgls
            .iter()
            .enumerate()
            .map(|(g, bgl)| {
                let entries: Vec<wgpu::BindGroupEntry> = kernel
                    .buffers
                    .iter()
                    .zip(&resources)
                    .filter(|(p, _)| p.binding.group == g as u32)
                    .map(|(p, r)| wgpu::BindGroupEntry {
                        binding: p.binding.binding,
                        resource: r.binding(),
                    })
                    .collect();
                device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: None,
                    layout: bgl,
                    entries: &entries,
                })
            })
            .collect();
        self.phases.add(Phase::Upload, t);
        Ok(Bound {
            resources,
            bind_groups,
        })
    }

    /// The contents of a trial's buffers (generated once per process, see [`inputs::Cache`]).
    fn trial_contents(
        &mut self,
        kernel: &ResolvedKernel,
        shape: &Shape,
        seed: u64,
    ) -> Step<Contents> {
        let t = Instant::now();
        let contents = self
            .inputs
            .contents(&kernel.content_hash, &kernel.buffers, shape, seed)
            .map_err(|(i, e)| {
                (
                    Reason::Runtime,
                    format!(
                        "binding `{}` on {}: {e}",
                        kernel.buffers[i].binding.name,
                        shape_text(shape)
                    ),
                )
            });
        self.phases.add(Phase::Inputs, t);
        contents
    }

    /// Encodes one dispatch, optionally with pass timestamps, and submits it.
    fn submit(
        &self,
        compiled: &Compiled,
        bound: &Bound,
        workspace: Option<&WorkspaceBinding>,
        counts: &[[u32; 3]],
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
            compiled.record(&mut pass, &bound.bind_groups, workspace, counts);
        }
        if let Some(t) = timestamps {
            t.resolve(&mut encoder);
        }
        for (idx, staging) in read_back {
            bound.resources[*idx].copy_to(&mut encoder, staging);
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

    /// Runs `compiled` on `bound` and waits for it, on fresh workspace buffers when the program
    /// has a workspace and `reuse` gives none.
    fn run(
        &self,
        compiled: &Compiled,
        shape: &Shape,
        bound: &Bound,
        reuse: Option<&WorkspaceBinding>,
    ) -> Step<()> {
        let counts = self.workgroups(&compiled.program, shape)?;
        let fresh = match reuse {
            Some(_) => None,
            None => compiled.workspace(&self.gpu.device, shape)?,
        };
        let t = Instant::now();
        self.submit(
            compiled,
            bound,
            reuse.or(fresh.as_ref()),
            &counts,
            None,
            &[],
        );
        self.wait()?;
        self.phases.add(Phase::Gpu, t);
        Ok(())
    }

    /// Reads the compared buffers of `bound` back.
    fn read_back(&self, kernel: &ResolvedKernel, bound: &Bound) -> Step<Vec<Vec<u8>>> {
        let t = Instant::now();
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
                        size: bound.resources[i].staging_size(),
                        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                        mapped_at_creation: false,
                    }),
                )
            })
            .collect();
        let mut encoder =
            device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        for (i, b) in &staging {
            bound.resources[*i].copy_to(&mut encoder, b);
        }
        self.gpu.queue.submit([encoder.finish()]);
        for (_, b) in &staging {
            b.slice(..).map_async(wgpu::MapMode::Read, |_| {});
        }
        self.wait()?;
        let outputs = staging
            .iter()
            .map(|(i, b)| {
                let view = b
                    .slice(..)
                    .get_mapped_range()
                    .map_err(|e| (Reason::Runtime, format!("reading results back failed: {e}")))?;
                Ok(bound.resources[*i].unpack(&view))
            })
            .collect();
        self.phases.add(Phase::Readback, t);
        outputs
    }

    /// Runs the candidate on `bound` and compares its outputs with `reference` on the GPU
    /// ([`gpu_compare`]); reads them back only when a compared buffer does not pass there (a
    /// suspect element, a layout or a tolerance the GPU comparison does not cover), so the host
    /// judges it exactly as before.
    fn candidate_outputs(
        &mut self,
        kernel: &ResolvedKernel,
        candidate: &Compiled,
        shape: &Shape,
        bound: &Bound,
        reference: &Reference,
        workspace: Option<&WorkspaceBinding>,
    ) -> Step<Outputs> {
        self.run(candidate, shape, bound, workspace)?;
        match self.check_on_gpu(kernel, shape, bound, reference)? {
            Some(passed) => Ok(Outputs::Passed(passed)),
            None => Ok(Outputs::Bytes(self.read_back(kernel, bound)?)),
        }
    }

    /// The GPU comparison of every compared buffer of `bound` with `reference`: `Some` when each
    /// passed there (or has a degenerate reference, `None` in the list), `None` when the host
    /// must compare.
    fn check_on_gpu(
        &mut self,
        kernel: &ResolvedKernel,
        shape: &Shape,
        bound: &Bound,
        reference: &Reference,
    ) -> Step<Option<Vec<Option<Passed>>>> {
        let t = Instant::now();
        let device = &self.gpu.device;
        let check = self.gpu_compare.get_or_insert_with(|| {
            GpuCompare::new(device).inspect_err(|e| {
                log::warn!(
                    "comparing on the GPU is not possible, outputs are compared on the host: {e}"
                )
            })
        });
        let Ok(check) = check else {
            return Ok(None);
        };
        let limits = self.gpu.limits();
        let mut encoder =
            device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        let mut pending = Vec::new();
        let compared = kernel
            .buffers
            .iter()
            .zip(&bound.resources)
            .filter(|(p, _)| p.is_compared());
        for (j, (plan, resource)) in compared.enumerate() {
            let scan = &reference.scans[j];
            if scan.degenerate().is_some() {
                pending.push(None);
                continue;
            }
            let len = plan.len_on(shape).unwrap_or(0);
            let params = gpu_compare::plain(&plan.layout(), len).and_then(|(n, ints)| {
                gpu_compare::Params::new(n, ints, scan.floor(), kernel.tolerance)
            });
            let (Some(params), Some(r), Resource::Buffer(c)) =
                (params, &reference.buffers[j], resource)
            else {
                return Ok(None);
            };
            if !check.fits(&limits, &params, r) || !check.fits(&limits, &params, c) {
                return Ok(None);
            }
            pending.push(Some(check.encode(device, &mut encoder, params, r, c)));
        }
        self.gpu.queue.submit([encoder.finish()]);
        for p in pending.iter().flatten() {
            p.map();
        }
        self.wait()?;
        let mut passed = Vec::with_capacity(pending.len());
        for p in pending {
            match p {
                None => passed.push(None),
                Some(p) => match p.finish() {
                    Some(ok) => passed.push(Some(ok)),
                    None => {
                        self.phases.add(Phase::GpuCompare, t);
                        return Ok(None);
                    }
                },
            }
        }
        self.phases.add(Phase::GpuCompare, t);
        Ok(Some(passed))
    }

    /// The baseline's outputs for a trial, computed once per (kernel, shape, seed).
    fn reference(
        &mut self,
        kernel: &ResolvedKernel,
        trial: &Trial,
        contents: &[Arc<Vec<u8>>],
    ) -> Step<Arc<Reference>> {
        let key = (
            kernel.content_hash.clone(),
            shape_text(&trial.shape),
            trial.seed,
        );
        if let Some(r) = self.references.get(&key) {
            return Ok(r.clone());
        }
        let baseline = &self.baselines[&kernel.content_hash];
        let failed = |(r, m): (Reason, String)| {
            (
                r,
                format!(
                    "the baseline failed on {} seed {}: {m}",
                    shape_text(&trial.shape),
                    trial.seed
                ),
            )
        };
        let bound = self.bind(kernel, &trial.shape, contents).map_err(failed)?;
        self.run(baseline, &trial.shape, &bound, None)
            .map_err(failed)?;
        let bytes = self.read_back(kernel, &bound).map_err(failed)?;
        let compared = kernel
            .buffers
            .iter()
            .zip(bound.resources)
            .filter(|(p, _)| p.is_compared());
        let t = Instant::now();
        let mut scans = Vec::new();
        let mut buffers = Vec::new();
        for ((plan, resource), b) in compared.zip(&bytes) {
            let len = plan.len_on(&trial.shape).unwrap_or(0);
            scans.push(scan(&plan.layout(), len, b));
            buffers.push(match resource {
                Resource::Buffer(buffer) => Some(buffer),
                _ => None,
            });
        }
        self.phases.add(Phase::Compare, t);
        let held: usize = self
            .references
            .values()
            .map(|r| r.bytes.iter().map(Vec::len).sum::<usize>())
            .sum();
        if held > REFERENCE_CACHE_BYTES {
            self.references.clear();
        }
        let outputs = Arc::new(Reference {
            bytes,
            scans,
            buffers,
        });
        self.references.insert(key, outputs.clone());
        Ok(outputs)
    }

    /// Compares a candidate's outputs with the reference; `context` prefixes the log. A failure
    /// by the size of finite errors alone leaves its figures in `self.miss`. Outputs that passed
    /// on the GPU are judged by its figures; outputs read back by [`compare`], as always.
    fn judge(
        &mut self,
        kernel: &ResolvedKernel,
        trial: &Trial,
        reference: &Reference,
        got: &Outputs,
        context: &str,
        stats: &mut VerifyStats,
    ) -> Step<()> {
        let compared: Vec<_> = kernel.buffers.iter().filter(|p| p.is_compared()).collect();
        let mut degenerate = Vec::new();
        let mut judged = 0;
        let got = match got {
            Outputs::Bytes(bytes) => bytes,
            Outputs::Passed(passed) => {
                for ((plan, scan), passed) in compared.iter().zip(&reference.scans).zip(passed) {
                    match (scan.degenerate(), passed) {
                        (Some(why), _) => {
                            degenerate.push(format!("`{}`: {why}", plan.binding.name))
                        }
                        (None, Some(p)) => {
                            judged += 1;
                            stats.max_rel_l2 = stats.max_rel_l2.max(p.rel_l2);
                            stats.max_rel_elem = stats.max_rel_elem.max(p.max_rel_elem);
                        }
                        (None, None) => unreachable!("a judgeable output passed on the GPU"),
                    }
                }
                return self.judged(trial, judged, &degenerate, stats);
            }
        };
        // The first output out of tolerance, and whether every one that is could pass at some
        // tolerance (and the smallest that accepts them all, with the figures of the worst).
        let mut failed: Option<String> = None;
        let mut needed: Option<f64> = Some(0.0);
        let mut worst: Option<(f64, &str, Comparison)> = None;
        for ((plan, r), c) in compared.iter().zip(&reference.bytes).zip(got) {
            let len = plan.len_on(&trial.shape).unwrap_or(0);
            let cmp: Comparison = self.phases.time(Phase::Compare, || {
                compare(&plan.layout(), len, r, c, kernel.tolerance)
            });
            if let Some(why) = &cmp.degenerate {
                degenerate.push(format!("`{}`: {why}", plan.binding.name));
                continue;
            }
            judged += 1;
            stats.max_rel_l2 = stats.max_rel_l2.max(cmp.rel_l2);
            stats.max_rel_elem = stats.max_rel_elem.max(cmp.max_rel_elem);
            needed = needed.zip(cmp.needed_tolerance()).map(|(a, b)| a.max(b));
            if !cmp.ok(kernel.tolerance) {
                failed.get_or_insert_with(|| {
                    format!(
                        "{context}output `{}` on shape {} seed {}: {}",
                        plan.binding.name,
                        shape_text(&trial.shape),
                        trial.seed,
                        cmp.describe(kernel.tolerance)
                    )
                });
                let need = cmp.needed_tolerance().unwrap_or(f64::INFINITY);
                if worst.as_ref().is_none_or(|(w, _, _)| need > *w) {
                    worst = Some((need, &plan.binding.name, cmp));
                }
            }
        }
        if let Some(log) = failed {
            self.miss = needed
                .zip(worst)
                .map(|(needed, (_, output, cmp))| ToleranceMiss {
                    tolerance: kernel.tolerance,
                    needed,
                    output: output.to_owned(),
                    shape: shape_text(&trial.shape),
                    mismatched: cmp.mismatched,
                    scalars: cmp.scalars,
                    max_rel_elem: cmp.max_rel_elem,
                    rel_l2: cmp.rel_l2,
                    worst: cmp.worst.map(|m| WorstElement {
                        index: m.index,
                        expected: m.expected,
                        actual: m.actual,
                    }),
                });
            return Err((Reason::WrongValues, log));
        }
        self.judged(trial, judged, &degenerate, stats)
    }

    /// The end of [`Self::judge`] once no output failed: a trial with no output that could be
    /// judged is refused, any other counted.
    fn judged(
        &self,
        trial: &Trial,
        judged: usize,
        degenerate: &[String],
        stats: &mut VerifyStats,
    ) -> Step<()> {
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
        let contents = self.trial_contents(kernel, &trial.shape, trial.seed)?;
        let reference = self.reference(kernel, trial, &contents)?;
        let bound = self.bind(kernel, &trial.shape, &contents)?;
        let got =
            self.candidate_outputs(kernel, candidate, &trial.shape, &bound, &reference, None)?;
        self.judge(kernel, trial, &reference, &got, "", stats)
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
        let a = self.trial_contents(kernel, &first.shape, first.seed)?;
        let b = self.trial_contents(kernel, &second.shape, second.seed)?;
        let reference = self.reference(kernel, &second, &b)?;
        let bound = self.bind(kernel, &first.shape, &a)?;
        // The first run's outputs are judged by the trial on fresh buffers; here only what it
        // leaves behind matters, so nothing is read back. A workspace stays too, as the runtime
        // keeps it between an app's dispatches: a variant may not carry results over in it.
        let workspace = candidate.workspace(&self.gpu.device, &first.shape)?;
        self.run(candidate, &first.shape, &bound, workspace.as_ref())?;
        // The new inputs are copied from their masters on the GPU: writing them from the host
        // cost an upload of every input per evaluation (16.7 M floats are 64 MiB).
        let t = Instant::now();
        let mut encoder = self
            .gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        for ((plan, resource), data) in kernel.buffers.iter().zip(&bound.resources).zip(&b) {
            if matches!(plan.role, Role::Input | Role::Inout | Role::Uniform) {
                resource.copy_in(&self.gpu, data, &self.masters, &mut encoder);
            }
        }
        self.gpu.queue.submit([encoder.finish()]);
        self.phases.add(Phase::Upload, t);
        let got = self.candidate_outputs(
            kernel,
            candidate,
            &second.shape,
            &bound,
            &reference,
            workspace.as_ref(),
        )?;
        self.judge(
            kernel,
            &second,
            &reference,
            &got,
            "run again on the same buffers with new inputs (the outputs still held the previous run's results): ",
            stats,
        )
    }

    /// Times baseline and candidate in interleaved pairs on `shape`, after the clock ramp when
    /// the GPU has idled (see [`sustain_before`]); a timing that skipped the ramp and finds the
    /// baseline slower than before (see [`CLOCK_FELL`]) is ramped and taken again.
    fn time_shape(
        &mut self,
        kernel: &ResolvedKernel,
        candidate: &Compiled,
        shape: &Shape,
        plan: &EvalPlan,
    ) -> Step<ShapeTime> {
        let none = [Vec::new(), Vec::new()];
        Ok(self
            .time_shape_from(kernel, candidate, shape, plan, &none)?
            .0)
    }

    /// [`Self::time_shape`], continuing a timing of the same shape that took the `prior`
    /// samples (baseline's, candidate's): the figures are over those and the new ones. Gives the
    /// samples too.
    fn time_shape_from(
        &mut self,
        kernel: &ResolvedKernel,
        candidate: &Compiled,
        shape: &Shape,
        plan: &EvalPlan,
        prior: &[Vec<f64>; 2],
    ) -> Step<(ShapeTime, [Vec<f64>; 2])> {
        let full = sustain_duration(self.gpu.is_cpu());
        let since = self.last_load.map(|t| t.elapsed());
        let sustain = sustain_before(full, since, ramp_idle(), top_up());
        let mut time = self.time_shape_after(kernel, candidate, shape, plan, sustain, prior)?;
        let key = (kernel.content_hash.clone(), shape_text(shape));
        let best = self.baseline_best.get(&key).copied();
        if sustain < full
            && !self.gpu.is_cpu()
            && best.is_some_and(|b| time.0.baseline_ns > b * CLOCK_FELL)
        {
            log::debug!(
                "the baseline took {:.0} ns on {} after {:.0} ms idle, {:.0} ns before: the clock fell, timing again after the ramp",
                time.0.baseline_ns,
                key.1,
                since.unwrap_or_default().as_secs_f64() * 1e3,
                best.unwrap_or_default()
            );
            Diagnostics::from_env().clock_fell(
                since.unwrap_or_default(),
                time.0.baseline_ns,
                best.unwrap_or_default(),
            );
            // The prior samples may have been taken at the fallen clock too: timed anew.
            let none = [Vec::new(), Vec::new()];
            time = self.time_shape_after(kernel, candidate, shape, plan, full, &none)?;
        }
        let best = self.baseline_best.entry(key).or_insert(f64::INFINITY);
        *best = best.min(time.0.baseline_ns);
        Ok(time)
    }

    /// [`Self::time_shape_from`] after `sustain` of load.
    fn time_shape_after(
        &mut self,
        kernel: &ResolvedKernel,
        candidate: &Compiled,
        shape: &Shape,
        plan: &EvalPlan,
        sustain: Duration,
        prior: &[Vec<f64>; 2],
    ) -> Step<(ShapeTime, [Vec<f64>; 2])> {
        let baseline = &self.baselines[&kernel.content_hash];
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
        let diag = Diagnostics::from_env();
        let n_sets = rotation.div_ceil(set_bytes).clamp(2, 16) as usize;
        // Two distinct contents alternate over the buffer sets: what defeats a cache is the
        // addresses, and generating inputs is the slow part on the host.
        let seeds = [0x5EED_0000, 0x5EED_0001];
        let contents = [
            self.trial_contents(kernel, shape, seeds[0])?,
            self.trial_contents(kernel, shape, seeds[1])?,
        ];
        let min_bytes = self.bound_traffic(kernel, shape, &seeds, &contents)?;
        let sets = self.timing_sets(kernel, shape, n_sets, &contents)?;
        let baseline = &self.baselines[&kernel.content_hash];
        let programs = [baseline, candidate];
        let workspaces = [
            baseline.workspace(&self.gpu.device, shape)?,
            candidate.workspace(&self.gpu.device, shape)?,
        ];
        let stamps = self
            .gpu
            .timestamps
            .then(|| Timestamps::new(&self.gpu.device));
        let period = f64::from(self.gpu.queue.get_timestamp_period());
        let mut rng = StdRng::seed_from_u64(plan.order_seed);
        let mut samples: [Vec<f64>; 2] = prior.clone();
        let started = Instant::now();
        // Both programs keep the GPU busy before their timing (see `sustain_load`), unless it
        // has just run without pause (the rest of a screened timing, see `after_gap`).
        let sustain = after_gap(sustain, self.last_load.map(|t| t.elapsed()), top_up());
        let t = Instant::now();
        sustain_load(&self.gpu, sustain, |encoder, reps| {
            for which in [0, 1] {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: None,
                    timestamp_writes: None,
                });
                for _ in 0..reps {
                    programs[which].record(
                        &mut pass,
                        &sets[which][0].bind_groups,
                        workspaces[which].as_ref(),
                        &counts[which],
                    );
                }
            }
        })
        .map_err(|e| (Reason::Runtime, format!("waiting for the GPU failed: {e}")))?;
        self.phases.add(Phase::Sustain, t);
        let t = Instant::now();
        for i in 0..(plan.warmup + plan.samples.max(1)) {
            let first = usize::from(rng.random_bool(0.5));
            for which in [first, 1 - first] {
                let set = i as usize % n_sets;
                let bound = &sets[which][set];
                let t0 = Instant::now();
                self.submit(
                    programs[which],
                    bound,
                    workspaces[which].as_ref(),
                    &counts[which],
                    stamps.as_ref(),
                    &[],
                );
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
                let ns = if which == 1 {
                    ns / self.test_speedup
                } else {
                    ns
                };
                diag.sample(which, set, i, ns, wall.as_nanos(), started.elapsed());
                if i >= plan.warmup {
                    samples[which].push(ns);
                }
            }
        }
        self.phases.add(Phase::Timing, t);
        self.last_load = Some(Instant::now());
        self.keep_timing_sets(kernel, shape, sets, set_bytes);
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
                    Role::Scratch | Role::Uniform | Role::Sampler => 0,
                }
            })
            .sum();
        let flops = kernel
            .flops
            .as_ref()
            .and_then(|f| f.eval(|n| shape.get(n).copied()).ok());
        let time = ShapeTime {
            shape: shape.clone(),
            baseline_ns,
            candidate_ns,
            speedup,
            spread,
            baseline_spread,
            candidate_spread,
            samples: samples[1].len() as u32,
            method: if stamps.is_some() {
                "timestamp-query"
            } else {
                "wall-clock"
            }
            .to_owned(),
            bytes,
            achieved_gbps: bytes as f64 / candidate_ns.max(1.0),
            min_bytes,
            min_gbps: min_bytes as f64 / candidate_ns.max(1.0),
            achieved_gflops: flops.map(|f| f as f64 / candidate_ns.max(1.0)),
        };
        Ok((time, samples))
    }
}

impl Runner {
    /// The timing's buffer sets on `shape`, `n_sets` for each program (baseline first), set `i`
    /// holding `contents[i % 2]`: those of the kernel's previous timing on this shape, with
    /// every resource a run can write restored to its initial contents (poisoned outputs,
    /// inputs of read-write bindings), so a timing starts from the state fresh sets would have
    /// without creating them again; fresh ones the first time.
    fn timing_sets(
        &mut self,
        kernel: &ResolvedKernel,
        shape: &Shape,
        n_sets: usize,
        contents: &[Contents; 2],
    ) -> Step<Vec<Vec<Bound>>> {
        let key = (kernel.content_hash.clone(), shape_text(shape));
        if let Some((_, sets)) = self.resident.remove(&key)
            && sets.iter().all(|s| s.len() == n_sets)
        {
            let t = Instant::now();
            let mut encoder = self
                .gpu
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
            for program_sets in &sets {
                for (i, bound) in program_sets.iter().enumerate() {
                    for ((plan, resource), data) in kernel
                        .buffers
                        .iter()
                        .zip(&bound.resources)
                        .zip(&contents[i % 2])
                    {
                        resource.refill(&self.gpu, plan, data, &self.masters, &mut encoder);
                    }
                }
            }
            self.gpu.queue.submit([encoder.finish()]);
            self.phases.add(Phase::Upload, t);
            return Ok(sets);
        }
        let mut sets = Vec::with_capacity(2);
        for _program in 0..2 {
            let mut program_sets = Vec::with_capacity(n_sets);
            for i in 0..n_sets {
                program_sets.push(self.bind(kernel, shape, &contents[i % 2])?);
            }
            sets.push(program_sets);
        }
        Ok(sets)
    }

    /// Keeps a timing's buffer sets for the kernel's next timing on `shape` (see
    /// [`Self::timing_sets`]), within [`RESIDENT_BYTES`]: the sets of other kernels and shapes
    /// are dropped when these would not fit beside them.
    fn keep_timing_sets(
        &mut self,
        kernel: &ResolvedKernel,
        shape: &Shape,
        sets: Vec<Vec<Bound>>,
        set_bytes: u64,
    ) {
        let bytes = set_bytes * sets.iter().map(|s| s.len() as u64).sum::<u64>();
        if bytes > RESIDENT_BYTES {
            return;
        }
        let held: u64 = self.resident.values().map(|(b, _)| b).sum();
        if held + bytes > RESIDENT_BYTES {
            self.resident.clear();
        }
        let key = (kernel.content_hash.clone(), shape_text(shape));
        self.resident.insert(key, (bytes, sets));
    }

    /// The traffic every correct kernel must move on `shape` with each of the timing input sets
    /// (the smaller of the two): output scalars the baseline changes (see `traffic`).
    fn bound_traffic(
        &mut self,
        kernel: &ResolvedKernel,
        shape: &Shape,
        seeds: &[u64],
        contents: &[Contents],
    ) -> Step<u64> {
        let key = (kernel.content_hash.clone(), shape_text(shape));
        if let Some(&bytes) = self.traffic.get(&key) {
            return Ok(bytes);
        }
        let mut least: Option<u64> = None;
        for (&seed, before) in seeds.iter().zip(contents) {
            let trial = Trial {
                shape: shape.clone(),
                seed,
            };
            let reference = self.reference(kernel, &trial, before)?;
            let compared = kernel
                .buffers
                .iter()
                .zip(before)
                .filter(|(p, _)| p.is_compared());
            let t = Instant::now();
            let mut bytes = 0;
            for ((plan, before), after) in compared.zip(&reference.bytes) {
                let len = plan.len_on(shape).unwrap_or(0);
                bytes += super::traffic::written_bytes(&plan.layout(), len, before, after);
            }
            self.phases.add(Phase::Traffic, t);
            least = Some(least.map_or(bytes, |l| l.min(bytes)));
        }
        let bytes = least.unwrap_or(0);
        self.traffic.insert(key, bytes);
        Ok(bytes)
    }
}

/// Whether the traffic a candidate must move on one shape, over its measured time, beats the
/// copy ceiling by more than [`CAP_MARGIN`].
/// The report of a candidate whose outputs missed the tolerance by a hair: failed, with the
/// comparison's figures and, when timing ran, its timings (the speed the tolerance costs).
fn near_miss_report(
    req: &EvalRequest,
    reason: Reason,
    log: String,
    miss: ToleranceMiss,
    timings: Vec<ShapeTime>,
) -> EvalReport {
    let mut report = EvalReport::failed(&req.candidate.id, reason, log);
    if let Some(f) = &mut report.failure {
        f.miss = Some(miss);
    }
    report.noise = timings.iter().map(|t| t.spread).reduce(f64::max);
    report.timings = timings;
    report
}

fn exceeds(c: &Ceilings, t: &ShapeTime) -> bool {
    t.min_gbps > c.copy_gbps * CAP_MARGIN
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

pub use kf_runtime::verdict::{median, median_and_spread};

/// Levels 0–3 and the pipeline of `candidate`, everything that can be decided without running:
/// the text checked against `kernel`'s interface, the limits of `limits`, and the pipelines built
/// on `device` with `layout` (the kernel's). Touches nothing of the runner, so the candidates of a
/// batch can compile on several threads ([`Runner::prepare`]).
/// Levels 0–3 and the pipelines of `candidate`, built on the kernel's pipeline layout (`layout.0`,
/// of the bind group layouts `layout.1`), or on one with the program's workspace group after them.
fn compile(
    device: &wgpu::Device,
    layout: (&wgpu::PipelineLayout, &[wgpu::BindGroupLayout]),
    limits: &wgpu::Limits,
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
    checked.apply_to(&mut program);
    check_limits(&program, limits).map_err(|m| (Reason::LimitsExceeded, m))?;
    let workspace = workspace_layout(device, &program).map(|(_, l)| l);
    let own = workspace
        .as_ref()
        .map(|w| pipeline_layout(device, &candidate.id, layout.1, Some(w)));
    let pipelines = build_pipelines(
        device,
        own.as_ref().unwrap_or(layout.0),
        &program,
        &candidate.id,
    )
    .map_err(|m| (Reason::Pipeline, m))?;
    Ok(Compiled {
        pipelines,
        program,
        workspace,
    })
}

fn roofline(c: &Ceilings, t: &ShapeTime) -> Roofline {
    Roofline::place(c, t.achieved_gbps, t.achieved_gflops)
}

/// How long a worker may take for `request` before it is killed, given how long the baseline
/// evaluation of the same kernel took.
pub fn default_timeout(baseline_wall: Duration) -> Duration {
    (baseline_wall * 10).clamp(Duration::from_secs(10), Duration::from_secs(300))
}

/// Timing diagnostics, off unless the environment asks: `KERNELFOUNDRY_DIAG=FILE` appends one
/// JSON line per timed dispatch (program, buffer set, sample, timestamp and wall nanoseconds,
/// milliseconds since the timing began), for finding out why an adapter's timings vary (it is how
/// the clock ramp in BENCHMARKS.md was found), and one line per evaluation with where its wall
/// time went ([`Phases`]). It changes nothing a report says.
struct Diagnostics {
    file: Option<std::fs::File>,
}

impl Diagnostics {
    fn from_env() -> Self {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        Diagnostics {
            file: var("KERNELFOUNDRY_DIAG").and_then(|path| {
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .ok()
            }),
        }
    }

    /// Appends one evaluation's phases (see [`Phases`]).
    fn phases(&self, wall_ms: f64, phases: &[(&str, f64)]) {
        if let Some(mut f) = self.file.as_ref() {
            use std::io::Write;
            let fields: Vec<String> = phases
                .iter()
                .map(|(name, ms)| format!("\"{name}\":{ms:.3}"))
                .collect();
            let _ = writeln!(
                f,
                "{{\"wall_ms\":{wall_ms:.3},\"phases\":{{{}}}}}",
                fields.join(",")
            );
        }
    }

    /// Appends how long compiling a batch ahead took ([`Runner::prepare`]), and how many.
    fn prepared(&self, took: Duration, count: usize) {
        if let Some(mut f) = self.file.as_ref() {
            use std::io::Write;
            let _ = writeln!(
                f,
                "{{\"prepare_ms\":{:.3},\"count\":{count}}}",
                took.as_secs_f64() * 1e3
            );
        }
    }

    /// Appends that a timing which skipped the ramp was taken again (see [`CLOCK_FELL`]).
    fn clock_fell(&self, idle: Duration, baseline_ns: f64, best_ns: f64) {
        if let Some(mut f) = self.file.as_ref() {
            use std::io::Write;
            let _ = writeln!(
                f,
                "{{\"clock_fell\":{{\"idle_ms\":{:.3},\"baseline_ns\":{baseline_ns},\"best_ns\":{best_ns}}}}}",
                idle.as_secs_f64() * 1e3
            );
        }
    }

    fn sample(
        &self,
        which: usize,
        set: usize,
        i: u32,
        ns: f64,
        wall_ns: u128,
        since: std::time::Duration,
    ) {
        if let Some(mut f) = self.file.as_ref() {
            use std::io::Write;
            let _ = writeln!(
                f,
                "{{\"program\":{which},\"set\":{set},\"i\":{i},\"ns\":{ns},\"wall_ns\":{wall_ns},\"ms\":{:.3}}}",
                since.as_secs_f64() * 1e3
            );
        }
    }
}

/// Where one evaluation's wall time went, by phase: logged at debug level and, with
/// `KERNELFOUNDRY_DIAG=FILE`, appended to that file as one JSON line per evaluation. Phases are
/// timed at the leaves (generating inputs, creating and filling resources, waiting for the GPU,
/// reading back, comparing), so they never overlap; `other` is the rest of the wall time.
#[derive(Default)]
struct Phases {
    spent: std::cell::Cell<[Duration; PHASES.len()]>,
}

/// The phases, in the order [`Phases`] reports them.
const PHASES: [&str; 10] = [
    "compile",
    "inputs",
    "upload",
    "gpu",
    "readback",
    "compare",
    "gpu_compare",
    "traffic",
    "sustain",
    "timing",
];

#[derive(Clone, Copy)]
enum Phase {
    Compile,
    Inputs,
    Upload,
    Gpu,
    Readback,
    Compare,
    /// The comparison on the GPU ([`gpu_compare`]): its dispatch, the wait and the partials.
    GpuCompare,
    Traffic,
    Sustain,
    Timing,
}

impl Phases {
    /// Adds the time since `since` to `phase`.
    fn add(&self, phase: Phase, since: Instant) {
        let mut spent = self.spent.get();
        spent[phase as usize] += since.elapsed();
        self.spent.set(spent);
    }

    /// Runs `f`, adding its time to `phase`.
    fn time<T>(&self, phase: Phase, f: impl FnOnce() -> T) -> T {
        let t = Instant::now();
        let out = f();
        self.add(phase, t);
        out
    }

    /// The phases so far as `name: milliseconds` pairs, with `other` for the rest of `total`,
    /// and clears them.
    fn take(&self, total: Duration) -> Vec<(&'static str, f64)> {
        let spent = self.spent.take();
        let named: Duration = spent.iter().sum();
        PHASES
            .iter()
            .zip(spent)
            .map(|(name, d)| (*name, d.as_secs_f64() * 1e3))
            .chain([("other", total.saturating_sub(named).as_secs_f64() * 1e3)])
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_add_up_to_the_total() {
        let phases = Phases::default();
        let t = Instant::now();
        phases.time(Phase::Inputs, || {
            std::thread::sleep(Duration::from_millis(2))
        });
        phases.add(Phase::Compare, t);
        // `compare` spans `inputs` too, so the named phases add up to at most twice the elapsed
        // time however long the sleep took on a loaded machine; the total must cover them.
        let total = t.elapsed() * 2 + Duration::from_millis(5);
        let taken = phases.take(total);
        let ms = |name: &str| taken.iter().find(|(n, _)| *n == name).unwrap().1;
        assert!(ms("inputs") >= 2.0 && ms("compare") >= ms("inputs"));
        let sum: f64 = taken.iter().map(|(_, ms)| ms).sum();
        assert!((sum - total.as_secs_f64() * 1e3).abs() < 1e-6, "{taken:?}");
        assert!(
            phases
                .take(total)
                .iter()
                .all(|(n, ms)| *ms == 0.0 || *n == "other")
        );
    }

    #[test]
    fn the_ramp_is_paid_only_after_the_gpu_idled() {
        let full = Duration::from_millis(400);
        let idle = Duration::from_millis(250);
        let top_up = Duration::from_millis(16);
        // Never loaded in this worker, or idle longer than the threshold: the full ramp.
        assert_eq!(sustain_before(full, None, idle, top_up), full);
        assert_eq!(
            sustain_before(full, Some(idle + Duration::from_millis(1)), idle, top_up),
            full
        );
        assert_eq!(
            sustain_before(full, Some(Duration::from_secs(60)), idle, top_up),
            full
        );
        // Right after a timing or a ramp, up to the threshold: only the top-up.
        assert_eq!(
            sustain_before(full, Some(Duration::ZERO), idle, top_up),
            top_up
        );
        assert_eq!(sustain_before(full, Some(idle), idle, top_up), top_up);
        // The top-up never exceeds the full ramp; a CPU adapter (no ramp) gets neither.
        let short = Duration::from_millis(5);
        assert_eq!(
            sustain_before(short, Some(Duration::ZERO), idle, top_up),
            short
        );
        assert_eq!(
            sustain_before(Duration::ZERO, Some(Duration::ZERO), idle, top_up),
            Duration::ZERO
        );
        assert_eq!(
            sustain_before(Duration::ZERO, None, idle, top_up),
            Duration::ZERO
        );
    }

    /// A kernel, a faster-or-not variant of it, and a variant that does not parse, each as
    /// a request with the search's plan.
    fn saxpy_requests() -> Vec<EvalRequest> {
        const WGSL: &str = r#"
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < arrayLength(&y)) { y[g.x] = 2.0 * x[g.x] + y[g.x]; }
}
"#;
        let attr = r#"source = "", sizes(n = 4096), bind(x = input(n), y = inout(n))"#;
        let (spec, _) = kf_runtime::syntax::parse_spec(attr.parse().unwrap()).unwrap();
        let kernel = kf_runtime::resolve::resolve("SAXPY", &spec, WGSL, "k.wgsl").unwrap();
        let variant = |wgsl: String, origin: &str| {
            let mut program = kernel.baseline.clone();
            program.wgsl = wgsl.into();
            Candidate::new(program, origin)
        };
        let wide = variant(
            WGSL.replace("@workgroup_size(64)", "@workgroup_size(128)"),
            "wide",
        );
        let wrong = variant(WGSL.replace("2.0 * x", "3.0 * x"), "wrong");
        let broken = variant(WGSL.replace("fn main", "fn main("), "broken");
        let plan = crate::search::plan::search_plan(&kernel, 3, 7);
        [wide, wrong, broken]
            .into_iter()
            .map(|candidate| EvalRequest {
                kernel: kernel.clone(),
                candidate,
                plan: plan.clone(),
                ceilings: None,
                deadline_s: None,
            })
            .collect()
    }

    #[test]
    fn a_batch_to_prepare_crosses_the_worker_protocol() {
        use crate::evaluate::{Request, Response};
        let requests = saxpy_requests();
        let line = serde_json::to_string(&Request::Prepare {
            requests: requests.clone(),
        })
        .expect("serializes");
        match serde_json::from_str::<Request>(&line).expect("parses") {
            Request::Prepare { requests: back } => {
                let ids = |r: &[EvalRequest]| -> Vec<String> {
                    r.iter().map(|r| r.candidate.id.clone()).collect()
                };
                assert_eq!(ids(&back), ids(&requests));
            }
            other => panic!("{other:?}"),
        }
        let line = serde_json::to_string(&Response::Prepared { count: 3 }).expect("serializes");
        assert!(matches!(
            serde_json::from_str::<Response>(&line).expect("parses"),
            Response::Prepared { count: 3 }
        ));
    }

    #[test]
    fn compiling_a_batch_ahead_changes_no_verdict() {
        let open = || {
            Runner::new(
                crate::gpu::open(&crate::evaluate::AdapterSelector(None))
                    .expect("no adapter: install lavapipe (mesa-vulkan-drivers)"),
            )
        };
        let requests = saxpy_requests();
        let verdicts = |runner: &mut Runner| -> Vec<(bool, Option<Reason>)> {
            requests
                .iter()
                .map(|r| {
                    let report = runner.evaluate(r);
                    (report.is_correct(), report.failure.map(|f| f.reason))
                })
                .collect()
        };
        let mut plain = open();
        let expected = verdicts(&mut plain);
        assert_eq!(
            expected,
            vec![
                (true, None),
                (false, Some(Reason::WrongValues)),
                (false, Some(Reason::Parse))
            ]
        );
        let mut ahead = open();
        assert_eq!(
            ahead.prepare(&requests),
            3,
            "every candidate compiled ahead"
        );
        assert_eq!(ahead.prepared.len(), 3);
        assert_eq!(verdicts(&mut ahead), expected);
        // Each evaluation took its prepared pipelines.
        assert!(ahead.prepared.is_empty());
        // A prepared entry is used only for the program it was compiled from.
        ahead.prepare(&requests[..1]);
        let mut changed = requests[0].clone();
        changed.candidate.program.wgsl = requests[1].candidate.program.wgsl.clone();
        let report = ahead.evaluate(&changed);
        assert_eq!(
            report.failure.map(|f| f.reason),
            Some(Reason::WrongValues),
            "the program evaluated, not the one prepared under its id"
        );
    }

    #[test]
    fn a_sustained_load_ends_near_its_duration() {
        // 4 repetitions took 2 ms: a whole 8 ms batch is 16 of them, but with 3 ms left only 6.
        assert_eq!(next_reps(4, 0.002, 0.008), 16);
        assert_eq!(next_reps(4, 0.002, 0.003), 6);
        // Nothing left, or one repetition longer than what is left: still one; never past 4096.
        assert_eq!(next_reps(4, 0.002, 0.0), 1);
        assert_eq!(next_reps(1, 0.010, 0.003), 1);
        assert_eq!(next_reps(4096, 0.001, 0.008), 4096);
    }

    #[test]
    fn a_gpu_that_ran_without_pause_gets_no_top_up() {
        let full = Duration::from_millis(400);
        let top_up = Duration::from_millis(16);
        let just = Some(Duration::from_micros(300));
        // The rest of a screened timing, right after its cheap samples: no load.
        assert_eq!(after_gap(top_up, just, top_up), Duration::ZERO);
        // A gap at the threshold or longer, or no timing yet: the top-up stays.
        assert_eq!(after_gap(top_up, Some(CONTINUOUS), top_up), top_up);
        assert_eq!(
            after_gap(top_up, Some(Duration::from_millis(30)), top_up),
            top_up
        );
        assert_eq!(after_gap(top_up, None, top_up), top_up);
        // A full ramp is never dropped.
        assert_eq!(after_gap(full, just, top_up), full);
        assert_eq!(after_gap(Duration::ZERO, just, top_up), Duration::ZERO);
    }

    #[test]
    fn screening_drops_only_candidates_clearly_slower_than_the_bar() {
        // Far below the bar, with little noise: dropped.
        assert!(screened_out(&[0.5], 0.01, 1.0));
        assert!(screened_out(&[0.6, 0.7], 0.02, 1.2));
        // Within the margin of the bar, or with noise that could reach it: kept for the full
        // timing.
        assert!(!screened_out(&[0.95], 0.0, 1.0));
        assert!(!screened_out(&[0.8], 0.1, 1.0));
        assert!(!screened_out(&[1.1], 0.0, 1.0));
        // The geometric mean over shapes decides: one fast shape can carry the candidate.
        assert!(!screened_out(&[0.5, 2.5], 0.0, 1.0));
        // Nothing to judge by: never dropped.
        assert!(!screened_out(&[], 0.0, 1.0));
        assert!(!screened_out(&[f64::NAN], 0.0, 1.0));
        assert!(!screened_out(&[0.5], f64::INFINITY, 1.0));
        assert!(!screened_out(&[0.5], 0.0, f64::NAN));
    }

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

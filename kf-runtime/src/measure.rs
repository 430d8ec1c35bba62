//! Selection by measurement, for a GPU nobody tuned on (opt-in: `LoadMode::Measure`).
//!
//! When no embedded entry matches the adapter exactly or by device, the variants tuned on other
//! GPUs may still be faster here than the baseline, or slower: only running them tells. On the
//! first start this module builds each of them, times them against the baseline in interleaved
//! rounds within a small budget per kernel (`decide`), checks the fastest one's outputs against
//! the baseline's on the plan's small check shape, and uses it only if it beats the baseline by
//! more than the measured noise and computes the same values. The choice (the baseline
//! included) is remembered in a per-user file (`remember`) keyed by adapter key and content
//! hash, so later starts read it and measure nothing.
//!
//! The budget bounds the timing rounds; building the candidates' pipelines, creating the input
//! buffers and the one check run come on top. Inputs larger than [`MAX_MEASURE_BYTES`] on the
//! timing shape are timed on the check shape instead.
//!
//! Invariant: measurement never fails a load and never panics: every problem (no plan, a texture
//! binding, a variant that does not build, an error while running, a mismatch, too few rounds)
//! becomes the logged reason the baseline runs.

mod decide;
mod gpu;
mod remember;
mod values;

pub use decide::{Bench, Decision, MAX_ROUNDS, MIN_NOISE, MIN_ROUNDS, decide, median};
pub use remember::{Choice, USER_CACHE_ENV};

use crate::adapter::AdapterIdentity;
use crate::cache::Outcome;
use crate::kernel::{EmbeddedVariant, Kernel, MatchKind};
use crate::load::{build_pipeline, check_limits};
use crate::plan::MeasurePlan;
use gpu::{GpuBench, Runnable, counts};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The default timing budget per kernel.
pub const DEFAULT_BUDGET: Duration = Duration::from_millis(50);

/// Inputs larger than this on the timing shape are timed on the check shape instead.
pub const MAX_MEASURE_BYTES: u64 = 64 << 20;

/// Options of selection by measurement: the queue to run on, the budget, the remembered-choices
/// file.
#[derive(Clone, Copy, Debug)]
pub struct Measure<'a> {
    pub(crate) queue: &'a wgpu::Queue,
    pub(crate) budget: Duration,
    pub(crate) user_cache: Option<&'a Path>,
}

impl<'a> Measure<'a> {
    /// Measure on `queue` (the device's queue) with [`DEFAULT_BUDGET`] and the default
    /// per-user file (see [`USER_CACHE_ENV`]).
    pub fn new(queue: &'a wgpu::Queue) -> Self {
        Measure {
            queue,
            budget: DEFAULT_BUDGET,
            user_cache: None,
        }
    }

    /// The timing budget per kernel.
    pub fn budget(mut self, budget: Duration) -> Self {
        self.budget = budget;
        self
    }

    /// Remember choices in `path` instead of the per-user default.
    pub fn user_cache(mut self, path: &'a Path) -> Self {
        self.user_cache = Some(path);
        self
    }
}

/// What measurement did on this start (absent when the choice was remembered or not measured).
#[derive(Clone, Debug, PartialEq)]
pub struct Measurement {
    /// The programs timed: `baseline`, then each variant id.
    pub programs: Vec<String>,
    /// Each program's median time over the timed rounds, in nanoseconds.
    pub median_ns: Vec<f64>,
    /// Timed rounds (the warm-up not counted).
    pub rounds: u32,
    /// Program runs, the warm-up included.
    pub runs: u32,
    /// The fastest variant's speedup over the baseline.
    pub speedup: f64,
    /// The noise that speedup had to clear.
    pub noise: f64,
}

/// What [`choose`] decided.
pub(crate) enum Chosen {
    /// Run this variant with this pipeline.
    Variant {
        variant: &'static EmbeddedVariant,
        pipeline: wgpu::ComputePipeline,
        matched: MatchKind,
        reason: String,
        measurement: Option<Measurement>,
    },
    /// Run the baseline (its pipeline, when measurement already built it).
    Baseline {
        pipeline: Option<wgpu::ComputePipeline>,
        matched: MatchKind,
        reason: String,
        measurement: Option<Measurement>,
    },
}

fn baseline(matched: MatchKind, reason: String) -> Chosen {
    Chosen::Baseline {
        pipeline: None,
        matched,
        reason,
        measurement: None,
    }
}

/// The variants measurement chooses among: tuned entries with a program, one per variant id,
/// within the device's limits.
fn candidates(kernel: &'static Kernel, limits: &wgpu::Limits) -> Vec<&'static EmbeddedVariant> {
    let mut out: Vec<&'static EmbeddedVariant> = Vec::new();
    for v in kernel.variants {
        let Some(program) = &v.program else { continue };
        if v.outcome != Outcome::Tuned || out.iter().any(|o| o.id == v.id) {
            continue;
        }
        match check_limits(program, limits) {
            Ok(()) => out.push(v),
            Err(why) => log::debug!(
                "kernel {}: variant {} (tuned on {}) is not measured: {why}",
                kernel.name,
                v.id,
                v.adapter_name
            ),
        }
    }
    out
}

/// Chooses by measurement, or by a remembered measurement; `None` when there is nothing to
/// measure (no variant tuned elsewhere fits this device).
pub(crate) fn choose(
    kernel: &'static Kernel,
    device: &wgpu::Device,
    identity: &AdapterIdentity,
    options: &Measure<'_>,
    layouts: &[wgpu::BindGroupLayout],
    pipeline_layout: &wgpu::PipelineLayout,
) -> Option<Chosen> {
    let limits = device.limits();
    let candidates = candidates(kernel, &limits);
    if candidates.is_empty() {
        return None;
    }
    if kernel.baseline.is_sequence()
        || candidates.iter().any(|v| {
            v.program
                .as_ref()
                .is_some_and(|p| p.is_sequence() || !p.workspace.is_empty())
        })
    {
        // The bench times and checks one launch per program; a sequence would be judged by its
        // first launch alone.
        log::info!(
            "kernel {}: selection by measurement does not handle launch sequences; choosing among the embedded entries as `Kernel::load` does",
            kernel.name
        );
        return None;
    }
    let mut ids: Vec<String> = candidates.iter().map(|v| v.id.to_owned()).collect();
    ids.sort();
    let budget_ms = options.budget.as_secs_f64() * 1e3;
    let path: Option<PathBuf> = options
        .user_cache
        .map(Path::to_path_buf)
        .or_else(remember::default_path);
    let key = remember::key(identity.key().as_str(), kernel.content_hash);
    if let Some(path) = &path {
        let (found, warning) = remember::lookup(path, &key);
        if let Some(w) = warning {
            log::warn!("kernel {}: {w}", kernel.name);
        }
        match found {
            Some(choice) if choice.candidates == ids && choice.budget_ms == budget_ms => {
                return Some(remembered(
                    kernel,
                    device,
                    pipeline_layout,
                    &candidates,
                    &choice,
                    path,
                ));
            }
            Some(_) => log::info!(
                "kernel {}: the remembered choice in {} was made among other variants or with another budget; measuring again",
                kernel.name,
                path.display()
            ),
            None => {}
        }
    }
    let (chosen, conclusive) = measure(
        kernel,
        device,
        options,
        layouts,
        pipeline_layout,
        &candidates,
    );
    if conclusive && let Some(path) = &path {
        let (variant, reason, speedup) = match &chosen {
            Chosen::Variant {
                variant,
                reason,
                measurement,
                ..
            } => (
                variant.id.to_owned(),
                reason.clone(),
                measurement.as_ref().map_or(1.0, |m| m.speedup),
            ),
            Chosen::Baseline {
                reason,
                measurement,
                ..
            } => (
                "baseline".to_owned(),
                reason.clone(),
                measurement.as_ref().map_or(1.0, |m| m.speedup),
            ),
        };
        let choice = Choice {
            kernel: kernel.name.to_owned(),
            adapter: identity.name.clone(),
            variant,
            candidates: ids,
            budget_ms,
            speedup,
            reason,
            measured_at: remember::now_secs(),
        };
        if let Err(e) = remember::remember(path, &key, choice) {
            log::warn!(
                "kernel {}: cannot remember the choice in {}: {e}",
                kernel.name,
                path.display()
            );
        }
    }
    Some(chosen)
}

/// Uses a remembered choice, without measuring.
fn remembered(
    kernel: &'static Kernel,
    device: &wgpu::Device,
    pipeline_layout: &wgpu::PipelineLayout,
    candidates: &[&'static EmbeddedVariant],
    choice: &Choice,
    path: &Path,
) -> Chosen {
    let reason = format!(
        "remembered from an earlier measurement ({}): {}",
        path.display(),
        choice.reason
    );
    if choice.variant == "baseline" {
        return baseline(MatchKind::Remembered, reason);
    }
    let Some(variant) = candidates.iter().find(|v| v.id == choice.variant) else {
        return baseline(
            MatchKind::Remembered,
            format!(
                "the remembered variant {} is not embedded; using the baseline",
                choice.variant
            ),
        );
    };
    let program = variant.program.as_ref().expect("candidates have programs");
    match build_pipeline(device, pipeline_layout, program, kernel.name) {
        Ok(pipeline) => Chosen::Variant {
            variant,
            pipeline,
            matched: MatchKind::Remembered,
            reason,
            measurement: None,
        },
        Err(e) => baseline(
            MatchKind::Remembered,
            format!(
                "the remembered variant {} failed to build, using the baseline: {e}",
                variant.id
            ),
        ),
    }
}

/// Measures `candidates` against the baseline; also says whether the decision is worth
/// remembering.
fn measure(
    kernel: &'static Kernel,
    device: &wgpu::Device,
    options: &Measure<'_>,
    layouts: &[wgpu::BindGroupLayout],
    pipeline_layout: &wgpu::PipelineLayout,
    candidates: &[&'static EmbeddedVariant],
) -> (Chosen, bool) {
    let not_measured = |why: String| {
        (
            baseline(
                MatchKind::None,
                format!("cannot measure the variants tuned elsewhere, using the baseline: {why}"),
            ),
            false,
        )
    };
    let mut plan = match MeasurePlan::parse(kernel.measure_plan) {
        Ok(plan) => plan,
        Err(e) => return not_measured(e.to_string()),
    };
    let too_big = |shape| plan.total_bytes(shape).is_ok_and(|b| b > MAX_MEASURE_BYTES);
    if too_big(&plan.time_shape) {
        if too_big(&plan.check_shape) {
            return not_measured(format!(
                "its inputs exceed {} MiB on every shape the plan has",
                MAX_MEASURE_BYTES >> 20
            ));
        }
        plan.time_shape = plan.check_shape.clone();
    }
    let max = device.limits().max_compute_workgroups_per_dimension;
    let runnable = |program: &'static crate::Program| -> Result<Runnable, String> {
        Ok(Runnable {
            time_counts: counts(program, &plan.time_shape, max)?,
            check_counts: counts(program, &plan.check_shape, max)?,
            pipeline: build_pipeline(device, pipeline_layout, program, kernel.name)?,
        })
    };
    let mut programs = match runnable(&kernel.baseline) {
        Ok(r) => vec![r],
        Err(e) => return not_measured(format!("the baseline: {e}")),
    };
    let mut timed: Vec<&'static EmbeddedVariant> = Vec::new();
    for v in candidates {
        match runnable(v.program.as_ref().expect("candidates have programs")) {
            Ok(r) => {
                programs.push(r);
                timed.push(v);
            }
            Err(e) => log::info!(
                "kernel {}: variant {} (tuned on {}) does not run here: {e}",
                kernel.name,
                v.id,
                v.adapter_name
            ),
        }
    }
    if timed.is_empty() {
        return (
            baseline(
                MatchKind::Measured,
                format!(
                    "none of the {} variants tuned elsewhere builds on this device",
                    candidates.len()
                ),
            ),
            true,
        );
    }
    let n = programs.len();
    let mut bench = match GpuBench::new(device, options.queue, &plan, layouts, programs) {
        Ok(b) => b,
        Err(e) => return not_measured(e),
    };
    let start = Instant::now();
    let d = decide(&mut bench, n, options.budget, || start.elapsed());
    let measurement = Measurement {
        programs: std::iter::once("baseline".to_owned())
            .chain(timed.iter().map(|v| v.id.to_owned()))
            .collect(),
        median_ns: d.median_ns.clone(),
        rounds: d.rounds,
        runs: d.runs,
        speedup: d.speedup,
        noise: d.noise,
    };
    let mut pipelines: Vec<wgpu::ComputePipeline> =
        bench.programs.into_iter().map(|r| r.pipeline).collect();
    let chosen = match d.pick {
        Some(c) => Chosen::Variant {
            variant: timed[c - 1],
            pipeline: pipelines.swap_remove(c),
            matched: MatchKind::Measured,
            reason: format!(
                "{} (variant tuned on {})",
                d.reason,
                timed[c - 1].adapter_name
            ),
            measurement: Some(measurement),
        },
        None => Chosen::Baseline {
            pipeline: Some(pipelines.swap_remove(0)),
            matched: MatchKind::Measured,
            reason: d.reason,
            measurement: Some(measurement),
        },
    };
    (chosen, d.conclusive)
}

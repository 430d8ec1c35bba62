//! The evaluator: how a candidate kernel is compiled, verified against the baseline, and timed.
//!
//! Everything that crosses the worker boundary is defined here as plain serializable data:
//! [`EvalRequest`] in, [`EvalReport`] out. The search never touches the GPU itself; it asks an
//! [`Evaluator`] (today a local worker process, later possibly a remote one) and reads the report.
//!
//! Candidates are untrusted code. The ladder of [`Reason`]s is the fitness ladder of the paper:
//! 0 no code / parse, 1 validation, 2 pipeline / limits / runtime / timeout, 3 interface or shape
//! mismatch, 4 wrong values, 5 correct (score 5 + speedup).
//!
//! Invariant: a report with level 5 means every check in [`CHECKS`] ran and passed on this
//! adapter; anything that could not be checked is a failure, never a pass.

pub mod compare;
pub mod inputs;
pub mod probe;
pub mod runner;
pub mod worker;

use crate::gpu::AdapterSelector;
use kf_runtime::Program;
use kf_runtime::resolve::ResolvedKernel;
use kf_runtime::spec::Shape;
use serde::{Deserialize, Serialize};
use std::fmt;

pub use probe::Ceilings;

/// The checks every level-5 verdict has passed.
pub const CHECKS: &[&str] = &[
    "interface-equals-baseline",
    "limits-checked",
    "fresh-buffers-per-trial",
    "poisoned-outputs",
    "fresh-inputs-per-seed",
    "stale-output-rerun",
    "unseen-verification-shapes",
    "magnitude-scaled-tolerance",
    "nan-inf-must-match",
    "degenerate-reference-refused",
    "interleaved-random-order-timing",
    "reverify-after-timing",
    "roofline-cap",
];

/// A kernel program proposed as a faster equivalent of the baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// Stable id (see `kf_runtime::hash::variant_id`).
    pub id: String,
    /// How it was produced, e.g. `param KF_WG_X=256` or `file fast.wgsl`.
    pub origin: String,
    /// The program. Its `workgroup_size` is recomputed by the evaluator from the WGSL and constants.
    pub program: Program,
}

/// One verification run: a shape and an input seed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    /// Sizes.
    pub shape: Shape,
    /// Input seed.
    pub seed: u64,
}

/// What to run for one evaluation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EvalPlan {
    /// Verification trials before timing.
    pub verify: Vec<Trial>,
    /// Shapes to time on (empty: verify only).
    pub time_shapes: Vec<Shape>,
    /// Untimed runs of each program before sampling.
    pub warmup: u32,
    /// Timed runs of each program per shape.
    pub samples: u32,
    /// A trial run after timing, with inputs never used before.
    pub reverify: Option<Trial>,
    /// Seeds the random interleaving order.
    pub order_seed: u64,
}

/// One evaluation: the kernel (its baseline is the reference) and the candidate.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EvalRequest {
    /// The kernel.
    pub kernel: ResolvedKernel,
    /// The candidate.
    pub candidate: Candidate,
    /// What to run.
    pub plan: EvalPlan,
    /// The adapter's measured ceilings, for the roofline cap and verdict.
    pub ceilings: Option<Ceilings>,
}

/// Why a candidate failed, each at its rung of the fitness ladder.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Reason {
    /// Empty source.
    NoCode,
    /// The WGSL does not parse.
    Parse,
    /// The WGSL parses but naga rejects it.
    Validation,
    /// Workgroup size or workgroup memory beyond the adapter's limits.
    LimitsExceeded,
    /// wgpu refused the shader module or pipeline.
    Pipeline,
    /// The dispatch rule gives counts the adapter cannot launch.
    Dispatch,
    /// An error was raised while running.
    Runtime,
    /// The evaluation ran past its time limit; the worker was killed.
    Timeout,
    /// The worker process died.
    Crash,
    /// The device was lost.
    DeviceLost,
    /// Measured bandwidth above the adapter's copy ceiling: a measurement error or a cheat.
    ExceedsRoofline,
    /// No compute entry point of the baseline's name.
    EntryPoint,
    /// Bindings, types or access modes differ from the baseline's.
    InterfaceMismatch,
    /// Outputs differ from the baseline's.
    WrongValues,
    /// Outputs were right before timing and wrong after it.
    ChangedAfterTiming,
    /// The baseline's own output is constant or zero here, so nothing can be judged.
    DegenerateReference,
}

impl Reason {
    /// The ladder level of a failure with this reason.
    pub fn level(self) -> u8 {
        match self {
            Reason::NoCode | Reason::Parse => 0,
            Reason::Validation => 1,
            Reason::LimitsExceeded
            | Reason::Pipeline
            | Reason::Dispatch
            | Reason::Runtime
            | Reason::Timeout
            | Reason::Crash
            | Reason::DeviceLost
            | Reason::ExceedsRoofline => 2,
            Reason::EntryPoint | Reason::InterfaceMismatch => 3,
            Reason::WrongValues | Reason::ChangedAfterTiming | Reason::DegenerateReference => 4,
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = serde_json::to_value(self).ok();
        f.write_str(s.as_ref().and_then(|v| v.as_str()).unwrap_or("unknown"))
    }
}

/// A failed evaluation's reason and distilled log (what a later prompt shows an LLM).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    /// Why.
    pub reason: Reason,
    /// A short log: naga's message with line, the failing shape and seed, the first mismatches.
    pub log: String,
}

impl Failure {
    /// A failure with a log truncated to a readable size.
    pub fn new(reason: Reason, log: impl Into<String>) -> Self {
        let mut log: String = log.into();
        if log.len() > 4000 {
            let mut cut = 4000;
            while !log.is_char_boundary(cut) {
                cut -= 1;
            }
            log.truncate(cut);
            log.push_str("\n… (truncated)");
        }
        Failure { reason, log }
    }
}

/// Where a candidate landed: level 0–5, and for level 5 its speedup.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fitness {
    /// Ladder level.
    pub level: u8,
    /// Speedup over the baseline (geometric mean over time shapes), for level 5 with timing.
    pub speedup: Option<f64>,
    /// `level + speedup` for correct candidates, `level` otherwise.
    pub score: f64,
}

impl Fitness {
    /// The fitness of a failure.
    pub fn failed(reason: Reason) -> Self {
        let level = reason.level();
        Fitness {
            level,
            speedup: None,
            score: f64::from(level),
        }
    }

    /// The fitness of a correct candidate.
    pub fn correct(speedup: Option<f64>) -> Self {
        Fitness {
            level: 5,
            speedup,
            score: 5.0 + speedup.unwrap_or(0.0),
        }
    }
}

/// Baseline and candidate timings on one shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShapeTime {
    /// The shape.
    pub shape: Shape,
    /// Median baseline time, ns.
    pub baseline_ns: f64,
    /// Median candidate time, ns.
    pub candidate_ns: f64,
    /// Median of the per-pair ratios baseline/candidate.
    pub speedup: f64,
    /// Half the interquartile range of the per-pair ratios, relative to their median.
    pub spread: f64,
    /// Timed samples of each.
    pub samples: u32,
    /// `timestamp-query` or `wall-clock`.
    pub method: String,
    /// Bytes the spec says one run must move (inputs read, outputs written).
    pub bytes: u64,
    /// `bytes / candidate_ns`.
    pub achieved_gbps: f64,
    /// From the spec's `flops`, when given.
    pub achieved_gflops: Option<f64>,
}

/// Where the candidate sits against the adapter's measured ceilings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Roofline {
    /// Copy bandwidth ceiling, GB/s.
    pub ceiling_gbps: f64,
    /// f32 FMA ceiling, GFLOP/s.
    pub ceiling_gflops: f64,
    /// Achieved, GB/s (first time shape).
    pub achieved_gbps: f64,
    /// Achieved, GFLOP/s, when the spec gives `flops`.
    pub achieved_gflops: Option<f64>,
    /// Achieved over the ceiling of the bound resource.
    pub fraction: f64,
    /// `memory` or `compute`.
    pub bound: String,
}

/// Verification statistics over all trials.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct VerifyStats {
    /// Trials compared.
    pub trials: u32,
    /// Largest relative L2 error.
    pub max_rel_l2: f64,
    /// Largest elementwise error relative to the output's scale.
    pub max_rel_elem: f64,
    /// Checks that ran.
    pub checks: Vec<String>,
}

/// The result of one evaluation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EvalReport {
    /// The candidate's id.
    pub candidate: String,
    /// Where it landed.
    pub fitness: Fitness,
    /// Why it failed, if it did.
    pub failure: Option<Failure>,
    /// The workgroup size the evaluator found (WGSL + constants).
    pub workgroup_size: Option<[u32; 3]>,
    /// Workgroup memory the evaluator found.
    pub workgroup_storage_bytes: Option<u32>,
    /// Timings per shape.
    pub timings: Vec<ShapeTime>,
    /// Relative noise: the largest per-shape spread.
    pub noise: Option<f64>,
    /// Verification statistics.
    pub verification: VerifyStats,
    /// The roofline verdict, when ceilings were given.
    pub roofline: Option<Roofline>,
    /// Wall time of the evaluation, ms.
    pub wall_ms: f64,
}

impl EvalReport {
    /// A report for a candidate that failed before any measurement.
    pub fn failed(candidate: &str, reason: Reason, log: impl Into<String>) -> Self {
        EvalReport {
            candidate: candidate.to_owned(),
            fitness: Fitness::failed(reason),
            failure: Some(Failure::new(reason, log)),
            workgroup_size: None,
            workgroup_storage_bytes: None,
            timings: Vec::new(),
            noise: None,
            verification: VerifyStats::default(),
            roofline: None,
            wall_ms: 0.0,
        }
    }

    /// Whether the candidate is correct (level 5).
    pub fn is_correct(&self) -> bool {
        self.fitness.level == 5
    }
}

/// Worker protocol: one JSON object per line on the worker's stdin.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum Request {
    /// Open the adapter; answered with [`Response::Opened`].
    Open {
        /// Which adapter.
        adapter: AdapterSelector,
    },
    /// Evaluate a candidate; answered with [`Response::Evaluated`].
    Evaluate(Box<EvalRequest>),
    /// Measure the adapter's ceilings; answered with [`Response::Probed`].
    Probe,
}

/// Worker protocol: one JSON object per line on the worker's stdout.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum Response {
    /// The adapter is open.
    Opened {
        /// Which adapter.
        adapter: crate::gpu::AdapterReport,
        /// Whether timestamp queries are available.
        timestamps: bool,
    },
    /// An evaluation finished.
    Evaluated(Box<EvalReport>),
    /// Ceilings measured.
    Probed(Ceilings),
    /// The request could not be served.
    Failed {
        /// Why.
        message: String,
    },
}

/// Something that evaluates candidates: a local worker process today, a remote one later.
pub trait Evaluator {
    /// The adapter the evaluator runs on.
    fn adapter(&self) -> &crate::gpu::AdapterReport;
    /// Evaluates one candidate. Never fails: crashes and timeouts are reports at level 2.
    fn evaluate(&mut self, request: &EvalRequest) -> EvalReport;
    /// Measures the adapter's ceilings.
    fn probe(&mut self) -> Result<Ceilings, String>;
}

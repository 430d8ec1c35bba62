//! The evaluation protocol as plain data: what crosses the boundary between the search and an
//! evaluator, whether that evaluator is the local worker process or, later, a worker on another
//! machine.
//!
//! [`EvalRequest`] goes in, [`EvalReport`] comes out; [`Request`]/[`Response`] frame them on the
//! worker's stdin/stdout, starting with a handshake that carries [`PROTOCOL_VERSION`]. The adapter
//! report and the measured ceilings live here too, because both sides exchange them.
//!
//! Invariant: this module knows nothing of wgpu or of how an evaluation runs: it imports neither
//! `gpu` nor the runner nor the probe, so any process that can speak JSON can serve it.

use kf_runtime::resolve::ResolvedKernel;
use kf_runtime::spec::Shape;
use kf_runtime::{AdapterIdentity, AdapterKey, Program};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// Version of the worker protocol; the handshake refuses a worker that speaks another one.
pub const PROTOCOL_VERSION: u32 = 3;

/// Which adapter to use: `None` picks wgpu's default high-performance adapter.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdapterSelector(pub Option<String>);

/// A summary of one adapter, for listing and for cache entries.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AdapterReport {
    /// Position in wgpu's enumeration.
    pub index: usize,
    /// The adapter key.
    pub key: AdapterKey,
    /// Name, vendor, device, backend, driver.
    #[serde(flatten)]
    pub identity: AdapterIdentity,
    /// Compute-relevant limits.
    pub limits: BTreeMap<String, u64>,
    /// Feature names.
    pub features: Vec<String>,
}

/// Format version of a ceilings file.
pub const CEILINGS_FORMAT_VERSION: u32 = 1;

/// Copy bandwidth at one working-set size.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CopyPoint {
    /// Bytes copied (read + written = 2 × this).
    pub bytes: u64,
    /// GB/s counting bytes read plus bytes written.
    pub gbps: f64,
    /// Median time, ns.
    pub median_ns: f64,
}

/// An adapter's measured ceilings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ceilings {
    /// [`CEILINGS_FORMAT_VERSION`].
    pub format_version: u32,
    /// kf-build version that measured.
    pub tool_version: String,
    /// The adapter.
    pub adapter: AdapterReport,
    /// The largest copy bandwidth over [`Ceilings::copy_by_size`], GB/s.
    pub copy_gbps: f64,
    /// Copy bandwidth per working-set size.
    pub copy_by_size: Vec<CopyPoint>,
    /// f32 FMA rate, GFLOP/s (one FMA = 2 FLOP).
    pub fma_gflops: f64,
    /// `timestamp-query` or `wall-clock`.
    pub method: String,
    /// Timed samples per point (median taken).
    pub samples: u32,
    /// When the newest measurement merged into this record was taken, seconds since the Unix
    /// epoch (0 in files written before it was recorded: such files count as stale).
    #[serde(default)]
    pub measured_at: u64,
    /// Probes merged into this record (each the best of several rounds).
    #[serde(default = "one")]
    pub probes: u32,
}

fn one() -> u32 {
    1
}

/// The checks a level-5 verdict can pass. A report lists those that really ran: the roofline cap
/// needs the adapter's ceilings, the timing checks a timed plan, [`UNSEEN_SHAPES`] a verify shape
/// that differs from every tune shape.
pub const CHECKS: &[&str] = &[
    "interface-equals-baseline",
    "limits-checked",
    "fresh-buffers-per-trial",
    "poisoned-outputs",
    "fresh-inputs-per-seed",
    "stale-output-rerun",
    UNSEEN_SHAPES,
    "magnitude-scaled-tolerance",
    "nan-inf-must-match",
    "degenerate-reference-refused",
    "interleaved-random-order-timing",
    "reverify-after-timing",
    "roofline-cap",
];

/// The check that a candidate was verified on a shape the search never ran.
pub const UNSEEN_SHAPES: &str = "unseen-verification-shapes";

/// What to tell the user when a final verification (its `checks`) could not include a shape the
/// search never saw: every verify shape of the kernel is also a tune shape.
pub fn unseen_shapes_note(verify_shapes: &[Shape], checks: &[String]) -> Option<String> {
    (!checks.is_empty() && !checks.iter().any(|c| c == UNSEEN_SHAPES)).then(|| {
        let shapes: Vec<String> = verify_shapes
            .iter()
            .map(|s| {
                let sizes: Vec<String> = s.iter().map(|(k, v)| format!("{k} = {v}")).collect();
                format!("({})", sizes.join(", "))
            })
            .collect();
        format!(
            "no shape unseen by the search was verified: every verify shape ({}) is also a tune shape; give `verify_shapes = [..]` with other sizes",
            shapes.join(" ")
        )
    })
}

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

impl Candidate {
    /// The one way to make a candidate: its id is derived from what it runs (WGSL, constants and
    /// launch rule), so equal programs get equal ids whatever produced them.
    pub fn new(program: Program, origin: impl Into<String>) -> Self {
        let constants = program.constants_pairs();
        let id = kf_runtime::hash::variant_id(&program.wgsl, &constants, &program.launch_rule());
        Candidate {
            id,
            origin: origin.into(),
            program,
        }
    }

    /// The baseline as a candidate (for measuring it against itself); its id is `baseline`.
    pub fn baseline(kernel: &ResolvedKernel) -> Self {
        Candidate {
            id: "baseline".into(),
            origin: "baseline".into(),
            program: kernel.baseline.clone(),
        }
    }
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
    /// Time with fewer samples first, and stop there if the candidate is clearly slower than a
    /// bar (see [`Screen`]); `None`: the full timing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screen: Option<Screen>,
}

/// A cheap first timing: `samples` per shape instead of the plan's. A candidate whose speedup,
/// raised by its noise and a margin (`runner::screened_out`), stays below `below` (the speedup
/// it needs to matter to the search, e.g. that of the archive's elite in its cell) keeps the
/// cheap timing; any other candidate gets the full timing, as without screening. Verification
/// before and re-verification after timing run either way.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Screen {
    /// Timed samples of each program per shape in the cheap timing.
    pub samples: u32,
    /// The speedup a candidate must be able to reach to get the full timing.
    pub below: f64,
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
    /// Seconds the evaluation may take before the evaluator gives up on it (kills the worker);
    /// `None` leaves the choice to the evaluator.
    #[serde(default)]
    pub deadline_s: Option<f64>,
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
    /// Bytes every correct kernel must move, over the measured time, above the adapter's copy
    /// ceiling even after the ceiling was measured again and the candidate timed again.
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
    /// For outputs that differ only by the size of finite errors (wrong values, or changed after
    /// timing): the comparison's figures and the tolerance that would have accepted them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub miss: Option<ToleranceMiss>,
}

/// How far outside the tolerance a comparison fell that failed only by the size of its finite
/// errors: no NaN, infinity or integer mismatch. Rounding (a sum reassociated, a fused
/// multiply-add) fails this way; a wrong kernel does too, but far outside the tolerance.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToleranceMiss {
    /// The kernel's tolerance.
    pub tolerance: f64,
    /// The smallest tolerance at which every comparison that ran agrees.
    pub needed: f64,
    /// The output that differed most.
    pub output: String,
    /// Its shape, as `(rows = 64, cols = 4096)`.
    pub shape: String,
    /// Its scalars out of tolerance.
    pub mismatched: u64,
    /// Its scalars compared.
    pub scalars: u64,
    /// Its largest elementwise error, relative to max(|expected|, 1 % of the scale).
    pub max_rel_elem: f64,
    /// Its relative L2 error.
    pub rel_l2: f64,
    /// Its element with the largest error.
    pub worst: Option<WorstElement>,
}

/// The element of a [`ToleranceMiss`] with the largest error.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorstElement {
    /// Scalar index in the buffer.
    pub index: u64,
    /// The baseline's value.
    pub expected: String,
    /// The candidate's value.
    pub actual: String,
}

pub use kf_runtime::verdict::{NEAR_MISS_FACTOR, clean_tolerance};

impl ToleranceMiss {
    /// Whether the tolerance that would accept it is within [`NEAR_MISS_FACTOR`] of the kernel's.
    pub fn is_near(&self) -> bool {
        kf_runtime::verdict::is_near_miss(self.needed, self.tolerance)
    }

    /// The tolerance to suggest: [`ToleranceMiss::needed`] rounded up to 1, 2 or 5 times a power
    /// of ten (2.4e-4 becomes 5e-4).
    pub fn suggested(&self) -> f64 {
        clean_tolerance(self.needed)
    }

    /// The figures: `` `y` on (rows = 64): 3 of 16384 values out of tolerance, worst [17]
    /// expected 1.196375e-2 got 1.196668e-2 (relative error 2.45e-4), relative L2 error 4.40e-7``.
    pub fn figures(&self) -> String {
        let worst = self
            .worst
            .as_ref()
            .map(|w| format!("[{}] expected {} got {} ", w.index, w.expected, w.actual))
            .unwrap_or_default();
        format!(
            "`{}` on {}: {} of {} values out of tolerance, worst {worst}(relative error {:.2e}), relative L2 error {:.2e}",
            self.output, self.shape, self.mismatched, self.scalars, self.max_rel_elem, self.rel_l2
        )
    }

    /// `would pass at `tolerance = 5e-4` (the kernel's is 1e-4): <figures>`.
    pub fn would_pass(&self) -> String {
        format!(
            "would pass at `tolerance = {:e}` (the kernel's is {:e}): {}",
            self.suggested(),
            self.tolerance,
            self.figures()
        )
    }
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
        Failure {
            reason,
            log,
            miss: None,
        }
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
    /// Half the interquartile range of the baseline's samples, relative to their median.
    #[serde(default)]
    pub baseline_spread: f64,
    /// Half the interquartile range of the candidate's samples, relative to their median.
    #[serde(default)]
    pub candidate_spread: f64,
    /// Timed samples of each.
    pub samples: u32,
    /// `timestamp-query` or `wall-clock`.
    pub method: String,
    /// Bytes the spec says one run moves (whole input buffers read, whole outputs written): the
    /// estimate behind the roofline verdict.
    pub bytes: u64,
    /// `bytes / candidate_ns`.
    pub achieved_gbps: f64,
    /// Bytes any correct kernel must move in one run (see `evaluate::traffic`): what the roofline
    /// cap counts.
    #[serde(default)]
    pub min_bytes: u64,
    /// `min_bytes / candidate_ns`.
    #[serde(default)]
    pub min_gbps: f64,
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

impl Roofline {
    /// Places a program that achieved `gbps` (and `gflops`, when the kernel's work is known)
    /// against ceilings `c`: compute-bound when its arithmetic intensity is at or above the
    /// ridge point (FMA rate over copy bandwidth), memory-bound otherwise.
    pub fn place(c: &Ceilings, gbps: f64, gflops: Option<f64>) -> Roofline {
        let intensity = gflops.map(|g| g / gbps.max(1e-12));
        let ridge = c.fma_gflops / c.copy_gbps.max(1e-12);
        let compute_bound = intensity.is_some_and(|i| i >= ridge);
        let fraction = if compute_bound {
            gflops.unwrap_or(0.0) / c.fma_gflops.max(1e-12)
        } else {
            gbps / c.copy_gbps.max(1e-12)
        };
        Roofline {
            ceiling_gbps: c.copy_gbps,
            ceiling_gflops: c.fma_gflops,
            achieved_gbps: gbps,
            achieved_gflops: gflops,
            fraction,
            bound: if compute_bound { "compute" } else { "memory" }.to_owned(),
        }
    }
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
    /// Ceilings the evaluator measured again during this evaluation (a candidate appeared to
    /// beat the request's), merged with the request's: worth storing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ceilings: Option<Ceilings>,
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
            ceilings: None,
            wall_ms: 0.0,
        }
    }

    /// Whether the candidate is correct (level 5).
    pub fn is_correct(&self) -> bool {
        self.fitness.level == 5
    }

    /// The geometric mean of the per-shape speedups timed, correct or not (a near miss is timed,
    /// see [`ToleranceMiss`]).
    pub fn timed_speedup(&self) -> Option<f64> {
        (!self.timings.is_empty()).then(|| {
            let log_sum: f64 = self.timings.iter().map(|t| t.speedup.ln()).sum();
            (log_sum / self.timings.len() as f64).exp()
        })
    }

    /// The comparison figures of a candidate that failed by a hair (see [`ToleranceMiss::is_near`]).
    pub fn near_miss(&self) -> Option<&ToleranceMiss> {
        self.failure
            .as_ref()
            .and_then(|f| f.miss.as_ref())
            .filter(|m| m.is_near())
    }
}

/// Worker protocol: one JSON object per line on the worker's stdin.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum Request {
    /// Open the adapter; answered with [`Response::Opened`].
    Open {
        /// [`PROTOCOL_VERSION`] of the side that asks.
        protocol: u32,
        /// Which adapter.
        adapter: AdapterSelector,
    },
    /// Evaluate a candidate; answered with [`Response::Evaluated`].
    Evaluate(Box<EvalRequest>),
    /// Compile the candidates of a batch ahead of their `Evaluate` requests, which follow in the
    /// same order; answered with [`Response::Prepared`]. Changes no report.
    Prepare {
        /// The batch, in the order its evaluations will come.
        requests: Vec<EvalRequest>,
    },
    /// Measure the adapter's ceilings; answered with [`Response::Probed`].
    Probe,
}

/// Worker protocol: one JSON object per line on the worker's stdout.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum Response {
    /// The adapter is open.
    Opened {
        /// [`PROTOCOL_VERSION`] of the worker.
        protocol: u32,
        /// Which adapter.
        adapter: AdapterReport,
        /// Whether timestamp queries are available.
        timestamps: bool,
    },
    /// An evaluation finished.
    Evaluated(Box<EvalReport>),
    /// Ceilings measured.
    Probed(Ceilings),
    /// The batch of a [`Request::Prepare`] compiled.
    Prepared {
        /// How many candidates are ready (the others compile when evaluated).
        count: usize,
    },
    /// The request could not be served.
    Failed {
        /// Why.
        message: String,
    },
}

/// Something that evaluates candidates: a local worker process, one reached through a command
/// (`--worker-cmd`), or the workers behind a broker.
pub trait Evaluator {
    /// The adapter the evaluator runs on.
    fn adapter(&self) -> &AdapterReport;
    /// Evaluates one candidate. Never fails: crashes and timeouts are reports at level 2.
    fn evaluate(&mut self, request: &EvalRequest) -> EvalReport;
    /// Evaluates several candidates, reports in the order of `requests`. An evaluator that can run
    /// them concurrently (several workers) overrides this; the default runs them one by one.
    fn evaluate_batch(&mut self, requests: &[EvalRequest]) -> Vec<EvalReport> {
        requests.iter().map(|r| self.evaluate(r)).collect()
    }
    /// Measures the adapter's ceilings.
    fn probe(&mut self) -> Result<Ceilings, String>;
    /// How many evaluations it can run at once (the workers behind a broker); the search may
    /// propose wider batches for it.
    fn parallelism(&self) -> usize {
        1
    }
    /// Why it can evaluate nothing more (its broker lost every worker of the adapter), once that
    /// is so: the reports it returned since are placeholders, and the search stops without
    /// recording them.
    fn fault(&self) -> Option<String> {
        None
    }
}

//! Benchmarks of tuned kernels on one adapter, and the suite's figures.
//!
//! A cache entry records what was measured when the kernel was tuned, perhaps on another day or
//! driver. A benchmark measures again, now: for each kernel, the program `kf-runtime` would run on
//! this adapter (the cached variant, or the baseline where the tuner kept it) and the hand-written
//! `reference(..)` where the spec names one, each against the baseline in one evaluation through
//! the evaluator with the final plan (new seeds, unseen shapes, re-verification after timing,
//! baseline and program interleaved in a random order). So every figure comes with a verdict
//! reached on this adapter in this run; a program that fails it is reported as such, never timed.
//!
//! Definitions (the README repeats them):
//! - **correct**: the program deployed for the kernel on this adapter reached level 5 in this
//!   run. A kernel without a cache entry for this adapter (*not tuned*) or whose spec or baseline
//!   fails here (*failed*) is not correct: there is no verified result for it.
//! - **correctness rate**: correct kernels over all kernels benchmarked.
//! - **fast_p**: the share of all kernels benchmarked that are correct and faster than the
//!   baseline by more than a factor `p` (KernelBench's fast_p); a kernel whose entry kept the
//!   baseline has speedup exactly 1.
//! - **geomean speedup**: the geometric mean of the speedups of the correct kernels.
//! - **tuning cost**: search evaluations from the entries' search records, and evaluation seconds
//!   (worker time summed over the newest run journal of the kernel, where one is left).
//!
//! Nothing here prints or writes files; the command line prints what this returns.

pub mod against;
mod text;

use crate::cache::run::Run;
use crate::discover::Found;
use crate::evaluate::{
    Candidate, Ceilings, EvalReport, EvalRequest, Evaluator, Roofline, ShapeTime,
};
use kf_runtime::cache::CacheEntry;
use kf_runtime::resolve::ResolvedKernel;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Format version of [`BenchReport`] (`bench --json`).
pub const FORMAT_VERSION: u32 = 1;

/// The factors of the fast_p figures.
pub const FAST_P: [f64; 3] = [1.0, 1.2, 2.0];

/// What the user asked of a benchmark.
#[derive(Clone, Debug)]
pub struct Options {
    /// Timed samples of baseline and program per shape.
    pub samples: u32,
    /// Seeds the interleaving order.
    pub seed: u64,
    /// Shapes replacing the attribute's tune shapes (`rows=64,cols=256`), as in `tune`.
    pub tune_shapes: Vec<String>,
    /// Seconds one evaluation may take before its worker is killed.
    pub timeout_s: f64,
    /// Measure the entries tuned for this adapter key instead of the evaluator's own (the
    /// crossover question: does a variant tuned on one GPU pay on another?).
    pub entries_for: Option<kf_runtime::adapter::AdapterKey>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            samples: 30,
            seed: 7,
            tune_shapes: Vec::new(),
            timeout_s: 600.0,
            entries_for: None,
        }
    }
}

/// Where a kernel stands on this adapter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// A variant is cached for this adapter.
    Tuned,
    /// The entry for this adapter kept the baseline.
    BaselineBest,
    /// No entry for this adapter.
    NotTuned,
    /// The spec does not resolve, or the tune shapes do not apply.
    Failed,
}

impl Status {
    /// `tuned`, `baseline-best`, `not-tuned`, `failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Tuned => "tuned",
            Status::BaselineBest => "baseline-best",
            Status::NotTuned => "not-tuned",
            Status::Failed => "failed",
        }
    }
}

/// One program's time, summed over the timed shapes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    /// Median time summed over the timed shapes, ns.
    pub ns: f64,
    /// The largest relative spread of its samples over the shapes (half the interquartile range
    /// over the median).
    pub spread: f64,
    /// Bytes the spec says the kernel moves, summed over the shapes, over `ns`.
    pub gbps: f64,
    /// Floating-point work over `ns`, when the spec gives `flops`.
    pub gflops: Option<f64>,
    /// Where it sits against the adapter's measured ceilings.
    pub roofline: Option<Roofline>,
}

/// One program measured against the baseline in one interleaved evaluation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// What was measured: the variant's id, `baseline` or `reference`.
    pub program: String,
    /// Its ladder level.
    pub level: u8,
    /// Whether it passed (level 5).
    pub correct: bool,
    /// Why it failed: `reason: first line of the log`.
    pub failure: Option<String>,
    /// Verification trials compared.
    pub trials: u32,
    /// The baseline's time in the same evaluation (correct programs only).
    pub baseline: Option<Timing>,
    /// The program's time (correct programs only).
    pub timing: Option<Timing>,
    /// Speedup over the baseline: the geometric mean over shapes of the median per-pair ratio.
    pub speedup: Option<f64>,
    /// The largest relative spread of the per-pair ratios over the shapes.
    pub speedup_spread: Option<f64>,
    /// Per-shape figures as the evaluator reported them.
    pub shapes: Vec<ShapeTime>,
}

impl Comparison {
    /// Reads an evaluation's report; `ceilings` place the timings on the roofline.
    pub fn of(program: &str, report: &EvalReport, ceilings: Option<&Ceilings>) -> Self {
        let correct = report.is_correct();
        let timed = correct && !report.timings.is_empty();
        let t = &report.timings;
        let bytes: f64 = t.iter().map(|s| s.bytes as f64).sum();
        // achieved_gflops = flops / candidate_ns, so this recovers the spec's flops per shape.
        let flops: Option<f64> = t
            .iter()
            .map(|s| s.achieved_gflops.map(|g| g * s.candidate_ns))
            .sum();
        let timing = |ns: f64, spread: f64| {
            let gbps = bytes / ns.max(1.0);
            let gflops = flops.map(|f| f / ns.max(1.0));
            Timing {
                ns,
                spread,
                gbps,
                gflops,
                roofline: ceilings.map(|c| Roofline::place(c, gbps, gflops)),
            }
        };
        let max = |f: fn(&ShapeTime) -> f64| t.iter().map(f).fold(0.0, f64::max);
        Comparison {
            program: program.to_owned(),
            level: report.fitness.level,
            correct,
            failure: report.failure.as_ref().map(|f| {
                format!(
                    "{}: {}",
                    f.reason,
                    f.log.lines().next().unwrap_or("").trim()
                )
            }),
            trials: report.verification.trials,
            baseline: timed.then(|| {
                timing(
                    t.iter().map(|s| s.baseline_ns).sum(),
                    max(|s| s.baseline_spread),
                )
            }),
            timing: timed.then(|| {
                timing(
                    t.iter().map(|s| s.candidate_ns).sum(),
                    max(|s| s.candidate_spread),
                )
            }),
            speedup: if timed { report.fitness.speedup } else { None },
            speedup_spread: if timed { report.noise } else { None },
            shapes: if timed { t.clone() } else { Vec::new() },
        }
    }
}

/// What tuning a kernel cost.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TuningCost {
    /// The search strategy.
    pub strategy: String,
    /// Search evaluations (the final verifications are extra).
    pub evaluations: u64,
    /// The budget it had.
    pub budget: u64,
    /// Evaluation time in the worker, summed over the newest run journal of this kernel on this
    /// adapter, s; absent when no run directory is left.
    pub seconds: Option<f64>,
    /// That run's directory.
    pub run: Option<String>,
}

/// The benchmark of one kernel.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelBench {
    /// The static's name.
    pub name: String,
    /// Its package.
    pub package: String,
    /// The kernel's content hash, when its spec resolved.
    pub content_hash: Option<String>,
    /// Where it stands on this adapter.
    pub status: Status,
    /// Why it failed (status `failed`).
    pub error: Option<String>,
    /// The cache entry read.
    pub cache_file: Option<String>,
    /// The cached variant's id.
    pub variant: Option<String>,
    /// How the variant was made.
    pub origin: Option<String>,
    /// Whether the deployed program (the variant, or the baseline the entry kept) passed here.
    pub correct: bool,
    /// Speedup of the deployed program over the baseline: measured for a variant, exactly 1 for a
    /// baseline-best entry, absent when not correct or not tuned.
    pub speedup: Option<f64>,
    /// The deployed program against the baseline (for untuned kernels: the baseline against
    /// itself, which times it).
    pub deployed: Option<Comparison>,
    /// The hand-written reference against the baseline.
    pub reference: Option<Comparison>,
    /// What tuning cost, from the entry and the run directory.
    pub tuning: Option<TuningCost>,
}

impl KernelBench {
    fn new(f: &Found) -> Self {
        KernelBench {
            name: f.name.clone(),
            package: f.package.clone(),
            content_hash: None,
            status: Status::Failed,
            error: None,
            cache_file: None,
            variant: None,
            origin: None,
            correct: false,
            speedup: None,
            deployed: None,
            reference: None,
            tuning: None,
        }
    }

    /// The baseline's time, from the deployed program's evaluation.
    pub fn baseline(&self) -> Option<&Timing> {
        self.deployed.as_ref()?.baseline.as_ref()
    }

    /// The tuned variant's time (status `tuned`, correct).
    pub fn tuned(&self) -> Option<&Timing> {
        (self.status == Status::Tuned)
            .then(|| self.deployed.as_ref()?.timing.as_ref())
            .flatten()
    }

    /// The time of what runs on this adapter: the variant, or the baseline.
    pub fn deployed_timing(&self) -> Option<&Timing> {
        self.tuned().or_else(|| self.baseline())
    }
}

/// Benchmarks one kernel: reads its cache entry for the evaluator's adapter (exact key) and
/// measures the deployed program and the reference against the baseline. `target_dir` is where
/// run directories are looked up for the tuning time.
pub fn bench_kernel(
    f: &Found,
    evaluator: &mut dyn Evaluator,
    ceilings: Option<&Ceilings>,
    options: &Options,
    target_dir: Option<&Path>,
) -> KernelBench {
    let mut out = KernelBench::new(f);
    let kernel = match &f.resolved {
        Ok(k) => k,
        Err(e) => {
            out.error = Some(e.clone());
            return out;
        }
    };
    let kernel = match crate::tune::with_tune_shapes(kernel, &options.tune_shapes) {
        Ok(k) => k,
        Err(e) => {
            out.error = Some(e);
            return out;
        }
    };
    out.content_hash = Some(kernel.content_hash.clone());
    let key = options
        .entries_for
        .clone()
        .unwrap_or_else(|| evaluator.adapter().key.clone());
    let entry = crate::cache::store::read_entry(&f.crate_root, &f.name, &kernel.content_hash, &key);
    let candidate = match &entry {
        Some((path, e)) => {
            out.cache_file = Some(path.display().to_string());
            out.tuning = Some(tuning_cost(e, target_dir, &f.name));
            match &e.variant {
                Some(v) => {
                    out.status = Status::Tuned;
                    out.variant = Some(v.id.clone());
                    out.origin = Some(v.origin.clone());
                    Candidate {
                        id: v.id.clone(),
                        origin: v.origin.clone(),
                        program: v.program.clone(),
                    }
                }
                None => {
                    out.status = Status::BaselineBest;
                    Candidate::baseline(&kernel)
                }
            }
        }
        None => {
            out.status = Status::NotTuned;
            Candidate::baseline(&kernel)
        }
    };
    let report = evaluator.evaluate(&request(&kernel, candidate, ceilings, options));
    let deployed = Comparison::of(&report.candidate, &report, ceilings);
    out.correct = deployed.correct && out.status != Status::NotTuned;
    out.speedup = match out.status {
        Status::Tuned if out.correct => deployed.speedup,
        Status::BaselineBest if out.correct => Some(1.0),
        _ => None,
    };
    out.deployed = Some(deployed);
    if let Some(reference) = &kernel.reference {
        // The reference may name its entry point as it likes (`resolve_reference` checked its
        // bindings); the evaluator compares entry names, so it is told the reference's.
        let mut k = kernel.clone();
        k.interface.entry = reference.entry.to_string();
        let candidate = Candidate {
            id: "reference".into(),
            origin: "reference".into(),
            program: reference.clone(),
        };
        let report = evaluator.evaluate(&request(&k, candidate, ceilings, options));
        out.reference = Some(Comparison::of("reference", &report, ceilings));
    }
    out
}

fn request(
    kernel: &ResolvedKernel,
    candidate: Candidate,
    ceilings: Option<&Ceilings>,
    options: &Options,
) -> EvalRequest {
    EvalRequest {
        plan: crate::search::final_plan(kernel, options.samples, options.seed),
        kernel: kernel.clone(),
        candidate,
        ceilings: ceilings.cloned(),
        deadline_s: Some(options.timeout_s),
    }
}

/// The tuning cost recorded in `entry`, with the evaluation seconds of the newest run journal of
/// that kernel on that adapter under `target_dir`.
pub fn tuning_cost(entry: &CacheEntry, target_dir: Option<&Path>, kernel: &str) -> TuningCost {
    let key = entry.adapter.key.to_string();
    let journal = target_dir.and_then(|t| {
        Run::all(t).into_iter().rev().find_map(|run| {
            if run.record.adapter_key != key {
                return None;
            }
            let path = run
                .kernel_dir(kernel, &entry.kernel.content_hash)
                .join("journal.jsonl");
            let lines = crate::search::journal::read(&path).ok()?;
            (!lines.is_empty()).then_some((run, lines))
        })
    });
    TuningCost {
        strategy: entry.search.strategy.clone(),
        evaluations: entry.search.evaluations,
        budget: entry.search.budget,
        seconds: journal
            .as_ref()
            .map(|(_, lines)| lines.iter().map(|l| l.report.wall_ms).sum::<f64>() / 1e3),
        run: journal.map(|(run, _)| run.dir.display().to_string()),
    }
}

/// The suite's figures over a set of benchmarked kernels.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Suite {
    /// Kernels benchmarked.
    pub kernels: usize,
    /// Of those, with a variant for this adapter.
    pub tuned: usize,
    /// With an entry that kept the baseline.
    pub baseline_best: usize,
    /// Without an entry for this adapter.
    pub not_tuned: usize,
    /// Whose spec or tune shapes failed.
    pub failed: usize,
    /// Whose deployed program passed here (see the module docs).
    pub correct: usize,
    /// `correct / kernels`.
    pub correctness_rate: f64,
    /// Share of kernels correct and faster than the baseline by more than 1x.
    pub fast_1: f64,
    /// … by more than 1.2x.
    pub fast_1_2: f64,
    /// … by more than 2x.
    pub fast_2: f64,
    /// Geometric mean of the correct kernels' speedups.
    pub geomean_speedup: Option<f64>,
    /// Kernels with a reference, and of those the ones whose deployed program is at least as fast.
    pub references: usize,
    /// Deployed program at least as fast as the reference (both correct, speedups compared).
    pub at_least_reference: usize,
    /// Search evaluations over the kernels with an entry.
    pub tuning_evaluations: u64,
    /// Evaluation seconds over the kernels whose run journal is left.
    pub tuning_seconds: f64,
    /// Kernels with an entry whose run journal was found (the seconds cover these).
    pub tuning_seconds_kernels: usize,
}

/// The share of `kernels` that are correct and faster than the baseline by more than `p`.
pub fn fast_p(kernels: &[KernelBench], p: f64) -> f64 {
    if kernels.is_empty() {
        return 0.0;
    }
    let n = kernels
        .iter()
        .filter(|k| k.correct && k.speedup.is_some_and(|s| s > p))
        .count();
    n as f64 / kernels.len() as f64
}

/// The geometric mean of `values` (`None` when empty or when one is not positive).
pub fn geomean(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let mut n = 0usize;
    let mut log_sum = 0.0;
    for v in values {
        if !(v > 0.0 && v.is_finite()) {
            return None;
        }
        log_sum += v.ln();
        n += 1;
    }
    (n > 0).then(|| (log_sum / n as f64).exp())
}

impl Suite {
    /// The figures over `kernels`.
    pub fn of(kernels: &[KernelBench]) -> Suite {
        let count = |s: Status| kernels.iter().filter(|k| k.status == s).count();
        let correct = kernels.iter().filter(|k| k.correct).count();
        let with_reference: Vec<&KernelBench> =
            kernels.iter().filter(|k| k.reference.is_some()).collect();
        let at_least_reference = with_reference
            .iter()
            .filter(|k| {
                let r = k.reference.as_ref().and_then(|r| r.speedup);
                // A correct deployed program of a not-tuned kernel is the baseline (speedup 1).
                let d = k.speedup.or_else(|| {
                    k.deployed
                        .as_ref()
                        .filter(|d| d.correct && k.status == Status::NotTuned)
                        .map(|_| 1.0)
                });
                matches!((d, r), (Some(d), Some(r)) if d >= r)
            })
            .count();
        let costs: Vec<&TuningCost> = kernels.iter().filter_map(|k| k.tuning.as_ref()).collect();
        Suite {
            kernels: kernels.len(),
            tuned: count(Status::Tuned),
            baseline_best: count(Status::BaselineBest),
            not_tuned: count(Status::NotTuned),
            failed: count(Status::Failed),
            correct,
            correctness_rate: if kernels.is_empty() {
                0.0
            } else {
                correct as f64 / kernels.len() as f64
            },
            fast_1: fast_p(kernels, FAST_P[0]),
            fast_1_2: fast_p(kernels, FAST_P[1]),
            fast_2: fast_p(kernels, FAST_P[2]),
            geomean_speedup: geomean(
                kernels
                    .iter()
                    .filter(|k| k.correct)
                    .filter_map(|k| k.speedup),
            ),
            references: with_reference.len(),
            at_least_reference,
            tuning_evaluations: costs.iter().map(|c| c.evaluations).sum(),
            tuning_seconds: costs
                .iter()
                .filter_map(|c| c.seconds)
                .fold(0.0, |a, b| a + b), // `sum` of none is -0.0
            tuning_seconds_kernels: costs.iter().filter(|c| c.seconds.is_some()).count(),
        }
    }
}

/// The adapter a benchmark ran on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AdapterSummary {
    /// Its name.
    pub name: String,
    /// Backend.
    pub backend: String,
    /// Driver and driver info.
    pub driver: String,
    /// The adapter key.
    pub key: String,
}

/// The adapter's measured ceilings, as the benchmark used them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CeilingsSummary {
    /// Copy bandwidth, GB/s.
    pub copy_gbps: f64,
    /// f32 FMA rate, GFLOP/s.
    pub fma_gflops: f64,
}

/// What `bench --json` prints and `report --bench` reads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchReport {
    /// [`FORMAT_VERSION`].
    pub format_version: u32,
    /// kf-build version.
    pub tool_version: String,
    /// The adapter.
    pub adapter: AdapterSummary,
    /// Its ceilings, when they could be measured.
    pub ceilings: Option<CeilingsSummary>,
    /// Timed samples per shape.
    pub samples: u32,
    /// Per kernel.
    pub kernels: Vec<KernelBench>,
    /// The suite's figures.
    pub suite: Suite,
    /// The adapter key whose entries were measured, when not the adapter's own (`--entries-for`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries_for: Option<String>,
    /// The kernels against outside reference times (`--against FILE`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub against: Option<against::Against>,
}

impl BenchReport {
    /// A report of `kernels` on `adapter`.
    pub fn new(
        adapter: &crate::evaluate::AdapterReport,
        ceilings: Option<&Ceilings>,
        samples: u32,
        kernels: Vec<KernelBench>,
    ) -> Self {
        BenchReport {
            format_version: FORMAT_VERSION,
            tool_version: env!("CARGO_PKG_VERSION").to_owned(),
            adapter: AdapterSummary {
                name: adapter.identity.name.clone(),
                backend: adapter.identity.backend.clone(),
                driver: format!(
                    "{} {}",
                    adapter.identity.driver, adapter.identity.driver_info
                )
                .trim()
                .to_owned(),
                key: adapter.key.to_string(),
            },
            ceilings: ceilings.map(|c| CeilingsSummary {
                copy_gbps: c.copy_gbps,
                fma_gflops: c.fma_gflops,
            }),
            samples,
            suite: Suite::of(&kernels),
            kernels,
            entries_for: None,
            against: None,
        }
    }

    /// The report as a markdown table per kernel followed by the suite's figures.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        if let Some(key) = &self.entries_for {
            out.push_str(&format!(
                "Variants tuned for adapter key `{key}`, measured on this adapter.\n\n"
            ));
        }
        out.push_str(&format!(
            "Adapter: {} ({}, {}), {} samples per shape{}.\n\n",
            md(&self.adapter.name),
            md(&self.adapter.backend),
            md(&self.adapter.driver),
            self.samples,
            self.ceilings
                .as_ref()
                .map(|c| format!(
                    "; ceilings {} GB/s copy, {} GFLOP/s FMA",
                    rate(c.copy_gbps),
                    rate(c.fma_gflops)
                ))
                .unwrap_or_default()
        ));
        out.push_str("| kernel | status | correct | baseline | tuned | speedup | GB/s | GFLOP/s | % of ceiling | reference | ref. speedup | evaluations | tuning s |\n");
        out.push_str("|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
        for k in &self.kernels {
            let dash = || "–".to_owned();
            let time = |t: Option<&Timing>| {
                t.map_or_else(dash, |t| {
                    format!("{} ± {:.0} %", fmt_ns(t.ns), t.spread * 100.0)
                })
            };
            let deployed = k.deployed_timing();
            let reference = k.reference.as_ref();
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                md(&k.name),
                k.status.as_str(),
                correct_text(k),
                time(k.baseline()),
                time(k.tuned()),
                k.speedup.map_or_else(dash, |s| format!("{s:.2}x")),
                deployed.map_or_else(dash, |t| rate(t.gbps)),
                deployed.and_then(|t| t.gflops).map_or_else(dash, rate),
                deployed
                    .and_then(|t| t.roofline.as_ref())
                    .map_or_else(dash, |r| format!("{:.1} % {}", r.fraction * 100.0, r.bound)),
                match reference {
                    None => dash(),
                    Some(r) if !r.correct => md(r.failure.as_deref().unwrap_or("failed")),
                    Some(r) => time(r.timing.as_ref()),
                },
                reference
                    .and_then(|r| r.speedup)
                    .map_or_else(dash, |s| format!("{s:.2}x")),
                k.tuning
                    .as_ref()
                    .map_or_else(dash, |t| t.evaluations.to_string()),
                k.tuning
                    .as_ref()
                    .and_then(|t| t.seconds)
                    .map_or_else(dash, |s| format!("{s:.1}")),
            ));
        }
        let s = &self.suite;
        let pct = |x: f64| format!("{:.0} %", x * 100.0);
        out.push_str(&format!(
            "\n| kernels | tuned | baseline-best | not tuned | failed | correct | fast_1 | fast_1.2 | fast_2 | geomean speedup | tuning evaluations | tuning s |\n\
             |--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n\
             | {} | {} | {} | {} | {} | {} ({}) | {} | {} | {} | {} | {} | {:.1} |\n",
            s.kernels,
            s.tuned,
            s.baseline_best,
            s.not_tuned,
            s.failed,
            s.correct,
            pct(s.correctness_rate),
            pct(s.fast_1),
            pct(s.fast_1_2),
            pct(s.fast_2),
            s.geomean_speedup
                .map_or_else(|| "–".to_owned(), |g| format!("{g:.2}x")),
            s.tuning_evaluations,
            s.tuning_seconds,
        ));
        out.push_str(
            "\ncorrect: the deployed program (tuned variant, or the baseline an entry kept) passed the final verification on this adapter in this run; kernels not tuned for this adapter count as not correct. fast_p: share of all kernels correct and faster than the baseline by more than p. Times are medians summed over the tune shapes, ± half the interquartile range.\n",
        );
        if let Some(a) = &self.against {
            out.push_str(&a.markdown());
        }
        out
    }
}

/// `yes`, `NO (reason)`, or `–` for kernels not tuned.
pub fn correct_text(k: &KernelBench) -> String {
    match (k.status, &k.deployed) {
        (Status::NotTuned, _) | (Status::Failed, None) => "–".to_owned(),
        (_, Some(d)) if d.correct => "yes".to_owned(),
        (_, Some(d)) => format!("NO ({})", md(d.failure.as_deref().unwrap_or("failed"))),
        (_, None) => "NO".to_owned(),
    }
}

/// Escapes the characters that end a markdown table cell or start markup.
fn md(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// A rate (GB/s, GFLOP/s) with three significant digits: `1234`, `123`, `12.3`, `1.23`, `0.123`.
pub fn rate(x: f64) -> String {
    let a = x.abs();
    if a >= 100.0 || a == 0.0 {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

/// `1.23 ms`, `45.6 µs`, `789 ns`.
pub fn fmt_ns(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.2} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

#[cfg(test)]
pub(crate) mod tests;

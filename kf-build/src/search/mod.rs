//! The search: from a resolved kernel to a verified, timed decision — a tuned variant or "the
//! baseline is best", with the reason.
//!
//! Four parts, data flowing one way: the [`space`] of template parameters (overrides and the
//! workgroup size, lifted from a literal by [`rewrite`] when needed), the evaluation [`plan`]s,
//! a [`strategy`] that proposes candidates and observes their reports, and [`accept`], shared by
//! every strategy: the baseline measured against itself, the final verification of the best
//! candidates with seeds and shapes the search never used, and the noise-aware decision.
//!
//! Invariant: the search reaches the GPU only through an [`Evaluator`]; it never sees a buffer.

pub mod accept;
pub mod journal;
pub mod plan;
pub mod qd;
pub mod space;
pub mod strategy;

pub use accept::{Decision, MIN_MARGIN, NearMiss, Verdict};
pub use plan::{final_plan, screened_plan, search_plan, verification_seeds};
pub use space::{Point, Space, candidate, space};
pub use strategy::{Exhaustive, Proposal, Strategy, SuccessiveHalving};

use crate::evaluate::{Candidate, Ceilings, EvalReport, Evaluator};
use kf_runtime::resolve::ResolvedKernel;

/// How thoroughly to search: the one options object of a search (modelled on Triton's `Config`).
///
/// `tune` builds it from its flags, passes it inside `tune::Options`, records it in `run.json`
/// (`RunOptions` flattens it, so the file keeps its fields) and judges a cached entry stale
/// against it; `--resume` deserialises it and continues with exactly these settings.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Config {
    /// Candidate evaluations allowed for the search (the final checks are extra).
    pub budget: u64,
    /// Timed samples per candidate in the first round.
    #[serde(default = "default_samples")]
    pub samples: u32,
    /// Timed samples in the final comparison.
    #[serde(default = "default_final_samples")]
    pub final_samples: u32,
    /// Seed for sampling and ordering.
    pub seed: u64,
    /// Seconds one candidate evaluation may take; `None`: ten times the baseline's evaluation
    /// (see [`crate::evaluate::runner::default_timeout`]).
    #[serde(rename = "timeout_s")]
    pub timeout: Option<f64>,
    /// Which strategy.
    pub strategy: StrategyKind,
    /// Seconds of search, if limited (checked between batches; the final verification is extra).
    pub time_s: Option<f64>,
    /// Gradient-informed steering (quality-diversity strategies).
    pub gradients: bool,
    /// Only these offline operators (by name) in the evolution strategies; `None`: all of them.
    #[serde(default)]
    pub operators: Option<Vec<String>>,
    /// Children per island and generation in the evolution strategies: 1 for one evaluator,
    /// more when several workers evaluate a batch in parallel.
    #[serde(default = "default_width")]
    pub width: usize,
}

fn default_samples() -> u32 {
    Config::default().samples
}

fn default_final_samples() -> u32 {
    Config::default().final_samples
}

fn default_width() -> usize {
    1
}

impl Default for Config {
    fn default() -> Self {
        Config {
            budget: 32,
            samples: 10,
            final_samples: 20,
            seed: 42,
            timeout: None,
            strategy: StrategyKind::Auto,
            time_s: None,
            gradients: true,
            operators: None,
            width: 1,
        }
    }
}

/// The search strategies `tune --strategy` offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StrategyKind {
    /// The parameter space: exhaustive when it fits the budget, successive halving otherwise.
    Auto,
    /// Every point of the parameter space, within the budget.
    Exhaustive,
    /// Quality-diversity evolution of the code (MAP-Elites with islands, rewrite operators).
    Qd,
    /// Always mutate the best candidate so far.
    Greedy,
    /// Mutate a uniformly random correct candidate with a uniformly random operator.
    Random,
}

impl StrategyKind {
    /// `auto`, `exhaustive`, `qd`, `greedy`, `random`.
    pub fn as_str(self) -> &'static str {
        match self {
            StrategyKind::Auto => "auto",
            StrategyKind::Exhaustive => "exhaustive",
            StrategyKind::Qd => "qd",
            StrategyKind::Greedy => "greedy",
            StrategyKind::Random => "random",
        }
    }
}

impl Config {
    /// The deadline of a candidate's evaluation, given the baseline's report.
    pub fn candidate_deadline(&self, baseline: &EvalReport) -> f64 {
        self.timeout.unwrap_or_else(|| {
            crate::evaluate::runner::default_timeout(std::time::Duration::from_secs_f64(
                baseline.wall_ms / 1e3,
            ))
            .as_secs_f64()
        })
    }
}

/// What one search is about: the kernel, the adapter's ceilings and the configuration.
#[derive(Clone, Copy, Debug)]
pub struct Job<'a> {
    /// The kernel.
    pub kernel: &'a ResolvedKernel,
    /// The adapter's measured ceilings, for the roofline cap.
    pub ceilings: Option<&'a Ceilings>,
    /// How thoroughly.
    pub config: &'a Config,
}

/// Progress reported while searching.
#[derive(Debug)]
pub enum Event<'a> {
    /// The baseline was measured against itself.
    Baseline(&'a EvalReport),
    /// A search evaluation finished.
    Evaluated(&'a Candidate, &'a EvalReport),
    /// A final verification finished.
    Final(&'a Candidate, &'a EvalReport),
    /// The strategy's state after an evaluation, to checkpoint.
    Checkpoint(serde_json::Value),
}

/// What the search concluded.
#[derive(Debug)]
pub struct Outcome {
    /// The baseline measured against itself (timing and noise).
    pub baseline: EvalReport,
    /// The winner and its final report, if one beat the baseline by more than the noise.
    pub tuned: Option<(Candidate, EvalReport)>,
    /// The best correct candidate's final report, even if it did not win.
    pub best: Option<(Candidate, EvalReport)>,
    /// Why the search ended where it did.
    pub verdict: Verdict,
    /// The strategy's name.
    pub strategy: String,
    /// Points in the space, when the strategy searches a finite one.
    pub space_size: u64,
    /// Candidate evaluations spent by the search (final checks not counted).
    pub evaluations: u64,
    /// Candidate evaluations allowed.
    pub budget: u64,
    /// The noise threshold a speedup had to clear.
    pub noise: f64,
    /// Every search evaluation, in order.
    pub history: Vec<(Candidate, EvalReport)>,
    /// The final verifications, in order.
    pub finals: Vec<(Candidate, EvalReport)>,
    /// Archive cells filled, for quality-diversity strategies.
    pub cells_filled: Option<usize>,
    /// Candidates faster than the baseline rejected only by the tolerance, when none was
    /// accepted (see [`accept::NearMiss`]).
    pub near_miss: Option<accept::NearMiss>,
}

/// Why a kernel could not be searched at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SearchError {
    /// The baseline fails on this adapter, so nothing can be compared with it.
    #[error("the baseline kernel cannot be evaluated on this adapter ({reason}): {}", match diagnosis {
        Some(d) => d.clone(),
        None => log.clone(),
    })]
    Baseline {
        /// The reason.
        reason: String,
        /// The distilled log.
        log: String,
        /// What in the kernel causes the failure, when it is known (e.g. a construct naga panics
        /// on); printed instead of the log.
        diagnosis: Option<String>,
    },
    /// The evaluator can evaluate nothing more (a broker without workers for the adapter).
    #[error("{0}")]
    Evaluator(String),
}

/// Searches `kernel` on `evaluator` with the configured strategy.
pub fn search(
    kernel: &ResolvedKernel,
    evaluator: &mut dyn Evaluator,
    ceilings: Option<&Ceilings>,
    config: &Config,
    progress: impl FnMut(Event<'_>),
) -> Result<Outcome, SearchError> {
    search_with(kernel, evaluator, ceilings, config, None, progress)
}

/// [`search`], with a source of children beside the offline operators (an LLM) for the
/// evolution strategies; the parameter-space strategies ignore it.
pub fn search_with(
    kernel: &ResolvedKernel,
    evaluator: &mut dyn Evaluator,
    ceilings: Option<&Ceilings>,
    config: &Config,
    proposer: Option<Box<dyn qd::Proposer>>,
    progress: impl FnMut(Event<'_>),
) -> Result<Outcome, SearchError> {
    let space = space(kernel, &evaluator.adapter().limits);
    let budget = config.budget.max(1);
    let mut strategy: Box<dyn Strategy> = if config.strategy == StrategyKind::Exhaustive
        || (config.strategy == StrategyKind::Auto && space.points.len() as u64 <= budget)
    {
        Box::new(Exhaustive::new(kernel, &space, config.samples))
    } else if config.strategy != StrategyKind::Auto {
        let mut evolution = qd::Evolution::new(
            kernel,
            crate::operators::Target {
                limits: evaluator.adapter().limits.clone(),
                features: evaluator.adapter().features.clone(),
            },
            config,
        );
        if let Some(p) = proposer {
            evolution = evolution.with_proposer(p);
        }
        Box::new(evolution)
    } else {
        Box::new(SuccessiveHalving::new(
            kernel,
            &space,
            config.samples,
            budget,
            config.seed,
        ))
    };
    let job = Job {
        kernel,
        ceilings,
        config,
    };
    run(&job, evaluator, strategy.as_mut(), progress)
}

/// Runs `strategy` on `evaluator` within the budget, then the shared acceptance step.
pub fn run(
    job: &Job<'_>,
    evaluator: &mut dyn Evaluator,
    strategy: &mut dyn Strategy,
    mut progress: impl FnMut(Event<'_>),
) -> Result<Outcome, SearchError> {
    let (kernel, config) = (job.kernel, job.config);
    let baseline = accept::measure_baseline(job, evaluator)?;
    progress(Event::Baseline(&baseline));
    let budget = config.budget.max(1);
    let deadline = config.candidate_deadline(&baseline);
    strategy.start(&baseline);
    let started = std::time::Instant::now();
    let mut history: Vec<(Candidate, EvalReport)> = Vec::new();
    let mut evaluations = 0u64;
    while evaluations < budget {
        if config
            .time_s
            .is_some_and(|t| started.elapsed().as_secs_f64() >= t)
        {
            break;
        }
        let batch = strategy.propose(budget - evaluations);
        if batch.is_empty() {
            break;
        }
        let requests: Vec<_> = batch
            .iter()
            .enumerate()
            .filter(|(_, p)| p.judged.is_none())
            .map(|(i, p)| {
                accept::request(
                    job,
                    p.candidate.clone(),
                    screened_plan(
                        kernel,
                        p.samples,
                        config.seed + evaluations + i as u64,
                        p.screen_below,
                    ),
                    Some(deadline),
                )
            })
            .collect();
        let mut evaluated = evaluator.evaluate_batch(&requests).into_iter();
        if let Some(fault) = evaluator.fault() {
            return Err(SearchError::Evaluator(fault));
        }
        for mut p in batch {
            let report = match p.judged.take() {
                Some(r) => r,
                None => evaluated
                    .next()
                    .expect("the evaluator answers every request of a batch"),
            };
            evaluations += 1;
            progress(Event::Evaluated(&p.candidate, &report));
            strategy.observe(&p.candidate, &report);
            if let Some(state) = strategy.checkpoint() {
                progress(Event::Checkpoint(state));
            }
            history.push((p.candidate, report));
        }
    }
    let ranking = strategy.ranking();
    let decision = accept::accept(job, evaluator, &baseline, &ranking, &history, |c, r| {
        progress(Event::Final(c, r))
    });
    if let Some(fault) = evaluator.fault() {
        return Err(SearchError::Evaluator(fault));
    }
    Ok(Outcome {
        baseline,
        tuned: decision.tuned,
        best: decision.best,
        verdict: decision.verdict,
        strategy: strategy.name().to_owned(),
        space_size: strategy.space_size().unwrap_or(0),
        evaluations,
        budget,
        noise: decision.noise,
        history,
        finals: decision.finals,
        cells_filled: strategy.cells_filled(),
        near_miss: decision.near_miss,
    })
}

#[cfg(test)]
mod tests;

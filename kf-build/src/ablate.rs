//! The search strategies side by side at an equal evaluation budget or an equal wall time, over
//! several seeds — the ablation behind the claim that quality-diversity search with gradient
//! steering finds faster kernels than greedy or random search (`cargo kernelfoundry ablate`).
//!
//! Nothing is written to the cache. For each kernel, strategy and seed the search runs to its
//! decision; the report gives the best speedup seen after each evaluation (the search's
//! screening measurements) and when it was seen, the area under that best-so-far curve, the
//! verified speedup of the final decision, and the archive cells filled, aggregated over seeds.
//!
//! Equal wall time (`--time`) is the fair comparison when strategies differ in what an evaluation
//! costs (a strategy that proposes slow or failing candidates spends its time differently); the
//! area under the curve then runs over seconds, otherwise over evaluations, and is divided by
//! the horizon: it is the mean best speedup over the search, which rewards finding a good
//! kernel early as well as finding it at all. The evaluator is whatever the verb opened (`crate::session`):
//! a local worker, a `--worker-cmd` worker or the workers of one adapter key behind a broker.

use crate::discover::Found;
use crate::evaluate::{Ceilings, Evaluator};
use crate::search::{self, Config, StrategyKind};
use serde::Serialize;
use std::time::Instant;

/// One strategy of the comparison: its name as given, the search strategy, and whether the
/// gradients steer it.
#[derive(Clone, Debug, PartialEq)]
pub struct Strategy {
    /// The name the report uses (`qd`, `qd-no-gradients`, …).
    pub name: String,
    /// The search strategy.
    pub kind: StrategyKind,
    /// Gradient steering on.
    pub gradients: bool,
}

/// Why an ablation cannot run.
#[derive(Debug, thiserror::Error)]
pub enum AblateError {
    /// A strategy name that is not one.
    #[error("unknown strategy `{0}`; use qd, qd-no-gradients, greedy, random, auto or exhaustive")]
    UnknownStrategy(String),
    /// `--tune-shape` does not fit a kernel.
    #[error("{kernel}: {message}")]
    Shapes {
        /// The kernel.
        kernel: String,
        /// Why.
        message: String,
    },
}

impl std::str::FromStr for Strategy {
    type Err = AblateError;

    fn from_str(name: &str) -> Result<Self, AblateError> {
        let (kind, gradients) = match name {
            "qd" => (StrategyKind::Qd, true),
            "qd-no-gradients" => (StrategyKind::Qd, false),
            "greedy" => (StrategyKind::Greedy, false),
            "random" => (StrategyKind::Random, false),
            "auto" => (StrategyKind::Auto, false),
            "exhaustive" => (StrategyKind::Exhaustive, false),
            other => return Err(AblateError::UnknownStrategy(other.to_owned())),
        };
        Ok(Strategy {
            name: name.to_owned(),
            kind,
            gradients,
        })
    }
}

/// What to compare.
#[derive(Clone, Debug)]
pub struct Options {
    /// Candidate evaluations per search (the same for every strategy); with `time_s`, a cap.
    pub budget: u64,
    /// Seconds per search (the same for every strategy), if the comparison is at equal wall time.
    pub time_s: Option<f64>,
    /// Each strategy runs once per seed.
    pub seeds: Vec<u64>,
    /// The strategies to compare.
    pub strategies: Vec<Strategy>,
    /// `--tune-shape`: the shapes instead of the attribute's.
    pub tune_shapes: Vec<String>,
}

/// What happened, as it happens.
pub enum Progress<'a> {
    /// A kernel whose spec does not resolve is left out.
    Skipped(&'a Found, String),
    /// A search stopped with an error; the kernel's remaining seeds of that strategy are left out.
    Failed(&'a Found, String),
    /// One search finished.
    Ran(&'a SearchRun),
}

/// One search: a kernel, a strategy and a seed.
#[derive(Serialize, Clone)]
pub struct SearchRun {
    /// The kernel.
    pub kernel: String,
    /// The strategy's name.
    pub strategy: String,
    /// The seed.
    pub seed: u64,
    /// Best search speedup after each evaluation (1.0 until a correct candidate beats it).
    pub best_after: Vec<f64>,
    /// Seconds into the search at which each evaluation of `best_after` was reported.
    pub seconds_after: Vec<f64>,
    /// The verified speedup of the final decision (1.0 when the baseline stayed).
    pub verified: f64,
    /// Speedup of the best finalist that passed the final verification, accepted or not.
    pub best_verified: Option<f64>,
    /// Archive cells filled, for strategies with an archive.
    pub cells_filled: Option<usize>,
    /// Evaluations made.
    pub evaluations: u64,
    /// Of which correct.
    pub correct: u64,
    /// Wall time of the search.
    pub seconds: f64,
    /// Where the chosen variant came from.
    pub origin: Option<String>,
}

/// One kernel and strategy over its seeds.
#[derive(Serialize)]
pub struct Summary {
    /// The kernel.
    pub kernel: String,
    /// The strategy's name.
    pub strategy: String,
    /// Searches summarised.
    pub seeds: usize,
    /// Mean over seeds of the best search speedup at a quarter, half and all of the budget
    /// (evaluations, or seconds with `--time`).
    pub best_at: [f64; 3],
    /// Mean over seeds of the area under the best-so-far curve divided by the horizon: the mean
    /// best speedup over the search (over evaluations, or seconds with `--time`).
    pub auc: f64,
    /// Mean and smallest/largest verified speedup of the final decision over seeds.
    pub verified_mean: f64,
    /// Smallest verified speedup.
    pub verified_min: f64,
    /// Largest verified speedup.
    pub verified_max: f64,
    /// Mean archive cells filled.
    pub cells_mean: f64,
    /// Mean share of correct evaluations.
    pub correct_share: f64,
}

/// The `ablate --json` report.
#[derive(Serialize)]
pub struct Report {
    /// The adapter's name.
    pub adapter: String,
    /// Its key.
    pub adapter_key: String,
    /// Evaluations per search (a cap when `time_s` is set).
    pub budget: u64,
    /// Seconds per search, when the comparison is at equal wall time.
    pub time_s: Option<f64>,
    /// The seeds.
    pub seeds: Vec<u64>,
    /// Per kernel and strategy.
    pub summaries: Vec<Summary>,
    /// Every search.
    pub runs: Vec<SearchRun>,
}

/// The best of a best-so-far curve after `fraction` of the budget (1.0 before any evaluation).
fn at(curve: &[f64], fraction: f64, budget: u64) -> f64 {
    let i = ((budget as f64 * fraction).ceil() as usize).max(1);
    curve
        .get(i.min(curve.len()).saturating_sub(1))
        .copied()
        .unwrap_or(1.0)
}

/// The best of a best-so-far curve `seconds` into the search (1.0 before any evaluation).
fn at_time(curve: &[f64], times: &[f64], seconds: f64) -> f64 {
    curve
        .iter()
        .zip(times)
        .take_while(|(_, t)| **t <= seconds)
        .last()
        .map_or(1.0, |(b, _)| *b)
}

/// The area under a best-so-far step curve over `[0, horizon]`, divided by `horizon`: the mean
/// best speedup over the search. `x` gives where each point of `curve` starts to hold (an
/// evaluation's index plus one, or the second it was reported); before the first, the baseline
/// holds (1.0), and after the last point its value holds to the horizon.
fn mean_best(curve: &[f64], x: &[f64], horizon: f64) -> f64 {
    if horizon <= 0.0 {
        return curve.last().copied().unwrap_or(1.0);
    }
    let (mut area, mut from, mut value) = (0.0, 0.0, 1.0);
    for (&v, &at) in curve.iter().zip(x) {
        let at = at.min(horizon);
        area += value * (at - from);
        from = at;
        value = v;
    }
    area += value * (horizon - from);
    area / horizon
}

impl SearchRun {
    /// The mean best speedup over the search's horizon (see [`mean_best`]): over seconds when the
    /// comparison is at equal wall time, otherwise over the evaluation budget.
    pub fn auc(&self, budget: u64, time_s: Option<f64>) -> f64 {
        match time_s {
            Some(t) => mean_best(&self.best_after, &self.seconds_after, t),
            None => {
                let x: Vec<f64> = (1..=self.best_after.len()).map(|i| i as f64).collect();
                mean_best(&self.best_after, &x, budget as f64)
            }
        }
    }

    /// The best speedup seen after `fraction` of the horizon.
    fn best_at(&self, fraction: f64, budget: u64, time_s: Option<f64>) -> f64 {
        match time_s {
            Some(t) => at_time(&self.best_after, &self.seconds_after, t * fraction),
            None => at(&self.best_after, fraction, budget),
        }
    }
}

/// Runs every strategy on every seed for each kernel of `found` on `evaluator`.
pub fn run(
    found: &[Found],
    evaluator: &mut dyn Evaluator,
    ceilings: Option<&Ceilings>,
    options: &Options,
    mut progress: impl FnMut(Progress<'_>),
) -> Result<Report, AblateError> {
    let adapter = evaluator.adapter().clone();
    let mut runs = Vec::new();
    for f in found {
        let kernel = match &f.resolved {
            Ok(k) => crate::tune::with_tune_shapes(k, &options.tune_shapes).map_err(|message| {
                AblateError::Shapes {
                    kernel: f.name.clone(),
                    message,
                }
            })?,
            Err(e) => {
                progress(Progress::Skipped(f, e.to_string()));
                continue;
            }
        };
        for strategy in &options.strategies {
            for &seed in &options.seeds {
                let config = Config {
                    budget: options.budget,
                    time_s: options.time_s,
                    seed,
                    strategy: strategy.kind,
                    gradients: strategy.gradients,
                    ..Config::default()
                };
                let started = Instant::now();
                let mut best = 1.0f64;
                let mut curve = Vec::new();
                let mut times = Vec::new();
                // The clock starts with the search proper, after the baseline's measurement,
                // as the search's own time limit does.
                let mut searching: Option<Instant> = None;
                let outcome = search::search(&kernel, evaluator, ceilings, &config, |e| match e {
                    search::Event::Baseline(_) => searching = Some(Instant::now()),
                    search::Event::Evaluated(_, r) => {
                        if let Some(s) = r.fitness.speedup {
                            best = best.max(s);
                        }
                        curve.push(best);
                        times.push(searching.map_or(0.0, |t| t.elapsed().as_secs_f64()));
                    }
                    _ => {}
                });
                let outcome = match outcome {
                    Ok(o) => o,
                    Err(e) => {
                        progress(Progress::Failed(f, e.to_string()));
                        break;
                    }
                };
                let r = SearchRun {
                    kernel: f.name.clone(),
                    strategy: strategy.name.clone(),
                    seed,
                    best_after: curve,
                    seconds_after: times,
                    verified: outcome
                        .tuned
                        .as_ref()
                        .and_then(|(_, r)| r.fitness.speedup)
                        .unwrap_or(1.0),
                    best_verified: outcome.best.as_ref().and_then(|(_, r)| r.fitness.speedup),
                    cells_filled: outcome.cells_filled,
                    evaluations: outcome.evaluations,
                    correct: outcome
                        .history
                        .iter()
                        .filter(|(_, r)| r.is_correct())
                        .count() as u64,
                    seconds: started.elapsed().as_secs_f64(),
                    origin: outcome.tuned.as_ref().map(|(c, _)| c.origin.clone()),
                };
                progress(Progress::Ran(&r));
                runs.push(r);
            }
        }
    }
    Ok(Report {
        adapter: adapter.identity.name.clone(),
        adapter_key: adapter.key.to_string(),
        budget: options.budget,
        time_s: options.time_s,
        seeds: options.seeds.clone(),
        summaries: summarise(found, &options.strategies, &runs, options),
        runs,
    })
}

/// Per kernel and strategy, the searches' figures over seeds.
fn summarise(
    found: &[Found],
    strategies: &[Strategy],
    runs: &[SearchRun],
    options: &Options,
) -> Vec<Summary> {
    let (budget, time_s) = (options.budget, options.time_s);
    let mut summaries = Vec::new();
    for f in found {
        for Strategy { name, .. } in strategies {
            let mine: Vec<&SearchRun> = runs
                .iter()
                .filter(|r| r.kernel == f.name && r.strategy == *name)
                .collect();
            if mine.is_empty() {
                continue;
            }
            let n = mine.len() as f64;
            let mean = |g: &dyn Fn(&SearchRun) -> f64| mine.iter().map(|r| g(r)).sum::<f64>() / n;
            summaries.push(Summary {
                kernel: f.name.clone(),
                strategy: name.clone(),
                seeds: mine.len(),
                best_at: [
                    mean(&|r| r.best_at(0.25, budget, time_s)),
                    mean(&|r| r.best_at(0.5, budget, time_s)),
                    mean(&|r| r.best_at(1.0, budget, time_s)),
                ],
                auc: mean(&|r| r.auc(budget, time_s)),
                verified_mean: mean(&|r| r.verified),
                verified_min: mine
                    .iter()
                    .map(|r| r.verified)
                    .fold(f64::INFINITY, f64::min),
                verified_max: mine.iter().map(|r| r.verified).fold(0.0, f64::max),
                cells_mean: mean(&|r| r.cells_filled.unwrap_or(0) as f64),
                correct_share: mean(&|r| r.correct as f64 / r.evaluations.max(1) as f64),
            });
        }
    }
    summaries
}

impl SearchRun {
    /// The line `ablate` prints when the search finishes.
    pub fn line(&self) -> String {
        format!(
            "{} {} seed {}: verified {:.2}x, best seen {:.2}x, {} evaluations, {} cells, {:.0} s",
            self.kernel,
            self.strategy,
            self.seed,
            self.verified,
            self.best_after.last().copied().unwrap_or(1.0),
            self.evaluations,
            self.cells_filled.unwrap_or(0),
            self.seconds
        )
    }
}

impl Report {
    /// The horizon's name and the points `best_at` is taken at, e.g. `@10 / @20 / @40 evals`.
    fn horizon(&self) -> String {
        match self.time_s {
            Some(t) => format!("@{} / @{} / @{} s", secs(t / 4.0), secs(t / 2.0), secs(t)),
            None => format!(
                "@{} / @{} / @{} evals",
                self.budget.div_ceil(4),
                self.budget.div_ceil(2),
                self.budget
            ),
        }
    }

    /// The summaries as a markdown table (for BENCHMARKS.md).
    pub fn markdown(&self) -> String {
        let mut out = format!(
            "| kernel | strategy | best seen {} | mean best over the search (area) | verified (mean, min–max) | cells | correct |\n|---|---|---|--:|---|---|---|\n",
            self.horizon()
        );
        for s in &self.summaries {
            out.push_str(&format!(
                "| {} | {} | {:.2}x / {:.2}x / {:.2}x | {:.2}x | {:.2}x ({:.2}–{:.2}) | {:.1} | {:.0} % |\n",
                s.kernel,
                s.strategy,
                s.best_at[0],
                s.best_at[1],
                s.best_at[2],
                s.auc,
                s.verified_mean,
                s.verified_min,
                s.verified_max,
                s.cells_mean,
                s.correct_share * 100.0
            ));
        }
        out
    }

    /// The summaries as plain lines.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for s in &self.summaries {
            out.push_str(&format!(
                "{} {}: best seen {:.2}x/{:.2}x/{:.2}x {}; mean best over the search {:.2}x; verified {:.2}x ({:.2}–{:.2}) over {} seeds; {:.1} cells\n",
                s.kernel,
                s.strategy,
                s.best_at[0],
                s.best_at[1],
                s.best_at[2],
                self.horizon(),
                s.auc,
                s.verified_mean,
                s.verified_min,
                s.verified_max,
                s.seeds,
                s.cells_mean
            ));
        }
        out
    }
}

/// Seconds as the report prints them: whole seconds, or one decimal below ten.
fn secs(t: f64) -> String {
    if t < 10.0 {
        format!("{t:.1}")
    } else {
        format!("{t:.0}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_at_a_fraction_of_the_budget() {
        let curve = [1.0, 1.2, 1.2, 2.0];
        assert_eq!(at(&curve, 0.25, 4), 1.0);
        assert_eq!(at(&curve, 0.5, 4), 1.2);
        assert_eq!(at(&curve, 1.0, 4), 2.0);
        assert_eq!(at(&curve[..2], 1.0, 4), 1.2, "a search that stopped early");
        assert_eq!(at(&[], 1.0, 4), 1.0);
    }

    #[test]
    fn best_at_a_time_and_the_area_under_the_curve() {
        let curve = [1.0, 2.0, 3.0];
        let times = [1.0, 2.0, 8.0];
        assert_eq!(at_time(&curve, &times, 0.5), 1.0, "nothing reported yet");
        assert_eq!(at_time(&curve, &times, 2.0), 2.0);
        assert_eq!(at_time(&curve, &times, 7.9), 2.0);
        assert_eq!(at_time(&curve, &times, 10.0), 3.0);
        // 1.0 over [0, 2), 2.0 over [2, 8), 3.0 over [8, 10]: (2 + 12 + 6) / 10.
        assert!((mean_best(&curve, &times, 10.0) - 2.0).abs() < 1e-12);
        // The same curve found earlier has the larger area.
        assert!(mean_best(&curve, &[0.5, 1.0, 2.0], 10.0) > mean_best(&curve, &times, 10.0));
        // Points past the horizon (the last evaluation finished after the limit) do not count.
        assert!((mean_best(&[1.0, 5.0], &[1.0, 12.0], 10.0) - 1.0).abs() < 1e-12);
        // Over evaluations: a run that stopped early keeps its last value to the budget.
        let run = SearchRun {
            kernel: "K".into(),
            strategy: "qd".into(),
            seed: 1,
            best_after: vec![1.0, 3.0],
            seconds_after: vec![0.1, 0.2],
            verified: 3.0,
            best_verified: Some(3.0),
            cells_filled: None,
            evaluations: 2,
            correct: 2,
            seconds: 0.2,
            origin: None,
        };
        // 1.0 over [0, 2), 3.0 over [2, 4].
        assert!((run.auc(4, None) - 2.0).abs() < 1e-12);
        assert!((run.auc(0, Some(1.0)) - (0.2 + 3.0 * 0.8)).abs() < 1e-12);
    }

    #[test]
    fn strategies_are_named_as_the_report_names_them() {
        let qd: Strategy = "qd-no-gradients".parse().unwrap();
        assert_eq!((qd.kind, qd.gradients), (StrategyKind::Qd, false));
        let e = "annealing".parse::<Strategy>().unwrap_err().to_string();
        assert!(e.starts_with("unknown strategy `annealing`"), "{e}");
    }
}

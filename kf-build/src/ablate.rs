//! The search strategies side by side at an equal evaluation budget, over several seeds — the
//! ablation behind the claim that quality-diversity search with gradient steering finds faster
//! kernels than greedy or random search (`cargo kernelfoundry ablate`).
//!
//! Nothing is written to the cache. For each kernel, strategy and seed the search runs to its
//! decision; the report gives the best speedup seen after each evaluation (the search's
//! screening measurements), the verified speedup of the final decision, and the archive cells
//! filled, aggregated over seeds. The evaluator is whatever the verb opened (`crate::session`):
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
    /// Candidate evaluations per search (the same for every strategy).
    pub budget: u64,
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
    /// Mean over seeds of the best search speedup at a quarter, half and all of the budget.
    pub best_at: [f64; 3],
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
    /// Evaluations per search.
    pub budget: u64,
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
                    seed,
                    strategy: strategy.kind,
                    gradients: strategy.gradients,
                    ..Config::default()
                };
                let started = Instant::now();
                let mut best = 1.0f64;
                let mut curve = Vec::new();
                let outcome = search::search(&kernel, evaluator, ceilings, &config, |e| {
                    if let search::Event::Evaluated(_, r) = e {
                        if let Some(s) = r.fitness.speedup {
                            best = best.max(s);
                        }
                        curve.push(best);
                    }
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
        seeds: options.seeds.clone(),
        summaries: summarise(found, &options.strategies, &runs, options.budget),
        runs,
    })
}

/// Per kernel and strategy, the searches' figures over seeds.
fn summarise(
    found: &[Found],
    strategies: &[Strategy],
    runs: &[SearchRun],
    budget: u64,
) -> Vec<Summary> {
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
                    mean(&|r| at(&r.best_after, 0.25, budget)),
                    mean(&|r| at(&r.best_after, 0.5, budget)),
                    mean(&|r| at(&r.best_after, 1.0, budget)),
                ],
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
    /// The summaries as a markdown table (for BENCHMARKS.md).
    pub fn markdown(&self) -> String {
        let budget = self.budget;
        let mut out = format!(
            "| kernel | strategy | best seen @{} / @{} / @{} evals | verified (mean, min–max) | cells | correct |\n|---|---|---|---|---|---|\n",
            budget.div_ceil(4),
            budget.div_ceil(2),
            budget
        );
        for s in &self.summaries {
            out.push_str(&format!(
                "| {} | {} | {:.2}x / {:.2}x / {:.2}x | {:.2}x ({:.2}–{:.2}) | {:.1} | {:.0} % |\n",
                s.kernel,
                s.strategy,
                s.best_at[0],
                s.best_at[1],
                s.best_at[2],
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
                "{} {}: best seen {:.2}x/{:.2}x/{:.2}x at 1/4, 1/2, all of {} evaluations; verified {:.2}x ({:.2}–{:.2}) over {} seeds; {:.1} cells\n",
                s.kernel,
                s.strategy,
                s.best_at[0],
                s.best_at[1],
                s.best_at[2],
                self.budget,
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
    fn strategies_are_named_as_the_report_names_them() {
        let qd: Strategy = "qd-no-gradients".parse().unwrap();
        assert_eq!((qd.kind, qd.gradients), (StrategyKind::Qd, false));
        let e = "annealing".parse::<Strategy>().unwrap_err().to_string();
        assert!(e.starts_with("unknown strategy `annealing`"), "{e}");
    }
}

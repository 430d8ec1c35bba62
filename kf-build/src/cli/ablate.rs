//! `cargo kernelfoundry ablate`: the search strategies side by side at an equal evaluation budget,
//! over several seeds — the ablation behind the claim that quality-diversity search with gradient
//! steering finds faster kernels than greedy or random search.
//!
//! Nothing is written to the cache. For each kernel, strategy and seed the search runs to its
//! decision; the report gives the best speedup seen after each evaluation (the search's
//! screening measurements), the verified speedup of the final decision, and the archive cells
//! filled, aggregated over seeds.

use super::{AdapterArgs, WorkspaceArgs, exit, print_json};
use crate::evaluate::Evaluator;
use crate::evaluate::process::WorkerProcess;
use crate::search::{self, Config, StrategyKind};
use anyhow::Context;
use clap::Args;
use serde::Serialize;
use std::time::{Duration, Instant};

#[derive(Args, Debug)]
pub(crate) struct AblateArgs {
    #[command(flatten)]
    workspace: WorkspaceArgs,
    #[command(flatten)]
    kernels: super::KernelArgs,
    #[command(flatten)]
    adapter: AdapterArgs,
    /// Candidate evaluations per search (the same for every strategy).
    #[arg(long, value_name = "N", default_value_t = 40)]
    budget: u64,
    /// Seeds, comma-separated; each strategy runs once per seed.
    #[arg(
        long,
        value_name = "N,…",
        value_delimiter = ',',
        default_value = "1,2,3"
    )]
    seeds: Vec<u64>,
    /// Strategies to compare: `qd` (with gradients), `qd-no-gradients`, `greedy`, `random`.
    #[arg(
        long,
        value_name = "S,…",
        value_delimiter = ',',
        default_value = "qd,qd-no-gradients,greedy,random"
    )]
    strategies: Vec<String>,
    #[command(flatten)]
    shapes: super::ShapeArgs,
    /// Print a markdown table (for BENCHMARKS.md) instead of the plain summary.
    #[arg(long)]
    markdown: bool,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize, Clone)]
struct SearchRun {
    kernel: String,
    strategy: String,
    seed: u64,
    /// Best search speedup after each evaluation (1.0 until a correct candidate beats it).
    best_after: Vec<f64>,
    /// The verified speedup of the final decision (1.0 when the baseline stayed).
    verified: f64,
    /// Speedup of the best finalist that passed the final verification, accepted or not.
    best_verified: Option<f64>,
    cells_filled: Option<usize>,
    evaluations: u64,
    correct: u64,
    seconds: f64,
    origin: Option<String>,
}

#[derive(Serialize)]
struct Summary {
    kernel: String,
    strategy: String,
    seeds: usize,
    /// Mean over seeds of the best search speedup at a quarter, half and all of the budget.
    best_at: [f64; 3],
    /// Mean and smallest/largest verified speedup of the final decision over seeds.
    verified_mean: f64,
    verified_min: f64,
    verified_max: f64,
    cells_mean: f64,
    correct_share: f64,
}

#[derive(Serialize)]
struct Report {
    adapter: String,
    adapter_key: String,
    budget: u64,
    seeds: Vec<u64>,
    summaries: Vec<Summary>,
    runs: Vec<SearchRun>,
}

fn strategy(name: &str) -> anyhow::Result<(StrategyKind, bool)> {
    Ok(match name {
        "qd" => (StrategyKind::Qd, true),
        "qd-no-gradients" => (StrategyKind::Qd, false),
        "greedy" => (StrategyKind::Greedy, false),
        "random" => (StrategyKind::Random, false),
        "auto" => (StrategyKind::Auto, false),
        "exhaustive" => (StrategyKind::Exhaustive, false),
        other => anyhow::bail!(
            "unknown strategy `{other}`; use qd, qd-no-gradients, greedy, random, auto or exhaustive"
        ),
    })
}

fn at(curve: &[f64], fraction: f64, budget: u64) -> f64 {
    let i = ((budget as f64 * fraction).ceil() as usize).max(1);
    curve
        .get(i.min(curve.len()).saturating_sub(1))
        .copied()
        .unwrap_or(1.0)
}

pub(crate) fn run(args: AblateArgs) -> anyhow::Result<i32> {
    let (ws, mut found) = args.workspace.discover()?;
    let names: Vec<String> = found.iter().map(|f| f.name.clone()).collect();
    args.kernels.select(&mut found)?;
    if found.is_empty() {
        anyhow::bail!("no marked kernel matches the selection");
    }
    args.shapes.check(&found, &names)?;
    let strategies: Vec<(String, StrategyKind, bool)> = args
        .strategies
        .iter()
        .map(|s| strategy(s).map(|(k, g)| (s.clone(), k, g)))
        .collect::<anyhow::Result<_>>()?;
    crate::gpu::select(&crate::gpu::instance(), &args.adapter.selector())?;
    let mut worker = WorkerProcess::start(args.adapter.selector(), Duration::from_secs(600))
        .context("cannot start the evaluation worker")?;
    let adapter = worker.adapter().clone();
    let ceilings = crate::tune::ceilings(&mut worker, Some(&ws.root), |name| {
        if !args.json {
            eprintln!("measuring copy bandwidth and FMA rate of {name} …");
        }
    });
    let mut runs = Vec::new();
    for f in &found {
        let kernel = match &f.resolved {
            Ok(k) => crate::tune::with_tune_shapes(k, &args.shapes.tune_shapes)
                .map_err(|e| anyhow::anyhow!("{}: {e}", f.name))?,
            Err(e) => {
                eprintln!("{}: skipped, its spec does not resolve: {e}", f.name);
                continue;
            }
        };
        for (name, kind, gradients) in &strategies {
            for &seed in &args.seeds {
                let config = Config {
                    budget: args.budget,
                    seed,
                    strategy: *kind,
                    gradients: *gradients,
                    ..Config::default()
                };
                let started = Instant::now();
                let mut best = 1.0f64;
                let mut curve = Vec::new();
                let outcome =
                    search::search(&kernel, &mut worker, ceilings.as_ref(), &config, |e| {
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
                        eprintln!("{}: {e}", f.name);
                        break;
                    }
                };
                let r = SearchRun {
                    kernel: f.name.clone(),
                    strategy: name.clone(),
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
                if !args.json {
                    eprintln!(
                        "{} {name} seed {seed}: verified {:.2}x, best seen {:.2}x, {} evaluations, {} cells, {:.0} s",
                        f.name,
                        r.verified,
                        r.best_after.last().copied().unwrap_or(1.0),
                        r.evaluations,
                        r.cells_filled.unwrap_or(0),
                        r.seconds
                    );
                }
                runs.push(r);
            }
        }
    }
    let mut summaries = Vec::new();
    for f in &found {
        for (name, _, _) in &strategies {
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
                    mean(&|r| at(&r.best_after, 0.25, args.budget)),
                    mean(&|r| at(&r.best_after, 0.5, args.budget)),
                    mean(&|r| at(&r.best_after, 1.0, args.budget)),
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
    let report = Report {
        adapter: adapter.identity.name.clone(),
        adapter_key: adapter.key.to_string(),
        budget: args.budget,
        seeds: args.seeds.clone(),
        summaries,
        runs,
    };
    if args.json {
        print_json(&report);
    } else if args.markdown {
        println!(
            "| kernel | strategy | best seen @{} / @{} / @{} evals | verified (mean, min–max) | cells | correct |",
            args.budget.div_ceil(4),
            args.budget.div_ceil(2),
            args.budget
        );
        println!("|---|---|---|---|---|---|");
        for s in &report.summaries {
            println!(
                "| {} | {} | {:.2}x / {:.2}x / {:.2}x | {:.2}x ({:.2}–{:.2}) | {:.1} | {:.0} % |",
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
            );
        }
    } else {
        for s in &report.summaries {
            println!(
                "{} {}: best seen {:.2}x/{:.2}x/{:.2}x at 1/4, 1/2, all of {} evaluations; verified {:.2}x ({:.2}–{:.2}) over {} seeds; {:.1} cells",
                s.kernel,
                s.strategy,
                s.best_at[0],
                s.best_at[1],
                s.best_at[2],
                args.budget,
                s.verified_mean,
                s.verified_min,
                s.verified_max,
                s.seeds,
                s.cells_mean
            );
        }
    }
    Ok(exit::OK)
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
}

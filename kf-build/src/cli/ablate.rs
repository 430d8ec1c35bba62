//! `cargo kernelfoundry ablate`: the arguments of the strategy comparison ([`crate::ablate`]),
//! the evaluation backend opened through [`crate::session`] (a local worker, `--worker-cmd` or
//! `--broker`), and the report printed.

use super::{AdapterArgs, WorkspaceArgs, exit, print_json};
use crate::ablate::{self, Options, Progress, Strategy};
use anyhow::Context;
use clap::Args;
use std::time::Duration;

#[derive(Args, Debug)]
pub(crate) struct AblateArgs {
    #[command(flatten)]
    workspace: WorkspaceArgs,
    #[command(flatten)]
    kernels: super::KernelArgs,
    #[command(flatten)]
    adapter: AdapterArgs,
    #[command(flatten)]
    fleet: super::FleetArgs,
    /// Candidate evaluations per search (the same for every strategy). With `--time`, a cap
    /// (default then: no practical cap).
    #[arg(long, value_name = "N")]
    budget: Option<u64>,
    /// Compare at equal wall time: every search stops after this many seconds (the final
    /// verification is extra). The report's curves and areas then run over seconds. Default:
    /// an equal budget of evaluations (40).
    #[arg(long = "time", value_name = "SECS", value_parser = positive_secs)]
    time: Option<f64>,
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

/// `--time`: a positive number of seconds.
pub(crate) fn positive_secs(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(t) if t > 0.0 && t.is_finite() => Ok(t),
        _ => Err(format!("`{s}` is not a positive number of seconds")),
    }
}

pub(crate) fn run(args: AblateArgs) -> anyhow::Result<i32> {
    let (ws, mut found) = args.workspace.discover()?;
    let names: Vec<String> = found.iter().map(|f| f.name.clone()).collect();
    args.kernels.select(&mut found)?;
    if found.is_empty() {
        anyhow::bail!("no marked kernel matches the selection");
    }
    args.shapes.check(&found, &names)?;
    let options = Options {
        budget: args
            .budget
            .unwrap_or(if args.time.is_some() { 100_000 } else { 40 }),
        time_s: args.time,
        seeds: args.seeds.clone(),
        strategies: args
            .strategies
            .iter()
            .map(|s| s.parse::<Strategy>())
            .collect::<Result<_, _>>()?,
        tune_shapes: args.shapes.tune_shapes.clone(),
    };
    let mut backend = match crate::session::open_one(
        &args.fleet.options(),
        args.adapter.selector(),
        Duration::from_secs(600),
    )
    .context("cannot start the ablation")?
    {
        Ok(b) => b,
        Err(unserved) => {
            eprintln!("error: {unserved}");
            return Ok(exit::NO_GPU);
        }
    };
    let ceilings = crate::tune::ceilings(backend.evaluator(), Some(&ws.root), |name| {
        if !args.json {
            eprintln!("measuring copy bandwidth and FMA rate of {name} …");
        }
    });
    let report = ablate::run(
        &found,
        backend.evaluator(),
        ceilings.as_ref(),
        &options,
        |p| match p {
            Progress::Skipped(f, why) => {
                eprintln!("{}: skipped, its spec does not resolve: {why}", f.name)
            }
            Progress::Failed(f, e) => eprintln!("{}: {e}", f.name),
            Progress::Ran(r) if !args.json => eprintln!("{}", r.line()),
            Progress::Ran(_) => {}
        },
    )?;
    if args.json {
        print_json(&report);
    } else if args.markdown {
        print!("{}", report.markdown());
    } else {
        print!("{}", report.text());
        for note in backend.notes() {
            eprintln!("note: {note}");
        }
    }
    Ok(exit::OK)
}

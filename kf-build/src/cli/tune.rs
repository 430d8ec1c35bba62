//! `cargo kernelfoundry tune`: the arguments of a tune ([`crate::tune::targets`], on a worker
//! process, local or through `--worker-cmd`, or on the workers of each adapter key behind a
//! broker), and what it returns printed.

use super::{AdapterArgs, WorkspaceArgs, exit, print_json};
use crate::cache::run::Run;
use crate::search::StrategyKind;
use crate::tune::Options;
use crate::tune::llm::LlmFlags;
use crate::tune::targets::{self, Outcome, Request};
use anyhow::Context;
use clap::Args;
use clap::builder::{PossibleValuesParser, TypedValueParser};

#[derive(Args, Debug)]
pub(crate) struct TuneArgs {
    #[command(flatten)]
    workspace: WorkspaceArgs,
    #[command(flatten)]
    kernels: super::KernelArgs,
    #[command(flatten)]
    adapter: AdapterArgs,
    /// Candidate evaluations per kernel (the final verification of the best is extra).
    #[arg(long, value_name = "N", default_value_t = 32)]
    budget: u64,
    /// How to search. `qd`: evolve the kernel's code (rewrite operators and parameters, steered by
    /// a quality-diversity archive with gradients). `greedy`: always build on the best so far.
    /// `random`: build on a random correct candidate. `exhaustive`: only the template parameters,
    /// every point within the budget. `auto`: the template parameters, exhaustively when they fit
    /// the budget, by successive halving otherwise.
    #[arg(long, default_value = "qd", value_parser = strategy_parser())]
    strategy: StrategyKind,
    /// Stop searching a kernel after this many seconds (the final verification is extra).
    #[arg(long = "time", value_name = "SECS")]
    time: Option<f64>,
    /// Turn off gradient-informed steering of the `qd` search.
    #[arg(long)]
    no_gradients: bool,
    /// Only these offline rewrite operators in the evolution strategies, e.g.
    /// `--operators param,unroll` (default: all; `list` them with an unknown name).
    #[arg(long, value_name = "NAME,…", value_delimiter = ',')]
    operators: Option<Vec<String>>,
    #[command(flatten)]
    shapes: super::ShapeArgs,
    /// Continue the newest unfinished run (killed or interrupted) with its options, answering
    /// every evaluation it already finished from its journal.
    #[arg(long)]
    resume: bool,
    /// Retune kernels that already have a cache entry for this adapter.
    #[arg(long)]
    force: bool,
    /// Ask an LLM for new kernels too (any OpenAI-compatible endpoint: KERNELFOUNDRY_LLM_URL,
    /// KERNELFOUNDRY_LLM_MODEL, KERNELFOUNDRY_LLM_API_KEY or OPENAI_API_KEY, or
    /// [workspace.metadata.kernelfoundry.llm] in Cargo.toml). Needs an evolution strategy
    /// (qd, greedy or random).
    #[arg(long, help_heading = "LLM")]
    llm: bool,
    /// Do not ask an LLM, even where the configuration enables it.
    #[arg(long, help_heading = "LLM", conflicts_with = "llm")]
    no_llm: bool,
    /// Answer LLM requests only from the response cache of earlier runs; send nothing (implies
    /// --llm). A request not in the cache gets no answer (the summary counts them).
    #[arg(long, help_heading = "LLM", conflicts_with = "no_llm")]
    llm_replay_only: bool,
    /// With --llm: print the first prompt the tune would send, and send nothing.
    #[arg(long, help_heading = "LLM")]
    dry_run: bool,
    /// Seconds one candidate evaluation may take before its worker is killed. Default: ten times
    /// the baseline's evaluation, at least 10 s.
    #[arg(long, value_name = "SECS")]
    timeout: Option<f64>,
    /// Seed of every random choice of the search (same seed, same candidates).
    #[arg(long, value_name = "N", default_value_t = 42)]
    seed: u64,
    /// List every evaluated candidate with its verdict.
    #[arg(long, short = 'v')]
    verbose: bool,
    /// Print one JSON object on stdout (with several adapter keys: `{"targets": [..]}`, one
    /// object per key).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    fleet: super::FleetArgs,
}

/// `--strategy`: one of the search strategies, by the name the run and the entry record.
fn strategy_parser() -> impl TypedValueParser<Value = StrategyKind> {
    let all = [
        StrategyKind::Qd,
        StrategyKind::Greedy,
        StrategyKind::Random,
        StrategyKind::Exhaustive,
        StrategyKind::Auto,
    ];
    PossibleValuesParser::new(all.map(StrategyKind::as_str)).map(move |s| {
        *all.iter()
            .find(|k| k.as_str() == s)
            .expect("a possible value")
    })
}

pub(crate) fn run(mut args: TuneArgs) -> anyhow::Result<i32> {
    let (ws, mut found) = args.workspace.discover()?;
    let resumed = if args.resume {
        let run = Run::latest_unfinished(&ws.target_dir).with_context(|| {
            format!(
                "there is no unfinished tune run under {} to resume",
                ws.target_dir.join("kernelfoundry/runs").display()
            )
        })?;
        let o = &run.record.options;
        args.strategy = match o.strategy.as_str() {
            "greedy" => StrategyKind::Greedy,
            "random" => StrategyKind::Random,
            "exhaustive" => StrategyKind::Exhaustive,
            "auto" => StrategyKind::Auto,
            _ => StrategyKind::Qd,
        };
        args.seed = o.seed;
        args.budget = o.budget;
        args.time = o.time_s;
        args.no_gradients = !o.gradients;
        args.shapes.tune_shapes = o.tune_shapes.clone();
        args.force = o.force;
        args.kernels.kernels = o.kernels.clone();
        args.timeout = o.timeout_s;
        args.operators = o.operators.clone();
        args.llm = o.llm;
        args.no_llm = !o.llm;
        args.llm_replay_only = o.llm_replay_only;
        if args.fleet.broker.is_some() {
            // A run tunes for one adapter key: resume it on that key's workers.
            args.fleet.adapter_keys = vec![run.record.adapter_key.clone()];
        }
        if !args.json {
            eprintln!("resuming the run in {}", run.dir.display());
        }
        Some(run)
    } else {
        None
    };
    if found.is_empty() {
        anyhow::bail!(
            "no #[kernelfoundry] kernels found in {} (select packages with -p or --workspace)",
            ws.root.display()
        );
    }
    let names: Vec<String> = found.iter().map(|f| f.name.clone()).collect();
    args.kernels.select(&mut found)?;
    // The run records the names, not the patterns, so that a resumed run tunes the same kernels.
    let mut kernels: Vec<String> = Vec::new();
    if !args.kernels.kernels.is_empty() {
        kernels = found.iter().map(|f| f.name.clone()).collect();
        kernels.dedup();
    }
    args.shapes.check(&found, &names)?;
    let flags = LlmFlags {
        llm: args.llm,
        no_llm: args.no_llm,
        replay_only: args.llm_replay_only,
    };
    let request = Request {
        options: Options {
            operators: args.operators.clone(),
            llm: None,
            budget: args.budget,
            force: args.force,
            timeout: args.timeout,
            seed: args.seed,
            strategy: args.strategy,
            time_s: args.time,
            gradients: !args.no_gradients,
            tune_shapes: args.shapes.tune_shapes.clone(),
            width: 1,
        },
        kernels,
        llm: crate::tune::llm::config(flags, &ws)?,
        llm_replay_only: args.llm_replay_only,
        dry_run: args.dry_run,
        fleet: args.fleet.options(),
        adapter: args.adapter.selector(),
        resumed,
        quiet: args.json,
    };
    request.check()?;
    super::drop_skipped(&mut found, args.json)?;
    let say = |line: String| {
        if !args.json {
            eprintln!("{line}");
        }
    };
    let tuned = match targets::tune(&ws, &found, request, say)? {
        Outcome::Unserved(unserved) => {
            eprintln!("error: {unserved}");
            return Ok(exit::NO_GPU);
        }
        Outcome::DryRun(text) => {
            print!("{text}");
            return Ok(exit::OK);
        }
        Outcome::Tuned(tuned) => tuned,
    };
    if args.json {
        if let Some(json) = tuned.json(args.verbose) {
            print_json(&json);
        }
    } else {
        print!("{}", tuned.text(args.verbose));
        for note in tuned.notes() {
            eprintln!("note: {note}");
        }
    }
    let faults = tuned.faults();
    for fault in &faults {
        eprintln!("error: {fault}");
    }
    Ok(if !faults.is_empty() {
        exit::NO_GPU
    } else if tuned.failed() {
        exit::FAILED
    } else {
        exit::OK
    })
}

//! `cargo kernelfoundry tune`: parse the arguments, run the tune pipeline ([`crate::tune`]) on a
//! worker process, print what it returns.

use super::{AdapterArgs, WorkspaceArgs, exit, fmt_ns, print_json};
use crate::harness::Evaluator;
use crate::harness::worker::WorkerProcess;
use crate::run::{Run, RunOptions};
use crate::search::{Event, StrategyKind};
use crate::tune::{self, KernelResult, Options, Status};
use anyhow::Context;
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;
use std::time::Duration;

#[derive(Args, Debug)]
pub(crate) struct TuneArgs {
    #[command(flatten)]
    workspace: WorkspaceArgs,
    /// Only the kernel with this static name (e.g. SAXPY).
    #[arg(long, value_name = "NAME")]
    kernel: Option<String>,
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
    #[arg(long, value_enum, default_value = "qd")]
    strategy: StrategyArg,
    /// Stop searching a kernel after this many seconds (the final verification is extra).
    #[arg(long = "time", value_name = "SECS")]
    time: Option<f64>,
    /// Turn off gradient-informed steering of the `qd` search.
    #[arg(long)]
    no_gradients: bool,
    /// Tune on this shape instead of the attribute's tune shapes, e.g. `rows=4096,cols=4096`
    /// (may be repeated; unnamed sizes keep their defaults). The entry records the shapes.
    #[arg(long = "tune-shape", value_name = "NAME=N,…")]
    tune_shapes: Vec<String>,
    /// Continue the newest unfinished run (killed or interrupted) with its options, answering
    /// every evaluation it already finished from its journal.
    #[arg(long)]
    resume: bool,
    /// Retune kernels that already have a cache entry for this adapter.
    #[arg(long)]
    force: bool,
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
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum StrategyArg {
    Qd,
    Greedy,
    Random,
    Exhaustive,
    Auto,
}

impl From<StrategyArg> for StrategyKind {
    fn from(s: StrategyArg) -> Self {
        match s {
            StrategyArg::Qd => StrategyKind::Qd,
            StrategyArg::Greedy => StrategyKind::Greedy,
            StrategyArg::Random => StrategyKind::Random,
            StrategyArg::Exhaustive => StrategyKind::Exhaustive,
            StrategyArg::Auto => StrategyKind::Auto,
        }
    }
}

#[derive(Serialize)]
struct AdapterOut {
    name: String,
    backend: String,
    key: String,
}

#[derive(Serialize)]
struct KernelOut<'a> {
    #[serde(flatten)]
    result: &'a KernelResult,
    #[serde(skip_serializing_if = "Option::is_none")]
    candidates: Option<&'a [tune::CandidateLine]>,
}

#[derive(Serialize)]
struct Report<'a> {
    adapter: AdapterOut,
    kernels: Vec<KernelOut<'a>>,
}

pub(crate) fn run(mut args: TuneArgs) -> anyhow::Result<i32> {
    let (ws, mut found) = args.workspace.discover()?;
    let mut resumed = if args.resume {
        let run = Run::latest_unfinished(&ws.target_dir).with_context(|| {
            format!(
                "there is no unfinished tune run under {} to resume",
                ws.target_dir.join("kernelfoundry/runs").display()
            )
        })?;
        let o = &run.record.options;
        args.strategy = match o.strategy.as_str() {
            "greedy" => StrategyArg::Greedy,
            "random" => StrategyArg::Random,
            "exhaustive" => StrategyArg::Exhaustive,
            "auto" => StrategyArg::Auto,
            _ => StrategyArg::Qd,
        };
        args.seed = o.seed;
        args.budget = o.budget;
        args.time = o.time_s;
        args.no_gradients = !o.gradients;
        args.tune_shapes = o.tune_shapes.clone();
        args.force = o.force;
        args.kernel = o.kernel.clone();
        args.timeout = o.timeout_s;
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
    if let Some(name) = &args.kernel {
        let names: Vec<String> = found.iter().map(|f| f.name.clone()).collect();
        found.retain(|f| f.name == *name);
        if found.is_empty() {
            anyhow::bail!(
                "no kernel named `{name}`; the workspace has: {}",
                names.join(", ")
            );
        }
    }
    super::drop_skipped(&mut found, args.json)?;
    // Check the adapter here first, so a missing GPU or a bad selector is a typed error.
    crate::gpu::select(&crate::gpu::instance(), &args.adapter.selector())?;
    let mut worker = WorkerProcess::start(
        args.adapter.selector(),
        args.timeout
            .map_or(Duration::from_secs(600), Duration::from_secs_f64),
    )
    .context("cannot start tuning")?;
    let adapter = worker.adapter().clone();
    if !args.json {
        eprintln!(
            "tuning on [{}] {} (key {})",
            adapter.index,
            adapter.identity.describe(),
            adapter.key
        );
    }
    let ceilings = tune::ceilings(&mut worker, Some(&ws.root), |name| {
        if !args.json {
            eprintln!("measuring copy bandwidth and FMA rate of {name} …");
        }
    });
    let options = Options {
        budget: args.budget,
        force: args.force,
        timeout: args.timeout,
        seed: args.seed,
        strategy: args.strategy.into(),
        time_s: args.time,
        gradients: !args.no_gradients,
        tune_shapes: args.tune_shapes.clone(),
    };
    let mut run = match resumed.take() {
        Some(r) => r,
        None => Run::create(
            &ws.target_dir,
            &adapter.key.to_string(),
            RunOptions {
                strategy: options.strategy.as_str().to_owned(),
                seed: options.seed,
                budget: options.budget,
                time_s: options.time_s,
                gradients: options.gradients,
                tune_shapes: options.tune_shapes.clone(),
                force: options.force,
                kernel: args.kernel.clone(),
                timeout_s: options.timeout,
            },
        )
        .with_context(|| {
            format!(
                "cannot create a run directory under {}",
                ws.target_dir.display()
            )
        })?,
    };
    let mut results = Vec::new();
    for f in &found {
        let bar = progress_bar(&f.name, args.budget, args.json);
        let mut best = 0.0f64;
        let mut cells = 0usize;
        let started = std::time::Instant::now();
        let mut done = 0u64;
        let result = tune::tune_kernel(
            f,
            &mut worker,
            ceilings.as_ref(),
            &options,
            Some(&run),
            |event| match event {
                Event::Baseline(_) => bar.set_message("searching"),
                Event::Evaluated(_, report) => {
                    bar.inc(1);
                    done += 1;
                    if let Some(s) = report.fitness.speedup {
                        best = best.max(s);
                    }
                    let rate = done as f64 / started.elapsed().as_secs_f64().max(1e-3);
                    bar.set_message(format!("best {best:.2}x, {cells} cells, {rate:.1} eval/s"));
                }
                Event::Checkpoint(state) => {
                    if let Some(n) = state
                        .pointer("/stats/cells_filled")
                        .and_then(serde_json::Value::as_u64)
                    {
                        cells = n as usize;
                    }
                }
                Event::Final(_, _) => {
                    bar.set_length(bar.position());
                    bar.set_message(format!("best {best:.2}x, final verification"));
                }
            },
        );
        bar.finish_and_clear();
        results.push(result);
    }
    crate::store::remember_ceilings(&ws.root, worker.measured.as_ref());
    if let Err(e) = run.finish() {
        log::warn!("could not mark the run {} finished: {e}", run.dir.display());
    }
    let failed = results.iter().any(|k| k.status == Status::Failed);
    if args.json {
        print_json(&Report {
            adapter: AdapterOut {
                name: adapter.identity.name.clone(),
                backend: adapter.identity.backend.clone(),
                key: adapter.key.to_string(),
            },
            kernels: results
                .iter()
                .map(|r| KernelOut {
                    result: r,
                    candidates: args.verbose.then_some(r.candidates.as_slice()),
                })
                .collect(),
        });
    } else {
        for k in &results {
            print_human(k, args.verbose);
        }
        if worker.restarts > 0 {
            eprintln!(
                "note: the evaluation worker was restarted {} time(s) after timeouts or crashes",
                worker.restarts
            );
        }
    }
    Ok(if failed { exit::FAILED } else { exit::OK })
}

fn progress_bar(name: &str, budget: u64, hidden: bool) -> ProgressBar {
    if hidden {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(budget), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{prefix:>12} [{bar:24}] {pos}/{len} {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_prefix(name.to_owned());
    bar.set_message("measuring the baseline");
    bar
}

fn print_human(k: &KernelResult, verbose: bool) {
    let file = k.cache_file.as_deref().unwrap_or("");
    if k.status == Status::Failed {
        println!(
            "{} ({}): failed\n    {}",
            k.name,
            k.package,
            k.error.as_deref().unwrap_or("").replace('\n', "\n    ")
        );
        return;
    }
    let mut extra = String::new();
    if !k.rejected.is_empty() {
        let rejected: Vec<String> = k.rejected.iter().map(|(r, n)| format!("{n} {r}")).collect();
        extra.push_str(&format!(", rejected: {}", rejected.join(", ")));
    }
    if let Some(r) = &k.roofline {
        extra.push_str(&format!(
            ", {}-bound at {:.0} % of the adapter's ceiling",
            r.bound,
            r.fraction * 100.0
        ));
    }
    println!(
        "{} ({}): {}{} {:.2}x (baseline {} → {}), {} evaluations{extra}\n    {file}",
        k.name,
        k.package,
        k.status.as_str(),
        k.variant
            .as_deref()
            .map(|v| format!(" {v}"))
            .unwrap_or_default(),
        k.speedup.unwrap_or(1.0),
        fmt_ns(k.baseline_ns.unwrap_or(0.0)),
        fmt_ns(k.best_ns.unwrap_or(0.0)),
        k.evaluations,
    );
    if let Some(origin) = &k.origin {
        println!(
            "    made by: {origin}{}",
            k.descriptor
                .as_deref()
                .map(|d| format!(" (cell {d})"))
                .unwrap_or_default()
        );
    }
    if let (Some(strategy), Some(cells)) = (&k.strategy, k.cells_filled) {
        println!(
            "    search: {strategy}, seed {}, {cells} archive cells filled",
            k.seed.unwrap_or(0)
        );
    }
    if let Some(v) = &k.verdict
        && k.status != Status::Tuned
    {
        println!("    why: {}", v.describe());
    }
    for note in &k.notes {
        println!("    note: {note}");
    }
    if verbose {
        for c in &k.candidates {
            let verdict = match (&c.reason, c.speedup) {
                (Some(r), _) => format!("level {} {r}", c.level),
                (None, Some(s)) => format!("level 5 {s:.2}x"),
                (None, None) => format!("level {}", c.level),
            };
            println!("    {:5} {} {verdict}  ({})", c.phase, c.id, c.origin);
        }
    }
}

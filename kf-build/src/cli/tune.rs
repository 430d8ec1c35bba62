//! `cargo kernelfoundry tune`: parse the arguments, run the tune pipeline ([`crate::tune`]) on a
//! worker process (local, or reached through `--worker-cmd`) or on the workers of each adapter key
//! behind a broker (`--broker`, one archive, run and cache entry per key), print what it returns.

use super::{AdapterArgs, WorkspaceArgs, exit, fmt_ns, print_json};
use crate::cache::run::{Run, RunOptions};
use crate::search::{Event, StrategyKind};
use crate::tune::{self, KernelResult, Options, Status};
use anyhow::Context;
use clap::Args;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;
use std::time::Duration;

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
    #[arg(long, value_enum, default_value = "qd")]
    strategy: StrategyArg,
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
    let selected: Vec<String> = if args.kernels.kernels.is_empty() {
        Vec::new()
    } else {
        let mut selected: Vec<String> = found.iter().map(|f| f.name.clone()).collect();
        selected.dedup();
        selected
    };
    args.shapes.check(&found, &names)?;
    if let Some(names) = &args.operators {
        let known: Vec<&str> = crate::operators::all().iter().map(|o| o.name()).collect();
        if let Some(bad) = names.iter().find(|n| !known.contains(&n.as_str())) {
            anyhow::bail!(
                "--operators names `{bad}`, which is not an operator; they are {}",
                known.join(", ")
            );
        }
    }
    let llm_config = llm_config(&args, &ws)?;
    if args.dry_run && llm_config.is_none() {
        anyhow::bail!("--dry-run shows the first LLM prompt; it needs --llm");
    }
    if llm_config.is_some() && matches!(args.strategy, StrategyArg::Exhaustive | StrategyArg::Auto)
    {
        anyhow::bail!(
            "--llm needs an evolution strategy (--strategy qd, greedy or random); `{}` only searches template parameters",
            StrategyKind::from(args.strategy).as_str()
        );
    }
    super::drop_skipped(&mut found, args.json)?;
    let timeout = args
        .timeout
        .map_or(Duration::from_secs(600), Duration::from_secs_f64);
    let backends =
        match crate::session::open(&args.fleet.options(), args.adapter.selector(), timeout)
            .context("cannot start tuning")?
        {
            Ok(b) => b,
            Err(unserved) => {
                eprintln!("error: {unserved}");
                return Ok(exit::NO_GPU);
            }
        };
    let islands = crate::evolve::ArchiveConfig::default().islands.max(1);
    let mut targets = Vec::new();
    for mut backend in backends {
        let adapter = backend.evaluator().adapter().clone();
        let workers = backend.evaluator().parallelism();
        if !args.json {
            eprintln!(
                "tuning on [{}] {} (key {}){}",
                adapter.index,
                adapter.identity.describe(),
                adapter.key,
                backend.describe()
            );
        }
        let ceilings = tune::ceilings(backend.evaluator(), Some(&ws.root), |name| {
            if !args.json {
                eprintln!("measuring copy bandwidth and FMA rate of {name} …");
            }
        });
        let width = match &resumed {
            Some(run) => run.record.options.width,
            None => workers.div_ceil(islands).clamp(1, 8),
        };
        targets.push(Target {
            backend,
            adapter,
            ceilings,
            width,
            run: None,
            results: Vec::new(),
            fault: None,
        });
    }
    if let Some(config) = &llm_config
        && args.dry_run
    {
        let target = &targets[0];
        let kernel = found
            .iter()
            .find_map(|f| f.resolved.as_ref().ok())
            .context("no kernel of the selection resolves, so there is no prompt to show")?;
        let kernel =
            tune::with_tune_shapes(kernel, &args.shapes.tune_shapes).map_err(anyhow::Error::msg)?;
        let request =
            crate::llm::first_request(config, &kernel, &target.adapter, target.ceilings.as_ref());
        println!(
            "dry run: the first request would go to {} (model {}, temperature {}, max_tokens {}; API key {}); nothing was sent",
            crate::llm::protocol::endpoint(&config.url),
            request.model,
            request.temperature,
            request.max_tokens,
            if config.api_key.is_some() {
                "set"
            } else {
                "not set"
            },
        );
        for m in &request.messages {
            println!("\n----- {} -----\n{}", m.role, m.content);
        }
        return Ok(exit::OK);
    }
    let llm = match llm_config {
        Some(config) => {
            let cache = match &config.cache_dir {
                Some(d) if d.is_relative() => ws.root.join(d),
                Some(d) => d.clone(),
                None => ws.target_dir.join("kernelfoundry").join("llm-cache"),
            };
            let session = crate::llm::Session::new(config, &cache).map_err(anyhow::Error::msg)?;
            if !args.json {
                let c = session.config();
                eprintln!(
                    "asking {} ({}) for kernels too{}; answers cached in {}",
                    c.models
                        .iter()
                        .map(|m| m.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    crate::llm::protocol::endpoint(&c.url),
                    if c.replay_only {
                        ", replaying only"
                    } else {
                        ""
                    },
                    cache.display()
                );
            }
            Some(std::sync::Arc::new(session))
        }
        None => None,
    };
    let options = Options {
        operators: args.operators.clone(),
        llm: llm.clone(),
        budget: args.budget,
        force: args.force,
        timeout: args.timeout,
        seed: args.seed,
        strategy: args.strategy.into(),
        time_s: args.time,
        gradients: !args.no_gradients,
        tune_shapes: args.shapes.tune_shapes.clone(),
        width: 1,
    };
    // Run directories are created one after another: their names come from the clock.
    for target in &mut targets {
        let run = match resumed.take() {
            Some(r) => r,
            None => Run::create(
                &ws.target_dir,
                &target.adapter.key.to_string(),
                RunOptions {
                    strategy: options.strategy.as_str().to_owned(),
                    seed: options.seed,
                    budget: options.budget,
                    time_s: options.time_s,
                    gradients: options.gradients,
                    tune_shapes: options.tune_shapes.clone(),
                    force: options.force,
                    kernels: selected.clone(),
                    timeout_s: options.timeout,
                    operators: options.operators.clone(),
                    llm: options.llm.is_some(),
                    llm_replay_only: args.llm_replay_only,
                    width: target.width,
                },
            )
            .with_context(|| {
                format!(
                    "cannot create a run directory under {}",
                    ws.target_dir.display()
                )
            })?,
        };
        target.run = Some(run);
    }
    let bars = MultiProgress::with_draw_target(if args.json {
        ProgressDrawTarget::hidden()
    } else {
        ProgressDrawTarget::stderr()
    });
    let several = targets.len() > 1;
    let view = TargetView {
        found: &found,
        options: &options,
        bars: &bars,
        several,
        budget: args.budget,
        root: &ws.root,
    };
    if several {
        // One archive per adapter key, searched at the same time: each target's workers are
        // busy with its own batches.
        std::thread::scope(|scope| {
            for target in &mut targets {
                let view = &view;
                scope.spawn(move || tune_target(target, view));
            }
        });
    } else {
        for target in &mut targets {
            tune_target(target, &view);
        }
    }
    let failed = targets
        .iter()
        .flat_map(|t| &t.results)
        .any(|k| k.status == Status::Failed);
    if args.json {
        let reports: Vec<Report<'_>> = targets
            .iter()
            .map(|t| Report {
                adapter: AdapterOut {
                    name: t.adapter.identity.name.clone(),
                    backend: t.adapter.identity.backend.clone(),
                    key: t.adapter.key.to_string(),
                },
                kernels: t
                    .results
                    .iter()
                    .map(|r| KernelOut {
                        result: r,
                        candidates: args.verbose.then_some(r.candidates.as_slice()),
                    })
                    .collect(),
            })
            .collect();
        if several {
            print_json(&serde_json::json!({ "targets": reports }));
        } else if let Some(report) = reports.first() {
            print_json(report);
        }
    } else {
        for t in &targets {
            if several {
                println!("{} (key {}):", t.adapter.identity.describe(), t.adapter.key);
            }
            for k in &t.results {
                print_human(k, args.verbose);
            }
            for note in t.backend.notes() {
                eprintln!("note: {note}");
            }
        }
        if let Some(why) = llm.as_ref().and_then(|s| s.disabled()) {
            eprintln!("note: the LLM was switched off during the run: {why}");
        }
    }
    let faults: Vec<&String> = targets.iter().filter_map(|t| t.fault.as_ref()).collect();
    if !faults.is_empty() {
        for fault in faults {
            eprintln!("error: {fault}");
        }
        return Ok(exit::NO_GPU);
    }
    Ok(if failed { exit::FAILED } else { exit::OK })
}

/// One adapter to tune for, and what came of it.
struct Target {
    backend: crate::session::Backend,
    adapter: crate::evaluate::AdapterReport,
    ceilings: Option<crate::evaluate::Ceilings>,
    width: usize,
    run: Option<Run>,
    results: Vec<KernelResult>,
    fault: Option<String>,
}

/// What every target's tune shares.
struct TargetView<'a> {
    found: &'a [crate::discover::Found],
    options: &'a Options,
    bars: &'a MultiProgress,
    several: bool,
    budget: u64,
    root: &'a std::path::Path,
}

/// Tunes every kernel for one target; stops at the first kernel whose evaluator reports a fault.
fn tune_target(target: &mut Target, view: &TargetView<'_>) {
    let options = Options {
        width: target.width,
        ..view.options.clone()
    };
    let run = target.run.as_mut().expect("every target has a run");
    for f in view.found {
        let label = if view.several {
            format!("{}@{}", f.name, &target.adapter.key.as_str()[..6])
        } else {
            f.name.clone()
        };
        let bar = view.bars.add(progress_bar(&label, view.budget));
        let mut best = 0.0f64;
        let mut cells = 0usize;
        let started = std::time::Instant::now();
        let mut done = 0u64;
        let result = tune::tune_kernel(
            f,
            target.backend.evaluator(),
            target.ceilings.as_ref(),
            &options,
            Some(run),
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
        view.bars.remove(&bar);
        target.results.push(result);
        if let Some(fault) = target.backend.evaluator().fault() {
            target.fault = Some(fault);
            break;
        }
    }
    crate::cache::store::remember_ceilings(view.root, target.backend.measured());
    // A run stopped by a fault stays unfinished, so `--resume` continues it.
    if target.fault.is_none()
        && let Err(e) = run.finish()
    {
        log::warn!("could not mark the run {} finished: {e}", run.dir.display());
    }
}

fn progress_bar(name: &str, budget: u64) -> ProgressBar {
    let bar = ProgressBar::new(budget);
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
    if !k.operators.is_empty() {
        let ops: Vec<String> = k
            .operators
            .iter()
            .map(|(name, s)| {
                format!(
                    "{name} {} made, {} correct, {} improved",
                    s.proposed, s.correct, s.improved
                )
            })
            .collect();
        println!("    operators: {}", ops.join("; "));
    }
    if let Some(l) = &k.llm {
        let answers: u64 = l.answers.values().sum();
        println!(
            "    llm: {} requests ({} from the cache, {} failed), {answers} answers ({} unusable), {} prompt + {} completion tokens{}; {} meta calls, {} edits applied, {} rejected; {} prompts",
            l.requests,
            l.cached,
            l.failed,
            l.unusable,
            l.prompt_tokens,
            l.completion_tokens,
            l.cost_usd.map(|c| format!(", ${c:.4}")).unwrap_or_default(),
            l.meta_calls,
            l.edits_applied,
            l.edits_rejected,
            l.prompts
        );
        if l.not_cached > 0 {
            println!(
                "    llm replay: {} requests were not in the response cache",
                l.not_cached
            );
        }
        if let Some(why) = &l.disabled {
            println!("    llm off: {why}");
        }
    }
    if let Some(v) = &k.verdict
        && k.status != Status::Tuned
    {
        println!("    why: {}", v.describe());
    }
    if let Some(near) = &k.near_miss {
        println!("    near miss: {}", near.describe());
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

/// The LLM configuration when this tune uses the LLM (`--llm`, `--llm-replay-only`, or
/// `enabled = true` in the manifest without `--no-llm`).
fn llm_config(
    args: &TuneArgs,
    ws: &crate::discover::Workspace,
) -> anyhow::Result<Option<crate::llm::LlmConfig>> {
    let package_manifest = ws.current.as_ref().and_then(|name| {
        ws.packages
            .iter()
            .find(|p| &p.name == name)
            .map(|p| p.root.join("Cargo.toml"))
    });
    let workspace_manifest = ws.root.join("Cargo.toml");
    let mut config = crate::llm::LlmConfig::load(
        workspace_manifest
            .is_file()
            .then_some(workspace_manifest.as_path()),
        package_manifest.as_deref().filter(|p| p.is_file()),
        &|name| std::env::var(name).ok(),
    )?;
    let wanted = args.llm || args.llm_replay_only || (config.enabled && !args.no_llm);
    if !wanted {
        return Ok(None);
    }
    config.replay_only |= args.llm_replay_only;
    Ok(Some(config))
}

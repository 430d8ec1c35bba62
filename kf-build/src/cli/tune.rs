//! `cargo kernelfoundry tune`: parse the arguments, run the tune pipeline ([`crate::tune`]) on a
//! worker process, print what it returns.

use super::{AdapterArgs, WorkspaceArgs, exit, fmt_ns, print_json};
use crate::harness::Evaluator;
use crate::harness::worker::WorkerProcess;
use crate::search::Event;
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
    /// Candidate evaluations per kernel. Spaces up to this size are searched exhaustively, larger
    /// ones by successive halving. The final verification of the winner is extra.
    #[arg(long, value_name = "N", default_value_t = 32)]
    budget: u64,
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

pub(crate) fn run(args: TuneArgs) -> anyhow::Result<i32> {
    let (ws, mut found) = args.workspace.discover()?;
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
    };
    let mut results = Vec::new();
    for f in &found {
        let bar = progress_bar(&f.name, args.budget, args.json);
        let mut best = 0.0f64;
        let result =
            tune::tune_kernel(
                f,
                &mut worker,
                ceilings.as_ref(),
                &options,
                |event| match event {
                    Event::Baseline(_) => bar.set_message("searching"),
                    Event::Evaluated(_, report) => {
                        bar.inc(1);
                        if let Some(s) = report.fitness.speedup {
                            best = best.max(s);
                        }
                        bar.set_message(format!("best {best:.2}x"));
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
    if let Some(v) = &k.verdict
        && k.status != Status::Tuned
    {
        println!("    why: {}", v.describe());
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

//! `cargo kernelfoundry bench`: measure every kernel's tuned variant (and its hand-written
//! reference) against the baseline on one adapter, re-verifying each, and print the per-kernel
//! figures and the suite's ([`crate::bench`]) as text, a markdown table or JSON.

use super::{AdapterArgs, WorkspaceArgs, exit, print_json};
use crate::bench::{self, BenchReport, Options, Status};
use anyhow::Context;
use clap::Args;
use std::time::Duration;

#[derive(Args, Debug)]
pub(crate) struct BenchArgs {
    #[command(flatten)]
    workspace: WorkspaceArgs,
    #[command(flatten)]
    kernels: super::KernelArgs,
    #[command(flatten)]
    adapter: AdapterArgs,
    #[command(flatten)]
    fleet: super::FleetArgs,
    /// Timed samples of the baseline and each program per shape (interleaved in pairs).
    #[arg(long, value_name = "N", default_value_t = 30)]
    samples: u32,
    #[command(flatten)]
    shapes: super::ShapeArgs,
    /// Seconds one evaluation may take before its worker is killed.
    #[arg(long, value_name = "SECS", default_value_t = 600.0)]
    timeout: f64,
    /// Measure the variants tuned for this adapter key (see `cargo kernelfoundry list`) instead
    /// of this adapter's own: a crossover check of whether tuning on one GPU pays on another.
    /// Every variant is still verified against the baseline on this adapter.
    #[arg(long, value_name = "KEY", value_parser = parse_key)]
    entries_for: Option<kf_runtime::adapter::AdapterKey>,
    /// Also place every kernel against outside reference times: a JSON-lines file with one
    /// object per kernel (`op`, `shape`, and the time in ms), as `torch_bench.py` prints. Reports
    /// fast_p and geomean against them as KernelBench defines them, beside the baseline's.
    #[arg(long, value_name = "FILE")]
    against: Option<std::path::PathBuf>,
    /// The field of each `--against` line that holds the time in ms.
    #[arg(long, value_name = "NAME", default_value = "ms", requires = "against")]
    against_field: String,
    /// Print a markdown table (for BENCHMARKS.md) instead of the plain summary.
    #[arg(long, conflicts_with = "json")]
    markdown: bool,
    /// Print one JSON object on stdout (what `report --bench` reads).
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: BenchArgs) -> anyhow::Result<i32> {
    let (ws, mut found) = args.workspace.discover()?;
    if found.is_empty() {
        anyhow::bail!(
            "no #[kernelfoundry] kernels found in {} (select packages with -p or --workspace)",
            ws.root.display()
        );
    }
    let names: Vec<String> = found.iter().map(|f| f.name.clone()).collect();
    args.kernels.select(&mut found)?;
    args.shapes.check(&found, &names)?;
    // A bad reference file is found before minutes of measuring.
    let against = args
        .against
        .as_deref()
        .map(|p| bench::against::ReferenceTimes::read(p, &args.against_field))
        .transpose()?;
    let mut backend = match crate::session::open_one(
        &args.fleet.options(),
        args.adapter.selector(),
        Duration::from_secs_f64(args.timeout),
    )
    .context("cannot start the benchmark")?
    {
        Ok(b) => b,
        Err(unserved) => {
            eprintln!("error: {unserved}");
            return Ok(exit::NO_GPU);
        }
    };
    let worker = backend.evaluator();
    let adapter = worker.adapter().clone();
    let quiet = args.json || args.markdown;
    if !quiet {
        eprintln!(
            "benchmarking on [{}] {} (key {}){}",
            adapter.index,
            adapter.identity.describe(),
            adapter.key,
            backend.describe()
        );
        if let Some(key) = &args.entries_for {
            eprintln!("measuring the variants tuned for adapter key {key} (--entries-for)");
        }
    }
    let ceilings = crate::tune::ceilings(backend.evaluator(), Some(&ws.root), |name| {
        if !quiet {
            eprintln!("measuring copy bandwidth and FMA rate of {name} …");
        }
    });
    let options = Options {
        samples: args.samples,
        tune_shapes: args.shapes.tune_shapes.clone(),
        timeout_s: args.timeout,
        entries_for: args.entries_for.clone(),
        ..Options::default()
    };
    let mut kernels = Vec::new();
    for f in &found {
        if !quiet {
            eprintln!("{} ({}) …", f.name, f.package);
        }
        kernels.push(bench::bench_kernel(
            f,
            backend.evaluator(),
            ceilings.as_ref(),
            &options,
            Some(&ws.target_dir),
        ));
    }
    let mut report = BenchReport::new(&adapter, ceilings.as_ref(), args.samples, kernels);
    report.entries_for = args.entries_for.as_ref().map(|k| k.to_string());
    report.against = against.map(|t| bench::against::Against::of(&report.kernels, &t));
    // A cached variant or a reference that fails here, or a kernel that cannot be measured, is a
    // failure of the benchmark; a kernel nobody tuned for this adapter is not.
    let failed = report.kernels.iter().any(|k| {
        k.status == Status::Failed
            || k.deployed.as_ref().is_some_and(|d| !d.correct)
            || k.reference.as_ref().is_some_and(|r| !r.correct)
    });
    if args.json {
        print_json(&report);
    } else if args.markdown {
        print!("{}", report.markdown());
    } else {
        print!("{}", report.text());
    }
    if !args.json {
        for note in backend.notes() {
            eprintln!("note: {note}");
        }
    }
    Ok(if failed { exit::FAILED } else { exit::OK })
}

fn parse_key(text: &str) -> Result<kf_runtime::adapter::AdapterKey, String> {
    kf_runtime::adapter::AdapterKey::parse(text)
        .ok_or_else(|| format!("`{text}` is not an adapter key (16 hex digits, as `cargo kernelfoundry adapters` prints)"))
}

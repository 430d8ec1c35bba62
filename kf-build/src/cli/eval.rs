//! `cargo kernelfoundry eval`: check a hand-written variant against a marked kernel's baseline,
//! with every check the tuner applies, and report where it lands on the fitness ladder.

use super::{AdapterArgs, WorkspaceArgs, exit, fmt_ns, print_json};
use crate::harness::worker::WorkerProcess;
use crate::harness::{Candidate, EvalReport, EvalRequest, Evaluator};
use anyhow::Context;
use clap::Args;
use kf_runtime::expr::SizeExpr;
use kf_runtime::resolve::shape_text;
use kf_runtime::{Dispatch, DispatchMode, Program};
use serde::Serialize;
use std::borrow::Cow;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug)]
pub(crate) struct EvalArgs {
    /// The marked kernel whose baseline is the reference (its static's name).
    #[arg(long, value_name = "NAME")]
    kernel: String,
    /// The candidate WGSL file. It must keep the baseline's bindings and entry point name.
    #[arg(long, value_name = "FILE")]
    candidate: PathBuf,
    /// A pipeline constant for the candidate, e.g. `--constant WG=256` (may be repeated).
    #[arg(long = "constant", value_name = "NAME=VALUE", value_parser = parse_constant)]
    constants: Vec<(String, f64)>,
    /// Launch the candidate over this many invocations per dimension, e.g. `--grid "(n + 3) / 4"`
    /// for a candidate that handles four elements per invocation. Default: the baseline's rule.
    #[arg(long, value_name = "X[,Y[,Z]]", value_parser = parse_dims, conflicts_with = "workgroups")]
    grid: Option<Dims>,
    /// Launch the candidate with this many workgroups per dimension, e.g. `--workgroups rows`.
    #[arg(long, value_name = "X[,Y[,Z]]", value_parser = parse_dims)]
    workgroups: Option<Dims>,
    #[command(flatten)]
    workspace: WorkspaceArgs,
    #[command(flatten)]
    adapter: AdapterArgs,
    #[command(flatten)]
    shapes: super::ShapeArgs,
    /// Timed samples of baseline and candidate per tune shape.
    #[arg(long, value_name = "N", default_value_t = 20)]
    samples: u32,
    /// Seconds the evaluation may take before the worker is killed.
    #[arg(long, value_name = "SECS", default_value_t = 120.0)]
    timeout: f64,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

/// One to three size expressions given on the command line.
#[derive(Clone, Debug)]
struct Dims(Vec<SizeExpr>);

fn parse_dims(s: &str) -> Result<Dims, String> {
    let dims: Vec<SizeExpr> = s
        .split(',')
        .map(|d| SizeExpr::parse(d.trim()).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    if dims.is_empty() || dims.len() > 3 {
        return Err("give one to three size expressions separated by commas".into());
    }
    Ok(Dims(dims))
}

fn parse_constant(s: &str) -> Result<(String, f64), String> {
    let (k, v) = s.split_once('=').ok_or("expected NAME=VALUE")?;
    let v: f64 = v
        .trim()
        .parse()
        .map_err(|_| format!("`{v}` is not a number"))?;
    Ok((k.trim().to_owned(), v))
}

#[derive(Serialize)]
struct Report<'a> {
    kernel: &'a str,
    package: &'a str,
    candidate: String,
    adapter: String,
    adapter_key: String,
    level: u8,
    correct: bool,
    reason: Option<String>,
    log: Option<String>,
    speedup: Option<f64>,
    #[serde(flatten)]
    report: &'a EvalReport,
}

pub(crate) fn run(args: EvalArgs) -> anyhow::Result<i32> {
    let (ws, found) = args.workspace.discover()?;
    let matches: Vec<_> = found
        .iter()
        .filter(|f| f.name == args.kernel && f.skipped.is_none())
        .collect();
    let f = match matches.as_slice() {
        [one] => *one,
        [] => match found.iter().find(|f| f.name == args.kernel) {
            Some(skipped) => anyhow::bail!(
                "kernel `{}` ({}) is not compiled: {}",
                args.kernel,
                skipped.location(),
                skipped.skipped.as_deref().unwrap_or("skipped")
            ),
            None => anyhow::bail!(
                "no kernel named `{}`; the workspace has: {}",
                args.kernel,
                found
                    .iter()
                    .map(|f| f.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        },
        many => anyhow::bail!(
            "`{}` is defined in several packages ({}); choose one with -p",
            args.kernel,
            many.iter()
                .map(|f| f.package.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let kernel = f.resolved.as_ref().map_err(|e| anyhow::anyhow!("{e}"))?;
    let names: Vec<String> = found.iter().map(|f| f.name.clone()).collect();
    args.shapes.check(std::slice::from_ref(f), &names)?;
    let kernel = &crate::tune::with_tune_shapes(kernel, &args.shapes.tune_shapes)
        .map_err(|e| anyhow::anyhow!("kernel {}: {e}", f.name))?;
    let wgsl = std::fs::read_to_string(&args.candidate)
        .with_context(|| format!("cannot read the candidate {}", args.candidate.display()))?;
    let dispatch = match (&args.grid, &args.workgroups) {
        (Some(Dims(d)), _) | (None, Some(Dims(d))) => {
            let declared: Vec<&str> = kernel.sizes.iter().map(|(n, _)| n.as_str()).collect();
            if let Some(n) = d
                .iter()
                .flat_map(|e| e.names())
                .find(|n| !declared.contains(n))
            {
                anyhow::bail!(
                    "size `{n}` is not declared by kernel {}; its sizes are {}",
                    f.name,
                    declared.join(", ")
                );
            }
            let mut size = d.clone();
            size.resize(3, SizeExpr::lit(1));
            Dispatch {
                mode: if args.grid.is_some() {
                    DispatchMode::Grid
                } else {
                    DispatchMode::Workgroups
                },
                size: [size[0].clone(), size[1].clone(), size[2].clone()],
            }
        }
        (None, None) => kernel.baseline.dispatch.clone(),
    };
    let candidate = Candidate::new(
        Program {
            wgsl: Cow::Owned(wgsl),
            entry: kernel.baseline.entry.clone(),
            constants: Cow::Owned(
                args.constants
                    .iter()
                    .map(|(k, v)| (Cow::Owned(k.clone()), *v))
                    .collect(),
            ),
            workgroup_size: kernel.baseline.workgroup_size,
            workgroup_storage_bytes: 0,
            dispatch,
        },
        format!("file {}", args.candidate.display()),
    );
    // Check the adapter here first, so a missing GPU or a bad selector is a typed error.
    crate::gpu::select(&crate::gpu::instance(), &args.adapter.selector())?;
    let mut worker = WorkerProcess::start(
        args.adapter.selector(),
        Duration::from_secs_f64(args.timeout),
    )
    .context("cannot start the evaluation")?;
    let ceilings = crate::tune::ceilings(&mut worker, Some(&ws.root), |name| {
        if !args.json {
            eprintln!("measuring copy bandwidth and FMA rate of {name} …");
        }
    });
    let request = EvalRequest {
        kernel: kernel.clone(),
        plan: crate::search::final_plan(kernel, args.samples, 7),
        candidate,
        ceilings,
        deadline_s: Some(args.timeout),
    };
    let report = worker.evaluate(&request);
    crate::store::remember_ceilings(&ws.root, worker.measured.as_ref());
    let adapter = worker.adapter().clone();
    let code = if report.is_correct() {
        exit::OK
    } else {
        exit::FAILED
    };
    if args.json {
        print_json(&Report {
            kernel: &f.name,
            package: &f.package,
            candidate: args.candidate.display().to_string(),
            adapter: adapter.identity.name.clone(),
            adapter_key: adapter.key.to_string(),
            level: report.fitness.level,
            correct: report.is_correct(),
            reason: report.failure.as_ref().map(|f| f.reason.to_string()),
            log: report.failure.as_ref().map(|f| f.log.clone()),
            speedup: report.fitness.speedup,
            report: &report,
        });
        return Ok(code);
    }
    println!(
        "{} vs {} on {}",
        args.candidate.display(),
        f.name,
        adapter.identity.describe()
    );
    match &report.failure {
        Some(failure) => {
            println!(
                "level {}: rejected ({})",
                report.fitness.level, failure.reason
            );
            for line in failure.log.lines() {
                println!("    {line}");
            }
        }
        None => println!(
            "level 5: correct on {} trials (max relative L2 error {:.2e}), speedup {:.2}x",
            report.verification.trials,
            report.verification.max_rel_l2,
            report.fitness.speedup.unwrap_or(1.0)
        ),
    }
    for t in &report.timings {
        println!(
            "    {}: baseline {} candidate {} ({:.2}x ± {:.0} %, {} samples, {}), {:.1} GB/s{}",
            shape_text(&t.shape),
            fmt_ns(t.baseline_ns),
            fmt_ns(t.candidate_ns),
            t.speedup,
            t.spread * 100.0,
            t.samples,
            t.method,
            t.achieved_gbps,
            t.achieved_gflops
                .map(|g| format!(", {g:.1} GFLOP/s"))
                .unwrap_or_default()
        );
    }
    if let Some(r) = &report.roofline {
        println!(
            "    roofline: {}-bound, {:.0} % of the adapter's {} ceiling",
            r.bound,
            r.fraction * 100.0,
            if r.bound == "memory" {
                format!("{:.1} GB/s copy", r.ceiling_gbps)
            } else {
                format!("{:.1} GFLOP/s FMA", r.ceiling_gflops)
            }
        );
    }
    Ok(code)
}

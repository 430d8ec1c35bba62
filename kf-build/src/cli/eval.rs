//! `cargo kernelfoundry eval`: the arguments of a hand-written candidate's evaluation
//! ([`crate::eval`]), on the backend [`crate::session`] opens, and the verdict printed.

use super::{AdapterArgs, WorkspaceArgs, exit, print_json};
use crate::eval::{self, Report};
use crate::evaluate::EvalRequest;
use anyhow::Context;
use clap::Args;
use kf_runtime::DispatchMode;
use kf_runtime::expr::SizeExpr;
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
    /// Overrides the candidate shares with the kernel take the baseline's values unless given.
    #[arg(long = "constant", value_name = "NAME=VALUE", value_parser = eval::parse_constant)]
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
    fleet: super::FleetArgs,
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

pub(crate) fn run(args: EvalArgs) -> anyhow::Result<i32> {
    let (ws, found) = args.workspace.discover()?;
    let f = eval::find_kernel(&found, &args.kernel)?;
    let kernel = f.resolved.as_ref().map_err(|e| anyhow::anyhow!("{e}"))?;
    let names: Vec<String> = found.iter().map(|f| f.name.clone()).collect();
    args.shapes.check(std::slice::from_ref(f), &names)?;
    let kernel = &crate::tune::with_tune_shapes(kernel, &args.shapes.tune_shapes)
        .map_err(|e| anyhow::anyhow!("kernel {}: {e}", f.name))?;
    let wgsl = std::fs::read_to_string(&args.candidate)
        .with_context(|| format!("cannot read the candidate {}", args.candidate.display()))?;
    let constants = eval::candidate_constants(kernel, &wgsl, &args.constants)
        .with_context(|| format!("candidate {}", args.candidate.display()))?;
    let launch = match (&args.grid, &args.workgroups) {
        (Some(Dims(d)), _) => Some((DispatchMode::Grid, d.as_slice())),
        (None, Some(Dims(d))) => Some((DispatchMode::Workgroups, d.as_slice())),
        (None, None) => None,
    };
    let origin = format!("file {}", args.candidate.display());
    let candidate = eval::candidate(kernel, wgsl, constants, launch, origin)?;
    let loops = eval::loops(&candidate.program);
    let mut backend = match crate::session::open_one(
        &args.fleet.options(),
        args.adapter.selector(),
        Duration::from_secs_f64(args.timeout),
    )
    .context("cannot start the evaluation")?
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
    let request = EvalRequest {
        kernel: kernel.clone(),
        plan: crate::search::final_plan(kernel, args.samples, 7),
        candidate,
        ceilings,
        deadline_s: Some(args.timeout),
    };
    let report = backend.evaluator().evaluate(&request);
    crate::cache::store::remember_ceilings(&ws.root, backend.measured());
    let adapter = backend.evaluator().adapter().clone();
    if !args.json {
        for note in backend.notes() {
            eprintln!("note: {note}");
        }
    }
    let out = Report {
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
        loops,
        report: &report,
    };
    if args.json {
        print_json(&out);
    } else {
        print!("{}", out.text(&adapter.identity.describe()));
    }
    Ok(if report.is_correct() {
        exit::OK
    } else {
        exit::FAILED
    })
}

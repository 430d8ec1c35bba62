//! `cargo kernelfoundry eval`: check a hand-written variant against a marked kernel's baseline,
//! with every check the tuner applies, and report where it lands on the fitness ladder.
//!
//! A candidate is most often an edit of the kernel's own file, so it runs with the baseline's
//! constants for the overrides it shares with the baseline (`params(..)` already names their
//! values); `--constant` overrides them, and gives values to overrides only the candidate has.

use super::{AdapterArgs, WorkspaceArgs, exit, fmt_ns, print_json};
use crate::harness::{Candidate, EvalReport, EvalRequest};
use anyhow::Context;
use clap::Args;
use kf_runtime::expr::SizeExpr;
use kf_runtime::resolve::{ResolvedKernel, shape_text};
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
    /// Overrides the candidate shares with the kernel take the baseline's values unless given.
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

fn parse_constant(s: &str) -> Result<(String, f64), String> {
    let (k, v) = s.split_once('=').ok_or("expected NAME=VALUE")?;
    let v: f64 = v
        .trim()
        .parse()
        .map_err(|_| format!("`{v}` is not a number"))?;
    Ok((k.trim().to_owned(), v))
}

/// The candidate's constants: the baseline's for the overrides the candidate declares too, then
/// `given` (`--constant`), which wins. An override of the candidate's own without a default and
/// without a given value is an error naming it; WGSL that does not reflect gets `given` as is (the
/// evaluation reports it at its ladder level).
fn candidate_constants(
    kernel: &ResolvedKernel,
    wgsl: &str,
    given: &[(String, f64)],
) -> anyhow::Result<Vec<(String, f64)>> {
    let Ok(reflected) =
        kf_runtime::resolve::reflect(wgsl, Some(&kernel.baseline.entry), "candidate")
    else {
        return Ok(given.to_vec());
    };
    let overrides = &reflected.interface.overrides;
    let mut constants: Vec<(String, f64)> = kernel
        .baseline
        .constants
        .iter()
        .filter(|(k, _)| overrides.iter().any(|o| o.name == *k))
        .filter(|(k, _)| !given.iter().any(|(g, _)| g == k))
        .map(|(k, v)| (k.to_string(), *v))
        .collect();
    constants.extend(given.iter().cloned());
    let missing: Vec<&str> = overrides
        .iter()
        .filter(|o| o.required && !constants.iter().any(|(k, _)| *k == o.name))
        .map(|o| o.name.as_str())
        .collect();
    if let Some(first) = missing.first() {
        anyhow::bail!(
            "{} without a default that kernel {}'s baseline has no value for: {}; give each one with `--constant {first}=<value>` (or a default in the WGSL, `override {first}: u32 = 64;`)",
            if missing.len() == 1 {
                "it declares an override"
            } else {
                "it declares overrides"
            },
            kernel.name,
            missing
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(constants)
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
    let constants = candidate_constants(kernel, &wgsl, &args.constants)
        .with_context(|| format!("candidate {}", args.candidate.display()))?;
    let dispatch = match (&args.grid, &args.workgroups) {
        (Some(Dims(d)), _) | (None, Some(Dims(d))) => {
            let declared: Vec<&str> = kernel.sizes.iter().map(|(n, _)| n.as_str()).collect();
            if let Some(n) = d
                .iter()
                .flat_map(|e| e.names())
                .find(|n| !declared.contains(n) && !constants.iter().any(|(k, _)| k == n))
            {
                anyhow::bail!(
                    "`{n}` is neither a size of kernel {} nor a constant of the candidate; its sizes are {}{}",
                    f.name,
                    declared.join(", "),
                    if constants.is_empty() {
                        String::new()
                    } else {
                        format!(
                            ", the candidate's constants {}",
                            constants
                                .iter()
                                .map(|(k, _)| k.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    }
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
                constants
                    .into_iter()
                    .map(|(k, v)| (Cow::Owned(k), v))
                    .collect(),
            ),
            workgroup_size: kernel.baseline.workgroup_size,
            workgroup_storage_bytes: 0,
            dispatch,
            then: kernel.baseline.then.clone(),
        },
        format!("file {}", args.candidate.display()),
    );
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
    crate::store::remember_ceilings(&ws.root, backend.measured());
    let adapter = backend.evaluator().adapter().clone();
    if !args.json {
        for note in backend.notes() {
            eprintln!("note: {note}");
        }
    }
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
            if let Some(miss) = report.near_miss() {
                println!(
                    "    {}; the tolerance is yours to set in the attribute, KernelFoundry never changes it",
                    miss.would_pass()
                );
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

#[cfg(test)]
mod tests {
    use super::*;

    const KERNEL: &str = r#"
override wg_size: u32;
override unroll: u32 = 2u;
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(wg_size)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < arrayLength(&y)) { y[g.x] = f32(unroll) * x[g.x]; }
}
"#;

    fn kernel() -> ResolvedKernel {
        let (spec, _) = kf_runtime::syntax::parse_spec(
            r#"source = "", sizes(n = 1024), bind(x = input(n), y = output(n)),
               params(wg_size = [64, 128], unroll = [2, 4])"#
                .parse()
                .unwrap(),
        )
        .unwrap();
        kf_runtime::resolve::resolve("K", &spec, KERNEL, "k.wgsl").unwrap()
    }

    #[test]
    fn the_kernels_own_file_runs_with_the_baselines_values_unless_given() {
        let k = kernel();
        assert_eq!(
            candidate_constants(&k, KERNEL, &[]).unwrap(),
            vec![("wg_size".to_owned(), 64.0)]
        );
        assert_eq!(
            candidate_constants(&k, KERNEL, &[("wg_size".into(), 128.0)]).unwrap(),
            vec![("wg_size".to_owned(), 128.0)]
        );
        // An override the baseline does not have needs a value, and the error names it.
        let own = KERNEL.replace(
            "override unroll: u32 = 2u;",
            "override unroll: u32 = 2u;\noverride tile: u32;",
        );
        let e = candidate_constants(&k, &own, &[]).unwrap_err().to_string();
        assert!(
            e.contains("`tile`") && e.contains("--constant tile=<value>"),
            "{e}"
        );
        assert!(candidate_constants(&k, &own, &[("tile".into(), 4.0)]).is_ok());
        // A constant the candidate no longer declares is not passed on.
        let fixed = KERNEL
            .replace("override wg_size: u32;", "")
            .replace("@workgroup_size(wg_size)", "@workgroup_size(64)");
        assert_eq!(candidate_constants(&k, &fixed, &[]).unwrap(), vec![]);
        // Broken WGSL is left to the evaluation.
        assert_eq!(candidate_constants(&k, "fn (", &[]).unwrap(), vec![]);
    }
}

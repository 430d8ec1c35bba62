//! `cargo kernelfoundry tune`: discover → search each kernel in a worker → write cache entries.

use super::{AdapterArgs, WorkspaceArgs, exit, fmt_ns, print_json};
use crate::discover::Found;
use crate::harness::worker::WorkerProcess;
use crate::harness::{Ceilings, EvalReport, EvalRequest, Evaluator};
use crate::search::{self, Config, Event, Outcome};
use anyhow::Context;
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use kf_runtime::cache::{
    AdapterRecord, CacheEntry, FORMAT_VERSION, KernelRecord, Outcome as CacheOutcome, SearchRecord,
    ShapeTiming, VariantRecord, VerificationRecord,
};
use kf_runtime::resolve::ResolvedKernel;
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

#[derive(Serialize, Default)]
struct KernelOut {
    name: String,
    package: String,
    content_hash: Option<String>,
    /// `tuned`, `cached`, `baseline-best` or `failed`.
    status: String,
    baseline_ns: Option<f64>,
    best_ns: Option<f64>,
    speedup: Option<f64>,
    evaluations: u64,
    cache_file: Option<String>,
    error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    variant: Option<String>,
    /// Where the chosen program sits against the adapter's measured ceilings.
    #[serde(skip_serializing_if = "Option::is_none")]
    roofline: Option<crate::harness::Roofline>,
    /// Rejected candidates by reason (e.g. `{"timeout": 2, "wrong-values": 1}`).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    rejected: std::collections::BTreeMap<String, u64>,
}

#[derive(Serialize)]
struct Report {
    adapter: AdapterOut,
    kernels: Vec<KernelOut>,
}

/// Gives the baseline a generous limit, then every candidate ten times the baseline's time.
struct Timed<'a> {
    worker: &'a mut WorkerProcess,
    fixed: Option<Duration>,
}

impl Evaluator for Timed<'_> {
    fn adapter(&self) -> &crate::gpu::AdapterReport {
        self.worker.adapter()
    }

    fn evaluate(&mut self, request: &EvalRequest) -> EvalReport {
        if request.candidate.id == "baseline" {
            self.worker.timeout = self
                .fixed
                .unwrap_or(Duration::from_secs(600))
                .max(Duration::from_secs(60));
            let report = self.worker.evaluate(request);
            self.worker.timeout = self.fixed.unwrap_or_else(|| {
                crate::harness::runner::default_timeout(Duration::from_secs_f64(
                    report.wall_ms / 1e3,
                ))
            });
            report
        } else {
            self.worker.evaluate(request)
        }
    }

    fn probe(&mut self) -> Result<Ceilings, String> {
        self.worker.probe()
    }
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
    let fixed = args.timeout.map(Duration::from_secs_f64);
    // Check the adapter here first, so a missing GPU or a bad selector is a typed error.
    crate::gpu::select(&crate::gpu::instance(), &args.adapter.selector())?;
    let mut worker = WorkerProcess::start(
        args.adapter.selector(),
        fixed.unwrap_or(Duration::from_secs(600)),
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
    let ceilings = super::ceilings(&mut worker, Some(&ws.root), args.json);
    let mut timed = Timed {
        worker: &mut worker,
        fixed,
    };
    let mut outs = Vec::new();
    for f in &found {
        outs.push(tune_one(f, &mut timed, ceilings.as_ref(), &args));
    }
    let failed = outs.iter().any(|k| k.status == "failed");
    let report = Report {
        adapter: AdapterOut {
            name: adapter.identity.name.clone(),
            backend: adapter.identity.backend.clone(),
            key: adapter.key.to_string(),
        },
        kernels: outs,
    };
    if args.json {
        print_json(&report);
    } else {
        for k in &report.kernels {
            let file = k.cache_file.as_deref().unwrap_or("");
            match k.status.as_str() {
                "failed" => println!(
                    "{} ({}): failed\n    {}",
                    k.name,
                    k.package,
                    k.error.as_deref().unwrap_or("").replace('\n', "\n    ")
                ),
                status => {
                    let mut extra = String::new();
                    if !k.rejected.is_empty() {
                        let rejected: Vec<String> =
                            k.rejected.iter().map(|(r, n)| format!("{n} {r}")).collect();
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
                        "{} ({}): {status}{} {:.2}x (baseline {} → {}), {} evaluations{extra}\n    {file}",
                        k.name,
                        k.package,
                        k.variant
                            .as_deref()
                            .map(|v| format!(" {v}"))
                            .unwrap_or_default(),
                        k.speedup.unwrap_or(1.0),
                        fmt_ns(k.baseline_ns.unwrap_or(0.0)),
                        fmt_ns(k.best_ns.unwrap_or(0.0)),
                        k.evaluations,
                    )
                }
            }
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

fn tune_one(
    f: &Found,
    evaluator: &mut Timed<'_>,
    ceilings: Option<&Ceilings>,
    args: &TuneArgs,
) -> KernelOut {
    let mut out = KernelOut {
        name: f.name.clone(),
        package: f.package.clone(),
        ..Default::default()
    };
    let kernel = match &f.resolved {
        Ok(k) => k,
        Err(e) => {
            out.status = "failed".into();
            out.error = Some(e.clone());
            return out;
        }
    };
    out.content_hash = Some(kernel.content_hash.clone());
    let key = evaluator.adapter().key.clone();
    if !args.force
        && let Some((path, entry)) =
            crate::store::read_entry(&f.crate_root, &f.name, &kernel.content_hash, &key)
    {
        out.status = "cached".into();
        out.baseline_ns = Some(entry.timings.iter().map(|t| t.baseline_ns).sum());
        out.best_ns = Some(entry.timings.iter().map(|t| t.variant_ns).sum());
        out.speedup = Some(entry.speedup);
        out.variant = entry.variant.map(|v| v.id);
        out.cache_file = Some(path.display().to_string());
        return out;
    }
    let bar = if args.json {
        ProgressBar::hidden()
    } else {
        let bar = ProgressBar::with_draw_target(Some(1), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{prefix:>12} [{bar:24}] {pos}/{len} {msg}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        bar.set_prefix(f.name.clone());
        bar.set_message("measuring the baseline");
        bar
    };
    let config = Config {
        budget: args.budget,
        ..Config::default()
    };
    let mut best_so_far = 0.0f64;
    let result = search::search(kernel, evaluator, ceilings, &config, |event| match event {
        Event::Round { round, total } => {
            bar.set_length(total as u64);
            bar.set_position(0);
            bar.set_message(format!("round {}", round + 1));
        }
        Event::Evaluated(report) => {
            bar.inc(1);
            if let Some(s) = report.fitness.speedup {
                best_so_far = best_so_far.max(s);
            }
            bar.set_message(format!("best {best_so_far:.2}x"));
        }
    });
    bar.finish_and_clear();
    let outcome = match result {
        Ok(o) => o,
        Err(e) => {
            out.status = "failed".into();
            out.error = Some(e.to_string());
            return out;
        }
    };
    out.evaluations = outcome.evaluations;
    out.roofline = outcome
        .tuned
        .as_ref()
        .map_or(&outcome.baseline, |(_, r)| r)
        .roofline
        .clone();
    for r in &outcome.history {
        if let Some(f) = &r.failure {
            *out.rejected.entry(f.reason.to_string()).or_default() += 1;
        }
    }
    let entry = entry(f, kernel, evaluator.adapter(), &outcome);
    out.status = match entry.outcome {
        CacheOutcome::Tuned => "tuned",
        CacheOutcome::BaselineBest => "baseline-best",
    }
    .into();
    out.baseline_ns = Some(entry.timings.iter().map(|t| t.baseline_ns).sum());
    out.best_ns = Some(entry.timings.iter().map(|t| t.variant_ns).sum());
    out.speedup = Some(entry.speedup);
    out.variant = entry.variant.as_ref().map(|v| v.id.clone());
    match crate::store::write_entry(&f.crate_root, &entry) {
        Ok(path) => out.cache_file = Some(path.display().to_string()),
        Err(e) => {
            out.status = "failed".into();
            out.error = Some(format!(
                "cannot write the cache entry under {}: {e}",
                f.crate_root.display()
            ));
        }
    }
    out
}

/// The cache entry recording `outcome`.
fn entry(
    f: &Found,
    kernel: &ResolvedKernel,
    adapter: &crate::gpu::AdapterReport,
    outcome: &Outcome,
) -> CacheEntry {
    let (report, variant, result) = match &outcome.tuned {
        Some((candidate, report)) => {
            let mut program = candidate.program.clone();
            if let Some(wg) = report.workgroup_size {
                program.workgroup_size = wg;
            }
            program.workgroup_storage_bytes = report.workgroup_storage_bytes.unwrap_or(0);
            (
                report,
                Some(VariantRecord {
                    id: candidate.id.clone(),
                    origin: candidate.origin.clone(),
                    program,
                }),
                CacheOutcome::Tuned,
            )
        }
        None => (&outcome.baseline, None, CacheOutcome::BaselineBest),
    };
    let timings = report
        .timings
        .iter()
        .map(|t| ShapeTiming {
            shape: t.shape.clone(),
            baseline_ns: t.baseline_ns,
            variant_ns: if variant.is_some() {
                t.candidate_ns
            } else {
                t.baseline_ns
            },
            samples: t.samples,
            method: t.method.clone(),
        })
        .collect();
    let mut shapes = kernel.tune_shapes.clone();
    shapes.extend(kernel.verify_shapes.iter().cloned());
    CacheEntry {
        format_version: FORMAT_VERSION,
        tool_version: env!("CARGO_PKG_VERSION").to_owned(),
        kernel: KernelRecord {
            name: f.name.clone(),
            package: f.package.clone(),
            content_hash: kernel.content_hash.clone(),
            entry: kernel.interface.entry.clone(),
        },
        adapter: AdapterRecord {
            key: adapter.key.clone(),
            identity: adapter.identity.clone(),
            limits: adapter.limits.clone(),
            features: adapter.features.clone(),
        },
        outcome: result,
        speedup: if variant.is_some() {
            report.fitness.speedup.unwrap_or(1.0)
        } else {
            1.0
        },
        noise: outcome.noise,
        variant,
        timings,
        verification: VerificationRecord {
            shapes,
            seeds: search::verification_seeds(),
            checks: report.verification.checks.clone(),
            max_rel_l2: report.verification.max_rel_l2,
            max_rel_elem: report.verification.max_rel_elem,
        },
        search: SearchRecord {
            strategy: outcome.strategy.to_owned(),
            space_size: outcome.space_size,
            evaluations: outcome.evaluations,
            budget: outcome.budget,
        },
    }
}

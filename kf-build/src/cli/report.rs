//! `cargo kernelfoundry report`: read the newest tune run (or one named), the cache and an optional
//! `bench --json` report, and write one self-contained HTML file ([`crate::report`]).

use super::{WorkspaceArgs, exit, print_json};
use crate::bench::BenchReport;
use crate::report::{self, html};
use anyhow::Context;
use clap::Args;
use serde::Serialize;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub(crate) struct ReportArgs {
    #[command(flatten)]
    workspace: WorkspaceArgs,
    /// The run directory to report on. Default: the newest under
    /// `<target>/kernelfoundry/runs/`.
    #[arg(long, value_name = "DIR")]
    run: Option<PathBuf>,
    /// A `cargo kernelfoundry bench --json` report: its re-verified figures fill the suite table
    /// and the roofline placements.
    #[arg(long, value_name = "FILE")]
    bench: Option<PathBuf>,
    /// Where to write the HTML file. Default: `<target>/kernelfoundry/report.html`.
    #[arg(long, value_name = "PATH")]
    out: Option<PathBuf>,
    /// Print one JSON object on stdout (the file written and what it shows).
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Out {
    file: String,
    run: Option<String>,
    bench: Option<String>,
    kernels: Vec<KernelOut>,
}

#[derive(Serialize)]
struct KernelOut {
    name: String,
    cells_filled: usize,
    evaluations: usize,
}

pub(crate) fn run(args: ReportArgs) -> anyhow::Result<i32> {
    let (ws, found) = args.workspace.discover()?;
    let bench: Option<BenchReport> = match &args.bench {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read the bench report {}", path.display()))?;
            let b: BenchReport = serde_json::from_str(&text).with_context(|| {
                format!(
                    "{} is not a `cargo kernelfoundry bench --json` report",
                    path.display()
                )
            })?;
            if b.format_version != crate::bench::FORMAT_VERSION {
                anyhow::bail!(
                    "{} has bench format version {}, this tool reads {}",
                    path.display(),
                    b.format_version,
                    crate::bench::FORMAT_VERSION
                );
            }
            Some(b)
        }
        None => None,
    };
    let run = report::open_run(&ws.target_dir, args.run.as_deref())?;
    let run_dir = run.as_ref().map(|r| r.dir.display().to_string());
    let data = report::gather(run, &found, &ws.root, &ws.target_dir, bench)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| ws.target_dir.join("kernelfoundry").join("report.html"));
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    std::fs::write(&out, html::render(&data))
        .with_context(|| format!("cannot write {}", out.display()))?;
    if args.json {
        print_json(&Out {
            file: out.display().to_string(),
            run: run_dir,
            bench: args.bench.as_ref().map(|p| p.display().to_string()),
            kernels: data
                .kernels
                .iter()
                .map(|k| KernelOut {
                    name: k.name.clone(),
                    cells_filled: k.cells.len(),
                    evaluations: k.points.len(),
                })
                .collect(),
        });
    } else {
        println!("{}", out.display());
        eprintln!(
            "report of {} kernel(s){}{}",
            data.kernels.len(),
            run_dir
                .map(|d| format!(" from the run {d}"))
                .unwrap_or_default(),
            args.bench
                .as_ref()
                .map(|b| format!(" with the bench report {}", b.display()))
                .unwrap_or_default()
        );
    }
    Ok(exit::OK)
}

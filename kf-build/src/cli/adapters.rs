//! `cargo kernelfoundry adapters`: the adapters wgpu finds, and optionally their measured ceilings.

use super::{AdapterArgs, exit, print_json};
use crate::evaluate::Ceilings;
use crate::evaluate::process::WorkerProcess;
use crate::gpu::{self, AdapterReport, AdapterSelector};
use clap::Args;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug)]
pub(crate) struct AdaptersArgs {
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
    /// Measure copy bandwidth (GB/s) and f32 FMA rate (GFLOP/s) of each adapter (or of --adapter),
    /// and store them in the workspace's kernelfoundry/_adapters/ when run inside a cargo workspace.
    #[arg(long)]
    probe: bool,
    #[command(flatten)]
    adapter: AdapterArgs,
    /// Workspace whose kernelfoundry/_adapters/ stores the probe results.
    #[arg(long, value_name = "PATH")]
    manifest_path: Option<PathBuf>,
}

#[derive(Serialize)]
struct Entry {
    #[serde(flatten)]
    adapter: AdapterReport,
    /// Whether this is the adapter `tune` uses without `--adapter`.
    default: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    ceilings: Option<Ceilings>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ceilings_file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    probe_error: Option<String>,
}

#[derive(Serialize)]
struct Report {
    adapters: Vec<Entry>,
}

pub(crate) fn run(args: AdaptersArgs) -> anyhow::Result<i32> {
    let instance = gpu::instance();
    let all: Vec<AdapterReport> = gpu::adapters(&instance)
        .iter()
        .enumerate()
        .map(|(i, a)| gpu::report(i, a))
        .collect();
    if all.is_empty() {
        return Err(gpu::GpuError::NoAdapter.into());
    }
    let default_index = gpu::select(&instance, &AdapterSelector(None))?.0;
    let selected: Vec<usize> = match &args.adapter.adapter {
        Some(_) => vec![gpu::select(&instance, &args.adapter.selector())?.0],
        None => (0..all.len()).collect(),
    };
    let root = if args.probe {
        crate::discover::workspace(args.manifest_path.as_deref())
            .ok()
            .map(|w| w.root)
    } else {
        None
    };
    let mut entries = Vec::new();
    let mut code = exit::OK;
    for adapter in all {
        if !selected.contains(&adapter.index) {
            continue;
        }
        let mut entry = Entry {
            default: adapter.index == default_index,
            adapter,
            ceilings: None,
            ceilings_file: None,
            probe_error: None,
        };
        if args.probe {
            if !args.json {
                eprintln!(
                    "probing [{}] {} …",
                    entry.adapter.index, entry.adapter.identity.name
                );
            }
            let result = WorkerProcess::start(
                AdapterSelector(Some(entry.adapter.key.to_string())),
                Duration::from_secs(300),
            )
            .map_err(|e| e.to_string())
            .and_then(|mut w| crate::evaluate::Evaluator::probe(&mut w));
            match result {
                Ok(c) => {
                    if let Some(root) = &root {
                        match crate::cache::store::write_ceilings(root, &c) {
                            Ok(p) => entry.ceilings_file = Some(p.display().to_string()),
                            Err(e) => log::warn!("could not store ceilings: {e}"),
                        }
                    }
                    entry.ceilings = Some(c);
                }
                Err(e) => {
                    code = exit::FAILED;
                    entry.probe_error = Some(e);
                }
            }
        }
        entries.push(entry);
    }
    if args.json {
        print_json(&Report { adapters: entries });
        return Ok(code);
    }
    for e in &entries {
        let a = &e.adapter;
        println!(
            "[{}] {}{}\n    backend {}, {}, vendor {:#06x} device {:#06x}, driver {} {}\n    key {}",
            a.index,
            a.identity.name,
            if e.default { " (default)" } else { "" },
            a.identity.backend,
            a.identity.device_type,
            a.identity.vendor,
            a.identity.device,
            a.identity.driver,
            a.identity.driver_info,
            a.key
        );
        if let Some(c) = &e.ceilings {
            println!(
                "    copy {:.1} GB/s, f32 FMA {:.1} GFLOP/s ({}, median of {})",
                c.copy_gbps, c.fma_gflops, c.method, c.samples
            );
            for p in &c.copy_by_size {
                println!("      copy {:>5} MiB: {:.1} GB/s", p.bytes >> 20, p.gbps);
            }
            if let Some(f) = &e.ceilings_file {
                println!("    stored in {f}");
            }
        }
        if let Some(err) = &e.probe_error {
            println!("    probe failed: {err}");
        }
    }
    Ok(code)
}

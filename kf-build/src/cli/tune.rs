//! `cargo kernelfoundry tune`: the arguments of a tune ([`crate::tune::targets`], on a worker
//! process, local or through `--worker-cmd`, or on the workers of each adapter key behind a
//! broker), and what it returns printed.

use super::search::{LlmArgs, SearchArgs};
use super::{AdapterArgs, WorkspaceArgs, exit, print_json};
use crate::cache::run::Run;
use crate::tune::Options;
use crate::tune::targets::{self, Outcome, Request};
use anyhow::Context;
use clap::Args;

#[derive(Args, Debug)]
pub(crate) struct TuneArgs {
    #[command(flatten)]
    workspace: WorkspaceArgs,
    #[command(flatten)]
    kernels: super::KernelArgs,
    #[command(flatten)]
    adapter: AdapterArgs,
    #[command(flatten)]
    search: SearchArgs,
    #[command(flatten)]
    shapes: super::ShapeArgs,
    /// Continue the newest unfinished run (killed or interrupted) with its options, answering
    /// every evaluation it already finished from its journal.
    #[arg(long)]
    resume: bool,
    /// Retune kernels that already have a cache entry for this adapter.
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    llm: LlmArgs,
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

pub(crate) fn run(mut args: TuneArgs) -> anyhow::Result<i32> {
    let (ws, mut found) = args.workspace.discover()?;
    let mut search = args.search.config();
    let resumed = if args.resume {
        let run = Run::latest_unfinished(&ws.target_dir).with_context(|| {
            format!(
                "there is no unfinished tune run under {} to resume",
                ws.target_dir.join("kernelfoundry/runs").display()
            )
        })?;
        // The run's options replace the flags: the search settings as one object.
        let o = &run.record.options;
        search = o.search.clone();
        args.shapes.tune_shapes = o.tune_shapes.clone();
        args.force = o.force;
        args.kernels.kernels = o.kernels.clone();
        args.llm.llm = o.llm;
        args.llm.no_llm = !o.llm;
        args.llm.llm_replay_only = o.llm_replay_only;
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
    let mut kernels: Vec<String> = Vec::new();
    if !args.kernels.kernels.is_empty() {
        kernels = found.iter().map(|f| f.name.clone()).collect();
        kernels.dedup();
    }
    args.shapes.check(&found, &names)?;
    let request = Request {
        options: Options {
            search,
            force: args.force,
            tune_shapes: args.shapes.tune_shapes.clone(),
            llm: None,
        },
        kernels,
        llm: crate::tune::llm::config(args.llm.flags(), &ws)?,
        llm_replay_only: args.llm.llm_replay_only,
        dry_run: args.llm.dry_run,
        fleet: args.fleet.options(),
        adapter: args.adapter.selector(),
        resumed,
        quiet: args.json,
    };
    request.check()?;
    super::drop_skipped(&mut found, args.json)?;
    let say = |line: String| {
        if !args.json {
            eprintln!("{line}");
        }
    };
    let tuned = match targets::tune(&ws, &found, request, say)? {
        Outcome::Unserved(unserved) => {
            eprintln!("error: {unserved}");
            return Ok(exit::NO_GPU);
        }
        Outcome::DryRun(text) => {
            print!("{text}");
            return Ok(exit::OK);
        }
        Outcome::Tuned(tuned) => tuned,
    };
    if args.json {
        if let Some(json) = tuned.json(args.verbose) {
            print_json(&json);
        }
    } else {
        print!("{}", tuned.text(args.verbose));
        for note in tuned.notes() {
            eprintln!("note: {note}");
        }
    }
    let faults = tuned.faults();
    for fault in &faults {
        eprintln!("error: {fault}");
    }
    Ok(if !faults.is_empty() {
        exit::NO_GPU
    } else if tuned.failed() {
        exit::FAILED
    } else {
        exit::OK
    })
}

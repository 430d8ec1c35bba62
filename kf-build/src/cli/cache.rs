//! `cargo kernelfoundry cache verify|gc|merge`: look after the committed cache (the judgements are
//! in `cache::tools`).

use super::{WorkspaceArgs, exit, print_json};
use crate::cache::tools::{self, Destination, GcReport, MergeAction, MergeReport};
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub(crate) struct CacheArgs {
    #[command(subcommand)]
    command: CacheCommand,
}

#[derive(Subcommand, Debug)]
enum CacheCommand {
    /// Check every cache entry: it parses, sits where its contents say, matches a marked kernel's
    /// content hash, and its variant still fits that kernel. Exits with 1 when anything fails.
    Verify(VerifyArgs),
    /// Remove the entries whose content hash no marked kernel has any more (the kernel's WGSL,
    /// entry point, launch rule or contract changed, or the kernel is gone).
    Gc(GcArgs),
    /// Merge cache directories from other machines (a crate, a checkout or a `kernelfoundry/`
    /// directory): new entries are added; for two entries of one kernel on one adapter key the
    /// faster verified one is kept, and the output says which and why.
    Merge(MergeArgs),
}

#[derive(Args, Debug)]
struct VerifyArgs {
    #[command(flatten)]
    workspace: WorkspaceArgs,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct GcArgs {
    #[command(flatten)]
    workspace: WorkspaceArgs,
    /// Say what would be removed, remove nothing.
    #[arg(long)]
    dry_run: bool,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct MergeArgs {
    /// Directories to merge from: another copy of the crate, a checkout, or its `kernelfoundry/`.
    #[arg(value_name = "DIR", required = true)]
    dirs: Vec<PathBuf>,
    #[command(flatten)]
    workspace: WorkspaceArgs,
    /// Say what would change, write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: CacheArgs) -> anyhow::Result<i32> {
    match args.command {
        CacheCommand::Verify(a) => verify(a),
        CacheCommand::Gc(a) => gc(a),
        CacheCommand::Merge(a) => merge(a),
    }
}

/// The selected packages' names and crate roots, and every kernel in them (cfg-disabled ones
/// included: they are still marked).
fn packages(
    w: &WorkspaceArgs,
) -> anyhow::Result<(PathBuf, Vec<Destination>, Vec<crate::discover::Found>)> {
    let (ws, found) = w.discover()?;
    let packages = ws
        .select(&w.packages, w.workspace)?
        .into_iter()
        .map(|p| Destination {
            package: p.name.clone(),
            crate_root: p.root.clone(),
        })
        .collect();
    Ok((ws.root.clone(), packages, found))
}

fn verify(args: VerifyArgs) -> anyhow::Result<i32> {
    let (root, packages, found) = packages(&args.workspace)?;
    let roots: Vec<PathBuf> = packages.iter().map(|p| p.crate_root.clone()).collect();
    let v = tools::verify(&roots, &found);
    if args.json {
        print_json(&v);
    } else {
        print!("{}", v.text(&root));
    }
    Ok(if v.problems.is_empty() {
        exit::OK
    } else {
        exit::FAILED
    })
}

fn gc(args: GcArgs) -> anyhow::Result<i32> {
    let (root, packages, found) = packages(&args.workspace)?;
    let roots: Vec<PathBuf> = packages.iter().map(|p| p.crate_root.clone()).collect();
    let plan = tools::gc_plan(&roots, &found);
    if !args.dry_run {
        for r in &plan.remove {
            let crate_root = roots
                .iter()
                .find(|c| r.path.starts_with(c))
                .expect("gc plans only files under the selected crates");
            crate::cache::store::remove_entry(crate_root, &r.path)
                .map_err(|e| anyhow::anyhow!("cannot remove {}: {e}", r.path.display()))?;
        }
    }
    let report = GcReport {
        dry_run: args.dry_run,
        plan,
    };
    if args.json {
        print_json(&report);
    } else {
        print!("{}", report.text(&root));
    }
    Ok(exit::OK)
}

fn merge(args: MergeArgs) -> anyhow::Result<i32> {
    for d in &args.dirs {
        anyhow::ensure!(d.is_dir(), "{} is not a directory", d.display());
    }
    let (root, packages, found) = packages(&args.workspace)?;
    let actions = tools::merge(&args.dirs, &packages, &found, args.dry_run);
    let report = MergeReport {
        dry_run: args.dry_run,
        files: &actions,
    };
    if args.json {
        print_json(&report);
    } else {
        print!("{}", report.text(&root));
    }
    Ok(if actions.iter().any(MergeAction::failed) {
        exit::FAILED
    } else {
        exit::OK
    })
}

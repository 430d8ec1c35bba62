//! `cargo kernelfoundry list`: the marked kernels and their cache status per adapter
//! ([`crate::cache::listing`]).

use super::{WorkspaceArgs, exit, print_json};
use crate::gpu::{self, AdapterReport};
use clap::Args;

#[derive(Args, Debug)]
pub(crate) struct ListArgs {
    #[command(flatten)]
    workspace: WorkspaceArgs,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: ListArgs) -> anyhow::Result<i32> {
    let (ws, found) = args.workspace.discover()?;
    let instance = gpu::instance();
    let adapters: Vec<AdapterReport> = gpu::adapters(&instance)
        .iter()
        .enumerate()
        .map(|(i, a)| gpu::report(i, a))
        .collect();
    let report = crate::cache::listing::list(&ws.root, &found, adapters);
    let code = if report.kernels.iter().any(|k| k.error.is_some()) {
        exit::FAILED
    } else {
        exit::OK
    };
    if args.json {
        print_json(&report);
    } else {
        print!("{}", report.text(&ws.root));
    }
    Ok(code)
}

//! The command line: argument types (clap), dispatch to the verbs, output, exit codes.
//!
//! Each verb builds a serializable report; `--json` prints it as one JSON object on stdout, and
//! without it a human summary goes to stdout with progress on stderr. Errors are reported with
//! context (anyhow) and mapped to the exit codes in [`exit`].
//!
//! Invariant: stdout carries only the report (human or JSON); logs and progress go to stderr, so
//! `--json` output can always be piped into a parser.

mod ablate;
mod adapters;
mod bench;
mod cache;
mod eval;
pub mod exit;
mod fleet;
mod list;
mod report;
mod search;
mod select;
mod tune;
mod worker;

pub(crate) use fleet::{AdapterArgs, FleetArgs};
pub(crate) use select::{KernelArgs, ShapeArgs, WorkspaceArgs, drop_skipped};

use clap::{Args, Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(name = "cargo-kernelfoundry", bin_name = "cargo", version, styles = clap::builder::styling::Styles::plain())]
enum Cargo {
    /// Tune the WGSL kernels marked with #[kernelfoundry] for the GPU in this machine.
    #[command(name = "kernelfoundry", version)]
    Kernelfoundry(App),
}

/// Tune the WGSL compute kernels marked with `#[kernelfoundry(..)]` for the GPU in this machine.
///
/// `tune` finds every marked kernel in the workspace, measures it on the adapter wgpu detects,
/// searches its template parameters (override constants and the workgroup size), verifies the
/// fastest variant against the original on fresh inputs and unseen shapes, and writes it to
/// `kernelfoundry/<KERNEL>/<content-hash>/<adapter-key>.json` at the crate root. Commit those
/// files: the macro embeds them at build time and `kf-runtime` picks the one for the GPU it
/// finds at startup.
#[derive(Args, Debug)]
#[command(
    after_help = "Exit status: 0 success, 1 a kernel failed or a candidate was rejected, 2 bad input, 3 no usable GPU adapter.\nLogs: RUST_LOG=kf_build=debug."
)]
struct App {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List the GPU adapters wgpu finds, with the adapter keys cache entries are filed under.
    Adapters(adapters::AdaptersArgs),
    /// List the marked kernels of the workspace and their cache status on each adapter.
    List(list::ListArgs),
    /// Tune every marked kernel (or one) on an adapter and write the variant cache.
    Tune(tune::TuneArgs),
    /// Evaluate a hand-written candidate WGSL file against a marked kernel's baseline.
    Eval(eval::EvalArgs),
    /// Compare search strategies (qd with and without gradients, greedy, random) at an equal
    /// evaluation budget or, with `--time`, an equal wall time, over several seeds; writes
    /// nothing to the cache.
    Ablate(ablate::AblateArgs),
    /// Measure each kernel's tuned variant and hand-written reference against its baseline on an
    /// adapter, re-verifying both, with the suite's figures (correctness rate, fast_p, geomean).
    Bench(bench::BenchArgs),
    /// Write one self-contained HTML report of the newest tune run: per kernel the archive
    /// heatmap, fitness over evaluations and roofline placement, and the suite table.
    Report(report::ReportArgs),
    /// Evaluate candidates for tuners on other machines: through a broker (`--broker URL`), or on
    /// stdin/stdout for `tune --worker-cmd` (`--stdio`).
    Worker(worker::WorkerArgs),
    /// Look after the committed cache: `verify` every entry, `gc` entries no kernel matches,
    /// `merge` entries from other machines.
    Cache(cache::CacheArgs),
}

/// Runs the command line and returns the exit code.
pub fn main() -> i32 {
    crate::gpu::quiet_display_probe();
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args
        .get(1)
        .is_some_and(|a| a == crate::evaluate::process::WORKER_VERB)
    {
        return match crate::evaluate::process::serve() {
            Ok(()) => exit::OK,
            Err(e) => {
                eprintln!("worker: {e}");
                exit::FAILED
            }
        };
    }
    // Invoked directly as `cargo-kernelfoundry tune` rather than through cargo: add the verb.
    if args.get(1).is_none_or(|a| a != "kernelfoundry") {
        args.insert(1, "kernelfoundry".into());
    }
    env_logger::Builder::from_env(
        env_logger::Env::default().default_filter_or("warn,wgpu_hal=off,wgpu_core=off,naga=warn"),
    )
    .format_timestamp(None)
    .init();
    let Cargo::Kernelfoundry(app) = match Cargo::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                exit::USAGE
            } else {
                exit::OK
            };
        }
    };
    let result = match app.command {
        Command::Adapters(a) => adapters::run(a),
        Command::List(a) => list::run(a),
        Command::Tune(a) => tune::run(a),
        Command::Eval(a) => eval::run(a),
        Command::Ablate(a) => ablate::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Report(a) => report::run(a),
        Command::Worker(a) => worker::run(a),
        Command::Cache(a) => cache::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            exit::of_error(&e)
        }
    }
}

/// Prints `value` as one line of JSON on stdout.
pub(crate) fn print_json<T: serde::Serialize>(value: &T) {
    println!(
        "{}",
        serde_json::to_string(value).expect("reports serialize")
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cargo::command().debug_assert();
    }
}

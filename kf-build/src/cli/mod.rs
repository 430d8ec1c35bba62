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
mod list;
mod report;
mod tune;
mod worker;

use crate::gpu::{AdapterSelector, GpuError};
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// Process exit codes.
pub mod exit {
    /// Everything asked for succeeded.
    pub const OK: i32 = 0;
    /// The command ran, but a kernel failed to tune or a candidate was rejected.
    pub const FAILED: i32 = 1;
    /// Bad input: arguments, workspace, kernel names, adapter selector.
    pub const USAGE: i32 = 2;
    /// No GPU adapter could be used.
    pub const NO_GPU: i32 = 3;
}

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
    /// evaluation budget over several seeds; writes nothing to the cache.
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

/// Options shared by the verbs that read the workspace.
#[derive(Args, Debug, Clone)]
pub(crate) struct WorkspaceArgs {
    /// Path to Cargo.toml of the workspace or package to read.
    #[arg(long, value_name = "PATH", help_heading = "Package Selection")]
    manifest_path: Option<PathBuf>,
    /// Only kernels of this package (may be repeated). Default: the current package, or every
    /// member of a virtual workspace.
    #[arg(
        short = 'p',
        long = "package",
        value_name = "SPEC",
        help_heading = "Package Selection"
    )]
    packages: Vec<String>,
    /// Kernels of every workspace member.
    #[arg(long, help_heading = "Package Selection", conflicts_with = "packages")]
    workspace: bool,
    /// Space or comma separated list of features to activate, as for `cargo build`: kernels in
    /// items whose `#[cfg(..)]` the selected features leave off are listed as skipped and not
    /// tuned.
    #[arg(
        short = 'F',
        long,
        value_name = "FEATURES",
        help_heading = "Feature Selection"
    )]
    features: Vec<String>,
    /// Activate all available features.
    #[arg(long, help_heading = "Feature Selection")]
    all_features: bool,
    /// Do not activate the `default` feature.
    #[arg(long, help_heading = "Feature Selection")]
    no_default_features: bool,
}

impl WorkspaceArgs {
    /// Reads the workspace and the selected packages' kernels.
    pub(crate) fn discover(
        &self,
    ) -> anyhow::Result<(crate::discover::Workspace, Vec<crate::discover::Found>)> {
        let ws = crate::discover::workspace(self.manifest_path.as_deref())?;
        let found = {
            let packages = ws.select(&self.packages, self.workspace)?;
            crate::discover::kernels(
                &packages,
                &crate::discover::FeatureSelection {
                    features: self.features.clone(),
                    all_features: self.all_features,
                    no_default_features: self.no_default_features,
                },
            )?
        };
        Ok((ws, found))
    }
}

/// Removes the kernels a build of the selected features does not compile, saying so on stderr;
/// an error when nothing is left to work on.
pub(crate) fn drop_skipped(
    found: &mut Vec<crate::discover::Found>,
    quiet: bool,
) -> anyhow::Result<()> {
    let (skipped, kept): (Vec<_>, Vec<_>) = std::mem::take(found)
        .into_iter()
        .partition(|f| f.skipped.is_some());
    *found = kept;
    for f in &skipped {
        if !quiet {
            eprintln!(
                "skipping {} ({}): {}",
                f.name,
                f.location(),
                f.skipped.as_deref().unwrap_or_default()
            );
        }
    }
    if found.is_empty() && !skipped.is_empty() {
        anyhow::bail!(
            "every kernel selected is behind a disabled `#[cfg(..)]`; select features with --features or --all-features"
        );
    }
    Ok(())
}

/// The `--kernel` option of the verbs that run on some of the workspace's kernels (tune, bench,
/// ablate): one selection, so that the verbs agree on what a name or pattern means.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct KernelArgs {
    /// Only these kernels: a static name (e.g. SAXPY) or a glob pattern over the names (`*` any
    /// characters, `?` one, `[..]` a set, e.g. 'GEMM*'; quote it for the shell). May be repeated;
    /// an unknown name or a pattern that matches nothing is an error. Default: every marked
    /// kernel of the selection.
    #[arg(long = "kernel", value_name = "NAME|PATTERN")]
    pub(crate) kernels: Vec<String>,
}

impl KernelArgs {
    /// Keeps the kernels of `found` that `--kernel` selects, in their discovery order (all when
    /// none is given).
    pub(crate) fn select(&self, found: &mut Vec<crate::discover::Found>) -> anyhow::Result<()> {
        let names: Vec<&str> = found.iter().map(|f| f.name.as_str()).collect();
        let keep = select_names(&names, &self.kernels).map_err(anyhow::Error::msg)?;
        let mut keep = keep.into_iter();
        found.retain(|_| keep.next().unwrap_or(false));
        Ok(())
    }
}

/// Which of `names` the `wanted` names and glob patterns select (all when `wanted` is empty);
/// the error names the first entry that selects nothing and lists `names`.
fn select_names(names: &[&str], wanted: &[String]) -> Result<Vec<bool>, String> {
    if wanted.is_empty() {
        return Ok(vec![true; names.len()]);
    }
    let mut keep = vec![false; names.len()];
    let listed = names;
    for w in wanted {
        let pattern = glob::Pattern::new(w).map_err(|e| {
            format!(
                "`{w}` is neither a kernel name nor a glob pattern ({e}); the workspace has: {}",
                listed.join(", ")
            )
        })?;
        let mut hit = false;
        for (k, name) in keep.iter_mut().zip(names) {
            if pattern.matches(name) {
                *k = true;
                hit = true;
            }
        }
        if !hit {
            let what = if glob::Pattern::escape(w) == *w {
                format!("no kernel named `{w}`")
            } else {
                format!("no kernel matches `{w}`")
            };
            return Err(format!("{what}; the workspace has: {}", listed.join(", ")));
        }
    }
    Ok(keep)
}

/// The `--tune-shape` option of the verbs that run kernels (tune, bench, ablate, eval).
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct ShapeArgs {
    /// Use this shape instead of the attribute's tune shapes, e.g. `rows=4096,cols=4096` (may be
    /// repeated; unnamed sizes keep their defaults). `KERNEL:name=N,…` (e.g.
    /// `GEMM:m=512,n=512,k=512`) is for that kernel only: each kernel runs on the unqualified
    /// shapes plus those qualified with its name, in the order given, and keeps the attribute's
    /// tune shapes when none applies; a qualifier must name a selected kernel. `tune` records the
    /// shapes in the entry; `bench` given the same shapes finds it.
    #[arg(long = "tune-shape", value_name = "[KERNEL:]NAME=N,…")]
    pub(crate) tune_shapes: Vec<String>,
}

impl ShapeArgs {
    /// Checks the kernel qualifiers against the kernels the verb runs on (`found`, after
    /// `--kernel`); `names` is every kernel of the workspace.
    pub(crate) fn check(
        &self,
        found: &[crate::discover::Found],
        names: &[String],
    ) -> anyhow::Result<()> {
        let selected: Vec<&str> = found.iter().map(|f| f.name.as_str()).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        crate::tune::check_shape_kernels(&self.tune_shapes, &selected, &names)
            .map_err(anyhow::Error::msg)
    }
}

/// Where evaluations run, for the verbs that can send them elsewhere than a local worker.
#[derive(Args, Debug, Clone)]
pub(crate) struct FleetArgs {
    /// Send the evaluations to the workers on this broker (`cargo kernelfoundry worker --broker
    /// URL` on the GPU machines) instead of a local worker: `nats://[user:password@]host[:port]`,
    /// `tls://…` for TLS. Credentials may come from KERNELFOUNDRY_BROKER_USER and
    /// KERNELFOUNDRY_BROKER_PASSWORD (or KERNELFOUNDRY_BROKER_TOKEN) instead; they are never
    /// printed. This machine needs no GPU.
    #[arg(
        long,
        value_name = "URL",
        env = "KERNELFOUNDRY_BROKER",
        hide_env_values = true,
        help_heading = "Fleet"
    )]
    pub broker: Option<String>,
    /// Use the workers of this adapter key (may be repeated; `tune`: one archive, run and cache
    /// entry per key). Default: every key a worker on the broker serves.
    #[arg(long = "adapter-key", value_name = "KEY", help_heading = "Fleet")]
    pub adapter_keys: Vec<String>,
    /// Seconds to wait for the workers of each adapter key to announce themselves, and for a
    /// worker to take an evaluation, before the command stops and names the key nobody serves.
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = 60.0,
        help_heading = "Fleet"
    )]
    pub broker_timeout: f64,
    /// Run the evaluation worker through this command (by `sh -c`) instead of locally, e.g.
    /// `ssh gpu-box cargo-kernelfoundry worker --stdio`; it speaks the worker protocol on
    /// stdin/stdout and kills a candidate at its deadline itself.
    #[arg(long, value_name = "COMMAND", help_heading = "Fleet")]
    pub worker_cmd: Option<String>,
}

impl FleetArgs {
    /// The library's view of these options.
    pub fn options(&self) -> crate::session::FleetOptions {
        crate::session::FleetOptions {
            broker: self.broker.clone(),
            adapter_keys: self.adapter_keys.clone(),
            broker_timeout_s: self.broker_timeout,
            worker_cmd: self.worker_cmd.clone(),
        }
    }
}

/// The adapter option shared by the verbs that use the GPU.
#[derive(Args, Debug, Clone)]
pub(crate) struct AdapterArgs {
    /// Adapter to use: an index or key from `cargo kernelfoundry adapters`, or part of its name
    /// (case-insensitive) or a backend (`vulkan`, `gl`). Default: wgpu's high-performance choice.
    #[arg(long, value_name = "INDEX|KEY|NAME", env = "KERNELFOUNDRY_ADAPTER")]
    adapter: Option<String>,
}

impl AdapterArgs {
    fn selector(&self) -> AdapterSelector {
        AdapterSelector(self.adapter.clone())
    }
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
            let no_adapter = |g: &GpuError| matches!(g, GpuError::NoAdapter);
            if e.chain().any(|c| {
                c.downcast_ref::<GpuError>().is_some_and(no_adapter)
                    || c.downcast_ref::<crate::session::SessionError>()
                        .is_some_and(
                            |s| matches!(s, crate::session::SessionError::Gpu(g) if no_adapter(g)),
                        )
            }) {
                exit::NO_GPU
            } else {
                exit::USAGE
            }
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

pub(crate) use crate::bench::fmt_ns;

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cargo::command().debug_assert();
    }

    #[test]
    fn kernels_are_selected_by_name_and_by_pattern() {
        let names = ["GEMM", "GEMM_T", "SAXPY", "SOFTMAX"];
        let pick = |wanted: &[&str]| {
            let wanted: Vec<String> = wanted.iter().map(|w| w.to_string()).collect();
            select_names(&names, &wanted).map(|keep| {
                names
                    .iter()
                    .zip(keep)
                    .filter(|(_, k)| *k)
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
            })
        };
        assert_eq!(pick(&[]).unwrap(), names);
        assert_eq!(pick(&["SAXPY", "GEMM"]).unwrap(), ["GEMM", "SAXPY"]);
        assert_eq!(pick(&["GEMM*"]).unwrap(), ["GEMM", "GEMM_T"]);
        assert_eq!(pick(&["S*", "S?XPY"]).unwrap(), ["SAXPY", "SOFTMAX"]);
        let e = pick(&["SAXPY", "GEMV"]).unwrap_err();
        assert_eq!(
            e,
            "no kernel named `GEMV`; the workspace has: GEMM, GEMM_T, SAXPY, SOFTMAX"
        );
        let e = pick(&["CONV*"]).unwrap_err();
        assert!(
            e.starts_with("no kernel matches `CONV*`; the workspace has: GEMM"),
            "{e}"
        );
        let e = pick(&["[GEMM"]).unwrap_err();
        assert!(
            e.contains("neither a kernel name nor a glob pattern"),
            "{e}"
        );
        // Names are case-sensitive, as the statics are.
        assert!(pick(&["saxpy"]).is_err());
    }

    #[test]
    fn formats_durations() {
        assert_eq!(fmt_ns(1_500_000.0), "1.50 ms");
        assert_eq!(fmt_ns(2_500.0), "2.5 µs");
        assert_eq!(fmt_ns(12.0), "12 ns");
    }
}

//! The options that say which kernels a verb works on: the workspace, packages and features
//! (`WorkspaceArgs`), `--kernel` (`KernelArgs`) and `--tune-shape` (`ShapeArgs`).

use clap::Args;
use std::path::PathBuf;

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
    pub(crate) packages: Vec<String>,
    /// Kernels of every workspace member.
    #[arg(long, help_heading = "Package Selection", conflicts_with = "packages")]
    pub(crate) workspace: bool,
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

/// Removes the kernels a build of the selected features does not compile, saying so on stderr
/// unless `quiet`; an error when nothing is left to work on.
pub(crate) fn drop_skipped(
    found: &mut Vec<crate::discover::Found>,
    quiet: bool,
) -> anyhow::Result<()> {
    Ok(crate::discover::select::drop_skipped(found, |f| {
        if !quiet {
            eprintln!(
                "skipping {} ({}): {}",
                f.name,
                f.location(),
                f.skipped.as_deref().unwrap_or_default()
            );
        }
    })?)
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
        Ok(crate::discover::select::select(found, &self.kernels)?)
    }
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

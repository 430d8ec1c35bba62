//! A hand-written variant checked against a marked kernel's baseline with every check the tuner
//! applies (`cargo kernelfoundry eval`), and where it lands on the fitness ladder.
//!
//! A candidate is most often an edit of the kernel's own file, so it runs with the baseline's
//! constants for the overrides it shares with the baseline (`params(..)` already names their
//! values); `--constant` overrides them, and gives values to overrides only the candidate has.

use crate::discover::Found;
use crate::evaluate::{Candidate, EvalReport};
use kf_runtime::expr::SizeExpr;
use kf_runtime::resolve::{ResolvedKernel, shape_text};
use kf_runtime::{Dispatch, DispatchMode, Program};
use serde::Serialize;
use std::borrow::Cow;

/// Why a candidate cannot be evaluated.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// The kernel is behind a disabled `#[cfg]`.
    #[error("kernel `{name}` ({location}) is not compiled: {why}")]
    NotCompiled {
        /// The kernel.
        name: String,
        /// Where it is.
        location: String,
        /// Why it is skipped.
        why: String,
    },
    /// No kernel of that name.
    #[error("no kernel named `{name}`; the workspace has: {}", .names.join(", "))]
    NoKernel {
        /// The name asked for.
        name: String,
        /// The workspace's kernels.
        names: Vec<String>,
    },
    /// The name is defined in several packages.
    #[error("`{name}` is defined in several packages ({}); choose one with -p", .packages.join(", "))]
    Ambiguous {
        /// The name.
        name: String,
        /// The packages defining it.
        packages: Vec<String>,
    },
    /// Overrides of the candidate that nothing gives a value.
    #[error(
        "{} without a default that kernel {kernel}'s baseline has no value for: {}; give each one with `--constant {first}=<value>` (or a default in the WGSL, `override {first}: u32 = 64;`)",
        if .missing.len() == 1 { "it declares an override" } else { "it declares overrides" },
        .missing.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "),
        first = .missing[0]
    )]
    MissingConstants {
        /// The kernel.
        kernel: String,
        /// The overrides without a value.
        missing: Vec<String>,
    },
    /// A launch expression names something that is neither a size nor a constant.
    #[error(
        "`{name}` is neither a size of kernel {kernel} nor a constant of the candidate; its sizes are {}{}",
        .sizes.join(", "),
        if .constants.is_empty() { String::new() } else { format!(", the candidate's constants {}", .constants.join(", ")) }
    )]
    UnknownLaunchName {
        /// The name.
        name: String,
        /// The kernel.
        kernel: String,
        /// Its sizes.
        sizes: Vec<String>,
        /// The candidate's constants.
        constants: Vec<String>,
    },
}

/// The one compiled kernel named `name` among `found`.
pub fn find_kernel<'a>(found: &'a [Found], name: &str) -> Result<&'a Found, EvalError> {
    let matches: Vec<_> = found
        .iter()
        .filter(|f| f.name == name && f.skipped.is_none())
        .collect();
    match matches.as_slice() {
        [one] => Ok(*one),
        [] => Err(match found.iter().find(|f| f.name == name) {
            Some(skipped) => EvalError::NotCompiled {
                name: name.to_owned(),
                location: skipped.location(),
                why: skipped.skipped.as_deref().unwrap_or("skipped").to_owned(),
            },
            None => EvalError::NoKernel {
                name: name.to_owned(),
                names: found.iter().map(|f| f.name.clone()).collect(),
            },
        }),
        many => Err(EvalError::Ambiguous {
            name: name.to_owned(),
            packages: many.iter().map(|f| f.package.clone()).collect(),
        }),
    }
}

/// The candidate's constants: the baseline's for the overrides the candidate declares too, then
/// `given` (`--constant`), which wins. An override of the candidate's own without a default and
/// without a given value is an error naming it; WGSL that does not reflect gets `given` as is (the
/// evaluation reports it at its ladder level).
pub fn candidate_constants(
    kernel: &ResolvedKernel,
    wgsl: &str,
    given: &[(String, f64)],
) -> Result<Vec<(String, f64)>, EvalError> {
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
    let missing: Vec<String> = overrides
        .iter()
        .filter(|o| o.required && !constants.iter().any(|(k, _)| *k == o.name))
        .map(|o| o.name.clone())
        .collect();
    if !missing.is_empty() {
        return Err(EvalError::MissingConstants {
            kernel: kernel.name.clone(),
            missing,
        });
    }
    Ok(constants)
}

/// The candidate program: `wgsl` with its constants, launched by `launch` (`--grid` or
/// `--workgroups`: the mode and one to three size expressions) or else by the baseline's rule.
pub fn candidate(
    kernel: &ResolvedKernel,
    wgsl: String,
    constants: Vec<(String, f64)>,
    launch: Option<(DispatchMode, &[SizeExpr])>,
    origin: String,
) -> Result<Candidate, EvalError> {
    let dispatch = match launch {
        Some((mode, d)) => {
            let declared: Vec<&str> = kernel.sizes.iter().map(|(n, _)| n.as_str()).collect();
            if let Some(n) = d
                .iter()
                .flat_map(|e| e.names())
                .find(|n| !declared.contains(n) && !constants.iter().any(|(k, _)| k == n))
            {
                return Err(EvalError::UnknownLaunchName {
                    name: n.to_string(),
                    kernel: kernel.name.clone(),
                    sizes: declared.iter().map(|s| s.to_string()).collect(),
                    constants: constants.iter().map(|(k, _)| k.clone()).collect(),
                });
            }
            let mut size = d.to_vec();
            size.resize(3, SizeExpr::lit(1));
            Dispatch {
                mode,
                size: [size[0].clone(), size[1].clone(), size[2].clone()],
            }
        }
        None => kernel.baseline.dispatch.clone(),
    };
    Ok(Candidate::new(
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
            workspace: Cow::Borrowed(&[]),
            then: kernel.baseline.then.clone(),
        },
        origin,
    ))
}

/// `NAME=VALUE`, as `eval --constant` takes a pipeline constant.
pub fn parse_constant(s: &str) -> Result<(String, f64), String> {
    let (k, v) = s.split_once('=').ok_or("expected NAME=VALUE")?;
    let v: f64 = v
        .trim()
        .parse()
        .map_err(|_| format!("`{v}` is not a number"))?;
    Ok((k.trim().to_owned(), v))
}

/// Whether `program`'s loops are proven to end, so that it is built without wgpu's hidden loop
/// counter (`kf_runtime::termination`), or why not: worth knowing when writing a candidate by
/// hand, since the counter can cost a loop several times its speed on NVIDIA GPUs.
pub fn loops(program: &Program) -> String {
    match kf_runtime::termination::prove_program(program) {
        Ok(p) if p.loops == 0 => "no loops".into(),
        Ok(p) => format!(
            "{} proven to end ({} bounds clamped): built without wgpu's loop counter",
            p.loops, p.clamped
        ),
        Err(why) => format!("wgpu's loop counter kept: {why}"),
    }
}

/// The `eval --json` report.
#[derive(Serialize)]
pub struct Report<'a> {
    /// The kernel.
    pub kernel: &'a str,
    /// Its package.
    pub package: &'a str,
    /// The candidate file.
    pub candidate: String,
    /// The adapter's name.
    pub adapter: String,
    /// Its key.
    pub adapter_key: String,
    /// The ladder level reached.
    pub level: u8,
    /// Level 5.
    pub correct: bool,
    /// Why it was rejected.
    pub reason: Option<String>,
    /// The rejection's log.
    pub log: Option<String>,
    /// The speedup over the baseline.
    pub speedup: Option<f64>,
    /// How the candidate's loops are built (see [`loops`]).
    pub loops: String,
    /// The whole evaluation report.
    #[serde(flatten)]
    pub report: &'a EvalReport,
}

impl Report<'_> {
    /// The human summary: the verdict, each shape's timing and the roofline placement.
    pub fn text(&self, adapter: &str) -> String {
        let report = self.report;
        let mut out = format!("{} vs {} on {adapter}\n", self.candidate, self.kernel);
        match &report.failure {
            Some(failure) => {
                out.push_str(&format!(
                    "level {}: rejected ({})\n",
                    report.fitness.level, failure.reason
                ));
                for line in failure.log.lines() {
                    out.push_str(&format!("    {line}\n"));
                }
                if let Some(miss) = report.near_miss() {
                    out.push_str(&format!(
                        "    {}; the tolerance is yours to set in the attribute, KernelFoundry never changes it\n",
                        miss.would_pass()
                    ));
                }
            }
            None => out.push_str(&format!(
                "level 5: correct on {} trials (max relative L2 error {:.2e}), speedup {:.2}x\n",
                report.verification.trials,
                report.verification.max_rel_l2,
                report.fitness.speedup.unwrap_or(1.0)
            )),
        }
        out.push_str(&format!("    loops: {}\n", self.loops));
        for t in &report.timings {
            out.push_str(&format!(
                "    {}: baseline {} candidate {} ({:.2}x ± {:.0} %, {} samples, {}), {:.1} GB/s{}\n",
                shape_text(&t.shape),
                crate::bench::fmt_ns(t.baseline_ns),
                crate::bench::fmt_ns(t.candidate_ns),
                t.speedup,
                t.spread * 100.0,
                t.samples,
                t.method,
                t.achieved_gbps,
                t.achieved_gflops
                    .map(|g| format!(", {g:.1} GFLOP/s"))
                    .unwrap_or_default()
            ));
        }
        if let Some(r) = &report.roofline {
            out.push_str(&format!(
                "    roofline: {}-bound, {:.0} % of the adapter's {} ceiling\n",
                r.bound,
                r.fraction * 100.0,
                if r.bound == "memory" {
                    format!("{:.1} GB/s copy", r.ceiling_gbps)
                } else {
                    format!("{:.1} GFLOP/s FMA", r.ceiling_gflops)
                }
            ));
        }
        out
    }
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

    #[test]
    fn a_launch_may_name_only_sizes_and_constants() {
        let k = kernel();
        let grid = [SizeExpr::parse("(n + 3) / 4").unwrap()];
        let c = candidate(
            &k,
            KERNEL.into(),
            vec![],
            Some((DispatchMode::Grid, &grid)),
            "file".into(),
        )
        .unwrap();
        assert_eq!(c.program.dispatch.mode, DispatchMode::Grid);
        let bad = [SizeExpr::parse("rows").unwrap()];
        let e = candidate(
            &k,
            KERNEL.into(),
            vec![("wg_size".into(), 64.0)],
            Some((DispatchMode::Workgroups, &bad)),
            "file".into(),
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "`rows` is neither a size of kernel K nor a constant of the candidate; its sizes are n, the candidate's constants wg_size"
        );
    }
}

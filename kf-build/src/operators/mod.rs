//! Offline rewrite operators: functions from a kernel's current program to new candidate programs.
//!
//! An operator is how the search changes a kernel's *code* without an LLM. Each one recognises the
//! pattern it claims from naga's IR (never from the source text), rewrites the WGSL text at the
//! spans naga reports (naga's writer is not a faithful round trip), and returns zero or more
//! [`Rewrite`]s, each with its own launch rule and constants. Each operator declares which
//! behaviour dimensions it moves ([`Moves`]) so the search's gradients can steer operator choice,
//! and says cheaply when it does not apply ([`Skip`]).
//!
//! Operators see programs in canonical spelling: the search rewrites each parent once with
//! [`canon::canonicalise`] and applies operators to the result ([`apply_canonical`]), so an operator
//! matches one spelling of each pattern and a new spelling is taught once, in [`canon`].
//!
//! Invariant: an operator never decides correctness. Its output is a candidate like any other: the
//! evaluator verifies it against the baseline, and a rewrite that is wrong only costs an evaluation.

pub mod attention;
pub mod canon;
pub mod coarsen;
pub mod grid;
pub mod hoist;
pub mod implicit;
pub mod lanes;
pub mod lift;
pub mod params;
pub mod reduce;
pub mod reshape;
pub mod respell;
pub mod scan;
#[cfg(test)]
mod testing;
#[cfg(test)]
mod testkit;
pub mod tile;
pub mod transpose;
pub mod tree;
pub mod unroll;
#[cfg(test)]
mod unseen_tests;
#[cfg(test)]
mod varied_tests;
pub mod vectorize;
pub mod widen;

use crate::evolve::descriptor::Dim;
use kf_runtime::Program;
use kf_runtime::resolve::ResolvedKernel;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// What the adapter offers, as far as rewrites care.
#[derive(Clone, Debug, Default)]
pub struct Target {
    /// Compute limits by wgpu field name (see `gpu::limits_map`), plus `subgroup_min_size` and
    /// `subgroup_max_size`.
    pub limits: BTreeMap<String, u64>,
    /// Feature names as wgpu prints them (e.g. `SUBGROUP`, `SHADER_F16`).
    pub features: Vec<String>,
}

impl Target {
    /// A limit by name, or `default` when the adapter did not report it.
    pub fn limit(&self, name: &str, default: u64) -> u64 {
        self.limits.get(name).copied().unwrap_or(default)
    }

    /// Whether the adapter has subgroup operations in compute shaders.
    pub fn has_subgroups(&self) -> bool {
        self.features.iter().any(|f| f == "SUBGROUP")
    }
}

/// The input of an operator: the kernel (its spec and baseline) and the program to rewrite, which is
/// the baseline or a variant an earlier operator produced.
#[derive(Clone, Copy, Debug)]
pub struct Subject<'a> {
    /// The kernel: buffers with roles and lengths, named sizes, tune shapes, baseline program.
    pub kernel: &'a ResolvedKernel,
    /// The parent program: WGSL, entry point, constants, workgroup size, launch rule.
    pub program: &'a Program,
    /// The adapter.
    pub target: &'a Target,
}

/// One rewritten program.
#[derive(Clone, Debug, PartialEq)]
pub struct Rewrite {
    /// The new program. Its constants give a value for every `override` the rewrite introduced.
    pub program: Program,
    /// What was done, for the variant's origin chain, e.g. `coarsen(4, contiguous)`.
    pub step: String,
    /// Candidate values for overrides this rewrite introduced (e.g. a tile size), for the
    /// parameter operator to search later.
    pub params: Vec<(String, Vec<f64>)>,
}

pub use crate::analysis::Skip;
pub use canon::canonicalise;
pub use params::Params;

/// The names of `program`'s launch rule that are not sizes of `kernel`: parameters, whose values
/// the program's own constants give (`workgroups = (cdiv(m, OUTPUTS_PER_WG))`).
pub fn launch_params<'a>(kernel: &ResolvedKernel, program: &'a Program) -> Vec<&'a str> {
    let mut names: Vec<&str> = program
        .dispatch
        .size
        .iter()
        .flat_map(|e| e.names())
        .filter(|n| !kernel.sizes.iter().any(|(s, _)| s == n))
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// For an operator that writes the parent's invocations as a `workgroups` rule's count times the
/// parent's workgroup size: refuses (with the reason) a rule whose count reads a parameter that
/// also sets that workgroup size. The size would be written as today's literal beside a count
/// that moves with the parameter, so the rule would be right for this value only and wrong once
/// the parameter moves on a descendant.
pub fn invocations_expressible(subject: &Subject<'_>) -> Result<(), Skip> {
    let program = subject.program;
    if program.dispatch.mode != kf_runtime::DispatchMode::Workgroups {
        return Ok(());
    }
    let params = launch_params(subject.kernel, program);
    if params.is_empty() {
        return Ok(());
    }
    let reflected = kf_runtime::resolve::reflect(&program.wgsl, Some(&program.entry), "parent")
        .map_err(|e| Skip(format!("the program does not reflect: {e}")))?;
    match reflected
        .interface
        .workgroup_size_overrides
        .iter()
        .flatten()
        .find(|w| params.contains(&w.as_str()))
    {
        Some(p) => Err(Skip(format!(
            "the launch rule counts workgroups with `{p}`, which also sets the workgroup size: the invocations it launches cannot be written with the size as a literal"
        ))),
        None => Ok(()),
    }
}

/// The bind group a variant's own workspace goes in (the one after the kernel's, see
/// `kf_runtime::Workspace`), or why there is none free on the adapter.
pub(crate) fn workspace_group(subject: &Subject<'_>) -> Result<u32, Skip> {
    let group = subject.kernel.interface.workspace_group();
    let max = subject.target.limit("max_bind_groups", 4);
    if u64::from(group) >= max {
        return Err(Skip(format!(
            "no bind group is free for the workspace (the kernel uses {group} of the adapter's {max})"
        )));
    }
    Ok(group)
}

/// The one gate every rewrite passes: validates `wgsl`, checks its interface against the baseline and builds the [`Rewrite`]: the
/// parent's constants with `constants` set on top, the workgroup size those constants give, the
/// parent's launch rule.
pub fn finish(
    subject: &Subject<'_>,
    wgsl: String,
    constants: &[(String, f64)],
    step: String,
    params: Vec<(String, Vec<f64>)>,
) -> Result<Rewrite, Skip> {
    let entry = subject.program.entry.as_ref();
    let reflected = kf_runtime::resolve::reflect(&wgsl, Some(entry), "rewrite")
        .map_err(|e| Skip(format!("{step}: the rewrite does not validate: {e}")))?;
    let iface = reflected.interface;
    let mismatches = subject.kernel.mismatches(&iface);
    if !mismatches.is_empty() {
        return Err(Skip(format!(
            "{step}: the rewrite changes the interface: {}",
            mismatches.join("; ")
        )));
    }
    let mut merged: Vec<(Cow<'static, str>, f64)> = subject
        .program
        .constants
        .iter()
        .filter(|(k, _)| iface.overrides.iter().any(|o| o.name == *k))
        .cloned()
        .collect();
    for (k, v) in constants {
        match merged.iter_mut().find(|(m, _)| m == k) {
            Some(slot) => slot.1 = *v,
            None => merged.push((Cow::Owned(k.clone()), *v)),
        }
    }
    let mut workgroup_size = iface.workgroup_size;
    for (d, name) in iface.workgroup_size_overrides.iter().enumerate() {
        if let Some(name) = name
            && let Some((_, v)) = merged.iter().find(|(k, _)| k == name)
        {
            workgroup_size[d] = *v as u32;
        }
    }
    Ok(Rewrite {
        program: Program {
            wgsl: Cow::Owned(wgsl),
            entry: subject.program.entry.clone(),
            constants: Cow::Owned(merged),
            workgroup_size,
            workgroup_storage_bytes: iface.workgroup_storage_bytes.unwrap_or(0),
            dispatch: subject.program.dispatch.clone(),
            workspace: Cow::Borrowed(&[]),
            then: subject.program.then.clone(),
        },
        step,
        params,
    })
}

/// How an operator moves a kernel through the behaviour space: `+1` raises a dimension's level.
pub type Moves = &'static [(Dim, i8)];

/// Every offline operator, in a fixed order (the order is part of what makes a seeded run
/// reproducible).
pub fn all() -> Vec<Box<dyn Operator>> {
    vec![
        Box::new(params::Params::default()),
        Box::new(unroll::Unroll),
        Box::new(hoist::Hoist),
        Box::new(reshape::Reshape),
        Box::new(lift::LiftWorkgroupSize),
        Box::new(tile::Tile::shared()),
        Box::new(tile::Tile::blocked()),
        Box::new(tile::Tile::split_k()),
        Box::new(implicit::ImplicitGemm),
        Box::new(reduce::ParallelReduction),
        Box::new(scan::Scan),
        Box::new(attention::FlashAttention),
        Box::new(transpose::TransposeTile),
        Box::new(coarsen::Coarsen),
        Box::new(vectorize::VectorizedAccess),
        Box::new(widen::Widen),
        Box::new(tree::SubgroupTree),
        Box::new(tree::SubgroupScan),
        Box::new(grid::GridReduce),
    ]
}

/// `program` with its entry point's function (`range`, the function's text with its attributes)
/// replaced by `function`, launched with its own workgroup size, workgroup memory and launch rule:
/// what the operators that write a new entry point from scratch (`tile`, `implicit-gemm`,
/// `scan`) build. The rest of the module is kept byte for byte.
pub fn replaced_entry(
    program: &Program,
    range: std::ops::Range<usize>,
    function: &str,
    workgroup_size: [u32; 3],
    workgroup_storage_bytes: u32,
    dispatch: kf_runtime::Dispatch,
) -> Program {
    let wgsl = program.wgsl.as_ref();
    let mut text = String::with_capacity(wgsl.len() + function.len());
    text.push_str(&wgsl[..range.start]);
    text.push_str(function);
    text.push_str(&wgsl[range.end..]);
    Program {
        wgsl: Cow::Owned(text),
        entry: program.entry.clone(),
        constants: program.constants.clone(),
        workgroup_size,
        workgroup_storage_bytes,
        dispatch,
        workspace: Cow::Borrowed(&[]),
        then: Cow::Borrowed(&[]),
    }
}

/// Invocations of `parent`'s launch along `dim`, as a size expression's operations (the grid, or
/// the workgroup count times the workgroup size).
pub fn grid_extent(parent: &Program, dim: usize) -> Vec<kf_runtime::expr::Op> {
    use kf_runtime::expr::Op;
    let mut ops = parent.dispatch.size[dim].ops().to_vec();
    if parent.dispatch.mode == kf_runtime::DispatchMode::Workgroups {
        ops.push(Op::Lit(u64::from(parent.workgroup_size[dim])));
        ops.push(Op::Mul);
    }
    ops
}

/// The ids the baseline's launch runs along `d` (`grid_extent`), and whether it runs exactly the
/// ids below that extent on every shape: a count of workgroups does, and a grid does where the
/// spec's constraints make it a multiple of the workgroup size. A rewrite may then compute the
/// axis without the kernel's own bounds test, bounding it by the extent ([`extent_wgsl`]).
pub(crate) fn exact_launch(
    program: &Program,
    kernel: &ResolvedKernel,
    d: usize,
) -> (kf_runtime::expr::SizeExpr, bool) {
    let extent = kf_runtime::expr::SizeExpr::from_ops(grid_extent(program, d));
    let divisors = kf_runtime::views::size_divisors(&kernel.size_constraints());
    let exact = program.dispatch.mode != kf_runtime::DispatchMode::Grid
        || kf_runtime::views::multiple_of(&extent, &divisors, u64::from(program.workgroup_size[d]));
    (extent, exact)
}

/// `extent` as WGSL `u32` arithmetic, its sizes read from the uniforms the spec fills with them
/// (`analysis::uniforms::size_in_uniform`), whether the kernel reads them or not; `Err` names a
/// size no uniform holds.
pub(crate) fn extent_wgsl(
    module: &naga::Module,
    kernel: &ResolvedKernel,
    extent: &kf_runtime::expr::SizeExpr,
) -> Result<String, String> {
    extent.to_wgsl(&|name| {
        crate::analysis::uniforms::size_in_uniform(module, kernel, name)
            .map(|t| format!("u32({t})"))
    })
}

/// A launch rule with one workgroup per invocation of `parent`'s launch (its invocations per axis
/// as workgroup counts): `reduce` and `scan` give every former invocation a workgroup.
pub fn one_workgroup_per_invocation(parent: &Program) -> kf_runtime::Dispatch {
    let mut size = parent.dispatch.size.clone();
    if parent.dispatch.mode == kf_runtime::DispatchMode::Workgroups {
        for (expr, &w) in size.iter_mut().zip(&parent.workgroup_size) {
            if w != 1 {
                let mut ops = expr.ops().to_vec();
                ops.push(kf_runtime::expr::Op::Lit(u64::from(w)));
                ops.push(kf_runtime::expr::Op::Mul);
                *expr = kf_runtime::expr::SizeExpr::from_ops(ops);
            }
        }
    }
    kf_runtime::Dispatch {
        mode: kf_runtime::DispatchMode::Workgroups,
        size,
    }
}

/// A rewrite operator.
pub trait Operator: Send + Sync {
    /// A short stable name, e.g. `coarsen`.
    fn name(&self) -> &'static str;
    /// The descriptor dimensions this operator moves, and in which direction.
    fn moves(&self) -> Moves;
    /// Rewrites `subject`, or says why it does not apply.
    fn apply(&self, subject: &Subject<'_>) -> Result<Vec<Rewrite>, Skip>;
    /// Whether its rewrites map work to invocations for exactly the workgroup size they declare
    /// (e.g. a tiled matmul whose thread layout is the tile's), so the parameter operator must not
    /// change that size on their descendants.
    fn fixes_workgroup(&self) -> bool {
        false
    }
    /// Whether it can rewrite a launch sequence (a program with later stages). The structural
    /// rewrites prove a pattern in one entry point and replace that entry point's text and launch
    /// rule, which says nothing of what the other stages read from it; only moving module-wide
    /// overrides keeps a sequence's stages consistent.
    fn handles_sequences(&self) -> bool {
        false
    }
}

/// The skip of an operator that rewrites one entry point, for a launch sequence.
pub fn sequence_skip(op: &dyn Operator, program: &Program) -> Result<(), Skip> {
    if program.is_sequence() && !op.handles_sequences() {
        return Err(Skip(format!(
            "the program is a launch sequence of {} entry points ({}); `{}` rewrites one entry point and its launch rule, which the other stages depend on",
            1 + program.then.len(),
            std::iter::once(program.entry.as_ref())
                .chain(program.then.iter().map(|s| s.entry.as_ref()))
                .collect::<Vec<_>>()
                .join(" → "),
            op.name()
        )));
    }
    Ok(())
}

/// `op` applied to `canon`, the canonical form of `subject`'s program from
/// [`canon::canonicalise`] (`None` when the program already is canonical), with the
/// canonicalisation's step in front of each rewrite's step (`canon(max) → reduce(subgroup)`).
pub fn apply_canonical(
    op: &dyn Operator,
    subject: &Subject<'_>,
    canon: Option<&Rewrite>,
) -> Result<Vec<Rewrite>, Skip> {
    sequence_skip(op, subject.program)?;
    let Some(canon) = canon else {
        return op.apply(subject);
    };
    let canonical = Subject {
        program: &canon.program,
        ..*subject
    };
    let rewrites = op.apply(&canonical)?;
    Ok(rewrites
        .into_iter()
        .map(|mut r| {
            r.step = format!("{} → {}", canon.step, r.step);
            r
        })
        .collect())
}

/// Why `op` skips the kernel as written (through its canonical form, with the default target's
/// limits), or `None` when it fires: what the hints `tune` prints are read from.
pub fn skip_reason(op: &dyn Operator, kernel: &ResolvedKernel) -> Option<String> {
    let target = Target::default();
    let subject = Subject {
        kernel,
        program: &kernel.baseline,
        target: &target,
    };
    let canon = canon::canonicalise(&subject);
    apply_canonical(op, &subject, canon.as_ref())
        .err()
        .map(|Skip(why)| why)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One invocation per output, launched as `cdiv(n, WG)` workgroups of `WG` invocations.
    const SUMS: &str = r#"
override WG: u32;
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < arrayLength(&y)) {
        var s = 0.0;
        for (var k = 0u; k < 16u; k++) { s += x[g.x * 16u + k]; }
        y[g.x] = s;
    }
}
"#;

    #[test]
    fn a_workgroup_count_over_the_parameter_that_sets_the_size_is_not_rewritten() {
        let (spec, _) = kf_runtime::syntax::parse_spec(
            r#"source = "", sizes(n = 1024), bind(x = input(n * 16), y = output(n)),
               workgroups = (cdiv(n, WG)), params(WG = [64, 128])"#
                .parse()
                .unwrap(),
        )
        .unwrap();
        let k = kf_runtime::resolve::resolve("K", &spec, SUMS, "k.wgsl").unwrap();
        assert_eq!(launch_params(&k, &k.baseline), vec!["WG"]);
        let target = Target::default();
        let subject = Subject {
            kernel: &k,
            program: &k.baseline,
            target: &target,
        };
        for op in [
            Box::new(reduce::ParallelReduction) as Box<dyn Operator>,
            Box::new(tile::Tile::shared()),
        ] {
            let skip = op.apply(&subject).unwrap_err();
            assert!(
                skip.0
                    .contains("counts workgroups with `WG`, which also sets the workgroup size"),
                "{}: {skip}",
                op.name()
            );
        }
        // The same rule over sizes only is no reason to skip.
        let mut grid = k.baseline.clone();
        grid.dispatch.size[0] = kf_runtime::expr::SizeExpr::parse("cdiv(n, 64)").unwrap();
        let subject = Subject {
            program: &grid,
            ..subject
        };
        assert!(invocations_expressible(&subject).is_ok());
    }

    /// A two-pass sum over a module-wide workgroup size.
    const TWO_PASS: &str = r#"
override WG: u32 = 64;
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> partials: array<f32>;
@group(0) @binding(2) var<storage, read_write> total: array<f32>;
var<workgroup> acc: array<f32, WG>;

@compute @workgroup_size(WG)
fn partial(@builtin(global_invocation_id) g: vec3<u32>, @builtin(local_invocation_index) l: u32,
           @builtin(workgroup_id) w: vec3<u32>) {
    acc[l] = select(0.0, x[g.x], g.x < arrayLength(&x));
    workgroupBarrier();
    if (l == 0u) { var s = 0.0; for (var i = 0u; i < WG; i++) { s += acc[i]; } partials[w.x] = s; }
}

@compute @workgroup_size(1)
fn combine() {
    var s = 0.0;
    for (var i = 0u; i < (arrayLength(&x) + WG - 1u) / WG; i++) { s += partials[i]; }
    total[0] = s;
}
"#;

    #[test]
    fn a_launch_sequence_gets_skips_from_single_entry_rewrites_and_moves_from_parameters() {
        let (spec, _) = kf_runtime::syntax::parse_spec(
            r#"source = "", sizes(n = 4096), bind(x = input(n), partials = scratch(n), total = output(1)),
               stages = [(entry = "partial", workgroups = (cdiv(n, WG))), (entry = "combine", workgroups = (1))],
               params(WG = [64, 128, 256])"#
                .parse()
                .unwrap(),
        )
        .unwrap();
        let k = kf_runtime::resolve::resolve("K", &spec, TWO_PASS, "k.wgsl").unwrap();
        assert!(k.baseline.is_sequence());
        let target = Target::default();
        let subject = Subject {
            kernel: &k,
            program: &k.baseline,
            target: &target,
        };
        // The search's path: the canonical form first, then each operator.
        let canon = canonicalise(&subject);
        assert!(canon.is_none(), "a sequence is not respelled");
        for op in all() {
            let result = apply_canonical(op.as_ref(), &subject, canon.as_ref());
            if op.handles_sequences() {
                let rewrites = result.unwrap_or_else(|e| panic!("{}: {e}", op.name()));
                assert!(!rewrites.is_empty());
                for r in rewrites {
                    // Every stage survives a parameter move, and the constants stay module-wide.
                    assert_eq!(r.program.then, k.baseline.then, "{}", r.step);
                    assert!(
                        r.program.constant("WG").is_some_and(|v| v != 64),
                        "{}",
                        r.step
                    );
                }
            } else {
                let skip = result.expect_err(op.name());
                assert!(
                    skip.0
                        .contains("launch sequence of 2 entry points (partial → combine)"),
                    "{}: {skip}",
                    op.name()
                );
            }
        }
        assert_eq!(
            all()
                .iter()
                .filter(|o| o.handles_sequences())
                .map(|o| o.name())
                .collect::<Vec<_>>(),
            ["param"]
        );
    }
}

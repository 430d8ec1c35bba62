//! The parameter operator: the template-parameter search, as one operator among the rewrites.
//!
//! It moves one axis of a program's parameter space at a time (an `override` constant, or the
//! workgroup size as one joint axis, lifted from a literal when needed), from the program's current
//! constants to each other candidate value. Candidates come from the spec's `params(..)`, from
//! what earlier rewrites declared for the overrides they introduced ([`Params::extra`]), and
//! otherwise from powers of two around the current value. So a rewrite that introduces
//! `override WG: u32 = 256` is followed by this operator trying 64, 128, 512, … for it.
//!
//! Derived parameters follow each move, and a move that breaks a constraint of the spec, or
//! leaves the launch rule without a value, is not proposed (see `analysis::axes`). The
//! constants of the parameters a launch rule reads are always kept, so each move launches with
//! its own values.
//!
//! It moves no behaviour dimension: parameters tune a structure, they do not change it.

use super::{Moves, Operator, Rewrite, Skip, Subject};
use crate::analysis::axes::{self, limit};
use kf_runtime::Program;
use std::borrow::Cow;

/// Neighbours of a program's constants, one axis at a time.
#[derive(Clone, Debug, Default)]
pub struct Params {
    /// Candidate values declared by the rewrites that made the program, by override name.
    pub extra: Vec<(String, Vec<f64>)>,
    /// Leave the workgroup size alone: a rewrite on the program's chain maps work to exactly
    /// the size it declared (see [`super::Operator::fixes_workgroup`]).
    pub fixed_workgroup: bool,
}

impl Operator for Params {
    fn name(&self) -> &'static str {
        "param"
    }

    fn moves(&self) -> Moves {
        &[]
    }

    fn handles_sequences(&self) -> bool {
        true
    }

    fn apply(&self, subject: &Subject<'_>) -> Result<Vec<Rewrite>, Skip> {
        let program = subject.program;
        let reflected = kf_runtime::resolve::reflect(&program.wgsl, Some(&program.entry), "parent")
            .map_err(|e| Skip(format!("the program does not reflect: {e}")))?;
        // Overrides nothing reads (e.g. a lifted workgroup size an earlier rewrite replaced) are
        // not parameters: changing them would only make a different id for the same kernel.
        let used = used_overrides(&reflected.module, &program.entry);
        let mut iface = reflected.interface.clone();
        iface.overrides.retain(|o| used.contains(&o.name));
        let mut params = subject.kernel.params.clone();
        for (name, values) in &self.extra {
            match params.iter_mut().find(|(n, _)| n == name) {
                Some((_, v)) => v.extend(values.iter().copied()),
                None => params.push((name.clone(), values.clone())),
            }
        }
        for (_, v) in &mut params {
            v.sort_by(f64::total_cmp);
            v.dedup();
        }
        let mut ax = axes::axes(&program.wgsl, &iface, &params, &subject.target.limits);
        // A literal workgroup size the body also relies on (workgroup arrays sized by it, strides
        // or a tree reduction written for it) cannot be changed by lifting the attribute alone:
        // every such candidate could only be wrong. `lift-workgroup-size` rewrites those bodies;
        // this operator then moves the override it introduces.
        let body_bound = ax.lifted
            && !self.fixed_workgroup
            && !program.is_sequence()
            && body_uses_workgroup_size(subject);
        // Overrides are module-wide, so moving one keeps a launch sequence's stages consistent;
        // lifting a literal workgroup size rewrites one entry point, whose size the other stages
        // may count with (a final pass over one partial sum per workgroup).
        let sequence_lift = ax.lifted && program.is_sequence();
        if self.fixed_workgroup || body_bound || sequence_lift {
            // Drop the workgroup axis (it is the first when present) and any lifting.
            if ax.wg_names.iter().any(Option::is_some) && !ax.axes.is_empty() {
                let wg: Vec<&String> = ax.wg_names.iter().flatten().collect();
                ax.axes.retain(|axis| {
                    !axis
                        .iter()
                        .any(|choice| choice.iter().any(|(k, _)| wg.contains(&k)))
                });
            }
            if ax.lifted {
                ax.wgsl = program.wgsl.to_string();
                ax.lifted = false;
            }
        }
        axes::drop_derived_axes(subject.kernel, &mut ax.axes);
        let base = axes::baseline_values(subject.kernel);
        if ax.axes.is_empty() {
            return Err(Skip("no override or workgroup size to tune".into()));
        }
        // The current value of every searched override: the program's constant, else its default.
        let mut current: Vec<(String, f64)> = ax.defaults.clone().into_iter().collect();
        for (k, v) in program.constants.iter() {
            match current.iter_mut().find(|(n, _)| n == k) {
                Some(c) => c.1 = *v,
                None => current.push((k.to_string(), *v)),
            }
        }
        let max_inv = limit(
            &subject.target.limits,
            "max_compute_invocations_per_workgroup",
            256,
        );
        let launch = super::launch_params(subject.kernel, program);
        // Which id components a bounds test guards, for the moves of the workgroup size.
        let parsed = crate::analysis::ir::parse(&program.wgsl).ok();
        let analysis = parsed.as_ref().and_then(|p| p.analyse(&program.entry).ok());
        let mut out = Vec::new();
        for axis in &ax.axes {
            for choice in axis {
                let unchanged = choice
                    .iter()
                    .all(|(k, v)| current.iter().any(|(n, c)| n == k && c == v));
                if unchanged {
                    continue;
                }
                let mut constants = current.clone();
                for (k, v) in choice {
                    match constants.iter_mut().find(|(n, _)| n == k) {
                        Some(c) => c.1 = *v,
                        None => constants.push((k.clone(), *v)),
                    }
                }
                // Derived values follow the move; a move that breaks a constraint is no candidate.
                if !axes::complete(subject.kernel, &base, &program.dispatch, &mut constants) {
                    continue;
                }
                let wg = ax.workgroup(&constants);
                if wg.iter().map(|&d| u64::from(d)).product::<u64>() > max_inv {
                    continue;
                }
                let follows = choice.iter().any(|(k, _)| launch.contains(&&k[..]));
                let Some(dispatch) = launch_for(subject, analysis.as_ref(), wg, follows) else {
                    continue;
                };
                // Keep only constants that differ from the defaults, so equal programs get equal
                // ids; a parameter the launch rule reads stays, since the rule finds its value
                // among the constants (the baseline carries it too).
                constants
                    .retain(|(k, v)| ax.defaults.get(k) != Some(v) || launch.contains(&&k[..]));
                constants.sort_by(|a, b| a.0.cmp(&b.0));
                let label = choice
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(",");
                out.push(Rewrite {
                    program: Program {
                        wgsl: Cow::Owned(ax.wgsl.clone()),
                        entry: program.entry.clone(),
                        constants: Cow::Owned(
                            constants
                                .into_iter()
                                .map(|(k, v)| (Cow::Owned(k), v))
                                .collect(),
                        ),
                        workgroup_size: wg,
                        workgroup_storage_bytes: 0,
                        dispatch,
                        workspace: Cow::Borrowed(&[]),
                        then: program.then.clone(),
                    },
                    step: format!("param({label})"),
                    params: Vec::new(),
                });
            }
        }
        if out.is_empty() {
            return Err(Skip(
                "every neighbouring point exceeds the limits or breaks a constraint".into(),
            ));
        }
        Ok(out)
    }
}

/// The launch of a move to workgroup size `wg` (`follows`: the launch rule reads a parameter the
/// move changes, so it follows the move itself).
///
/// This concerns kernels that read no builtin but `global_invocation_id`, whose work is a function
/// of the ids launched alone. A body that reads its workgroup or local id divides its work by
/// workgroup, and its launch rule counts workgroups on purpose (a parameter that sets how many
/// outputs a workgroup takes, as the spec's `params` declare it): its launch is left as written.
///
/// A rule that counts workgroups without following the size (`workgroups = (cdiv(n, 64))` beside
/// a lifted `KF_WG_X`) would launch other invocations under another size: fewer, leaving outputs
/// unwritten, or more, past the data. The move keeps the parent's invocations instead: `W`
/// workgroups of `S` are the grid `W·S`, which the runtime launches in workgroups of any size.
/// Along an axis where no bounds test of the invocation id comes before the kernel's side effects
/// (`coarsen::guarded`), every id the parent ran did its work and no other may run, so the grid is
/// the parent's ids in whole workgroups and the new size must divide it on every shape the
/// constraints allow; `None` where it may not: such a candidate could only be wrong. A kernel
/// whose side effects happen in functions it calls is not judged so (their tests are not read).
fn launch_for(
    subject: &Subject<'_>,
    analysis: Option<&crate::analysis::ir::Analysis<'_>>,
    wg: [u32; 3],
    follows: bool,
) -> Option<kf_runtime::Dispatch> {
    use kf_runtime::DispatchMode;
    let program = subject.program;
    let old = program.workgroup_size;
    let by_ids_alone = analysis.is_some_and(|a| {
        a.builtins
            .iter()
            .all(|b| !b.used() || b.builtin == naga::BuiltIn::GlobalInvocationId)
    });
    if wg == old || program.is_sequence() || follows || !by_ids_alone {
        return Some(program.dispatch.clone());
    }
    let mut dispatch = program.dispatch.clone();
    if dispatch.mode == DispatchMode::Workgroups {
        dispatch.mode = DispatchMode::Grid;
        for d in 0..3 {
            dispatch.size[d] = super::coarsen::launched(program, d);
        }
    }
    let divisors = kf_runtime::views::size_divisors(&subject.kernel.size_constraints());
    // Side effects inside a called function (a coarsened kernel's body, called below its own
    // bound) hide their bounds tests from this analysis: such a kernel is not known to be
    // unguarded, and keeps every size, as the verification will judge.
    let opaque = analysis.is_none_or(|a| {
        a.stmts.iter().any(|s| {
            matches!(*s.stmt, naga::Statement::Call { function, .. }
                if a.function_is_effectful(function))
        })
    });
    for d in (0..3).filter(|&d| wg[d] != old[d]) {
        if opaque || analysis.is_some_and(|a| super::coarsen::guarded(a, d as u32)) {
            continue;
        }
        let ran = super::coarsen::ran(program, d);
        if !kf_runtime::views::multiple_of(&ran, &divisors, u64::from(wg[d])) {
            return None;
        }
        dispatch.size[d] = ran;
    }
    Some(dispatch)
}

/// Whether the body of a kernel with a literal 1-D workgroup size depends on that size, by the
/// role proof of [`super::lift::LiftWorkgroupSize`]: a literal it proves to be the workgroup size
/// (an array length, a stride, a tree reduction's start, ..), or a reason it refuses to lift that
/// ties the body to the size (a literal equal to it that is not provably it, an unrolled
/// reduction, workgroups combining slices as large as the workgroup). That proof does not judge
/// 2-D and 3-D sizes: those count as used when the program reads the local invocation id or index
/// or the workgroup id, or declares workgroup memory (a tile the workgroup loads together, as a
/// 32×32 shared-memory GEMM does), since such a body is written for its size; a body that reads
/// only the global id keeps its workgroup axis.
fn body_uses_workgroup_size(subject: &Subject<'_>) -> bool {
    let [_, y, z] = subject.program.workgroup_size;
    if y != 1 || z != 1 {
        let Ok(parsed) = crate::analysis::ir::parse(&subject.program.wgsl) else {
            return true;
        };
        let Ok(a) = parsed.analyse(&subject.program.entry) else {
            return true;
        };
        use naga::BuiltIn as B;
        let local = [
            B::LocalInvocationId,
            B::LocalInvocationIndex,
            B::WorkGroupId,
        ]
        .into_iter()
        .any(|b| a.builtin(b).is_some_and(|arg| arg.used()));
        let shared = parsed
            .module
            .global_variables
            .iter()
            .any(|(_, g)| g.space == naga::AddressSpace::WorkGroup);
        return local || shared;
    }
    match super::lift::LiftWorkgroupSize.apply(subject) {
        Ok(rewrites) => rewrites
            .iter()
            .any(|r| !r.step.ends_with(super::lift::NO_ROLES)),
        Err(_) => true,
    }
}

/// Names of the overrides that something reads: a function body, a type's array size, the
/// entry point's workgroup size, or another override's initializer.
fn used_overrides(module: &naga::Module, entry: &str) -> std::collections::HashSet<String> {
    let mut used = std::collections::HashSet::new();
    let name =
        |h: naga::Handle<naga::Override>| module.overrides[h].name.clone().unwrap_or_default();
    let functions = module
        .functions
        .iter()
        .map(|(_, f)| f)
        .chain(module.entry_points.iter().map(|e| &e.function));
    for f in functions {
        for (_, e) in f.expressions.iter() {
            if let naga::Expression::Override(h) = e {
                used.insert(name(*h));
            }
        }
    }
    for (_, ty) in module.types.iter() {
        if let naga::TypeInner::Array {
            size: naga::ArraySize::Pending(h),
            ..
        } = ty.inner
        {
            used.insert(name(h));
        }
    }
    // Global expressions: the entry's workgroup size and override initializers (which refer to
    // other overrides) live here; any override expression reachable from there counts.
    if let Some(ep) = module.entry_points.iter().find(|e| e.name == entry)
        && let Some(sizes) = &ep.workgroup_size_overrides
    {
        for h in sizes.iter().flatten() {
            if let naga::Expression::Override(o) = module.global_expressions[*h] {
                used.insert(name(o));
            }
        }
    }
    for (_, o) in module.overrides.iter() {
        if let Some(init) = o.init
            && let naga::Expression::Override(h) = module.global_expressions[init]
        {
            used.insert(name(h));
        }
    }
    used
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operators::Target;

    const SOFTMAX_LIKE: &str = r#"
override WG: u32 = 256;
override UNROLL: u32 = 4;
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < arrayLength(&x)) { y[g.x] = f32(UNROLL) * x[g.x]; }
}
"#;

    fn target() -> Target {
        Target {
            limits: [
                ("max_compute_invocations_per_workgroup", 1024u64),
                ("max_compute_workgroup_size_x", 1024),
                ("max_compute_workgroup_size_y", 1024),
                ("max_compute_workgroup_size_z", 64),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
            features: vec![],
        }
    }

    fn kernel(wgsl: &str) -> kf_runtime::resolve::ResolvedKernel {
        kernel_with(
            r#"source = "", sizes(n = 1024), bind(x = input(n), y = output(n))"#,
            wgsl,
        )
    }

    /// `wgsl` resolved against the attribute arguments `spec`.
    fn kernel_with(spec: &str, wgsl: &str) -> kf_runtime::resolve::ResolvedKernel {
        let (spec, _) = kf_runtime::syntax::parse_spec(spec.parse().unwrap()).unwrap();
        kf_runtime::resolve::resolve("K", &spec, wgsl, "k.wgsl").unwrap()
    }

    fn subject_of<'a>(k: &'a kf_runtime::resolve::ResolvedKernel, t: &'a Target) -> Subject<'a> {
        Subject {
            kernel: k,
            program: &k.baseline,
            target: t,
        }
    }

    fn workgroup_moves(rewrites: &[Rewrite]) -> Vec<&str> {
        rewrites
            .iter()
            .filter(|r| r.step.contains("KF_WG"))
            .map(|r| r.step.as_str())
            .collect()
    }

    #[test]
    fn a_body_written_for_its_workgroup_size_gets_no_workgroup_size_move() {
        // A 256-wide workgroup array, a stride of 256 and a tree reduction from 128: with any
        // other size the kernel is wrong.
        const FIXED: &str = r#"
override SCALE: u32 = 4u;
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
var<workgroup> part: array<f32, 256>;
@compute @workgroup_size(256)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    var s = 0.0;
    for (var i = lid.x; i < arrayLength(&x); i += 256u) { s += x[i]; }
    part[lid.x] = s;
    workgroupBarrier();
    for (var k = 128u; k > 0u; k >>= 1u) {
        if (lid.x < k) { part[lid.x] += part[lid.x + k]; }
        workgroupBarrier();
    }
    if (lid.x == 0u) { y[wid.x] = f32(SCALE) * part[0]; }
}
"#;
        let (k, t) = (kernel(FIXED), target());
        let subject = subject_of(&k, &t);
        assert!(body_uses_workgroup_size(&subject));
        let rewrites = Params::default().apply(&subject).unwrap();
        assert_eq!(workgroup_moves(&rewrites), Vec::<&str>::new());
        // The other parameter still moves, on the text as written.
        assert!(rewrites.iter().any(|r| r.step.starts_with("param(SCALE")));
        assert!(
            rewrites
                .iter()
                .all(|r| r.program.wgsl.contains("@workgroup_size(256)"))
        );
    }

    #[test]
    fn a_two_dimensional_tile_gets_no_workgroup_size_move() {
        // A 16×16 tile loaded by the workgroup together: any other size reads the wrong slots.
        const TILED: &str = r#"
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
var<workgroup> tile: array<f32, 256>;
@compute @workgroup_size(16, 16)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let i = (wid.y * 16u + lid.y) * 64u + wid.x * 16u + lid.x;
    tile[lid.y * 16u + lid.x] = x[i];
    workgroupBarrier();
    y[i] = tile[lid.x * 16u + lid.y];
}
"#;
        // The same grid read through the global id only: the size is free.
        const FREE_2D: &str = r#"
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.y * 64u + g.x;
    y[i] = 2.0 * x[i];
}
"#;
        let spec = "path = \"k.wgsl\", sizes(n = 64), bind(x = input(n * n), y = output(n * n)), grid = (n, n)";
        let t = target();
        let tiled = kernel_with(spec, TILED);
        assert!(body_uses_workgroup_size(&subject_of(&tiled, &t)));
        let free = kernel_with(spec, FREE_2D);
        assert!(!body_uses_workgroup_size(&subject_of(&free, &t)));
    }

    #[test]
    fn an_elementwise_body_gets_workgroup_size_moves() {
        const FREE: &str = r#"
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < arrayLength(&x)) { y[g.x] = 2.0 * x[g.x]; }
}
"#;
        let (k, t) = (kernel(FREE), target());
        let subject = subject_of(&k, &t);
        assert!(!body_uses_workgroup_size(&subject));
        let rewrites = Params::default().apply(&subject).unwrap();
        let moves = workgroup_moves(&rewrites);
        assert!(moves.contains(&"param(KF_WG_X=64)"), "{moves:?}");
    }

    #[test]
    fn a_move_of_the_size_keeps_the_invocations_a_workgroup_count_launched() {
        // `dispatch_workgroups(cdiv(n, 64))` beside a literal size of 64: a move of the size
        // launches the parent's `cdiv(n, 64) * 64` ids as a grid, whatever the new size.
        let guarded = "@group(0) @binding(0) var<storage, read> x: array<f32>;\n@group(0) @binding(1) var<storage, read_write> y: array<f32>;\n@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {\n    if (g.x < arrayLength(&x)) { y[g.x] = 2.0 * x[g.x]; }\n}\n";
        let spec = r#"source = "", sizes(n = 1000), bind(x = input(n), y = output(n)), workgroups = (cdiv(n, 64))"#;
        let (k, t) = (kernel_with(spec, guarded), target());
        let rewrites = Params::default().apply(&subject_of(&k, &t)).unwrap();
        let moves: Vec<&Rewrite> = rewrites
            .iter()
            .filter(|r| r.step.contains("KF_WG"))
            .collect();
        assert!(
            moves.iter().any(|r| r.step == "param(KF_WG_X=128)"),
            "{rewrites:?}"
        );
        for r in &moves {
            assert_eq!(
                r.program.dispatch.to_string(),
                "grid(cdiv(n, 64) * 64, 1, 1)",
                "{}",
                r.step
            );
        }
        // Without a bounds test every launched id writes: only sizes that divide the parent's
        // `cdiv(n, 64) * 64` ids on every shape are moves (32 does, 128 does not).
        let unguarded = "@group(0) @binding(0) var<storage, read> x: array<f32>;\n@group(0) @binding(1) var<storage, read_write> y: array<f32>;\n@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {\n    y[g.x] = 2.0 * x[g.x];\n}\n";
        let k = kernel_with(spec, unguarded);
        let rewrites = Params::default().apply(&subject_of(&k, &t)).unwrap();
        let moves = workgroup_moves(&rewrites);
        assert!(moves.contains(&"param(KF_WG_X=32)"), "{moves:?}");
        assert!(
            moves.iter().all(
                |m| ["param(KF_WG_X=32)", "param(KF_WG_X=16)", "param(KF_WG_X=8)"].contains(m)
            ),
            "{moves:?}"
        );
    }

    #[test]
    fn a_coarsened_kernel_keeps_its_workgroup_size_moves() {
        // Coarsening calls the body below the parent's ids, where the body's own test stops the
        // others: a larger workgroup only adds ids that do nothing, so those moves stay.
        let guarded = "struct U { n: u32 }\n@group(0) @binding(0) var<storage, read> x: array<f32>;\n@group(0) @binding(1) var<storage, read_write> y: array<f32>;\n@group(0) @binding(2) var<uniform> u: U;\n@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {\n    if (g.x < u.n) { y[g.x] = 2.0 * x[g.x]; }\n}\n";
        let spec = r#"source = "", sizes(n = 1024), bind(x = input(n), y = output(n), u = uniform(n)), workgroups = (cdiv(n, 64))"#;
        let t = target();
        let k = kernel_with(spec, guarded);
        let coarsened = crate::operators::coarsen::Coarsen
            .apply(&subject_of(&k, &t))
            .unwrap();
        for c in &coarsened {
            let subject = Subject {
                kernel: &k,
                program: &c.program,
                target: &t,
            };
            let moves: Vec<[u32; 3]> = Params::default()
                .apply(&subject)
                .map(|r| r.iter().map(|r| r.program.workgroup_size).collect())
                .unwrap_or_default();
            assert!(
                moves.iter().any(|w| w[0] > 64),
                "{}: {moves:?}\n{}",
                c.step,
                c.program.wgsl
            );
        }
    }

    #[test]
    fn moves_one_axis_from_the_current_constants() {
        let k = kernel(SOFTMAX_LIKE);
        let mut parent = k.baseline.clone();
        parent.constants = Cow::Owned(vec![(Cow::Borrowed("UNROLL"), 8.0)]);
        let t = target();
        let subject = Subject {
            kernel: &k,
            program: &parent,
            target: &t,
        };
        let rewrites = Params::default().apply(&subject).unwrap();
        // Every rewrite changes exactly one axis relative to {WG: 256, UNROLL: 8}.
        for r in &rewrites {
            let c: Vec<(&str, f64)> = r.program.constants_pairs();
            let wg = c.iter().find(|(k, _)| *k == "WG").map_or(256.0, |x| x.1);
            let un = c.iter().find(|(k, _)| *k == "UNROLL").map_or(4.0, |x| x.1);
            assert!((wg == 256.0) != (un == 8.0), "{:?}", r.step);
        }
        assert!(rewrites.iter().any(|r| r.step == "param(WG=512)"));
        assert!(rewrites.iter().any(|r| r.step == "param(UNROLL=16)"));
        // Back to the default drops the constant entirely, so ids match the default program.
        let back = rewrites
            .iter()
            .find(|r| r.step == "param(UNROLL=4)")
            .unwrap();
        assert!(back.program.constants.is_empty());
    }

    #[test]
    fn extra_candidates_from_rewrites_are_searched() {
        let k = kernel(SOFTMAX_LIKE);
        let t = target();
        let subject = subject_of(&k, &t);
        let op = Params {
            extra: vec![("UNROLL".into(), vec![3.0])],
            fixed_workgroup: false,
        };
        let rewrites = op.apply(&subject).unwrap();
        assert!(rewrites.iter().any(|r| r.step == "param(UNROLL=3)"));
    }

    #[test]
    fn derived_values_follow_each_move_and_constraints_hold() {
        let wgsl = r#"
override X: u32;
override Y: u32;
override THREADS: u32;
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(X, Y)
fn main(@builtin(local_invocation_index) l: u32, @builtin(workgroup_id) w: vec3<u32>) {
    let i = w.x * THREADS + l;
    if (i < arrayLength(&y)) { y[i] = 2.0 * x[i]; }
}
"#;
        let k = kernel_with(
            r#"source = "", sizes(n = 1024), bind(x = input(n), y = output(n)),
               workgroups = (cdiv(n, 64)),
               params(X = [16, 8, 32, 64], Y = [4, 8], THREADS = X * Y),
               constraints(THREADS <= 128)"#,
            wgsl,
        );
        let t = target();
        let subject = subject_of(&k, &t);
        // From X = 16, Y = 4: X to 8 or 32 and Y to 8 keep THREADS <= 128; X = 64 does not.
        let rewrites = Params::default().apply(&subject).unwrap();
        let mut steps: Vec<&str> = rewrites.iter().map(|r| r.step.as_str()).collect();
        steps.sort();
        assert_eq!(steps, vec!["param(X=32)", "param(X=8)", "param(Y=8)"]);
        for r in &rewrites {
            let c: Vec<(&str, f64)> = r.program.constants_pairs();
            let get = |n: &str| c.iter().find(|(k, _)| *k == n).map(|x| x.1).unwrap();
            assert_eq!(get("THREADS"), get("X") * get("Y"), "{}", r.step);
        }
    }

    #[test]
    fn a_parameter_of_the_launch_rule_keeps_its_constant_in_every_move() {
        let wgsl = r#"
override OUTPUTS: u32 = 4u;
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) l: u32, @builtin(workgroup_id) w: vec3<u32>) {
    let row = w.x * OUTPUTS + l;
    if (l < OUTPUTS && row < arrayLength(&y)) { y[row] = 2.0 * x[row]; }
}
"#;
        let k = kernel_with(
            r#"source = "", sizes(n = 1000), bind(x = input(n), y = output(n)),
               workgroups = (cdiv(n, OUTPUTS)), params(OUTPUTS = [4, 8, 0])"#,
            wgsl,
        );
        assert_eq!(k.baseline.constants_pairs(), vec![("OUTPUTS", 4.0)]);
        let t = target();
        let subject = subject_of(&k, &t);
        let rewrites = Params::default().apply(&subject).unwrap();
        assert!(rewrites.iter().any(|r| r.step == "param(OUTPUTS=8)"));
        // OUTPUTS = 0 cannot launch: no candidate.
        assert!(!rewrites.iter().any(|r| r.step == "param(OUTPUTS=0)"));
        // Every move, the workgroup size ones too, carries the value its launch rule reads.
        assert!(rewrites.iter().any(|r| r.step.starts_with("param(KF_WG_X")));
        for r in &rewrites {
            let outputs = r.program.constant("OUTPUTS").expect("the constant is kept");
            let counts = r
                .program
                .workgroups(|n| (n == "n").then_some(1000), 65535)
                .unwrap();
            assert_eq!(
                u64::from(counts[0]),
                1000u64.div_ceil(outputs),
                "{}",
                r.step
            );
        }
    }

    #[test]
    fn overrides_nothing_reads_are_not_searched() {
        let wgsl = SOFTMAX_LIKE.replace(
            "override UNROLL: u32 = 4;",
            "override UNROLL: u32 = 4;\noverride STALE: u32 = 64;",
        );
        let k = kernel(&wgsl);
        let t = target();
        let subject = subject_of(&k, &t);
        let rewrites = Params::default().apply(&subject).unwrap();
        assert!(rewrites.iter().any(|r| r.step.starts_with("param(UNROLL")));
        assert!(!rewrites.iter().any(|r| r.step.contains("STALE")));
    }

    #[test]
    fn a_fixed_workgroup_size_is_left_alone() {
        let k = kernel(SOFTMAX_LIKE);
        let t = target();
        let subject = subject_of(&k, &t);
        let op = Params {
            extra: vec![],
            fixed_workgroup: true,
        };
        let rewrites = op.apply(&subject).unwrap();
        assert!(!rewrites.is_empty());
        assert!(rewrites.iter().all(|r| r.step.starts_with("param(UNROLL")));
    }

    #[test]
    fn a_literal_workgroup_size_is_lifted() {
        let wgsl = SOFTMAX_LIKE
            .replace("@workgroup_size(WG)", "@workgroup_size(64)")
            .replace("override WG: u32 = 256;\noverride UNROLL: u32 = 4;\n", "");
        let wgsl = wgsl.replace("f32(UNROLL)", "2.0");
        let k = kernel(&wgsl);
        let t = target();
        let subject = subject_of(&k, &t);
        let rewrites = Params::default().apply(&subject).unwrap();
        assert!(rewrites.iter().all(|r| r.program.wgsl.contains("KF_WG_X")));
        assert!(
            rewrites
                .iter()
                .any(|r| r.program.workgroup_size == [256, 1, 1])
        );
    }
}

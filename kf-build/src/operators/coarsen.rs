//! Thread coarsening: each invocation does the work of `k` invocations of the original kernel.
//!
//! Fewer, fatter invocations amortise per-invocation overhead (index arithmetic, bounds tests,
//! uniform loads) and give the compiler independent work to overlap. The rewrite keeps the user's
//! entry point intact as a plain function (`kf_coarse_<entry>(gid: vec3<u32>)`: its attributes
//! removed, its parameter list reduced to the invocation id) and adds a new entry point of the
//! original name that calls it `k` times with the ids the original launch would have used:
//!
//! - contiguous: invocation `i` does `i·k .. i·k + k − 1` (neighbouring outputs in one invocation);
//! - strided: invocation `i` does `i, i + T, i + 2T, ..` where `T` is the number of invocations
//!   launched along that dimension (each of the `k` steps is a fully coalesced wave).
//!
//! Calling the original body as a function keeps every `return` meaning "this invocation is
//! done", so early-exit guards need no rewriting. The launch rule divides the coarsened dimension
//! rounding up (`grid = (n)` → `grid = ((n + 3) / 4)`).
//!
//! What it proves first, from the IR: the kernel reads no builtin but `global_invocation_id`
//! (a plain parameter), uses no workgroup memory, barriers or subgroup operations, launches with a
//! `grid` rule or one counting workgroups (read as a grid, below), and the coarsened component is
//! bounds-checked before any side effect (an `if (id >= bound) { return; }`, or the writes all
//! inside `if (id < bound) { .. }`, with a uniform bound): the coarsened launch runs ids the
//! original did not, and those must do nothing.
//! The coarsened dimension is the id component with a unit coefficient in the stored indices
//! (the contiguous one), else the first component used.
//!
//! A kernel without such a bounds test is still coarsened when its launch rule gives that
//! dimension a constant extent (`grid = (4096, rows)`: a flattened 2-D index such as
//! `i = gid.y * 4096u + gid.x`, whose guard tests `i`, not the id). The original launch then ran
//! exactly the ids below `X` = the extent rounded up to whole workgroups, whatever the sizes, so the
//! new entry point calls the body only for ids below the literal `X` and launches `⌈X / k⌉`
//! invocations along it: every id the original ran is run once, and no other. The literal travels
//! with the rewritten text, so a later change of the workgroup size keeps it true.
//!
//! Where the extent depends on sizes (`workgroups = (cdiv(dim / 2, 64))` over an unguarded rotary
//! embedding), the bound is the same whole-workgroup extent printed as WGSL from the uniforms the
//! spec fills with those sizes (`uniforms::size_in_uniform`, as `tile` bounds an unguarded axis),
//! whether the kernel reads them or not; where no uniform holds a size it needs, the kernel is
//! skipped with that size named. The expression is written with today's workgroup size as a
//! literal, so it too stays the parent's launch whatever a later parameter search changes.
//!
//! A launch rule that counts workgroups (`workgroups = (cdiv(n, 256))`: burn's, TVM's and most
//! hand-written hosts' `dispatch_workgroups`) is read as the grid of the invocations it launches
//! (`launched`, from `operators::grid_extent`): `W` workgroups of `S` invocations along an axis
//! run exactly the ids below `W·S`, and a `grid` of `W·S` with the same workgroup size launches
//! `⌈W·S / S⌉ = W` workgroups, the same launch. The rewrite's rule is that grid, coarsened along
//! the coarsened dimension (`⌈W·S / k⌉`, written `W·(S / k)` when `k` divides `S`:
//! `workgroups = (cdiv(n, 256))` → `grid = (cdiv(n, 256) * 64)` for `k = 4`) and `W·S` along the
//! others (the same workgroups as the parent's). It counts whole workgroups, not `n`: an id past
//! `n` that the parent ran and no test of the coarsened component stops (a guard on a flattened
//! index, or none over a constant count) is run by the rewrite too, exactly once; the ids the
//! coarsened launch adds past `W·S` are stopped by the bounds test or the literal extent, as for a
//! grid. A count that reads the parameter which also sets the workgroup size is refused
//! (`operators::invocations_expressible`): `W·S` would be written with today's size as a literal.
//!
//! Invariant: the user's function body is kept byte for byte.

use super::{Moves, Operator, Rewrite, Skip, Subject};
use crate::analysis::ir::{self, Analysis, Edit, Var};
use crate::evolve::descriptor::Dim;
use kf_runtime::expr::{Op, SizeExpr};
use kf_runtime::program::{Dispatch, DispatchMode};
use naga::{BinaryOperator, BuiltIn, Expression, Handle, Statement};
use std::borrow::Cow;

/// Outputs per invocation the operator proposes.
pub const FACTORS: [u32; 3] = [2, 4, 8];

/// The thread-coarsening operator (see the module documentation).
#[derive(Clone, Copy, Debug, Default)]
pub struct Coarsen;

/// Which original invocations one invocation takes over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mapping {
    /// `i·k + j`.
    Contiguous,
    /// `i + j·T`, `T` the invocations launched along the dimension.
    Strided,
}

impl Operator for Coarsen {
    fn name(&self) -> &'static str {
        "coarsen"
    }

    fn moves(&self) -> Moves {
        &[(Dim::Work, 1)]
    }

    fn apply(&self, subject: &Subject<'_>) -> Result<Vec<Rewrite>, Skip> {
        let parsed = ir::parse(&subject.program.wgsl).map_err(|e| Skip(e.to_string()))?;
        let a = parsed
            .analyse(&subject.program.entry)
            .map_err(|e| Skip(e.to_string()))?;
        let Plan { dim, extent } = plan(&a, subject)?;
        let mut out = Vec::new();
        for k in FACTORS {
            for mapping in [Mapping::Contiguous, Mapping::Strided] {
                let text = render(&a, dim, &extent, k, mapping)?;
                let reflected =
                    kf_runtime::resolve::reflect(&text, Some(&subject.program.entry), "coarsen")
                        .map_err(|e| {
                            Skip(format!("the coarsened kernel is not valid WGSL: {e}"))
                        })?;
                let mismatches = subject.kernel.mismatches(&reflected.interface);
                if !mismatches.is_empty() {
                    return Err(Skip(format!(
                        "coarsening changed the interface: {}",
                        mismatches.join("; ")
                    )));
                }
                out.push(Rewrite {
                    program: coarsened_program(subject, text, dim, k, &extent),
                    step: format!(
                        "coarsen({k}, {}, {})",
                        match mapping {
                            Mapping::Contiguous => "contiguous",
                            Mapping::Strided => "strided",
                        },
                        ["x", "y", "z"][dim]
                    ),
                    params: Vec::new(),
                });
            }
        }
        Ok(out)
    }
}

/// The parent's program with `text` and a `grid` launch whose extent along `dim` is coarsened by
/// `k` ([`coarsened_extent`]), the parent's invocations ([`launched`]) along the other axes.
pub(crate) fn coarsened_program(
    subject: &Subject<'_>,
    text: String,
    dim: usize,
    k: u32,
    extent: &Extent,
) -> kf_runtime::Program {
    let parent = subject.program;
    let mut size = [0, 1, 2].map(|d| launched(parent, d));
    let wg = parent.workgroup_size[dim];
    size[dim] = if parent.dispatch.mode == DispatchMode::Workgroups
        && extent.literal().is_none()
        && wg.is_multiple_of(k)
    {
        // `⌈W·S / k⌉ = W·(S / k)` when `k` divides `S`.
        let mut ops = parent.dispatch.size[dim].ops().to_vec();
        if wg != k {
            ops.extend([Op::Lit(u64::from(wg / k)), Op::Mul]);
        }
        SizeExpr::from_ops(ops)
    } else {
        coarsened_extent(&size[dim], k, extent.literal())
    };
    kf_runtime::Program {
        wgsl: Cow::Owned(text),
        entry: subject.program.entry.clone(),
        constants: subject.program.constants.clone(),
        workgroup_size: subject.program.workgroup_size,
        workgroup_storage_bytes: subject.program.workgroup_storage_bytes,
        dispatch: Dispatch {
            mode: DispatchMode::Grid,
            size,
        },
        workspace: Cow::Borrowed(&[]),
        then: Cow::Borrowed(&[]),
    }
}

/// The invocations `program` launches along `d`, as a `grid` extent: its grid, or its workgroup
/// count times its workgroup size ([`super::grid_extent`]; a size of 1 is left out). A launch of
/// `W` workgroups of `S` invocations runs exactly the ids below `W·S`, and a `grid` of `W·S` with
/// the same workgroup size launches `⌈W·S / S⌉ = W` workgroups: the same launch.
pub(crate) fn launched(program: &kf_runtime::Program, d: usize) -> SizeExpr {
    let mut ops = super::grid_extent(program, d);
    if program.dispatch.mode == DispatchMode::Workgroups && program.workgroup_size[d] == 1 {
        ops.truncate(ops.len() - 2);
    }
    SizeExpr::from_ops(ops)
}

/// The ids `program` runs along `d`, in whole workgroups: `W·S` for `W` workgroups of `S`, a grid
/// rounded up to whole workgroups. Where no bounds test stops them, these are the ids that do
/// work, and a rewrite that regroups the invocations must run exactly these.
pub(crate) fn ran(program: &kf_runtime::Program, d: usize) -> SizeExpr {
    let mut ops = launched(program, d).ops().to_vec();
    let w = u64::from(program.workgroup_size[d]);
    if program.dispatch.mode == DispatchMode::Grid && w > 1 {
        ops.extend([Op::Lit(w), Op::CeilDiv, Op::Lit(w), Op::Mul]);
    }
    SizeExpr::from_ops(ops)
}

/// The launch rule's extent along the coarsened dimension when each invocation takes `k` ids:
/// enough invocations that `k` ids each reach the whole original extent (`⌈X / k⌉` for a
/// constant extent `X`, else `(n + k - 1) / k`).
pub(crate) fn coarsened_extent(size: &SizeExpr, k: u32, extent: Option<u64>) -> SizeExpr {
    match extent {
        Some(x) => SizeExpr::lit(x.div_ceil(u64::from(k))),
        None => {
            let mut ops = size.ops().to_vec();
            ops.extend([
                Op::Lit(u64::from(k - 1)),
                Op::Add,
                Op::Lit(u64::from(k)),
                Op::Div,
            ]);
            SizeExpr::from_ops(ops)
        }
    }
}

/// Where the original launch stops along the coarsened dimension.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Extent {
    /// A bounds test of the component comes before every side effect: ids past the launch do
    /// nothing.
    Guarded,
    /// No bounds test, and the original launch ran exactly the ids below this constant (whole
    /// workgroups).
    Literal(u64),
    /// No bounds test, and the original launch ran exactly the ids below this WGSL expression
    /// (whole workgroups, a multiple of `multiple`), printed from the uniforms the spec fills
    /// with its sizes (`(((u32(shape.nrows) / 2u) + 64u - 1u) / 64u) * 64u`).
    Uniform { text: String, multiple: u64 },
}

impl Extent {
    /// The constant extent, if the launch has one.
    pub(crate) fn literal(&self) -> Option<u64> {
        match self {
            Extent::Literal(x) => Some(*x),
            _ => None,
        }
    }

    /// Whether `n` divides the extent on every shape (a guarded launch has no extent to divide).
    pub(crate) fn multiple_of(&self, n: u64) -> bool {
        match self {
            Extent::Guarded => true,
            Extent::Literal(x) => x.is_multiple_of(n),
            Extent::Uniform { multiple, .. } => multiple.is_multiple_of(n),
        }
    }

    /// The bound as WGSL (`4096u`, or the uniform expression), for an unguarded launch, with the
    /// comment that says where it comes from.
    pub(crate) fn bound(&self) -> Option<(String, String)> {
        match self {
            Extent::Guarded => None,
            Extent::Literal(x) => Some((format!("{x}u"), format!("{x}"))),
            Extent::Uniform { text, .. } => Some((
                text.clone(),
                "the workgroups it counts, in the sizes the uniforms hold".to_owned(),
            )),
        }
    }
}

/// What the checks established.
pub(crate) struct Plan {
    /// The id component to coarsen.
    pub(crate) dim: usize,
    /// Where the original launch stops along it.
    pub(crate) extent: Extent,
}

/// The checks of every rewrite that runs the entry point as a function of the invocation id
/// (`coarsen`, `transpose-tile`): no workgroup memory, barriers or subgroup operations (which the
/// new launch would regroup), no builtin but `global_invocation_id` (`rewrite` names the rewrite
/// in the reason). Returns that builtin argument.
pub(crate) fn one_invocation<'a>(
    a: &'a Analysis<'_>,
    rewrite: &str,
) -> Result<&'a ir::BuiltinArg, Skip> {
    if a.module
        .global_variables
        .iter()
        .any(|(_, g)| g.space == naga::AddressSpace::WorkGroup)
    {
        return Err(Skip("the kernel uses workgroup memory".into()));
    }
    for s in &a.stmts {
        if matches!(
            s.stmt,
            Statement::ControlBarrier(_)
                | Statement::MemoryBarrier(_)
                | Statement::WorkGroupUniformLoad { .. }
                | Statement::SubgroupBallot { .. }
                | Statement::SubgroupCollectiveOperation { .. }
                | Statement::SubgroupGather { .. }
        ) {
            return Err(Skip(
                "the kernel uses barriers or subgroup operations".into(),
            ));
        }
    }
    for b in &a.builtins {
        if b.used() && b.builtin != BuiltIn::GlobalInvocationId {
            return Err(Skip(format!(
                "the kernel reads {:?}, which {rewrite} would change",
                b.builtin
            )));
        }
    }
    a.builtin(BuiltIn::GlobalInvocationId)
        .ok_or_else(|| Skip("the kernel has no `global_invocation_id`".into()))
}

/// The dimension to coarsen, after the checks.
pub(crate) fn plan(a: &Analysis<'_>, subject: &Subject<'_>) -> Result<Plan, Skip> {
    let skip = |why: &str| Err(Skip(why.to_owned()));
    // A `workgroups` rule is read as the grid of its invocations ([`launched`]), written with
    // today's workgroup size: not when its count reads the parameter that sets that size.
    super::invocations_expressible(subject)?;
    // (A widened kernel may be coarsened: its entry point is a kernel like any other, and more
    // 16-byte vectors in flight per invocation is what the coarsening then adds.)
    if a.code().contains("kf_coarse") || a.code().contains("KF_COARSEN") {
        return skip("the kernel is already coarsened");
    }
    let gid = one_invocation(a, "coarsening")?;
    if gid.member.is_some() {
        return skip("the invocation id is passed in a struct parameter");
    }
    if gid.whole {
        return skip("the invocation id is used as a whole vector");
    }
    let used: Vec<usize> = (0..3).filter(|&d| gid.components[d]).collect();
    if used.is_empty() {
        return skip("the invocation id is not used");
    }
    // The component with a unit coefficient in a stored index, else the first used.
    let unit = used.iter().copied().find(|&d| {
        a.accesses.iter().any(|x| {
            x.write
                && x.form.as_ref().is_some_and(|f| {
                    f.coeff(Var::Builtin(BuiltIn::GlobalInvocationId, d as u32))
                        .as_constant()
                        == Some(1)
                })
        })
    });
    let dim = unit.unwrap_or(used[0]);
    if guarded(a, dim as u32) {
        return Ok(Plan {
            dim,
            extent: Extent::Guarded,
        });
    }
    let wg = u64::from(subject.program.workgroup_size[dim]);
    // A launch over sizes the constraints pin (`n == 2`, as templates that bake their shapes in
    // are marked) is as constant as a literal: the runtime refuses every other dispatch.
    let pinned = kf_runtime::views::pinned_sizes(&subject.kernel.size_constraints());
    let extent = launched(subject.program, dim);
    match extent
        .as_constant()
        .or_else(|| extent.eval(|n| pinned.get(n).copied()).ok())
    {
        Some(n) if n > 0 && wg > 0 => Ok(Plan {
            dim,
            extent: Extent::Literal(n.div_ceil(wg) * wg),
        }),
        _ if wg > 0 => {
            // The extent over sizes: whole workgroups (a grid rounded up to them), printed from
            // the uniforms the spec fills with the sizes, whether the kernel reads them or not.
            let text = super::extent_wgsl(a.module, subject.kernel, &ran(subject.program, dim))
                .map_err(|name| {
                    Skip(format!(
                        "no bounds test of the invocation id's {c} before the kernel's stores, \
                         the launch rule's extent along {c} is not a constant, and its size \
                         `{name}` is in no uniform the kernel binds",
                        c = ["x", "y", "z"][dim]
                    ))
                })?;
            Ok(Plan {
                dim,
                extent: Extent::Uniform { text, multiple: wg },
            })
        }
        _ => Err(Skip(
            "the workgroup size along the coarsened axis is zero".into(),
        )),
    }
}

/// Whether expression `h` is exactly the invocation id's component `d` (through lets, vars
/// assigned once and integer casts).
pub(crate) fn is_id(a: &Analysis<'_>, h: Handle<Expression>, d: u32) -> bool {
    a.index_form(h).is_some_and(|f| {
        f.offset.is_zero()
            && f.terms.len() == 1
            && f.terms[0].0 == Var::Builtin(BuiltIn::GlobalInvocationId, d)
            && f.terms[0].1.as_constant() == Some(1)
    })
}

/// Whether `cond` holds only when id component `d` is below a uniform bound (`want_below`), or
/// holds whenever it is at or above one (`!want_below`): a conjunction (resp. disjunction)
/// containing such a comparison.
fn bounds(a: &Analysis<'_>, cond: Handle<Expression>, d: u32, want_below: bool) -> bool {
    if let Some((op, left, right)) = a.short_circuit(cond) {
        let wanted = if want_below {
            BinaryOperator::LogicalAnd
        } else {
            BinaryOperator::LogicalOr
        };
        return op == wanted && (bounds(a, left, d, want_below) || bounds(a, right, d, want_below));
    }
    match a.function.expressions[cond] {
        // `!(id >= n)` holds only below the bound exactly when `id >= n` holds at or above it.
        Expression::Unary {
            op: naga::UnaryOperator::LogicalNot,
            expr,
        } => bounds(a, expr, d, !want_below),
        Expression::Binary {
            op: BinaryOperator::LogicalAnd,
            left,
            right,
        } if want_below => bounds(a, left, d, true) || bounds(a, right, d, true),
        Expression::Binary {
            op: BinaryOperator::LogicalOr,
            left,
            right,
        } if !want_below => bounds(a, left, d, false) || bounds(a, right, d, false),
        Expression::Binary { op, left, right } => {
            let (id_left, other) = if is_id(a, left, d) {
                (true, right)
            } else if is_id(a, right, d) {
                (false, left)
            } else {
                return false;
            };
            if !a.is_dispatch_uniform(other) {
                return false;
            }
            use BinaryOperator as B;
            // Normalise to `id op bound`.
            let op = match (op, id_left) {
                (o, true) => o,
                (B::Less, false) => B::Greater,
                (B::LessEqual, false) => B::GreaterEqual,
                (B::Greater, false) => B::Less,
                (B::GreaterEqual, false) => B::LessEqual,
                (o, false) => o,
            };
            if want_below {
                matches!(op, B::Less | B::LessEqual)
            } else {
                matches!(op, B::GreaterEqual | B::Greater)
            }
        }
        _ => false,
    }
}

/// Whether every side effect of the body happens only for ids below a uniform bound in
/// component `d`.
pub(crate) fn guarded(a: &Analysis<'_>, d: u32) -> bool {
    let effects: Vec<usize> = (0..a.stmts.len())
        .filter(|&s| match *a.stmts[s].stmt {
            Statement::Store { pointer, .. } | Statement::Atomic { pointer, .. } => {
                a.root_global(pointer).is_some()
            }
            Statement::Call { function, .. } => a.function_is_effectful(function),
            _ => false,
        })
        .collect();
    for (s, st) in a.stmts.iter().enumerate() {
        let Statement::If {
            condition, accept, ..
        } = st.stmt
        else {
            continue;
        };
        // `if (id >= n) { return; }` before any side effect: at the top level of the body, or
        // inside the branch of an `if` (not a loop) that holds every side effect after it (a
        // guard on one component wrapping the body, then an early return on another).
        let returns = accept.iter().any(|x| matches!(x, Statement::Return { .. }));
        // (Effects inside the `if` itself do not count as after it: naga ends the branches of a
        // function's last `if` with a `return` of its own.)
        let same_branch = |e: usize| match st.parent {
            None => true,
            Some(p) => {
                matches!(a.stmts[p].stmt, Statement::If { .. }) && a.within(e, p) && {
                    let mut x = e;
                    while a.stmts[x].parent != Some(p) {
                        x = a.stmts[x].parent.expect("within");
                    }
                    a.stmts[x].part == st.part
                }
            }
        };
        let after = |e: usize| e > s && !a.within(e, s) && same_branch(e);
        if returns && bounds(a, *condition, d, false) && effects.iter().all(|&e| after(e)) {
            return true;
        }
        // `if (id < n) { .. every side effect .. }`, at any depth (guards on several components
        // written as nested `if`s: each holds around every side effect).
        let inside = |e: usize| {
            a.within(e, s) && {
                let mut x = e;
                while a.stmts[x].parent != Some(s) {
                    x = a.stmts[x].parent.expect("within");
                }
                a.stmts[x].part == ir::Part::Accept
            }
        };
        if bounds(a, *condition, d, true)
            && !effects.is_empty()
            && effects.iter().all(|&e| inside(e))
        {
            return true;
        }
    }
    false
}

fn render(
    a: &Analysis<'_>,
    dim: usize,
    extent: &Extent,
    k: u32,
    mapping: Mapping,
) -> Result<String, Skip> {
    let sig = a
        .entry_signature()
        .ok_or_else(|| Skip("the entry point's signature was not found in the text".into()))?;
    let gid = a
        .builtin(BuiltIn::GlobalInvocationId)
        .expect("checked in plan");
    let entry = &a.entry.name;
    let body_fn = format!("kf_coarse_{entry}");
    let mut wg_args = a.text(&sig.workgroup_size).trim().to_owned();
    let mut decls = String::new();
    let mut stride_wg = String::new();
    if mapping == Mapping::Strided {
        let mut args = split_args(&wg_args);
        while args.len() <= dim {
            args.push("1".to_owned());
        }
        // The stride counts invocations, so it must follow the workgroup size: a literal size
        // becomes an override, which a later parameter search then changes in both places.
        if let Ok(n) = args[dim].trim_end_matches(['u', 'i']).parse::<u32>() {
            decls = format!(
                "// The workgroup size along {}, an override so the stride below follows it.\noverride KF_COARSEN_WG: u32 = {n}u;\n",
                ["x", "y", "z"][dim]
            );
            args[dim] = "KF_COARSEN_WG".to_owned();
            wg_args = args.join(", ");
            stride_wg = "KF_COARSEN_WG".to_owned();
        } else {
            stride_wg = format!("u32({})", args[dim]);
        }
    }
    let edits = vec![
        Edit::replace(sig.attributes.clone(), ""),
        Edit::replace(sig.name.clone(), body_fn.clone()),
        Edit::replace(sig.params.clone(), format!("{}: vec3<u32>", gid.name)),
    ];
    let mut text = ir::apply_edits(a.source, &edits)
        .ok_or_else(|| Skip("the rewrite's edits overlap".into()))?;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    let c = ["x", "y", "z"][dim];
    let mut ids = ["kf_gid.x", "kf_gid.y", "kf_gid.z"].map(str::to_owned);
    let (params, prologue, what) = match mapping {
        Mapping::Contiguous => {
            ids[dim] = format!("kf_gid.{c} * {k}u + kf_k");
            (
                String::new(),
                String::new(),
                format!("{k} consecutive invocations"),
            )
        }
        Mapping::Strided => {
            ids[dim] = format!("kf_gid.{c} + kf_k * kf_stride");
            (
                ", @builtin(num_workgroups) kf_groups: vec3<u32>".to_owned(),
                format!(
                    "    // Invocations launched along {c}: step k of every invocation is one coalesced wave.\n    let kf_stride = kf_groups.{c} * {stride_wg};\n"
                ),
                format!("{k} invocations a launch apart"),
            )
        }
    };
    let call = match extent.bound() {
        None => format!(
            "        {body_fn}(vec3<u32>({}, {}, {}));\n",
            ids[0], ids[1], ids[2]
        ),
        Some((x, what)) => {
            let id = std::mem::replace(&mut ids[dim], "kf_id".to_owned());
            format!(
                "        // The original launch ran exactly the ids below {what} along {c}.\n        let kf_id = {id};\n        if (kf_id < {x}) {{\n            {body_fn}(vec3<u32>({}, {}, {}));\n        }}\n",
                ids[0], ids[1], ids[2]
            )
        }
    };
    text.push_str(&decls);
    text.push_str(&format!(
        "\n// KernelFoundry: thread coarsening, each invocation runs {what} of the original kernel (along {c}).\n@compute @workgroup_size({wg_args})\nfn {entry}(@builtin(global_invocation_id) kf_gid: vec3<u32>{params}) {{\n{prologue}    for (var kf_k = 0u; kf_k < {k}u; kf_k++) {{\n{call}    }}\n}}\n"
    ));
    Ok(text)
}

/// Splits `@workgroup_size` arguments at top-level commas.
fn split_args(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for ch in text.chars() {
        match ch {
            '(' | '<' => depth += 1,
            ')' | '>' => depth -= 1,
            ',' if depth == 0 => {
                out.push(cur.trim().to_owned());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_owned());
    }
    out
}

#[cfg(test)]
mod tests;

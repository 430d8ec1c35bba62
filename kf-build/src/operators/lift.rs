//! Lifting a literal workgroup size that the body uses too: `@workgroup_size(256)` with
//! `var<workgroup> tile: array<f32, 256>`, `i += 256u` strides or a `s = 128u; s > 0u; s >>= 1u`
//! tree reduction becomes `@workgroup_size(KF_WG_X)` with every such literal written in terms of
//! `KF_WG_X`, so the parameter search can change the size without breaking the kernel.
//!
//! A literal equal to the workgroup size S is replaced only when the IR shows it *is* the
//! workgroup size, in one of these roles (L: an expression derived from `local_invocation_index`
//! or `local_invocation_id.x`):
//!
//! - the length of a `var<workgroup>` array indexed somewhere by L itself (one slot per
//!   invocation); the literal (or the `const` naming it) is the array type's last argument;
//! - the step of a `for` loop whose counter starts from L (a block-stride loop: `i += 256u`);
//! - a factor multiplied with `workgroup_id.x` or `num_workgroups.x` (`wid.x * 256u + lid.x`,
//!   grid-stride `256u * nwg.x`);
//! - the bound of a loop whose counter doubles (`for (var s = 1u; s < 256u; s <<= 1u)`);
//! - S/2 as the start of a loop whose counter halves while positive and is compared with L
//!   (`for (var s = 128u; s > 0u; s >>= 1u) { if (lid.x < s) {..} }`), written `(KF_WG_X / 2u)`.
//!
//! It skips (never guesses) when the invocations of a workgroup combine values (workgroup memory,
//! barriers, subgroup operations) and the data is split among workgroups by the size
//! (`wid.x * 256u`, or `global_invocation_id.x`, which is that plus the lane): each workgroup's
//! result then depends on the size, as in a grid-stride sum writing one partial sum per workgroup
//! or a block scan. It also skips when any other integer literal equal to S remains in the entry point
//! or the functions it calls, when a workgroup array of length S is not indexed by L, and when a
//! literal S/2, S/4, … or S−1 is compared or combined with L outside those roles (an unrolled
//! reduction `if (lid.x < 128u)` only works for the size it was written for).
//!
//! Limits: 1-D workgroup sizes only (`@workgroup_size(S)` or `(S, 1, 1)`); 2-D tiles tie literals
//! to x, y and their product at once and are refused. Helper functions are checked for stray
//! literals but get no roles (L does not flow through call arguments). The candidate sizes offered
//! to the parameter search are powers of two, which every tree reduction above needs.
//!
//! Moves: none. The rewrite with `KF_WG_X` at its default is the parent kernel; it only opens the
//! size to the parameter search, which refines the elite in the same cell.

use super::{Moves, Operator, Rewrite, Skip, Subject};
use crate::analysis::loops::{self, FnRef, Known, Update};
use crate::analysis::text::{self, Edit};
use crate::analysis::workgroup::{LIFTED, lift_workgroup_size};
use naga::{BinaryOperator, Expression, Handle, Literal};
use std::collections::{HashMap, HashSet};

/// How the step of a lift that found no literal of the body in a workgroup-size role ends: only
/// the attribute is lifted.
pub const NO_ROLES: &str = "(attribute)";

/// The operator lifting a literal workgroup size used in the body.
#[derive(Clone, Copy, Debug, Default)]
pub struct LiftWorkgroupSize;

impl Operator for LiftWorkgroupSize {
    fn name(&self) -> &'static str {
        "lift-workgroup-size"
    }

    fn moves(&self) -> Moves {
        &[]
    }

    fn apply(&self, subject: &Subject<'_>) -> Result<Vec<Rewrite>, Skip> {
        let program = subject.program;
        let wgsl = program.wgsl.as_ref();
        let entry = program.entry.as_ref();
        let wg = program.workgroup_size;
        if wg[1] != 1 || wg[2] != 1 {
            return Err(Skip(
                "a 2-D or 3-D workgroup size: its literals are not lifted".into(),
            ));
        }
        let size = i64::from(wg[0]);
        let r = kf_runtime::resolve::reflect(wgsl, Some(entry), "parent")
            .map_err(|e| Skip(format!("the parent does not validate: {e}")))?;
        if r.interface
            .workgroup_size_overrides
            .iter()
            .any(Option::is_some)
        {
            return Err(Skip("the workgroup size is already an override".into()));
        }
        let ep = loops::entry_index(&r.module, entry)
            .ok_or_else(|| Skip(format!("no compute entry point `{entry}`")))?;
        let module = &r.module;
        let f = &module.entry_points[ep].function;
        let constants = program.constants_pairs();
        let name = LIFTED[0];

        // The local index (L) and the workgroup-grid builtins, from the entry point's arguments.
        let mut seeds = Vec::new();
        let mut grid_seeds = Vec::new();
        // `global_invocation_id.x` read: `workgroup_id.x * size + lane`, a slice per workgroup.
        let mut global_x = false;
        for b in loops::builtins(module, &r.info, ep) {
            let x_of = |exprs: &[Handle<Expression>]| -> Vec<Handle<Expression>> {
                f.expressions
                    .iter()
                    .filter(|(_, e)| {
                        matches!(e, Expression::AccessIndex { base, index: 0 } if exprs.contains(base))
                    })
                    .map(|(h, _)| h)
                    .collect()
            };
            match b.builtin {
                naga::BuiltIn::LocalInvocationIndex => seeds.extend(b.exprs.iter().copied()),
                naga::BuiltIn::LocalInvocationId => seeds.extend(x_of(&b.exprs)),
                naga::BuiltIn::WorkGroupId | naga::BuiltIn::NumWorkGroups => {
                    grid_seeds.extend(x_of(&b.exprs))
                }
                naga::BuiltIn::GlobalInvocationId => global_x |= !x_of(&b.exprs).is_empty(),
                _ => {}
            }
        }
        let local = loops::derived_from(f, &seeds);
        let grid = loops::derived_from(f, &grid_seeds);
        let mut parents: HashMap<Handle<Expression>, Vec<Handle<Expression>>> = HashMap::new();
        for (h, e) in f.expressions.iter() {
            for o in crate::analysis::expr::operands(e) {
                parents.entry(o).or_default().push(h);
            }
        }
        let mut edits: Vec<Edit> = Vec::new();
        let mut roles: Vec<&'static str> = Vec::new();

        // Workgroup arrays with one slot per invocation.
        let fi = r.info.get_entry_point(ep);
        for (g, var) in module.global_variables.iter() {
            if var.space != naga::AddressSpace::WorkGroup || fi[g].is_empty() {
                continue;
            }
            let naga::TypeInner::Array {
                size: naga::ArraySize::Constant(n),
                ..
            } = module.types[var.ty].inner
            else {
                continue;
            };
            if i64::from(n.get()) != size {
                continue;
            }
            let var_name = var.name.as_deref().unwrap_or("?");
            let per_invocation = f.expressions.iter().any(|(_, e)| {
                matches!(e, Expression::Access { base, index }
                    if seeds.contains(index)
                        && matches!(f.expressions[*base], Expression::GlobalVariable(x) if x == g))
            });
            if !per_invocation {
                return Err(Skip(format!(
                    "workgroup array `{var_name}` is as long as the workgroup but is not indexed by the local invocation index"
                )));
            }
            let decl = text::range(module.global_variables.get_span(g))
                .ok_or_else(|| Skip(format!("`{var_name}` has no span")))?;
            edits.push(
                array_length_edit(module, wgsl, decl, size, name).ok_or_else(|| {
                    Skip(format!(
                        "cannot find the length in the type of `{var_name}` (a type alias?)"
                    ))
                })?,
            );
            roles.push("array");
        }

        // Loops whose literals are the workgroup size by construction.
        let mut proven: HashMap<Handle<Expression>, String> = HashMap::new();
        let known = |e: Handle<Expression>| {
            loops::known_int(module, &f.expressions, e, &constants)
                .filter(|k| !k.from_override)
                .map(|k| k.value)
        };
        for lp in loops::for_loops(module, wgsl, FnRef::Entry(ep), f) {
            match lp.update {
                Update::Add(step) if known(step) == Some(size) && local.contains(&lp.init) => {
                    proven.insert(step, name.to_owned());
                    roles.push("block-stride");
                }
                Update::Add(step)
                    if local.contains(&lp.init)
                        && known(step).is_some_and(|v| v > size && v % size == 0) =>
                {
                    return Err(Skip(format!(
                        "the loop on line {} strides by {} workgroups of this size, a count the kernel does not name",
                        text::line_of(wgsl, lp.span.start),
                        known(step).unwrap_or(0) / size
                    )));
                }
                Update::Mul(k) | Update::Shl(k)
                    if known(k)
                        == Some(if matches!(lp.update, Update::Mul(_)) {
                            2
                        } else {
                            1
                        })
                        && known(lp.bound) == Some(size)
                        && matches!(lp.cmp, BinaryOperator::Less) =>
                {
                    proven.insert(lp.bound, name.to_owned());
                    roles.push("doubling");
                }
                Update::Shr(k) | Update::Div(k)
                    if known(k)
                        == Some(if matches!(lp.update, Update::Div(_)) {
                            2
                        } else {
                            1
                        })
                        && size % 2 == 0
                        && known(lp.init) == Some(size / 2)
                        && halving_bound_ok(module, f, &lp, &constants)
                        && compared_with(f, lp.counter_ptr, &local) =>
                {
                    proven.insert(lp.init, format!("({name} / 2u)"));
                    roles.push("tree-reduction");
                }
                _ => {}
            }
        }
        // Factors of the workgroup grid: `wid.x * 256u`, `256u * nwg.x`.
        for (_, e) in f.expressions.iter() {
            if let Expression::Binary {
                op: BinaryOperator::Multiply,
                left,
                right,
            } = e
            {
                for (lit, other) in [(*left, *right), (*right, *left)] {
                    if known(lit) == Some(size) && grid.contains(&other) {
                        proven.insert(lit, name.to_owned());
                        roles.push("workgroup-grid");
                    }
                }
            }
        }

        // Every other literal equal to S (or S/2^k, S-1 next to L) makes the kernel ambiguous.
        for (h, e) in f.expressions.iter() {
            if let Some(with) = proven.get(&h) {
                let span = text::range(f.expressions.get_span(h))
                    .ok_or_else(|| Skip("a workgroup-size literal has no span".into()))?;
                let with = if literal_is_signed(module, f, h) {
                    format!("i32({with})")
                } else {
                    with.clone()
                };
                edits.push(Edit::replace(span, with));
                continue;
            }
            let Some(span) = text::range(f.expressions.get_span(h)) else {
                continue;
            };
            let line = text::line_of(wgsl, span.start);
            let value = match e {
                Expression::Literal(Literal::F32(v)) if f64::from(*v) == size as f64 => Some(size),
                Expression::Literal(_) | Expression::Constant(_) => known(h),
                _ => None,
            };
            // naga folds constant expressions (`256u * 4u` is one literal 1024): look at the
            // numbers written inside a folded literal's span too.
            let folded = matches!(e, Expression::Literal(_))
                && text::tokens(wgsl, span.clone()).len() > 1
                && text::tokens(wgsl, span.clone()).iter().any(|t| {
                    wgsl[t.clone()].trim_end_matches(['u', 'i']).parse::<i64>() == Ok(size)
                });
            if folded {
                return Err(Skip(format!(
                    "`{}` on line {line} is computed from the workgroup size's value",
                    &wgsl[span]
                )));
            }
            let Some(v) = value else { continue };
            if v == size {
                return Err(Skip(format!(
                    "`{}` on line {line} equals the workgroup size but is not provably it",
                    &wgsl[span]
                )));
            }
            let near_local = parents.get(&h).is_some_and(|ps| {
                ps.iter().any(|p| {
                    crate::analysis::expr::operands(&f.expressions[*p])
                        .iter()
                        .any(|o| *o != h && local.contains(o))
                })
            });
            let fraction =
                v > 0 && v < size && size % v == 0 && (size / v).unsigned_abs().is_power_of_two();
            if near_local && (fraction || v == size - 1) {
                return Err(Skip(format!(
                    "`{}` on line {line} is used with the local invocation index and fits only this workgroup size (an unrolled reduction?)",
                    &wgsl[span]
                )));
            }
        }
        for fref in loops::reachable(module, ep).into_iter().skip(1) {
            let g = loops::function(module, fref);
            for (h, e) in g.expressions.iter() {
                if matches!(e, Expression::Literal(_) | Expression::Constant(_))
                    && loops::known_int(module, &g.expressions, h, &constants)
                        .is_some_and(|k| k.value == size)
                {
                    return Err(Skip(format!(
                        "helper function `{}` uses the workgroup size's value",
                        g.name.as_deref().unwrap_or("?")
                    )));
                }
            }
        }

        // Invocations that combine their values (workgroup memory, barriers, subgroups) over a
        // slice of the data whose extent is the workgroup size (`wid.x * 256u`, or
        // `global_invocation_id.x`, which is that plus the lane) produce one result per slice:
        // another size partitions the data differently and changes those results.
        let combines = module
            .global_variables
            .iter()
            .any(|(g, v)| v.space == naga::AddressSpace::WorkGroup && !fi[g].is_empty())
            || loops::reachable(module, ep)
                .into_iter()
                .any(|fr| loops::workgroup_sync(&loops::function(module, fr).body).is_some());
        if combines && (roles.contains(&"workgroup-grid") || global_x) {
            return Err(Skip(
                "the invocations of a workgroup combine their values over a slice of the data as large as the workgroup: another size changes what each workgroup produces".into(),
            ));
        }
        let edited =
            text::apply_edits(wgsl, &edits).ok_or_else(|| Skip("overlapping edits".into()))?;
        let lifted = lift_workgroup_size(&edited, entry, wg, 1)
            .ok_or_else(|| Skip("cannot find the @workgroup_size attribute".into()))?;
        let max = subject
            .target
            .limit("max_compute_invocations_per_workgroup", 256)
            .min(subject.target.limit("max_compute_workgroup_size_x", 256));
        let candidates: Vec<f64> = (5..=10)
            .map(|p| 1u64 << p)
            .filter(|&v| v <= max)
            .map(|v| v as f64)
            .collect();
        roles.sort_unstable();
        roles.dedup();
        let step = if roles.is_empty() {
            format!("lift-workgroup-size{NO_ROLES}")
        } else {
            format!("lift-workgroup-size({})", roles.join(", "))
        };
        let rw = super::finish(
            subject,
            lifted,
            &[(name.to_owned(), size as f64)],
            step,
            vec![(name.to_owned(), candidates)],
        )?;
        Ok(vec![rw])
    }
}

/// Whether the halving loop runs while its counter is positive (`s > 0u`, `s >= 1u`, `s != 0u`).
fn halving_bound_ok(
    module: &naga::Module,
    f: &naga::Function,
    lp: &loops::ForLoop<'_>,
    constants: &[(&str, f64)],
) -> bool {
    let b = loops::known_int(module, &f.expressions, lp.bound, constants);
    matches!(
        (lp.cmp, b),
        (
            BinaryOperator::Greater | BinaryOperator::NotEqual,
            Some(Known { value: 0, .. })
        ) | (BinaryOperator::GreaterEqual, Some(Known { value: 1, .. }))
    )
}

/// Whether the value of the local `ptr` points to is compared with an expression of `local`.
fn compared_with(
    f: &naga::Function,
    ptr: Handle<Expression>,
    local: &HashSet<Handle<Expression>>,
) -> bool {
    f.expressions.iter().any(|(_, e)| match e {
        Expression::Binary {
            op:
                BinaryOperator::Less
                | BinaryOperator::LessEqual
                | BinaryOperator::Greater
                | BinaryOperator::GreaterEqual,
            left,
            right,
        } => {
            let is_counter =
                |x: Handle<Expression>| matches!(f.expressions[x], Expression::Load { pointer } if pointer == ptr);
            (is_counter(*left) && local.contains(right))
                || (is_counter(*right) && local.contains(left))
        }
        _ => false,
    })
}

/// Whether a literal or constant expression is a signed integer (it then needs `i32(KF_WG_X)`).
fn literal_is_signed(module: &naga::Module, f: &naga::Function, h: Handle<Expression>) -> bool {
    match &f.expressions[h] {
        Expression::Literal(Literal::I32(_)) => true,
        Expression::Constant(c) => loops::is_signed(module, module.constants[*c].ty),
        _ => false,
    }
}

/// The edit replacing the length of a workgroup array's type in its declaration
/// (`var<workgroup> t: array<f32, 256>;`): the token before the type's closing `>`, a number of
/// value `size` or a `const` of that value.
fn array_length_edit(
    module: &naga::Module,
    wgsl: &str,
    decl: std::ops::Range<usize>,
    size: i64,
    name: &str,
) -> Option<Edit> {
    let toks = text::tokens(wgsl, decl);
    let close = toks.iter().rposition(|t| &wgsl[t.clone()] == ">")?;
    let len = toks.get(close.checked_sub(1)?)?.clone();
    let comma = toks.get(close.checked_sub(2)?)?;
    let colon = toks.iter().position(|t| &wgsl[t.clone()] == ":")?;
    if &wgsl[comma.clone()] != "," || wgsl.get(toks.get(colon + 1)?.clone())? != "array" {
        return None;
    }
    let t = &wgsl[len.clone()];
    let value = match t.trim_end_matches(['u', 'i']).parse::<i64>() {
        Ok(v) => v,
        Err(_) => {
            let c = module
                .constants
                .iter()
                .find(|(_, c)| c.name.as_deref() == Some(t))?
                .1;
            loops::known_int(module, &module.global_expressions, c.init, &[])?.value
        }
    };
    (value == size).then(|| Edit::replace(len, name))
}

#[cfg(test)]
mod tests;

//! Workgroup and local ids read on their own, spelled through the global id.
//!
//! `canon`'s `global-id` step turns `workgroup_id.x * 64u + local_invocation_id.x` into
//! `global_invocation_id.x`. Kernels also read the two ids apart: a row per workgroup of one
//! invocation (`@workgroup_size(1)`, `row = workgroup_id.x`), a batch from `workgroup_id.y` in a
//! workgroup one high, TVM's packed-grid guard `if (blockIdx.x > packGridDimX) { return; }`.
//! The operators that re-map invocations (`reduce`, `tile`, `coarsen`) read only the global id,
//! so those kernels were refused for reading `workgroup_id`.
//!
//! By definition `global_invocation_id.d = workgroup_id.d · W_d + local_invocation_id.d` with
//! `0 ≤ local_invocation_id.d < W_d` (`W` the workgroup size), so `workgroup_id.d` is
//! `global_invocation_id.d / W_d` and `local_invocation_id.d` is `global_invocation_id.d % W_d`
//! (along an axis one wide: the global id, and `0u`), and `local_invocation_index` is
//! `lid.x + lid.y · W_x + lid.z · W_x · W_y` of those. Exact for every invocation of the launch
//! the program has.
//!
//! What it changes is what the program *depends on*: the rewritten body computes the same values
//! from the global id alone, with the workgroup size as a literal, so an operator that changes the
//! workgroup size keeps the values the parent computed. That is wrong only where invocations of
//! one workgroup cooperate, through workgroup memory, barriers or subgroup operations: such
//! kernels are left as written. It is the last normalisation `canon` tries, once nothing else
//! applies, so `global-id` takes the sums it recognises first.

use crate::analysis::ir::{Analysis, Edit, Naming};
use naga::{AddressSpace, BuiltIn, Expression, Handle, Statement};

/// The edits spelling every workgroup and local id of the entry point through the global id (see
/// the module documentation), or `None` when there is none, a workgroup size is not a literal,
/// an id is used other than by component, or invocations of a workgroup may cooperate.
pub(super) fn lone_ids(a: &Analysis<'_>) -> Option<Vec<Edit>> {
    let ids: Vec<_> = a
        .builtins
        .iter()
        .filter(|b| {
            matches!(
                b.builtin,
                BuiltIn::WorkGroupId | BuiltIn::LocalInvocationId | BuiltIn::LocalInvocationIndex
            ) && b.components.iter().any(|c| *c)
        })
        .collect();
    if ids.is_empty()
        || a.entry
            .workgroup_size_overrides
            .is_some_and(|o| o.iter().any(Option::is_some))
        || cooperates(a.module)
    {
        return None;
    }
    if ids.iter().any(|b| b.member.is_some() || b.whole) {
        return None;
    }
    let w = a.entry.workgroup_size;
    let code = a.code();
    let sig = a.entry_signature()?;
    let body = sig.body.clone();
    // Names declared in the body (a `let` or `var` shadowing an id would be replaced too).
    let f = a.function;
    let declared: Vec<&str> = f
        .local_variables
        .iter()
        .filter_map(|(_, v)| v.name.as_deref())
        .chain(f.named_expressions.iter().filter_map(|(h, n)| {
            (!matches!(f.expressions[*h], Expression::FunctionArgument(_))).then_some(n.as_str())
        }))
        .collect();
    let (gid, mut edits) = super::global_id_parameter(a)?;
    let axis = ["x", "y", "z"];
    let lid = |d: usize| {
        if w[d] == 1 {
            "0u".to_owned()
        } else {
            format!("({gid}.{} % {}u)", axis[d], w[d])
        }
    };
    for b in ids {
        let name = b.name.as_str();
        if declared.contains(&name) {
            return None;
        }
        for at in super::word_positions(&code[body.clone()], name) {
            let at = body.start + at;
            let end = at + name.len();
            let (range, text) = if b.builtin == BuiltIn::LocalInvocationIndex {
                let flat = match (w[1], w[2]) {
                    (1, 1) => lid(0),
                    _ => format!(
                        "({} + {} * {}u + {} * {}u)",
                        lid(0),
                        lid(1),
                        w[0],
                        lid(2),
                        w[0] * w[1]
                    ),
                };
                (at..end, flat)
            } else {
                let rest = &code[end..];
                let trimmed = rest.trim_start();
                let c = trimmed.strip_prefix('.')?.trim_start();
                let d = ["x", "y", "z"].iter().position(|x| {
                    c.starts_with(x)
                        && !c[1..].starts_with(|ch: char| ch.is_alphanumeric() || ch == '_')
                })?;
                let stop = code.len() - c.len() + 1;
                let text = match b.builtin {
                    BuiltIn::WorkGroupId if w[d] == 1 => format!("{gid}.{}", axis[d]),
                    BuiltIn::WorkGroupId => format!("({gid}.{} / {}u)", axis[d], w[d]),
                    _ => lid(d),
                };
                (at..stop, text)
            };
            edits.push(Edit::replace(range, text));
        }
    }
    Some(edits)
}

/// A flat id over a multi-dimensional workgroup, rebuilt from `num_workgroups` →
/// `global_invocation_id.x` over a one-dimensional workgroup of as many invocations.
///
/// burn and cubecl launch `@workgroup_size(16, 16, 1)` by workgroup count and rebuild the flat
/// position (ABSOLUTE_POS) as `gid.z * (nwg.x * 16) * (nwg.y * 16) + gid.y * (nwg.x * 16) +
/// gid.x`, spelled with factors in any order. When the launch is one workgroup high and deep
/// (a workgroup-count rule whose y and z are the literal 1) that value runs exactly once over
/// `0 .. G·Wx·Wy·Wz` across the launch (`gid.x < G·Wx`, `gid.y < Wy`, `gid.z < Wz`), which is
/// what `gid.x` runs over in a workgroup `(Wx·Wy·Wz, 1, 1)` launched over the same `G`
/// workgroups. The rewrite keeps every value a given id computes; it changes which invocation
/// computes it. That is exact only where invocations share nothing (no workgroup memory,
/// barrier or subgroup operation) and nothing else reads an id: proven on the rewritten text,
/// where the one read of the global id left must be the one written in place of the flat id.
/// The value is recognised from the IR as a polynomial in the id components (any order of
/// terms and factors, `const`s, conversions between integer types).
///
/// The same for a workgroup-major flat id (ratchet's `workgroup_id.y * num_workgroups.x * 64u +
/// workgroup_id.x * 64u + local_invocation_index` over `@workgroup_size(8, 8, 1)`, or the local
/// id's components in place of the index): each workgroup numbers its invocations in a run of
/// its own, which over the same launch is again every value once. A `let` folded into the value
/// and read nowhere else goes with it; the global id parameter is added where the kernel has
/// none.
pub(super) fn flat_workgroup(a: &Analysis<'_>, program: &kf_runtime::Program) -> Option<Vec<Edit>> {
    use crate::analysis::ir::Poly;
    let w = a.entry.workgroup_size;
    let total = w[0].checked_mul(w[1])?.checked_mul(w[2])?;
    if program.dispatch.mode != kf_runtime::DispatchMode::Workgroups
        || w[1] * w[2] == 1
        // The default limit of a workgroup's x extent.
        || total > 256
        || (1..3).any(|d| program.dispatch.size[d].as_constant() != Some(1))
        || a.entry
            .workgroup_size_overrides
            .is_some_and(|o| o.iter().any(Option::is_some))
        || cooperates(a.module)
    {
        return None;
    }
    if a.builtins.iter().any(|b| {
        b.used()
            && (!matches!(
                b.builtin,
                BuiltIn::GlobalInvocationId
                    | BuiltIn::NumWorkGroups
                    | BuiltIn::WorkGroupId
                    | BuiltIn::LocalInvocationId
                    | BuiltIn::LocalInvocationIndex
            ) || b.member.is_some()
                || b.whole)
    }) {
        return None;
    }
    let (gid, add_gid) = super::global_id_parameter(a)?;
    let atom = |s: &str| Poly::atom(s.to_owned());
    let wx = Poly::constant(i64::from(w[0]));
    let row = atom("n0").mul(&wx);
    // Along an axis one invocation wide the component is 0 (as `id_poly` reads it).
    let mut expected = atom("g0");
    if w[1] > 1 {
        expected = expected.add(&atom("g1").mul(&row));
    }
    if w[2] > 1 {
        expected = expected.add(&atom("g2").mul(&row).scale(i64::from(w[1])));
    }
    // Workgroup-major (ratchet: `workgroup_id.x * 64u + local_invocation_index` over (8, 8, 1)):
    // each workgroup's invocations numbered in a run of their own, the same values once each.
    let groups = atom("k0").mul(&Poly::constant(i64::from(total)));
    // The local index by components; along an axis one invocation wide the component is 0.
    let mut local = Poly::constant(0);
    let mut stride = 1i64;
    for (d, &wd) in w.iter().enumerate() {
        if wd > 1 {
            local = local.add(&atom(&format!("l{d}")).scale(stride));
        }
        stride *= i64::from(wd);
    }
    let by_group = [atom("li").add(&groups), local.add(&groups)];
    let f = a.function;
    let found: Vec<Handle<Expression>> = f
        .expressions
        .iter()
        .filter(|(h, e)| {
            matches!(e, Expression::Binary { .. })
                && id_poly(a, *h, w, 0).is_some_and(|p| p == expected || by_group.contains(&p))
        })
        .map(|(h, _)| h)
        .collect();
    let outer: Vec<Handle<Expression>> = found
        .iter()
        .copied()
        .filter(|&h| !found.iter().any(|&g| g != h && a.visit_contains(g, h)))
        .collect();
    let [flat] = outer[..] else {
        return None;
    };
    let code = a.code();
    let (args, _) = crate::analysis::workgroup::workgroup_size_args(code, &a.entry.name)?;
    let mut edits = vec![
        Edit::replace(
            a.expr_range(flat)?,
            match a.type_of(flat).scalar_kind() {
                Some(naga::ScalarKind::Sint) => format!("i32({gid}.x)"),
                _ => format!("{gid}.x"),
            },
        ),
        Edit::replace(args, format!("{total}")),
    ];
    edits.extend(add_gid);
    // A `let` folded into the flat value and read nowhere else (ratchet's `let x_offset =
    // workgroup_id.x * 64u;`) would read an id the rewrite no longer defines: it goes too.
    let flat_names = super::identifiers(a.text(&a.expr_range(flat)?));
    let names = super::identifiers(code);
    for (&h, name) in &f.named_expressions {
        if h == flat || !a.visit_contains(flat, h) {
            continue;
        }
        let inside = flat_names.iter().filter(|n| *n == name).count();
        // Only `let`s: naga names the entry point's arguments too.
        if inside > 0
            && names.iter().filter(|n| *n == name).count() == inside + 1
            && let Some((range, _)) = a.let_statement(h)
        {
            edits.push(Edit::replace(range, String::new()));
        }
    }
    // The proof: in the rewritten kernel the global id is read once, as `.x`, and no other id.
    let next = crate::analysis::ir::apply_edits(code, &edits)?;
    let parsed = crate::analysis::ir::parse(&next).ok()?;
    let b = parsed.analyse(&a.entry.name).ok()?;
    let reads = |x: BuiltIn| b.builtin(x).is_some_and(|g| g.used());
    if b.builtins
        .iter()
        .any(|x| x.used() && x.builtin != BuiltIn::GlobalInvocationId)
        || !reads(BuiltIn::GlobalInvocationId)
    {
        return None;
    }
    let g = b.builtin(BuiltIn::GlobalInvocationId)?;
    let reads_of_x = b
        .function
        .expressions
        .iter()
        .filter(|(_, e)| match **e {
            Expression::AccessIndex { base, index } => {
                b.builtin_of(base) == Some(BuiltIn::GlobalInvocationId) && index == 0
            }
            _ => false,
        })
        .count();
    (g.components == [true, false, false, false] && !g.whole && reads_of_x == 1).then_some(edits)
}

/// `h` as a polynomial in the atoms `g0..g2` (`global_invocation_id`'s components) and `n0`
/// (`num_workgroups.x`), for [`flat_workgroup`]: integer literals and constants, `+`, `-`, `*`,
/// integer conversions and `let`s. Along y and z the launch is one workgroup, so
/// `num_workgroups.y` and `.z` are 1 and a global id component along an axis one invocation
/// wide is 0.
fn id_poly(
    a: &Analysis<'_>,
    h: Handle<Expression>,
    w: [u32; 3],
    depth: u32,
) -> Option<crate::analysis::ir::Poly> {
    use crate::analysis::ir::Poly;
    use naga::BinaryOperator as B;
    if depth > 32 {
        return None;
    }
    if let Some(k) = a.const_int(h) {
        return Some(Poly::constant(k));
    }
    match a.function.expressions[h] {
        Expression::AccessIndex { base, index } => match (a.builtin_of(base)?, index) {
            (BuiltIn::GlobalInvocationId, d @ 0..=2) if w[d as usize] == 1 && d > 0 => {
                Some(Poly::constant(0))
            }
            (BuiltIn::GlobalInvocationId, d @ 0..=2) => Some(Poly::atom(format!("g{d}"))),
            (BuiltIn::NumWorkGroups, 0) => Some(Poly::atom("n0".to_owned())),
            (BuiltIn::NumWorkGroups, 1 | 2) => Some(Poly::constant(1)),
            (BuiltIn::WorkGroupId, 0) => Some(Poly::atom("k0".to_owned())),
            (BuiltIn::WorkGroupId, 1 | 2) => Some(Poly::constant(0)),
            (BuiltIn::LocalInvocationId, d @ 0..=2) if w[d as usize] == 1 => {
                Some(Poly::constant(0))
            }
            (BuiltIn::LocalInvocationId, d @ 0..=2) => Some(Poly::atom(format!("l{d}"))),
            _ => None,
        },
        Expression::FunctionArgument(_) => match a.builtin_of(h)? {
            BuiltIn::LocalInvocationIndex => Some(Poly::atom("li".to_owned())),
            _ => None,
        },
        Expression::As { .. } => id_poly(a, a.int_cast_of(h)?, w, depth + 1),
        Expression::Load { pointer } => match a.function.expressions[pointer] {
            Expression::LocalVariable(v) => id_poly(a, a.single_value(v)?, w, depth + 1),
            _ => None,
        },
        Expression::Binary { op, left, right } => {
            let l = id_poly(a, left, w, depth + 1)?;
            let r = id_poly(a, right, w, depth + 1)?;
            match op {
                B::Add => Some(l.add(&r)),
                B::Subtract => Some(l.add(&r.scale(-1))),
                B::Multiply => Some(l.mul(&r)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Whether invocations of one workgroup may share work: workgroup memory, a barrier or a
/// subgroup operation anywhere in the module.
fn cooperates(module: &naga::Module) -> bool {
    fn block(b: &naga::Block) -> bool {
        b.iter().any(|s| match s {
            Statement::ControlBarrier(_)
            | Statement::MemoryBarrier(_)
            | Statement::WorkGroupUniformLoad { .. }
            | Statement::SubgroupBallot { .. }
            | Statement::SubgroupGather { .. }
            | Statement::SubgroupCollectiveOperation { .. } => true,
            Statement::Block(x) => block(x),
            Statement::If { accept, reject, .. } => block(accept) || block(reject),
            Statement::Loop {
                body, continuing, ..
            } => block(body) || block(continuing),
            Statement::Switch { cases, .. } => cases.iter().any(|c| block(&c.body)),
            _ => false,
        })
    }
    module
        .global_variables
        .iter()
        .any(|(_, g)| g.space == AddressSpace::WorkGroup)
        || module.functions.iter().any(|(_, f)| block(&f.body))
        || module.entry_points.iter().any(|e| block(&e.function.body))
        || module.entry_points.iter().any(|e| {
            e.function.expressions.iter().any(|(_, x)| {
                matches!(
                    x,
                    Expression::SubgroupBallotResult | Expression::SubgroupOperationResult { .. }
                )
            })
        })
}

/// `x >> c` → `x / 2ᶜ` and `x & (2ᶜ - 1)` → `x % 2ᶜ` for a shift or mask by a literal, where `x`
/// is a `u32`, or an `i32` that cannot be negative: an index form over invocation ids with
/// non-negative literal coefficients and offset (`i32(gid.x)`: no dispatch reaches 2³¹
/// invocations). TVM splits a fused index this way (`fused >> 7`, `fused & 127`); the index
/// analysis reads the digits of a flat id from `/` and `%` alone. Exact: for a non-negative
/// integer, shifting right by `c` is division by `2ᶜ` and masking the low `c` bits is the
/// remainder.
pub(super) fn shifts_to_division(a: &Analysis<'_>) -> Vec<Edit> {
    use naga::{BinaryOperator as B, ScalarKind};
    let f = a.function;
    let mut found: Vec<(Handle<Expression>, String)> = Vec::new();
    for (h, e) in f.expressions.iter() {
        let Expression::Binary { op, left, right } = *e else {
            continue;
        };
        let Some(c) = a.const_int(right) else {
            continue;
        };
        let kind = a.type_of(left).scalar_kind();
        let suffix = match (kind, a.type_of(left)) {
            (Some(ScalarKind::Uint), naga::TypeInner::Scalar(_)) => "u",
            (Some(ScalarKind::Sint), naga::TypeInner::Scalar(_)) if non_negative(a, left) => "",
            _ => continue,
        };
        let (op, n) = match op {
            B::ShiftRight if (0..31).contains(&c) => ("/", 1i64 << c),
            B::And if c > 0 && (c + 1) & c == 0 && c < i64::from(i32::MAX) => ("%", c + 1),
            _ => continue,
        };
        // The operand as the user's names spell it where the shift is (a `let`'s range is its
        // definition's).
        let Some(x) = a.expr_wgsl(left, Naming::Names) else {
            continue;
        };
        found.push((h, format!("(({x}) {op} {n}{suffix})")));
    }
    // The outermost: an inner one is rewritten in the next round, inside the outer's text.
    found
        .iter()
        .filter(|(h, _)| {
            !found
                .iter()
                .any(|(g, _)| g != h && a.visit_contains(*g, *h))
        })
        .filter_map(|(h, text)| Some(Edit::replace(a.expr_range(*h)?, text.clone())))
        .collect()
}

/// Whether an integer expression is an index form over invocation ids with non-negative literal
/// coefficients and offset.
fn non_negative(a: &Analysis<'_>, h: Handle<Expression>) -> bool {
    let Some(form) = a.index_form(h) else {
        return false;
    };
    form.offset.as_constant().is_some_and(|c| c >= 0)
        && form.terms.iter().all(|(v, c)| {
            matches!(v, crate::analysis::ir::Var::Builtin(..))
                && c.as_constant().is_some_and(|c| c >= 0)
        })
}

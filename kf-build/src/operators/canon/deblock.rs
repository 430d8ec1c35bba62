//! De-blocking: a register-blocked kernel, each invocation computing a `TM × TN` block of outputs
//! in as many accumulators, → one output per invocation over a launch `TM × TN` times as wide.
//!
//! People who tune by hand block their products in registers (surfgrad's `sums[i][j]` over an
//! 8 × 8 block, sixty-four updates written out); the tiling operators recognise one sum per
//! invocation and see sixty-four. The blocking is a tiling choice, and the tiling operators make
//! their own, for the adapter at hand: this normal form undoes the user's so that theirs can be
//! made. It is the inverse of register blocking, proven, not guessed:
//!
//! - the accumulators are scalar float locals starting at zero, each updated once per iteration
//!   of one top-level counted loop (`acc = acc + e` or `fma(x, y, acc)`, the terms not reading `acc`) with dispatch-uniform
//!   bounds, and read once after it, as the value stored to a global, under `if` guards that hold
//!   nothing else; the loop does nothing else, and the rest of the entry point only names values;
//! - the invocation id is read only as `global_invocation_id.d * c` with `T_d` dividing each `c`;
//! - for some accumulator `b` (the block's corner) every other accumulator `t` is `b` translated
//!   by `(i, j)` within `[0, TM) × [0, TN)`, a bijection: walking `t`'s update, store and guards
//!   beside `b`'s, every integer expression with an index form equals `b`'s plus `i·c_y/TM +
//!   j·c_x/TN` (`c_d` the coefficient of the id's component `d` in `b`'s form), every other node
//!   is the same operation on operands that match in turn, and memory is read only from buffers
//!   the kernel does not write, or from loop counters and dispatch-uniform locals.
//!
//! The rewrite keeps `b` and drops the others, and divides each `c` by `T_d`: at the new
//! invocation `(TN·x + j, TM·y + i)` every form of `b` takes the value `t = (i, j)`'s took at
//! `(x, y)`, so the new launch computes and stores every output once, with the user's guards.
//! The launch grows by `TN` along x and `TM` along y (a `grid` rule rounded up to the workgroup
//! first, so the invocations the original launched past the rule are launched too).
//!
//! Two normalisations prepare it: a loop nest that only stores zeros into a fresh local array
//! (WGSL starts it at zero) is dropped ([`dead_zero_stores`]), and a local array read and written
//! only at constant indices becomes one scalar per element (`registers::scalarise_arrays`).
//! Exact: no floating-point sum changes order; each output's sum is the same one.

use super::whole_line;
use crate::analysis::expr::operands;
use crate::analysis::ir::{self, Analysis, Edit, IndexForm, Poly, Var};
use naga::{BuiltIn, Expression, Handle, LocalVariable, Statement};
use std::collections::HashSet;

/// A de-blocking: its edits and the factors the launch grows by along x and y.
pub(super) struct Deblock {
    pub edits: Vec<Edit>,
    pub scale: [u64; 3],
}

/// One accumulator of the block.
struct Acc {
    var: Handle<LocalVariable>,
    update: usize,
    /// What each iteration adds: `[e]` for `acc + e`, `[x, y]` for `fma(x, y, acc)`.
    terms: Vec<Handle<Expression>>,
    store: usize,
    index: Handle<Expression>,
    global: Handle<naga::GlobalVariable>,
    guards: Vec<usize>,
}

const GID: BuiltIn = BuiltIn::GlobalInvocationId;

/// A read of an id component: the product holding it (or the read itself), the read, and the
/// product's constant factor (1 for a plain read).
type IdRead = (Handle<Expression>, Handle<Expression>, i64);

/// The de-blocking of `a`'s entry point, when it is proven (see the module documentation).
pub(super) fn deblock(a: &Analysis<'_>) -> Option<Deblock> {
    let f = a.function;
    let gid = a.builtins.iter().find(|b| b.builtin == GID)?;
    if gid.whole || gid.member.is_some() {
        return None;
    }
    // Only the global id: a local or workgroup id would move with the launch unscaled.
    if a.builtins.iter().any(|b| b.builtin != GID && b.used()) {
        return None;
    }
    let (l, accs) = accumulators(a)?;
    let n = accs.len();
    if n < 2 {
        return None;
    }
    let lp = a.loops[l].for_loop.as_ref()?;
    // The stores' guards hold only stores and guards; everything else is names and the loop.
    let guards: HashSet<usize> = accs.iter().flat_map(|t| t.guards.iter().copied()).collect();
    let stores: HashSet<usize> = accs.iter().map(|t| t.store).collect();
    let loop_stmt = a.loops[l].stmt;
    // naga's evaluation of `&&` and `||` in a guard: an `if` storing into a temporary.
    let short_circuits: Vec<usize> = (0..a.stmts.len())
        .filter(|&s| a.is_short_circuit_if(a.stmts[s].stmt))
        .collect();
    for (s, st) in a.stmts.iter().enumerate() {
        if s == loop_stmt || a.in_loop(s, l) || stores.contains(&s) || guards.contains(&s) {
            continue;
        }
        if short_circuits.iter().any(|&c| a.within(s, c)) {
            continue;
        }
        match *st.stmt {
            Statement::Emit(_) | Statement::Block(_) => {}
            // The end of the function (naga adds one, in the branches of a last `if` too).
            Statement::Return { value: None } if at_end(a, s) => {}
            // The loop's counter starting.
            Statement::Store { pointer, value }
                if matches!(f.expressions[pointer], Expression::LocalVariable(v) if v == lp.var)
                    && a.is_dispatch_uniform(value) => {}
            _ => return None,
        }
    }
    for &g in &guards {
        if !matches!(a.stmts[g].stmt, Statement::If { .. }) {
            return None;
        }
        // An empty else (naga ends it with the function's `return`).
        let rejects = (0..a.stmts.len())
            .filter(|&s| a.stmts[s].parent == Some(g) && a.stmts[s].part == ir::Part::Reject);
        for s in rejects {
            match *a.stmts[s].stmt {
                Statement::Emit(_) => {}
                Statement::Return { value: None } if at_end(a, s) => {}
                _ => return None,
            }
        }
    }
    let uniform = |h: Handle<Expression>| a.is_dispatch_uniform(h);
    if !lp.bounds.iter().all(|b| uniform(b.bound)) || !lp.init.is_none_or(uniform) {
        return None;
    }
    a.const_int(lp.step)?;
    // Every read of an id component: `gid.d * c`.
    let mut reads: [Vec<IdRead>; 2] = Default::default();
    for (h, e) in f.expressions.iter() {
        let Expression::AccessIndex { base, index } = *e else {
            continue;
        };
        if !matches!(f.expressions[base], Expression::FunctionArgument(i) if i as usize == gid.arg)
        {
            continue;
        }
        if index > 1 {
            return None;
        }
        // A read that is not such a product pins its axis to a block of one.
        for (m, me) in f.expressions.iter() {
            if !operands(me).contains(&h) {
                continue;
            }
            let c = match *me {
                Expression::Binary {
                    op: naga::BinaryOperator::Multiply,
                    left,
                    right,
                } => a
                    .const_int(if left == h { right } else { left })
                    .filter(|&c| c > 0),
                _ => None,
            };
            match c {
                Some(c) => reads[index as usize].push((m, h, c)),
                None => reads[index as usize].push((h, h, 1)),
            }
        }
        let mut in_statement = false;
        for st in &a.stmts {
            ir::for_each_stmt_operand(st.stmt, &mut |o| in_statement |= o == h);
        }
        if in_statement {
            reads[index as usize].push((h, h, 1));
        }
    }
    let gcd_of = |rs: &[IdRead]| rs.iter().fold(0, |g, r| ir::gcd(g, r.2.unsigned_abs())) as i64;
    let (gx, gy) = (gcd_of(&reads[0]), gcd_of(&reads[1]));
    let forms: Vec<IndexForm> = accs
        .iter()
        .map(|t| a.index_form(t.index))
        .collect::<Option<_>>()?;
    if forms.iter().any(|fm| {
        fm.terms != forms[0].terms || fm.vars().any(|v| !matches!(v, Var::Builtin(GID, _)))
    }) {
        return None;
    }
    for tx in divisors(gx) {
        if n % tx as usize != 0 {
            continue;
        }
        let ty = (n / tx as usize) as i64;
        if ty > 1 && (gy == 0 || gy % ty != 0) {
            continue;
        }
        let Some(block) = place(&forms, tx, ty) else {
            continue;
        };
        let (b, coords) = block;
        let shifted = accs.iter().zip(&coords).all(|(t, &(i, j))| {
            let m = Matcher {
                a,
                tx,
                ty,
                i,
                j,
                counter: lp.var,
                seen: Default::default(),
            };
            m.same_acc(t, &accs[b])
        });
        if shifted {
            return edits(a, &accs, b, &reads, [tx, ty]);
        }
    }
    None
}

/// The loop and its accumulators: every store in one top-level counted loop but the counter's
/// step is an accumulator's update, each accumulator read once more, by one store after it.
fn accumulators(a: &Analysis<'_>) -> Option<(usize, Vec<Acc>)> {
    let f = a.function;
    for (l, info) in a.loops.iter().enumerate() {
        let Some(lp) = info.for_loop.as_ref() else {
            continue;
        };
        if info.depth != 0 || !a.in_blocks_of(info.stmt, None) {
            continue;
        }
        let mut accs = Vec::new();
        let mut ok = true;
        for s in a.loop_stmts(l) {
            match *a.stmts[s].stmt {
                Statement::Emit(_) | Statement::Block(_) => {}
                Statement::If { .. } | Statement::Break if a.is_header_test(s, lp) => {}
                Statement::Store { .. } if s == lp.step_stmt => {}
                Statement::Store { pointer, value } if a.in_blocks_of(s, Some(info.stmt)) => {
                    match accumulator(a, s, pointer, value) {
                        Some(acc) => accs.push(acc),
                        None => ok = false,
                    }
                }
                _ => ok = false,
            }
            if !ok {
                break;
            }
        }
        if ok && accs.len() >= 2 {
            let _ = f;
            return Some((l, accs));
        }
    }
    None
}

/// Whether nothing runs after statement `s`: it is the last of its block, and so is every
/// statement it sits in, up to the function's body, none of them a loop.
fn at_end(a: &Analysis<'_>, s: usize) -> bool {
    let mut at = s;
    loop {
        if a.siblings(at).last() != Some(&at) {
            return false;
        }
        match a.stmts[at].parent {
            None => return true,
            Some(p) if matches!(a.stmts[p].stmt, Statement::Loop { .. }) => return false,
            Some(p) => at = p,
        }
    }
}

/// The accumulator updated by statement `s` (`acc = acc + value`), with its one store after the
/// loop and that store's guards.
fn accumulator(
    a: &Analysis<'_>,
    s: usize,
    pointer: Handle<Expression>,
    value: Handle<Expression>,
) -> Option<Acc> {
    let f = a.function;
    let Expression::LocalVariable(var) = f.expressions[pointer] else {
        return None;
    };
    let local = &f.local_variables[var];
    if !matches!(
        a.module.types[local.ty].inner,
        naga::TypeInner::Scalar(naga::Scalar {
            kind: naga::ScalarKind::Float,
            ..
        })
    ) || !local.init.is_none_or(|i| a.is_zero_value(i))
        || a.stores_to(var) != [s]
    {
        return None;
    }
    let is_acc = |h: Handle<Expression>| matches!(f.expressions[h], Expression::Load { pointer } if matches!(f.expressions[pointer], Expression::LocalVariable(v) if v == var));
    // `acc + e` (either order) or `fma(x, y, acc)`: the terms, and the update's read of `acc`.
    let (terms, own) = match f.expressions[value] {
        Expression::Binary {
            op: naga::BinaryOperator::Add,
            left,
            right,
        } if is_acc(left) => (vec![right], left),
        Expression::Binary {
            op: naga::BinaryOperator::Add,
            left,
            right,
        } if is_acc(right) => (vec![left], right),
        Expression::Math {
            fun: naga::MathFunction::Fma,
            arg,
            arg1: Some(y),
            arg2: Some(acc),
            ..
        } if is_acc(acc) => (vec![arg, y], acc),
        _ => return None,
    };
    if terms.iter().any(|&t| a.reads_local(t, var)) {
        return None;
    }
    let loads = a.loads_of(var);
    if loads.len() != 2 {
        return None;
    }
    let read = *loads.iter().find(|&&h| h != own)?;
    let store = a
        .stmts
        .iter()
        .position(|st| matches!(*st.stmt, Statement::Store { value, .. } if value == read))?;
    let Statement::Store { pointer: out, .. } = *a.stmts[store].stmt else {
        return None;
    };
    let Expression::Access { base, index } = f.expressions[out] else {
        return None;
    };
    let Expression::GlobalVariable(global) = f.expressions[base] else {
        return None;
    };
    if !matches!(
        a.module.global_variables[global].space,
        naga::AddressSpace::Storage { .. }
    ) {
        return None;
    }
    if !a.stmts[store].loops.is_empty() || store < s {
        return None;
    }
    let mut guards = Vec::new();
    let mut at = store;
    while let Some(p) = a.stmts[at].parent {
        match a.stmts[p].stmt {
            Statement::Block(_) => {}
            Statement::If { .. } if a.stmts[at].part == ir::Part::Accept => guards.push(p),
            _ => return None,
        }
        at = p;
    }
    guards.reverse();
    Some(Acc {
        var,
        update: s,
        terms,
        store,
        index,
        global,
        guards,
    })
}

/// The block's corner and each accumulator's place `(i, j)` in it, from the store indices: the
/// offsets must differ by `i·c_y/TM + j·c_x/TN`, one place per accumulator, all places taken.
fn place(forms: &[IndexForm], tx: i64, ty: i64) -> Option<(usize, Vec<(i64, i64)>)> {
    let unit = |d: u32, t: i64| div_poly(&forms[0].coeff(Var::Builtin(GID, d)), t);
    let (ux, uy) = (unit(0, tx), unit(1, ty));
    let mut rel = Vec::with_capacity(forms.len());
    for fm in forms {
        let d = fm.offset.add(&forms[0].offset.scale(-1));
        let mut found = None;
        for i in 1 - ty..ty {
            for j in 1 - tx..tx {
                let guess = shift_poly(uy.as_ref(), i)?.add(&shift_poly(ux.as_ref(), j)?);
                if guess == d {
                    if found.is_some() {
                        return None; // ambiguous
                    }
                    found = Some((i, j));
                }
            }
        }
        rel.push(found?);
    }
    let (i0, j0) = (
        rel.iter().map(|r| r.0).min()?,
        rel.iter().map(|r| r.1).min()?,
    );
    let coords: Vec<(i64, i64)> = rel.iter().map(|&(i, j)| (i - i0, j - j0)).collect();
    let mut taken = HashSet::new();
    for &(i, j) in &coords {
        if i >= ty || j >= tx || !taken.insert((i, j)) {
            return None;
        }
    }
    let b = coords.iter().position(|&c| c == (0, 0))?;
    Some((b, coords))
}

/// `k · p`, where `p` is a unit that exists (`None`: the coefficient is not divisible); a zero
/// step needs no unit.
fn shift_poly(p: Option<&Poly>, k: i64) -> Option<Poly> {
    if k == 0 {
        return Some(Poly::default());
    }
    Some(p?.scale(k))
}

/// `p / t` when every integer factor of `p` is divisible by `t`.
fn div_poly(p: &Poly, t: i64) -> Option<Poly> {
    if p.0.iter().any(|m| m.k % t != 0) {
        return None;
    }
    Some(Poly(
        p.0.iter()
            .map(|m| ir::Mono {
                atoms: m.atoms.clone(),
                k: m.k / t,
            })
            .collect(),
    ))
}

/// The walk that matches an accumulator's computation against the corner's, translated.
struct Matcher<'a, 'b> {
    a: &'b Analysis<'a>,
    tx: i64,
    ty: i64,
    i: i64,
    j: i64,
    counter: Handle<LocalVariable>,
    seen: std::cell::RefCell<HashSet<(Handle<Expression>, Handle<Expression>)>>,
}

impl Matcher<'_, '_> {
    fn same_acc(&self, t: &Acc, b: &Acc) -> bool {
        t.global == b.global
            && t.guards.len() == b.guards.len()
            && t.terms.len() == b.terms.len()
            && t.terms.iter().zip(&b.terms).all(|(&x, &y)| self.same(x, y))
            && self.same(t.index, b.index)
            && t.guards.iter().zip(&b.guards).all(|(&g, &h)| {
                match (self.a.stmts[g].stmt, self.a.stmts[h].stmt) {
                    (Statement::If { condition: c, .. }, Statement::If { condition: d, .. }) => {
                        self.same(*c, *d)
                    }
                    _ => false,
                }
            })
    }

    /// Whether `x` (the accumulator's) is `y` (the corner's) translated by `(i, j)`.
    fn same(&self, x: Handle<Expression>, y: Handle<Expression>) -> bool {
        if !self.seen.borrow_mut().insert((x, y)) {
            return true;
        }
        let a = self.a;
        let f = a.function;
        let int = matches!(
            a.type_of(y),
            naga::TypeInner::Scalar(naga::Scalar {
                kind: naga::ScalarKind::Uint | naga::ScalarKind::Sint,
                ..
            })
        );
        if int && let (Some(fx), Some(fy)) = (a.index_form(x), a.index_form(y)) {
            let unit = |d: u32, t: i64, k: i64| {
                shift_poly(div_poly(&fy.coeff(Var::Builtin(GID, d)), t).as_ref(), k)
            };
            let (Some(sx), Some(sy)) = (unit(0, self.tx, self.j), unit(1, self.ty, self.i)) else {
                return false;
            };
            let diff = fx.sub(&fy);
            return diff.terms.is_empty() && diff.offset == sx.add(&sy);
        }
        // A guard's `&&` or `||`, read through naga's temporary.
        if let (Some((op, p, q)), Some((op2, r, t))) = (a.short_circuit(x), a.short_circuit(y)) {
            return op == op2 && self.same(p, r) && self.same(q, t);
        }
        let (ex, ey) = (&f.expressions[x], &f.expressions[y]);
        let payload = match (ex, ey) {
            (Expression::Literal(p), Expression::Literal(q)) => p == q,
            (Expression::Constant(p), Expression::Constant(q)) => p == q,
            (Expression::Override(p), Expression::Override(q)) => p == q,
            (Expression::ZeroValue(p), Expression::ZeroValue(q)) => p == q,
            (Expression::Compose { ty: p, .. }, Expression::Compose { ty: q, .. }) => p == q,
            (Expression::Access { .. }, Expression::Access { .. }) => true,
            (
                Expression::AccessIndex { index: p, .. },
                Expression::AccessIndex { index: q, .. },
            ) => p == q,
            (Expression::Splat { size: p, .. }, Expression::Splat { size: q, .. }) => p == q,
            (
                Expression::Swizzle {
                    size: p,
                    pattern: pp,
                    ..
                },
                Expression::Swizzle {
                    size: q,
                    pattern: qq,
                    ..
                },
            ) => p == q && pp == qq,
            (Expression::GlobalVariable(p), Expression::GlobalVariable(q)) => p == q,
            (Expression::LocalVariable(p), Expression::LocalVariable(q)) => p == q,
            (Expression::Load { .. }, Expression::Load { .. }) => self.readable(y),
            (Expression::Unary { op: p, .. }, Expression::Unary { op: q, .. }) => p == q,
            (Expression::Binary { op: p, .. }, Expression::Binary { op: q, .. }) => p == q,
            (Expression::Select { .. }, Expression::Select { .. }) => true,
            (Expression::Relational { fun: p, .. }, Expression::Relational { fun: q, .. }) => {
                p == q
            }
            (Expression::Math { fun: p, .. }, Expression::Math { fun: q, .. }) => p == q,
            (
                Expression::As {
                    kind: p,
                    convert: pc,
                    ..
                },
                Expression::As {
                    kind: q,
                    convert: qc,
                    ..
                },
            ) => p == q && pc == qc,
            (Expression::ArrayLength(_), Expression::ArrayLength(_)) => true,
            _ => false,
        };
        if !payload {
            return false;
        }
        let (ox, oy) = (operands(ex), operands(ey));
        ox.len() == oy.len() && ox.iter().zip(&oy).all(|(&p, &q)| self.same(p, q))
    }

    /// Whether a load reads the same value wherever its address is the same: a buffer the
    /// kernel does not write, the loop's counter, or a dispatch-uniform local.
    fn readable(&self, load: Handle<Expression>) -> bool {
        let a = self.a;
        let Expression::Load { pointer } = a.function.expressions[load] else {
            return false;
        };
        if let Some(g) = a.root_global(pointer) {
            let var = &a.module.global_variables[g];
            return matches!(
                var.space,
                naga::AddressSpace::Uniform | naga::AddressSpace::Storage { .. }
            ) && !a.writes_global(g);
        }
        match a.local_root(pointer) {
            Some(v) => v == self.counter || a.is_dispatch_uniform(load),
            None => false,
        }
    }
}

/// The edits: drop every accumulator but the corner (updates, stores, guards holding nothing
/// else, declarations), and divide each id product's factor by the block's extent.
fn edits(
    a: &Analysis<'_>,
    accs: &[Acc],
    b: usize,
    reads: &[Vec<IdRead>; 2],
    t: [i64; 2],
) -> Option<Deblock> {
    let mut removed: Vec<ir::TextRange> = Vec::new();
    let mut remove = |r: ir::TextRange| removed.push(whole_line(a, &a.with_semicolon(&r)));
    let corner_guards: HashSet<usize> = accs[b].guards.iter().copied().collect();
    let mut dropped_guards: HashSet<usize> = HashSet::new();
    for (k, acc) in accs.iter().enumerate() {
        if k == b {
            continue;
        }
        remove(a.stmts[acc.update].span.clone()?);
        // The outermost guard that holds no store of the corner goes whole.
        match acc.guards.iter().find(|g| !corner_guards.contains(g)) {
            Some(&g) => {
                if dropped_guards.insert(g) {
                    remove(a.stmts[g].span.clone()?);
                }
            }
            None => remove(a.stmts[acc.store].span.clone()?),
        }
        let decl = a.local_span(acc.var)?;
        if !a.code()[decl.start..].starts_with("var") {
            return None;
        }
        remove(decl);
    }
    removed.sort_by_key(|r| r.start);
    removed.dedup();
    if removed.windows(2).any(|w| w[0].end > w[1].start) {
        return None;
    }
    let mut out: Vec<Edit> = removed
        .iter()
        .map(|r| Edit::replace(r.clone(), String::new()))
        .collect();
    for (d, rs) in reads.iter().enumerate() {
        if t[d] == 1 {
            continue;
        }
        for &(m, h, c) in rs {
            let r = a.expr_range(m)?;
            if removed.iter().any(|x| x.start <= r.start && r.end <= x.end) {
                continue;
            }
            let id = a.text(&a.expr_range(h)?).to_owned();
            let k = c / t[d];
            out.push(Edit::replace(
                r,
                if k == 1 {
                    format!("({id})")
                } else {
                    format!("({id} * {k}u)")
                },
            ));
        }
    }
    Some(Deblock {
        edits: out,
        scale: [t[0] as u64, t[1] as u64, 1],
    })
}

/// `for (..) { for (..) { x[i][j] = 0.0; } }` before anything else touches `x`, a local WGSL
/// started at zero → nothing: every store writes the value the element already holds. The nest
/// is counted with constant trip counts (so dropping it drops no endless loop), does nothing but
/// store zeros into `x`, and sits at the top level of the entry point.
pub(super) fn dead_zero_stores(a: &Analysis<'_>) -> Vec<Edit> {
    let f = a.function;
    let mut out = Vec::new();
    'loops: for (l, info) in a.loops.iter().enumerate() {
        if info.depth != 0 || !a.in_blocks_of(info.stmt, None) {
            continue;
        }
        let mut target = None;
        for s in std::iter::once(info.stmt).chain(a.loop_stmts(l)) {
            let st = &a.stmts[s];
            let ok = match *st.stmt {
                Statement::Emit(_) | Statement::Block(_) => true,
                Statement::Loop { .. } => a
                    .loops
                    .iter()
                    .find(|x| x.stmt == s)
                    .and_then(|x| x.for_loop.as_ref())
                    .is_some_and(|fl| a.const_trip_count(fl).is_some()),
                Statement::If { .. } | Statement::Break => st.loops.last().is_some_and(|&inner| {
                    a.loops[inner]
                        .for_loop
                        .as_ref()
                        .is_some_and(|fl| a.is_header_test(s, fl))
                }),
                Statement::Store { pointer, value } => {
                    // A counter's start or step, of the nest's own loops.
                    let counter = match a.function.expressions[pointer] {
                        Expression::LocalVariable(v) => a.loop_of_var(v).is_some_and(|inner| {
                            inner == l
                                || a.loops[inner]
                                    .parent
                                    .is_some_and(|_| a.in_loop(a.loops[inner].stmt, l))
                        }),
                        _ => false,
                    };
                    if counter {
                        true
                    } else if let Some(v) = a.local_root(pointer)
                        && a.is_zero_value(value)
                        && !a.is_loop_var(v)
                    {
                        *target.get_or_insert(v) == v
                    } else {
                        false
                    }
                }
                _ => false,
            };
            if !ok {
                continue 'loops;
            }
        }
        let Some(v) = target else {
            continue;
        };
        let local = &f.local_variables[v];
        if !local.init.is_none_or(|i| a.is_zero_value(i)) {
            continue;
        }
        // Nothing touches `x` before the nest: no store, no load, no call that could.
        let touches = |s: &ir::Stmt<'_>| match *s.stmt {
            Statement::Store { pointer, .. } => a.local_root(pointer) == Some(v),
            Statement::Call { .. } => true,
            _ => false,
        };
        let loads = f.expressions.iter().any(|(h, e)| {
            matches!(*e, Expression::Load { pointer } if a.local_root(pointer) == Some(v))
                && a.evaluated_at(h).is_none_or(|s| s < info.stmt)
        });
        if loads || a.stmts[..info.stmt].iter().any(touches) {
            continue;
        }
        if let Some(span) = info.span.clone() {
            out.push(Edit::replace(whole_line(a, &span), String::new()));
        }
    }
    out
}

/// The divisors of `g` from the largest; `[1]` for 0 (the axis is not read).
fn divisors(g: i64) -> Vec<i64> {
    if g == 0 {
        return vec![1];
    }
    (1..=g).rev().filter(|d| g % d == 0).collect()
}

/// `let x = e;` in the entry point with `x` never read and `e` free of effects (loads,
/// arithmetic, built-in functions: WGSL traps on none of them) → nothing. The de-blocking leaves
/// the loads of the accumulators it dropped behind this way (`let a07 = a[(row + 7) * K + k];`),
/// and an operator reading the loop sees loads that feed nothing.
pub(super) fn unused_lets(a: &Analysis<'_>) -> Vec<Edit> {
    let f = a.function;
    let mut used = vec![false; f.expressions.len()];
    for (_, e) in f.expressions.iter() {
        for o in operands(e) {
            used[o.index()] = true;
        }
    }
    for st in &a.stmts {
        ir::for_each_stmt_operand(st.stmt, &mut |h| used[h.index()] = true);
    }
    let mut out: Vec<Edit> = Vec::new();
    for (&h, _) in f.named_expressions.iter() {
        if used[h.index()] || !pure(a, h) {
            continue;
        }
        let Some((range, _)) = a.let_statement(h) else {
            continue;
        };
        let range = whole_line(a, &range);
        if out
            .iter()
            .all(|e| e.range.end <= range.start || range.end <= e.range.start)
        {
            out.push(Edit::replace(range, String::new()));
        }
    }
    out
}

/// Whether evaluating `h` has no effect and reads no result of one. naga evaluates `a && b` and
/// `a || b` into an unnamed temporary in an `if` that may call functions, so a read of such a
/// temporary counts as an effect: the `let`'s text holds those calls.
fn pure(a: &Analysis<'_>, h: Handle<Expression>) -> bool {
    let f = a.function;
    let mut ok = true;
    a.visit(h, &mut |e| {
        let temporary =
            matches!(*e, Expression::LocalVariable(v) if f.local_variables[v].name.is_none());
        ok &= !temporary
            && !crate::analysis::expr::is_effect_result(e)
            && !matches!(
                e,
                Expression::ImageLoad { .. }
                    | Expression::ImageSample { .. }
                    | Expression::ImageQuery { .. }
                    | Expression::RayQueryGetIntersection { .. }
                    | Expression::SubgroupBallotResult
                    | Expression::SubgroupOperationResult { .. }
            )
    });
    ok
}

#[cfg(test)]
mod tests;

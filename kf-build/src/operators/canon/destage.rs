//! Operand tiles staged through workgroup memory, read back as the loads they hold.
//!
//! A hand-tiled matrix multiply stages a slice of each operand through `var<workgroup>` memory:
//! every invocation of the workgroup loads one element (`a_tile[ly * 32u + lx] = select(0.0,
//! a[row * K + t * 32u + lx], ..)`), a barrier, every invocation multiplies a row of one tile by
//! a column of the other (`acc += a_tile[ly * 32u + i] * b_tile[i * 32u + lx]`), a barrier, next
//! slice. That is one spelling of the naive kernel `for (k < K) { acc += a[row * K + k] * b[k * N
//! + col]; }`, with the loads shared out among the invocations; `tile` proves its pattern on the
//! naive spelling and re-tiles it with the block shapes, register blocking and prefetching that
//! make it fast on the GPU at hand. So the staged spelling is written back as the naive one
//! ([`destage`]), and `tile` takes it from there like any other GEMM.
//!
//! **Proven from the IR** for an outer counted loop at the top of the entry point (no `return`
//! before it but under tests the same on the whole workgroup, so every lane of a workgroup that
//! runs it runs it), `t` from zero stepping by one (or by the tile depth `T`) while `t < N`:
//! - its body is, in order: writes of workgroup arrays, each `W[w(lid)] = v` or an `if` whose two
//!   branches write the same element (`if (c) { W[w] = v; } else { W[w] = 0.0; }`, read as
//!   `select(0.0, v, c)`), with `let`s between; a `workgroupBarrier()`; one counted loop `i` from
//!   zero stepping by one while `i < T` (`T` a literal) whose body only updates local variables
//!   declared before the outer loop; a `workgroupBarrier()`; nothing else;
//! - each array is written once per iteration, there and nowhere else, and read only in the inner
//!   loop; its element `w(lid)` is a mixed-radix flattening of the local id (`ly * 32u + lx`, or
//!   `W[ly][lx]` of a nested array, over a 32×32 workgroup): one invocation per element;
//! - every read `W[r]` that the updates use is an element some invocation wrote: `r` is affine
//!   in the local id and `i` with constant coefficients, and splits into lane coordinates each
//!   proven inside the workgroup for every value of `i` (`r = ly * 32u + i` is the lane `(i, ly)`);
//! - the written value `v` depends only on the writing lane's ids, `t`, and values the same on
//!   every lane (globals it loads, uniforms, the workgroup id, the global id along an axis where
//!   the writing lane is the reading one): it is printed for the reading invocation with the
//!   writing lane's coordinates in place of the local id;
//! - `t` and `i` appear only in integer expressions affine in `T·t + i` (or `t + i` when `t`
//!   steps by `T`): one counter `kfd_k = T·t + i` runs both loops, in the same order.
//!
//! **Zero padding.** A tile loaded as `select(0.0, x, c)` pads past the operand's edge. A
//! conjunct `kfd_k < K` of `c`, with the outer loop covering `K` (`N = (K + T - 1) / T`, or `t <
//! K` stepping by `T`), pads only the iterations `kfd_k ≥ K`; where every update adds a product
//! with such a factor, those iterations add zero, so the loop stops at `K` and the conjunct,
//! always true below it, is dropped. A conjunct the stores of every accumulated value are
//! guarded by (`row < M` where the output is stored under `row < M && col < N`) only changes
//! values no invocation stores, and is dropped too. Exact for finite operands: the same products
//! added in the same order (a padded `0 · ∞` would have been NaN; `-0.0 + 0.0` is `+0.0`).
//!
//! The arrays' declarations go with them when no other function names them, so the kernel no
//! longer cooperates through workgroup memory and the steps that read ids alone apply after.

use super::whole_line;
use crate::analysis::Skip;
use crate::analysis::ir::{Analysis, Cmp, Edit, ForLoop, IndexForm, Naming, Part, Poly, Var};
use crate::analysis::print::{Leaf, Leaves, Wgsl};
use naga::{
    AddressSpace, BinaryOperator, BuiltIn, Expression, GlobalVariable, Handle, LocalVariable,
    MathFunction, ScalarKind, Statement, TypeInner,
};
use std::collections::HashMap;

/// The counter the fused loop introduces (a source that already has the prefix is skipped).
const PREFIX: &str = "kfd_";
const COUNTER: &str = "kfd_k";

/// The edits de-staging every staged loop of `a` (see the module documentation).
pub(super) fn destage(a: &Analysis<'_>) -> Vec<Vec<Edit>> {
    if a.source.contains(PREFIX) {
        return Vec::new();
    }
    (0..a.loops.len())
        .filter_map(|id| staged(a, id).ok())
        .collect()
}

/// Why loop `outer` of `a` is not de-staged, or the edits that de-stage it.
pub(super) fn staged(a: &Analysis<'_>, outer: usize) -> Result<Vec<Edit>, Skip> {
    let no = |why: &str| Skip(why.to_owned());
    let lo = &a.loops[outer];
    let ft = lo
        .for_loop
        .as_ref()
        .ok_or_else(|| no("not a counted loop"))?;
    if lo.parent.is_some() || !a.in_blocks_of(lo.stmt, None) {
        return Err(no("the outer loop is not at the top of the entry point"));
    }
    // Whole workgroups may leave before the loop (`if (wid.z >= batch) { return; }`); a single
    // invocation may not, since the tiles need every lane.
    if (0..lo.stmt).any(|s| {
        matches!(a.stmts[s].stmt, Statement::Return { .. } | Statement::Kill)
            && !leaves_by_workgroup(a, s)
    }) {
        return Err(no("an invocation may leave before the loop"));
    }
    if a.entry
        .workgroup_size_overrides
        .is_some_and(|o| o.iter().any(Option::is_some))
    {
        return Err(no("the workgroup size is an override"));
    }
    let wg = a.entry.workgroup_size;
    let inners: Vec<usize> = (0..a.loops.len())
        .filter(|&l| a.loops[l].parent == Some(outer))
        .collect();
    let [inner] = inners[..] else {
        return Err(no("the outer loop does not hold exactly one loop"));
    };
    if a.loops.iter().any(|l| l.parent == Some(inner)) {
        return Err(no("the inner loop holds a loop"));
    }
    let fi = a.loops[inner]
        .for_loop
        .as_ref()
        .ok_or_else(|| no("the inner loop is not counted"))?;
    let depth = counted_from_zero(a, fi, None)
        .ok_or_else(|| no("the inner loop is not `i < T` from zero by one with `T` a literal"))?;
    let fusion = match counted_from_zero(a, ft, Some(depth)) {
        Some(1) => Fusion::Tiles,
        Some(_) => Fusion::Steps,
        None => {
            return Err(no(
                "the outer loop is not `t < N` from zero by 1 or by the depth",
            ));
        }
    };
    let n = ft.bounds[0].bound;
    if !a.is_dispatch_uniform(n) {
        return Err(no("the outer bound is not uniform"));
    }
    if ft.var_ty != fi.var_ty {
        return Err(no("the two counters have different types"));
    }
    for (f, l) in [(ft, outer), (fi, inner)] {
        if a.loads_of(f.var).iter().any(|&x| !a.expr_in_loop(x, l)) {
            return Err(no("a counter is read after its loop"));
        }
    }
    if a.accesses
        .iter()
        .any(|x| x.write && x.space != AddressSpace::Function && x.stmt < lo.stmt)
    {
        return Err(no("memory is written before the loop"));
    }

    // The outer body: writers, barrier, the inner loop, barrier.
    let mut writers: Vec<Writer> = Vec::new();
    let mut phase = 0;
    for s in body(a, lo.stmt) {
        let st = a.stmts[s].stmt;
        let ok = match *st {
            Statement::Emit(_) => true,
            _ if s == ft.step_stmt || a.is_header_test(s, ft) => true,
            Statement::Store { pointer, .. } if is_local(a, pointer, fi.var) => phase < 2,
            Statement::ControlBarrier(b) if b.contains(naga::Barrier::WORK_GROUP) => {
                phase += 1;
                phase == 1 || phase == 3
            }
            Statement::Loop { .. } if s == a.loops[inner].stmt => {
                phase += 1;
                phase == 2
            }
            _ if phase > 0 => false,
            _ if a.is_short_circuit_if(st) => true,
            _ => {
                writers.extend(writers_at(a, s)?);
                true
            }
        };
        if !ok {
            return Err(Skip(format!(
                "the outer loop is not writes, barrier, loop, barrier (statement at {:?})",
                a.stmts[s].span
            )));
        }
    }
    if phase != 3 || writers.is_empty() {
        return Err(no("the outer loop is not writes, barrier, loop, barrier"));
    }
    for w in &writers {
        if writers.iter().filter(|x| x.global == w.global).count() > 1 {
            return Err(no("an array is written twice"));
        }
        for x in a.accesses.iter().filter(|x| x.global == w.global) {
            if x.write && x.stmt != w.store && w.other_store.is_none_or(|o| o != x.stmt) {
                return Err(no("an array is written elsewhere"));
            }
            if !x.write && !a.in_loop(x.stmt, inner) {
                return Err(no("an array is read outside the inner loop"));
            }
        }
        if a.accesses
            .iter()
            .any(|x| x.global == w.global && x.write && a.in_loop(x.stmt, inner))
        {
            return Err(no("an array is written in the inner loop"));
        }
    }

    // The inner body: updates of locals declared before the outer loop.
    let mut updates: Vec<(Handle<LocalVariable>, Handle<Expression>)> = Vec::new();
    for s in body(a, a.loops[inner].stmt) {
        match *a.stmts[s].stmt {
            Statement::Emit(_) => {}
            _ if s == fi.step_stmt || a.is_header_test(s, fi) => {}
            Statement::Store { pointer, value } => match a.function.expressions[pointer] {
                Expression::LocalVariable(v)
                    if v != ft.var && v != fi.var && !a.declared_in_loop(v, outer) =>
                {
                    updates.push((v, value))
                }
                _ => return Err(no("the inner loop stores to something else than a local")),
            },
            _ => return Err(no("the inner loop does more than update locals")),
        }
    }
    if updates.is_empty() {
        return Err(no("the inner loop updates nothing"));
    }

    // Every tile read the updates use, with the lane that wrote it.
    let lanes_of = |w: &Writer| mixed_radix(&w.form, wg);
    let mut reads: Vec<Read> = Vec::new();
    for &(_, value) in &updates {
        let mut loads = Vec::new();
        collect_loads(a, value, &mut loads);
        for (load, pointer) in loads {
            let Some(g) = a.root_global(pointer) else {
                continue;
            };
            if a.module.global_variables[g].space != AddressSpace::WorkGroup {
                continue;
            }
            let w = writers.iter().position(|w| w.global == g).ok_or_else(|| {
                no("the inner loop reads workgroup memory the loop does not write")
            })?;
            let axes = lanes_of(&writers[w])
                .ok_or_else(|| no("an array's element is not one per invocation"))?;
            let (_, r) = flat_form(a, pointer).ok_or_else(|| no("a tile read is not affine"))?;
            let lanes = split_lanes(&r, &axes, wg, fi.var, depth)
                .ok_or_else(|| no("a tile read is not an element some invocation wrote"))?;
            if !reads.iter().any(|x| x.load == load) {
                reads.push(Read {
                    load,
                    writer: w,
                    lanes,
                });
            }
        }
    }
    if reads.is_empty() {
        return Err(no("the updates read no tile"));
    }

    let plan = Plan {
        t: ft.var,
        i: fi.var,
        depth,
        fusion,
        unsigned: !matches!(
            a.module.types[fi.var_ty].inner,
            TypeInner::Scalar(s) if s.kind == ScalarKind::Sint
        ),
        accumulators: updates.iter().map(|(v, _)| *v).collect(),
    };

    // Zero padding: which conjuncts go, and where the loop stops.
    let cover = cover(a, &plan, n);
    let guards = guard_conjuncts(a, &plan, outer);
    let mut range_of: HashMap<Handle<Expression>, Vec<Handle<Expression>>> = HashMap::new();
    for r in &reads {
        let w = &writers[r.writer];
        let ctx = Ctx::writer(a, &plan, &r.lanes);
        let mut ranged = Vec::new();
        if let Value::Select {
            condition, reject, ..
        } = w.value
            && a.is_zero_value(reject)
        {
            for c in conjuncts(a, condition) {
                if let Some(k) = range_bound(a, &ctx, c)
                    && cover.as_ref().is_some_and(|p| {
                        a.index_form(k)
                            .is_some_and(|f| f.is_uniform() && f.offset == *p)
                    })
                {
                    ranged.push(c);
                }
            }
        }
        range_of.insert(r.load, ranged);
    }
    let stops_at_k = updates.iter().all(|&(v, value)| {
        added_term(a, v, value).is_some_and(|factors| {
            factors
                .iter()
                .any(|f| range_of.get(f).is_some_and(|r| !r.is_empty()))
        })
    });
    let bound_text = if stops_at_k {
        let first = reads
            .iter()
            .find_map(|r| range_of[&r.load].first().copied())
            .ok_or_else(|| no("no range conjunct"))?;
        let Expression::Binary { right, .. } = a.function.expressions[first] else {
            return Err(no("no range conjunct"));
        };
        a.expr_wgsl(right, Naming::Inline)
            .ok_or_else(|| no("the padding bound does not print"))?
    } else {
        let nt = a
            .expr_wgsl(n, Naming::Inline)
            .ok_or_else(|| no("the outer bound does not print"))?;
        let t = plan.literal(i64::from(depth));
        match fusion {
            Fusion::Tiles => format!("({t} * {nt})"),
            Fusion::Steps => format!(
                "((({nt} + {}) / {t}) * {t})",
                plan.literal(i64::from(depth) - 1)
            ),
        }
    };

    // The writers' values as each read sees them.
    let mut texts: HashMap<Handle<Expression>, String> = HashMap::new();
    for r in &reads {
        let w = &writers[r.writer];
        let ctx = Ctx::writer(a, &plan, &r.lanes);
        let p = printer(a, ctx);
        let text = match w.value {
            Value::Plain(v) => p.print(v)?,
            Value::Select {
                condition,
                accept,
                reject,
            } => {
                let all = conjuncts(a, condition);
                let mut kept = Vec::new();
                for c in all {
                    let dropped_range = stops_at_k && range_of[&r.load].contains(&c);
                    let text = p.print(c)?;
                    if !dropped_range && !guards.contains(&text) {
                        kept.push(text);
                    }
                }
                let value = p.print(accept)?;
                if kept.is_empty() {
                    value
                } else {
                    format!(
                        "select({}, {value}, {})",
                        p.print(reject)?,
                        kept.join(" && ")
                    )
                }
            }
        };
        texts.insert(r.load, format!("({text})"));
    }

    // The fused loop.
    let span = lo.span.clone().ok_or_else(|| no("the loop has no span"))?;
    let indent = a.indent_at(span.start);
    let ty = a.type_name(fi.var_ty);
    let reader = printer(a, Ctx::reader(a, &plan, &texts));
    let mut text = format!(
        "for (var {COUNTER}: {ty} = {}; {COUNTER} < {bound_text}; {COUNTER} = {COUNTER} + {}) {{\n",
        plan.literal(0),
        plan.literal(1)
    );
    for &(v, value) in &updates {
        let name = a.function.local_variables[v]
            .name
            .clone()
            .ok_or_else(|| no("an accumulator has no name"))?;
        text.push_str(&format!("{indent}    {name} = {};\n", reader.print(value)?));
    }
    text.push_str(&format!("{indent}}}"));
    let mut edits = vec![Edit::replace(span, text)];
    for w in &writers {
        if named_elsewhere(a, w.global) {
            continue;
        }
        if let Some(decl) =
            crate::analysis::text::range(a.module.global_variables.get_span(w.global))
        {
            edits.push(Edit::replace(whole_line(a, &a.with_semicolon(&decl)), ""));
        }
    }
    Ok(edits)
}

/// How the two counters make one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fusion {
    /// `t` counts tiles: `k = T·t + i`.
    Tiles,
    /// `t` steps by the depth: `k = t + i`.
    Steps,
}

/// What the printers need of the loop pair.
struct Plan {
    t: Handle<LocalVariable>,
    i: Handle<LocalVariable>,
    depth: u32,
    fusion: Fusion,
    unsigned: bool,
    accumulators: Vec<Handle<LocalVariable>>,
}

impl Plan {
    /// An integer literal of the counters' type.
    fn literal(&self, k: i64) -> String {
        if self.unsigned {
            format!("{k}u")
        } else {
            format!("{k}i")
        }
    }

    /// Whether `form` reads the counters only as `k = T·t + i` (or `t + i`).
    fn fuses(&self, form: &IndexForm) -> bool {
        let ct = form.coeff(Var::Loop(self.t));
        let ci = form.coeff(Var::Loop(self.i));
        match self.fusion {
            Fusion::Tiles => ct == ci.scale(i64::from(self.depth)),
            Fusion::Steps => ct == ci,
        }
    }

    fn reads_counter(&self, form: &IndexForm) -> bool {
        form.vars()
            .any(|v| v == Var::Loop(self.t) || v == Var::Loop(self.i))
    }
}

/// One tile write.
struct Writer {
    global: Handle<GlobalVariable>,
    /// The element written, over the local id.
    form: IndexForm,
    value: Value,
    /// The store statement (of the accept branch, for an `if`).
    store: usize,
    /// The reject branch's store.
    other_store: Option<usize>,
}

/// What a writer stores.
#[derive(Clone, Copy)]
enum Value {
    Plain(Handle<Expression>),
    Select {
        condition: Handle<Expression>,
        accept: Handle<Expression>,
        reject: Handle<Expression>,
    },
}

/// One read of a tile element, and the coordinates of the lane that wrote it.
struct Read {
    load: Handle<Expression>,
    writer: usize,
    lanes: [IndexForm; 3],
}

/// The statements of the block of compound statement `p` (its body for a loop), in order, with
/// naga's `Block` wrappers flattened.
fn body(a: &Analysis<'_>, p: usize) -> Vec<usize> {
    let mut out = Vec::new();
    for s in (p + 1..a.stmts.len()).filter(|&s| a.stmts[s].parent == Some(p)) {
        match a.stmts[s].stmt {
            Statement::Block(_) => out.extend(body(a, s)),
            _ => out.push(s),
        }
    }
    out
}

/// The statements of part `part` of compound statement `p` (a branch of an `if`), in order,
/// with naga's `Block` wrappers flattened.
fn part_body(a: &Analysis<'_>, p: usize, part: Part) -> Vec<usize> {
    let mut out = Vec::new();
    for s in
        (p + 1..a.stmts.len()).filter(|&s| a.stmts[s].parent == Some(p) && a.stmts[s].part == part)
    {
        match a.stmts[s].stmt {
            Statement::Block(_) => out.extend(body(a, s)),
            _ => out.push(s),
        }
    }
    out
}

/// Whether statement `s` runs for every invocation of a workgroup or for none: every `if`
/// around it tests a value the same on the whole workgroup, and nothing else encloses it.
fn leaves_by_workgroup(a: &Analysis<'_>, mut s: usize) -> bool {
    while let Some(p) = a.stmts[s].parent {
        match *a.stmts[p].stmt {
            Statement::Block(_) => {}
            Statement::If { condition, .. } if a.is_workgroup_uniform(condition) => {}
            _ => return false,
        }
        s = p;
    }
    true
}

/// Whether `s` is loop `f`'s exit test.
fn is_local(a: &Analysis<'_>, pointer: Handle<Expression>, v: Handle<LocalVariable>) -> bool {
    matches!(a.function.expressions[pointer], Expression::LocalVariable(w) if w == v)
}

/// For a loop from zero by a literal step while `var < bound`: the bound (when `step` is `None`,
/// the step must be 1 and the bound a literal) or the step (when `step` is `Some(T)`, the step
/// must be 1 or `T`).
fn counted_from_zero(a: &Analysis<'_>, f: &ForLoop, step: Option<u32>) -> Option<u32> {
    if f.decreasing || f.init.is_some_and(|h| a.const_int(h) != Some(0)) {
        return None;
    }
    let [b] = f.bounds.as_slice() else {
        return None;
    };
    if b.cmp != Cmp::Lt || b.offset.is_some() {
        return None;
    }
    let by = a.const_int(f.step)?;
    match step {
        None if by == 1 => u32::try_from(a.const_int(b.bound)?).ok().filter(|&t| t > 0),
        None => None,
        Some(t) if by == 1 || by == i64::from(t) => u32::try_from(by).ok(),
        Some(_) => None,
    }
}

/// A store to a workgroup array: the array, the element (flat), the pointer and the value.
type TileStore = (
    Handle<GlobalVariable>,
    IndexForm,
    Handle<Expression>,
    Handle<Expression>,
);

/// The tile writes at statement `s`: a store to a workgroup array, or an `if` whose branches
/// store to the same elements (`let`s between).
fn writers_at(a: &Analysis<'_>, s: usize) -> Result<Vec<Writer>, Skip> {
    let no = |why: &str| Skip(why.to_owned());
    let store_of = |s: usize| -> Option<TileStore> {
        let Statement::Store { pointer, value } = *a.stmts[s].stmt else {
            return None;
        };
        let (g, form) = flat_form(a, pointer)?;
        (a.module.global_variables[g].space == AddressSpace::WorkGroup)
            .then_some((g, form, pointer, value))
    };
    match *a.stmts[s].stmt {
        Statement::Store { .. } => {
            let (global, form, _, value) =
                store_of(s).ok_or_else(|| no("the loop writes something else than a tile"))?;
            // `W[w] = select(0.0, v, c)` pads like the `if`.
            let value = match a.function.expressions[value] {
                Expression::Select {
                    condition,
                    accept,
                    reject,
                } if matches!(a.type_of(condition), TypeInner::Scalar(_)) => Value::Select {
                    condition,
                    accept,
                    reject,
                },
                _ => Value::Plain(value),
            };
            Ok(vec![Writer {
                global,
                form,
                value,
                store: s,
                other_store: None,
            }])
        }
        Statement::If { condition, .. } => {
            // Each branch: `let`s and tile stores, the same elements in both.
            let not_padded = || no("an `if` in the loop is not a padded load");
            let branch = |part: Part| -> Option<Vec<(usize, TileStore)>> {
                let mut stores = Vec::new();
                for x in part_body(a, s, part) {
                    match a.stmts[x].stmt {
                        Statement::Emit(_) => {}
                        st if a.is_short_circuit_if(st) => {}
                        _ => stores.push((x, store_of(x)?)),
                    }
                }
                Some(stores)
            };
            let yes = branch(Part::Accept).ok_or_else(not_padded)?;
            let no_ = branch(Part::Reject).ok_or_else(not_padded)?;
            if yes.is_empty() || yes.len() != no_.len() {
                return Err(not_padded());
            }
            let mut out = Vec::new();
            for &(s1, (g1, ref f1, p1, v1)) in &yes {
                let mut matching = no_.iter().filter(|(_, (g2, ..))| *g2 == g1);
                let (Some(&(s2, (_, ref f2, p2, v2))), None) = (matching.next(), matching.next())
                else {
                    return Err(no("the branches of a padded load write different arrays"));
                };
                if f1 != f2 || a.expr_wgsl(p1, Naming::Inline) != a.expr_wgsl(p2, Naming::Inline) {
                    return Err(no("the branches of a padded load write different elements"));
                }
                out.push(Writer {
                    global: g1,
                    form: f1.clone(),
                    value: Value::Select {
                        condition,
                        accept: v1,
                        reject: v2,
                    },
                    store: s1,
                    other_store: Some(s2),
                });
            }
            Ok(out)
        }
        _ => Err(no("the loop does something else than write tiles")),
    }
}

/// The global a pointer into an array of scalars reaches, and the flat element index as an
/// affine form (`W[ly][lx]` of `array<array<f32, 32>, 32>` is `32·ly + lx`).
fn flat_form(
    a: &Analysis<'_>,
    pointer: Handle<Expression>,
) -> Option<(Handle<GlobalVariable>, IndexForm)> {
    let mut chain = Vec::new();
    let mut p = pointer;
    let g = loop {
        match a.function.expressions[p] {
            Expression::Access { base, index } => {
                chain.push(a.index_form(index)?);
                p = base;
            }
            Expression::AccessIndex { base, index } => {
                chain.push(IndexForm {
                    terms: Vec::new(),
                    offset: Poly::constant(i64::from(index)),
                });
                p = base;
            }
            Expression::GlobalVariable(g) => break g,
            _ => return None,
        }
    };
    let types = &a.module.types;
    let mut ty = a.module.global_variables[g].ty;
    let mut form = IndexForm::default();
    for f in chain.into_iter().rev() {
        let TypeInner::Array {
            base,
            size: naga::ArraySize::Constant(_),
            ..
        } = types[ty].inner
        else {
            return None;
        };
        let stride = scalars(a.module, base)?;
        form = form.add(&f.scale(&Poly::constant(stride)));
        ty = base;
    }
    matches!(types[ty].inner, TypeInner::Scalar(_)).then_some((g, form))
}

/// How many scalars a value of type `ty` holds (scalars and arrays of them only).
fn scalars(module: &naga::Module, ty: Handle<naga::Type>) -> Option<i64> {
    match module.types[ty].inner {
        TypeInner::Scalar(_) => Some(1),
        TypeInner::Array {
            base,
            size: naga::ArraySize::Constant(n),
            ..
        } => Some(i64::from(n.get()) * scalars(module, base)?),
        _ => None,
    }
}

/// The axes of a one-element-per-invocation write, `(axis, coefficient)` from the largest
/// coefficient down, when the element is a mixed-radix flattening of the local id.
fn mixed_radix(form: &IndexForm, wg: [u32; 3]) -> Option<Vec<(usize, i64)>> {
    if !form.offset.is_zero() {
        return None;
    }
    let mut axes = Vec::new();
    for (v, c) in &form.terms {
        match *v {
            Var::Builtin(BuiltIn::LocalInvocationId, d) if d < 3 => {
                if wg[d as usize] > 1 {
                    axes.push((d as usize, c.as_constant()?));
                }
            }
            _ => return None,
        }
    }
    if axes.is_empty() || (0..3).any(|d| wg[d] > 1 && !axes.iter().any(|(x, _)| *x == d)) {
        return None;
    }
    axes.sort_by_key(|(_, c)| *c);
    let mut expect = 1;
    for &(d, c) in &axes {
        if c != expect {
            return None;
        }
        expect = c * i64::from(wg[d]);
    }
    axes.reverse();
    Some(axes)
}

/// The lane `(x, y, z)` that wrote element `r`, each coordinate an affine form over the reader's
/// local id and the inner counter `i` (`< depth`), proven inside the workgroup for every value.
fn split_lanes(
    r: &IndexForm,
    axes: &[(usize, i64)],
    wg: [u32; 3],
    i: Handle<LocalVariable>,
    depth: u32,
) -> Option<[IndexForm; 3]> {
    let max_of = |v: Var| -> Option<i64> {
        match v {
            Var::Builtin(BuiltIn::LocalInvocationId, d) if d < 3 => {
                Some(i64::from(wg[d as usize]) - 1)
            }
            Var::Loop(l) if l == i => Some(i64::from(depth) - 1),
            _ => None,
        }
    };
    let mut rest: Vec<(Var, i64)> = Vec::new();
    for (v, c) in &r.terms {
        let k = c.as_constant()?;
        max_of(*v)?;
        if k < 0 {
            return None;
        }
        if k > 0
            && !matches!(v, Var::Builtin(BuiltIn::LocalInvocationId, d) if wg[*d as usize] == 1)
        {
            rest.push((*v, k));
        }
    }
    let mut off = r.offset.as_constant()?;
    if off < 0 {
        return None;
    }
    let mut lanes: [IndexForm; 3] = std::array::from_fn(|d| IndexForm {
        terms: vec![(
            Var::Builtin(BuiltIn::LocalInvocationId, d as u32),
            Poly::constant(1),
        )],
        offset: Poly::default(),
    });
    for &(d, c) in axes {
        let mut lane = IndexForm {
            terms: Vec::new(),
            offset: Poly::constant(off / c),
        };
        let mut max = off / c;
        off %= c;
        let mut kept = Vec::new();
        for (v, k) in rest {
            if k % c == 0 {
                lane.terms.push((v, Poly::constant(k / c)));
                max += (k / c) * max_of(v)?;
            } else {
                kept.push((v, k));
            }
        }
        rest = kept;
        if max >= i64::from(wg[d]) {
            return None;
        }
        lanes[d] = lane;
    }
    (rest.is_empty() && off == 0).then_some(lanes)
}

/// The `Load`s of globals `h` reads (through lets), with their pointers.
fn collect_loads(
    a: &Analysis<'_>,
    h: Handle<Expression>,
    out: &mut Vec<(Handle<Expression>, Handle<Expression>)>,
) {
    a.visit_handles(h, &mut |x, e| match *e {
        Expression::Load { pointer } if a.root_global(pointer).is_some() => {
            out.push((x, pointer));
            false
        }
        _ => true,
    });
}

/// The conjuncts of a condition, through `&&` and naga's lowering of it.
fn conjuncts(a: &Analysis<'_>, h: Handle<Expression>) -> Vec<Handle<Expression>> {
    match a.function.expressions[h] {
        Expression::Binary {
            op: BinaryOperator::LogicalAnd,
            left,
            right,
        } => {
            let mut out = conjuncts(a, left);
            out.extend(conjuncts(a, right));
            out
        }
        _ => match a.short_circuit(h) {
            Some((BinaryOperator::LogicalAnd, l, r)) => {
                let mut out = conjuncts(a, l);
                out.extend(conjuncts(a, r));
                out
            }
            _ => vec![h],
        },
    }
}

/// For a conjunct `x < K` with `x` the fused counter (as the writing lane of `ctx` computes it)
/// and `K` uniform: `K`.
fn range_bound(
    a: &Analysis<'_>,
    ctx: &Ctx<'_, '_>,
    c: Handle<Expression>,
) -> Option<Handle<Expression>> {
    let Expression::Binary {
        op: BinaryOperator::Less,
        left,
        right,
    } = a.function.expressions[c]
    else {
        return None;
    };
    if !a.is_dispatch_uniform(right) {
        return None;
    }
    let form = ctx.substituted(&a.index_form(left)?).ok()?;
    if !ctx.plan.fuses(&form) || !form.offset.is_zero() {
        return None;
    }
    let counters = form
        .terms
        .iter()
        .filter(|(v, _)| *v != Var::Loop(ctx.plan.t))
        .collect::<Vec<_>>();
    match counters.as_slice() {
        [(v, k)] if *v == Var::Loop(ctx.plan.i) && k.as_constant() == Some(1) => Some(right),
        _ => None,
    }
}

/// What the fused loop must reach: `K` with `T·N ≥ K` (`N = (K + T - 1) / T`), or `K` of
/// `t < K` stepping by `T`.
fn cover(a: &Analysis<'_>, plan: &Plan, n: Handle<Expression>) -> Option<Poly> {
    let mut n = n;
    while let Expression::Load { pointer } = a.function.expressions[n]
        && let Expression::LocalVariable(v) = a.function.expressions[pointer]
    {
        n = a.single_value(v)?;
    }
    match plan.fusion {
        Fusion::Steps => a
            .index_form(n)
            .filter(IndexForm::is_uniform)
            .map(|f| f.offset),
        Fusion::Tiles => {
            let Expression::Binary {
                op: BinaryOperator::Divide,
                left,
                right,
            } = a.function.expressions[n]
            else {
                return None;
            };
            if a.const_int(right) != Some(i64::from(plan.depth)) {
                return None;
            }
            let num = a.index_form(left).filter(IndexForm::is_uniform)?;
            Some(num.offset.add(&Poly::constant(1 - i64::from(plan.depth))))
        }
    }
}

/// The conjuncts (printed) that guard every use of every accumulator after the loop.
fn guard_conjuncts(a: &Analysis<'_>, plan: &Plan, outer: usize) -> Vec<String> {
    let f = a.function;
    // An accumulator reached other than by loads and stores (a pointer passed on) is not traced.
    let is_acc = |h: Handle<Expression>| matches!(f.expressions[h], Expression::LocalVariable(v) if plan.accumulators.contains(&v));
    if a.stmts.iter().any(|s| match s.stmt {
        Statement::Call { arguments, .. } => arguments.iter().any(|&x| is_acc(x)),
        Statement::Store { value, .. } => is_acc(*value),
        _ => false,
    }) {
        return Vec::new();
    }
    for (_, e) in f.expressions.iter() {
        if matches!(e, Expression::Load { .. }) {
            continue;
        }
        let mut escapes = false;
        crate::analysis::ir::for_each_operand(e, &mut |o| escapes |= is_acc(o));
        if escapes {
            return Vec::new();
        }
    }
    let mut common: Option<Vec<String>> = None;
    for &v in &plan.accumulators {
        for &l in a.loads_of(v) {
            if a.expr_in_loop(l, outer) {
                continue;
            }
            let Some(mut s) = a.evaluated_at(l) else {
                return Vec::new();
            };
            let mut here = Vec::new();
            while let Some(p) = a.stmts[s].parent {
                if a.stmts[s].part == Part::Accept
                    && let Statement::If { condition, .. } = *a.stmts[p].stmt
                {
                    here.extend(
                        conjuncts(a, condition)
                            .into_iter()
                            .filter_map(|c| a.expr_wgsl(c, Naming::Inline)),
                    );
                }
                s = p;
            }
            common = Some(match common {
                None => here,
                Some(c) => c.into_iter().filter(|x| here.contains(x)).collect(),
            });
        }
    }
    common.unwrap_or_default()
}

/// For an update `acc = acc + x₁·x₂·…` (or `fma(x₁, x₂, acc)`): the factors.
fn added_term(
    a: &Analysis<'_>,
    acc: Handle<LocalVariable>,
    value: Handle<Expression>,
) -> Option<Vec<Handle<Expression>>> {
    let f = a.function;
    let is_acc = |h: Handle<Expression>| matches!(f.expressions[h], Expression::Load { pointer } if is_local(a, pointer, acc));
    let mut factors = Vec::new();
    match f.expressions[value] {
        Expression::Binary {
            op: BinaryOperator::Add,
            left,
            right,
        } => {
            let term = if is_acc(left) {
                right
            } else if is_acc(right) {
                left
            } else {
                return None;
            };
            product(a, term, &mut factors);
        }
        Expression::Math {
            fun: MathFunction::Fma,
            arg,
            arg1: Some(x),
            arg2: Some(c),
            ..
        } if is_acc(c) => {
            product(a, arg, &mut factors);
            product(a, x, &mut factors);
        }
        _ => return None,
    }
    Some(factors)
}

fn product(a: &Analysis<'_>, h: Handle<Expression>, out: &mut Vec<Handle<Expression>>) {
    match a.function.expressions[h] {
        Expression::Binary {
            op: BinaryOperator::Multiply,
            left,
            right,
        } => {
            product(a, left, out);
            product(a, right, out);
        }
        _ => out.push(h),
    }
}

/// Whether a function other than the entry point names global `g`.
fn named_elsewhere(a: &Analysis<'_>, g: Handle<GlobalVariable>) -> bool {
    let names = |f: &naga::Function| {
        f.expressions
            .iter()
            .any(|(_, e)| matches!(e, Expression::GlobalVariable(x) if *x == g))
    };
    a.module.functions.iter().any(|(_, f)| names(f))
        || a.module
            .entry_points
            .iter()
            .any(|e| e.name != a.entry.name && names(&e.function))
}

fn printer<'r, 'a>(a: &'r Analysis<'a>, ctx: Ctx<'r, 'a>) -> Wgsl<'r, Ctx<'r, 'a>> {
    Wgsl {
        module: a.module,
        func: a.function,
        info: a.info,
        leaves: ctx,
        max_depth: 64,
    }
}

/// The leaves of the fused loop's text: in the reader, the tile reads are the writers' values;
/// in a writer, the local id is the writing lane; under an integer expression proven affine in
/// the fused counter, `t` is zero and `i` the fused counter.
#[derive(Clone, Copy)]
struct Ctx<'r, 'a> {
    a: &'r Analysis<'a>,
    plan: &'r Plan,
    /// The writing lane, in a writer.
    lanes: Option<&'r [IndexForm; 3]>,
    /// The writers' values by the load that reads them, in the reader.
    texts: Option<&'r HashMap<Handle<Expression>, String>>,
    /// Inside an integer expression proven to read the counters as the fused one.
    proven: bool,
}

impl<'r, 'a> Ctx<'r, 'a> {
    fn writer(a: &'r Analysis<'a>, plan: &'r Plan, lanes: &'r [IndexForm; 3]) -> Self {
        Ctx {
            a,
            plan,
            lanes: Some(lanes),
            texts: None,
            proven: false,
        }
    }

    fn reader(
        a: &'r Analysis<'a>,
        plan: &'r Plan,
        texts: &'r HashMap<Handle<Expression>, String>,
    ) -> Self {
        Ctx {
            a,
            plan,
            lanes: None,
            texts: Some(texts),
            proven: false,
        }
    }

    fn identity(&self, d: usize) -> bool {
        self.lanes.is_none_or(|l| {
            l[d].terms
                == [(
                    Var::Builtin(BuiltIn::LocalInvocationId, d as u32),
                    Poly::constant(1),
                )]
                && l[d].offset.is_zero()
        })
    }

    /// `form` with the local id replaced by the writing lane; refused where it reads a value
    /// that differs between the two lanes and cannot be replaced.
    fn substituted(&self, form: &IndexForm) -> Result<IndexForm, Skip> {
        let Some(lanes) = self.lanes else {
            return Ok(form.clone());
        };
        let mut out = IndexForm {
            terms: Vec::new(),
            offset: form.offset.clone(),
        };
        for (v, c) in &form.terms {
            let part = match *v {
                Var::Builtin(BuiltIn::LocalInvocationId, d) if d < 3 => lanes[d as usize].scale(c),
                Var::Builtin(BuiltIn::GlobalInvocationId, d)
                    if d < 3 && !self.identity(d as usize) =>
                {
                    return Err(Skip(
                        "a tile's value reads the global id along a re-mapped axis".into(),
                    ));
                }
                Var::Builtin(BuiltIn::LocalInvocationIndex, _)
                    if !(0..3).all(|d| self.identity(d)) =>
                {
                    return Err(Skip("a tile's value reads the local index".into()));
                }
                Var::Digit(..) => return Err(Skip("a digit".into())),
                _ => IndexForm {
                    terms: vec![(*v, c.clone())],
                    offset: Poly::default(),
                },
            };
            out = out.add(&part);
        }
        Ok(out)
    }

    fn lane_text(&self, d: usize) -> Result<String, Skip> {
        let a = self.a;
        let lanes = self.lanes.expect("a writer");
        let lid = a
            .builtin(BuiltIn::LocalInvocationId)
            .ok_or_else(|| Skip("no local id".into()))?;
        let mut parts = Vec::new();
        for (v, c) in &lanes[d].terms {
            let k = c
                .as_constant()
                .ok_or_else(|| Skip("a lane coefficient".into()))?;
            let x = match *v {
                Var::Builtin(BuiltIn::LocalInvocationId, e) => {
                    format!("{}.{}", lid.name, ["x", "y", "z"][e as usize])
                }
                Var::Loop(l) if l == self.plan.i && self.proven => {
                    if self.plan.unsigned {
                        COUNTER.to_owned()
                    } else {
                        format!("u32({COUNTER})")
                    }
                }
                _ => {
                    return Err(Skip(
                        "a lane reads the counter outside a fused index".into(),
                    ));
                }
            };
            parts.push(if k == 1 { x } else { format!("({k}u * {x})") });
        }
        let off = lanes[d].offset.as_constant().unwrap_or(0);
        if off != 0 || parts.is_empty() {
            parts.push(format!("{off}u"));
        }
        Ok(format!("({})", parts.join(" + ")))
    }
}

impl Leaves for Ctx<'_, '_> {
    fn leaf(&self, w: &Wgsl<'_, Self>, h: Handle<Expression>, depth: u32) -> Leaf {
        let a = self.a;
        let f = a.function;
        let refuse = |why: &str| Some(Err(Skip(why.to_owned())));
        if !self.proven
            && matches!(a.type_of(h), TypeInner::Scalar(s) if matches!(s.kind, ScalarKind::Uint | ScalarKind::Sint))
            && let Some(form) = a.index_form(h)
        {
            let form = match self.substituted(&form) {
                Ok(f) => f,
                Err(e) => return Some(Err(e)),
            };
            if self.plan.reads_counter(&form) {
                if !self.plan.fuses(&form) {
                    return refuse("a counter is read other than as the fused one");
                }
                let inner = Wgsl {
                    module: w.module,
                    func: w.func,
                    info: w.info,
                    leaves: Ctx {
                        proven: true,
                        ..*self
                    },
                    max_depth: w.max_depth,
                };
                return Some(inner.at(h, depth));
            }
        }
        match f.expressions[h] {
            Expression::Load { pointer } => match f.expressions[pointer] {
                Expression::LocalVariable(v) if v == self.plan.t => {
                    if self.proven {
                        Some(Ok(self.plan.literal(0)))
                    } else {
                        refuse("the outer counter is read other than in an index")
                    }
                }
                Expression::LocalVariable(v) if v == self.plan.i => {
                    if self.proven {
                        Some(Ok(COUNTER.to_owned()))
                    } else {
                        refuse("the inner counter is read other than in an index")
                    }
                }
                Expression::LocalVariable(v) => {
                    if let Some((op, l, r)) = a.short_circuit(h) {
                        let op = if op == BinaryOperator::LogicalAnd {
                            "&&"
                        } else {
                            "||"
                        };
                        let (l, r) = match (w.at(l, depth + 1), w.at(r, depth + 1)) {
                            (Ok(l), Ok(r)) => (l, r),
                            (Err(e), _) | (_, Err(e)) => return Some(Err(e)),
                        };
                        return Some(Ok(format!("({l} {op} {r})")));
                    }
                    if self.lanes.is_none() && self.plan.accumulators.contains(&v) {
                        return f.local_variables[v].name.clone().map(Ok);
                    }
                    match a.single_value(v) {
                        Some(value) => Some(w.at(value, depth + 1)),
                        None => refuse("a tile's value reads a variable"),
                    }
                }
                _ => {
                    if let Some(text) = self.texts.and_then(|t| t.get(&h)) {
                        return Some(Ok(text.clone()));
                    }
                    match a.root_global(pointer) {
                        Some(g)
                            if a.module.global_variables[g].space == AddressSpace::WorkGroup =>
                        {
                            refuse("workgroup memory read outside a tile read")
                        }
                        _ => None,
                    }
                }
            },
            Expression::AccessIndex { base, index } => match a.builtin_of(base) {
                Some(BuiltIn::LocalInvocationId) if index < 3 && !self.identity(index as usize) => {
                    Some(self.lane_text(index as usize))
                }
                Some(BuiltIn::GlobalInvocationId)
                    if index < 3 && !self.identity(index as usize) =>
                {
                    refuse("a tile's value reads the global id along a re-mapped axis")
                }
                Some(b) if index < 3 => {
                    let arg = a.builtin(b)?;
                    Some(Ok(format!(
                        "{}.{}",
                        arg.name,
                        ["x", "y", "z"][index as usize]
                    )))
                }
                _ => None,
            },
            Expression::FunctionArgument(i) => match a.builtin_of(h) {
                Some(BuiltIn::WorkGroupId | BuiltIn::NumWorkGroups) | None => {
                    f.arguments[i as usize].name.clone().map(Ok)
                }
                Some(_) if self.lanes.is_none() || (0..3).all(|d| self.identity(d)) => {
                    f.arguments[i as usize].name.clone().map(Ok)
                }
                Some(_) => refuse("a tile's value reads an id of the lane whole"),
            },
            Expression::LocalVariable(v) => match f.local_variables[v].name.clone() {
                Some(name) if self.lanes.is_none() => Some(Ok(name)),
                _ => refuse("a variable by pointer"),
            },
            Expression::CallResult(_)
            | Expression::AtomicResult { .. }
            | Expression::SubgroupBallotResult
            | Expression::SubgroupOperationResult { .. }
            | Expression::WorkGroupUniformLoadResult { .. } => {
                refuse("a call or collective result")
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests;

//! Values that live in memory or start implicitly, moved into named registers.
//!
//! Two spellings of a sum that the operators read only in their register form:
//!
//! - **An accumulation into the output buffer**, the way tutorials write a matrix product:
//!   `c[i] = 0.0; for (..) { c[i] += a[..] * b[..]; }` (or without the first store, summing onto
//!   what the buffer holds). Within the loop every access to `c` is at the one index `i`, which
//!   the loop does not change, so the element is a local for the loop's duration:
//!   `var kf_acc0: f32 = 0.0; for (..) { kf_acc0 += a[..] * b[..]; } c[i] = kf_acc0;`. Exact for
//!   a kernel free of data races: nothing else this invocation does reads `c[i]` during the loop
//!   (the loop makes no calls, has no barriers or atomics, and cannot `return` past the store
//!   after it), and another invocation touching `c[i]` meanwhile would race in the original too.
//!   The same holds for an element of a workgroup array a loop without barriers accumulates
//!   into, the way single-workgroup reductions keep each lane's partial
//!   (`W[lane] = init; for (..) { W[lane] = W[lane] + x[i]; }`): no other invocation may touch
//!   `W[lane]` until a barrier, and the loop has none, so the register holds the partial and one
//!   store after the loop leaves it where the workgroup's combining steps read it.
//! - **A declaration without a value**, `var sum: f32;`, which WGSL starts at zero: written
//!   `var sum: f32 = f32();`, so that the accumulator has a value before its loop.
//! - **A one-element local array used as a register**, the way TVM (and so web-llm) declares
//!   every local: `var m_local : array<f32, 1>;` read and written only as `m_local[0]` →
//!   `var m_local : f32;` read and written as `m_local`. Exact: the array's one element is the
//!   only memory it has, and every access names that element.
//! - **A variable assigned once**, the way code generators declare every value up front (burn:
//!   `var l_0_1: bool; .. l_0_1 = id >= l_0_0; if l_0_1 { return; }`): `let l_0_1: bool = id >=
//!   l_0_0;` where the store was. Proven from the IR ([`Analysis::single_value`]): one store,
//!   every read after it and inside what encloses it, the declared value a zero no read can see,
//!   and the variable used only by that store and its reads (no pointer taken), so the `let`
//!   names the value at every read. The operators read a `let` as the value it names (a guard,
//!   an index), a variable as memory.

use crate::analysis::ir::{self, Analysis, Edit};
use naga::{Expression, Handle, Statement};

/// `var x: T;` → `var x: T = T();` for every local declared without a value.
pub(super) fn zero_initialisers(a: &Analysis<'_>) -> Vec<Edit> {
    let mut out = Vec::new();
    for (v, local) in a.function.local_variables.iter() {
        if local.init.is_some() || local.name.is_none() {
            continue;
        }
        let Some(range) = a.local_span(v) else {
            continue;
        };
        let text = a.text(&range);
        let Some(rest) = text.trim_start().strip_prefix("var") else {
            continue;
        };
        if text.contains('=') || !rest.starts_with(|c: char| c.is_whitespace()) {
            continue;
        }
        let Some((_, ty)) = rest.split_once(':') else {
            continue;
        };
        let ty = ty.trim();
        if ty.is_empty() {
            continue;
        }
        out.push(Edit::insert(range.end, format!(" = {ty}()")));
    }
    out
}

/// `var x : array<T, 1> = init;` accessed only as `x[0]` → `var x : T = init₀;` and `x`
/// (see the module documentation). Locals without a value wait for [`zero_initialisers`].
pub(super) fn single_element_arrays(a: &Analysis<'_>) -> Vec<Edit> {
    let f = a.function;
    let mut out = Vec::new();
    for (v, local) in f.local_variables.iter() {
        let (Some(name), Some(init)) = (&local.name, local.init) else {
            continue;
        };
        let naga::TypeInner::Array {
            base,
            size: naga::ArraySize::Constant(n),
            ..
        } = a.module.types[local.ty].inner
        else {
            continue;
        };
        if n.get() != 1 {
            continue;
        }
        let refs = variable_refs(f, v);
        // Every use of the variable is an access to element 0.
        let mut accesses = Vec::new();
        let mut whole_use = false;
        for (h, e) in f.expressions.iter() {
            let ops = crate::analysis::expr::operands(e);
            if !ops.iter().any(|o| refs.contains(o)) {
                continue;
            }
            match *e {
                Expression::AccessIndex { index: 0, .. } => accesses.push(h),
                Expression::Access { index, .. } if a.const_int(index) == Some(0) => {
                    accesses.push(h)
                }
                _ => whole_use = true,
            }
        }
        if whole_use || statements_use(&f.body, &refs) {
            continue;
        }
        let init_text = match &f.expressions[init] {
            Expression::ZeroValue(_) => format!("{}()", a.type_name(base)),
            Expression::Compose { components, .. } if components.len() == 1 => {
                let Some(r) = a.expr_range(components[0]) else {
                    continue;
                };
                format!("({})", a.text(&r))
            }
            _ => continue,
        };
        let Some(decl) = var_declaration(a, v) else {
            continue;
        };
        let mut edits = vec![Edit::replace(
            decl.clone(),
            format!("var {name} : {} = {init_text}", a.type_name(base)),
        )];
        let mut ok = true;
        for h in accesses {
            match a.expr_range(h) {
                Some(r) if a.text(&r).starts_with(name.as_str()) && a.text(&r).ends_with(']') => {
                    edits.push(Edit::replace(r, name.clone()))
                }
                _ => ok = false,
            }
        }
        if ok {
            out.extend(edits);
        }
    }
    out
}

/// The text of local `v`'s declaration `var ..` up to its `;` (excluded), when it is spelled
/// with `var`.
fn var_declaration(a: &Analysis<'_>, v: Handle<naga::LocalVariable>) -> Option<ir::TextRange> {
    let code = a.code();
    let decl = a.local_span(v)?;
    let end = code[decl.start..].find(';').map(|e| decl.start + e)?;
    code[decl.start..]
        .starts_with("var")
        .then_some(decl.start..end)
}

/// The expressions naming local `v` (naga makes one per mention).
fn variable_refs(f: &naga::Function, v: Handle<naga::LocalVariable>) -> Vec<Handle<Expression>> {
    f.expressions
        .iter()
        .filter(|(_, e)| matches!(e, Expression::LocalVariable(l) if *l == v))
        .map(|(h, _)| h)
        .collect()
}

/// Whether a statement of `block` names one of `refs` directly (a store of the whole array, a
/// call that takes it): uses that are not accesses to its element.
fn statements_use(block: &naga::Block, refs: &[Handle<Expression>]) -> bool {
    block.iter().any(|s| match s {
        Statement::Store { pointer, .. } => refs.contains(pointer),
        Statement::Call { arguments, .. } => arguments.iter().any(|x| refs.contains(x)),
        Statement::Block(b) => statements_use(b, refs),
        Statement::If { accept, reject, .. } => {
            statements_use(accept, refs) || statements_use(reject, refs)
        }
        Statement::Loop {
            body, continuing, ..
        } => statements_use(body, refs) || statements_use(continuing, refs),
        Statement::Switch { cases, .. } => cases.iter().any(|c| statements_use(&c.body, refs)),
        _ => false,
    })
}

/// The edits that keep one output element's accumulation in a register, per loop (see the module
/// documentation); at most one buffer per loop, and no loop inside one already taken.
pub(super) fn global_accumulators(a: &Analysis<'_>) -> Vec<Vec<Edit>> {
    let code = a.code();
    let mut taken: Vec<usize> = Vec::new();
    let mut out = Vec::new();
    let mut next_name = 0usize;
    let mut fresh = || loop {
        let name = format!("kf_acc{next_name}");
        next_name += 1;
        if !super::identifiers(code).contains(&name.as_str()) {
            return name;
        }
    };
    for (id, l) in a.loops.iter().enumerate() {
        if a.stmts[l.stmt].loops.iter().any(|o| taken.contains(o)) {
            continue;
        }
        let Some(span) = l.span.clone() else {
            continue;
        };
        let inside: Vec<usize> = a.loop_stmts(id).collect();
        let leaves = inside.iter().any(|&s| {
            matches!(
                a.stmts[s].stmt,
                Statement::Return { .. }
                    | Statement::Kill
                    | Statement::Call { .. }
                    | Statement::Atomic { .. }
                    | Statement::ControlBarrier(_)
                    | Statement::MemoryBarrier(_)
                    | Statement::WorkGroupUniformLoad { .. }
            )
        });
        if leaves {
            continue;
        }
        let accesses: Vec<&ir::Access> = a
            .accesses
            .iter()
            .filter(|x| inside.contains(&x.stmt))
            .collect();
        let mut globals: Vec<Handle<naga::GlobalVariable>> = accesses
            .iter()
            .filter(|x| {
                x.write
                    && matches!(
                        x.space,
                        naga::AddressSpace::Storage { .. } | naga::AddressSpace::WorkGroup
                    )
            })
            .map(|x| x.global)
            .collect();
        globals.sort_by_key(|g| g.index());
        globals.dedup();
        for g in globals {
            let Some(edits) = register(a, id, &span, g, &accesses, &mut fresh) else {
                continue;
            };
            out.push(edits);
            taken.push(id);
            break;
        }
    }
    out
}

/// The edits for buffer `g` in loop `id` (whose text is `span`), when every access to `g` in the
/// loop is one element at an index the loop does not change.
fn register(
    a: &Analysis<'_>,
    id: usize,
    span: &ir::TextRange,
    g: Handle<naga::GlobalVariable>,
    accesses: &[&ir::Access],
    fresh: &mut dyn FnMut() -> String,
) -> Option<Vec<Edit>> {
    let mine: Vec<&&ir::Access> = accesses.iter().filter(|x| x.global == g).collect();
    let first = mine.first()?;
    let index = first.index?;
    let squeeze = |t: &str| t.split_whitespace().collect::<String>();
    let place = a.text(first.span.as_ref()?).to_owned();
    for x in &mine {
        if x.component.is_some()
            || a.text(x.span.as_ref()?) != place
                && squeeze(a.text(x.span.as_ref()?)) != squeeze(&place)
            || !super::same_value(a, x.index?, index)
        {
            return None;
        }
    }
    if !invariant(a, index, id, &mut Vec::new()) {
        return None;
    }
    // The element's type, from a store's value.
    let ty = mine.iter().find_map(|x| match *a.stmts[x.stmt].stmt {
        Statement::Store { value, .. } if x.write => Some(a.type_name_of(value)),
        _ => None,
    })?;
    let name = fresh();
    let mut edits: Vec<Edit> = Vec::new();
    let code = a.code();
    let line_start = code[..span.start].rfind('\n').map_or(0, |p| p + 1);
    let indent: String = code[line_start..span.start]
        .chars()
        .take_while(|c| c.is_whitespace())
        .collect();
    // The store just before the loop, at the same element, gives the register its start.
    match store_before(a, id, g, &place) {
        Some((stmt_range, value)) => edits.push(Edit::replace(
            stmt_range,
            format!("var {name}: {ty} = {value}"),
        )),
        None => edits.push(Edit::insert(
            span.start,
            format!("var {name}: {ty} = {place};\n{indent}"),
        )),
    }
    let mut ranges: Vec<ir::TextRange> = mine.iter().filter_map(|x| x.span.clone()).collect();
    ranges.sort_by_key(|r| r.start);
    ranges.dedup();
    for r in ranges {
        edits.push(Edit::replace(r, name.clone()));
    }
    edits.push(Edit::insert(
        span.end,
        format!("\n{indent}{place} = {name};"),
    ));
    Some(edits)
}

/// The statement right before loop `id` in its block, when it stores to `place` of `g` a value
/// that does not read `g`: its text range and the value's text.
fn store_before(
    a: &Analysis<'_>,
    id: usize,
    g: Handle<naga::GlobalVariable>,
    place: &str,
) -> Option<(ir::TextRange, String)> {
    // Past the loop counter's own start (`for (var i = lane; ..)` stores `i` before the loop).
    let counter = a.loops[id].for_loop.as_ref().map(|f| f.var);
    let mut at = a.previous_sibling(a.loops[id].stmt)?;
    while let Statement::Store { pointer, .. } = *a.stmts[at].stmt
        && counter.is_some()
        && matches!(a.function.expressions[pointer], Expression::LocalVariable(v) if Some(v) == counter)
    {
        at = a.previous_sibling(at)?;
    }
    let p = &a.stmts[at];
    let Statement::Store { pointer, value } = *p.stmt else {
        return None;
    };
    let x = a
        .accesses
        .iter()
        .find(|x| x.write && x.pointer == pointer)?;
    if x.global != g || x.component.is_some() || a.text(x.span.as_ref()?) != place {
        return None;
    }
    if reads_global(a, value, g) {
        return None;
    }
    Some((p.span.clone()?, a.text(&a.expr_range(value)?).to_owned()))
}

/// Whether `h` loads from `g`.
fn reads_global(a: &Analysis<'_>, h: Handle<Expression>, g: Handle<naga::GlobalVariable>) -> bool {
    if let Expression::Load { pointer } = a.function.expressions[h]
        && a.root_global(pointer) == Some(g)
    {
        return true;
    }
    crate::analysis::expr::operands(&a.function.expressions[h])
        .into_iter()
        .any(|o| reads_global(a, o, g))
}

/// Whether `h` has the same value everywhere in loop `id` and after it, and its text means the
/// same after the loop: it reads no local the loop stores or declares, no buffer the loop writes,
/// no call's result, and no `let` the loop evaluates.
fn invariant(
    a: &Analysis<'_>,
    h: Handle<Expression>,
    id: usize,
    seen: &mut Vec<Handle<Expression>>,
) -> bool {
    if seen.contains(&h) {
        return true;
    }
    seen.push(h);
    if a.function.named_expressions.contains_key(&h) && a.expr_in_loop(h, id) {
        return false;
    }
    let e = &a.function.expressions[h];
    match *e {
        Expression::CallResult(_) | Expression::AtomicResult { .. } => return false,
        Expression::LocalVariable(v)
            if a.declared_in_loop(v, id) || a.stores_to(v).iter().any(|&s| a.in_loop(s, id)) =>
        {
            return false;
        }
        Expression::Load { pointer }
            if a.root_global(pointer).is_some_and(|g| {
                a.accesses
                    .iter()
                    .any(|x| x.global == g && x.write && a.in_loop(x.stmt, id))
            }) =>
        {
            return false;
        }
        _ => {}
    }
    crate::analysis::expr::operands(e)
        .into_iter()
        .all(|o| invariant(a, o, id, seen))
}

/// `var x: T = T(); .. x = e;` → `let x: T = e;` where the store is, the declaration removed (see
/// the module documentation), and `var x = e;` → `let x = e;`, for every variable of the entry
/// point assigned once (a `var` whose only store is its initialiser is a `let` spelled as a
/// variable: webgpu-blas reads its sizes so, and a loop bound read through it looked varying).
pub(super) fn assigned_once(a: &Analysis<'_>) -> Vec<Edit> {
    let f = a.function;
    let code = a.code();
    let mut out = Vec::new();
    for (v, local) in f.local_variables.iter() {
        let Some(name) = local.name.as_deref() else {
            continue;
        };
        let [s] = a.stores_to(v) else {
            continue;
        };
        if a.single_value(v).is_none() {
            continue;
        }
        let Statement::Store { pointer, .. } = *a.stmts[*s].stmt else {
            continue;
        };
        // Used only by the store (as its target) and by loads: no pointer passed or indexed.
        let loads = a.loads_of(v);
        let only = f.expressions.iter().all(|(h, e)| {
            let uses = crate::analysis::expr::operands(e)
                .iter()
                .any(|&o| matches!(f.expressions[o], Expression::LocalVariable(w) if w == v));
            !uses || loads.contains(&h)
        }) && matches!(f.expressions[pointer], Expression::LocalVariable(w) if w == v);
        if !only {
            continue;
        }
        let (Some(decl), Some(store)) = (a.local_span(v), a.stmts[*s].span.clone()) else {
            continue;
        };
        let text = &code[store.clone()];
        // `var x[: T] = e;` never stored to again: the store is the declaration, whose keyword
        // becomes `let` (the same value at every read, from the same place on).
        if let Some(rest) = text.strip_prefix("var") {
            let rest = rest.trim_start();
            let named = rest.strip_prefix(name).is_some_and(|r| {
                let r = r.trim_start();
                r.starts_with(':') || (r.starts_with('=') && !r.starts_with("=="))
            });
            if named && text[3..].starts_with(char::is_whitespace) && store.start <= decl.start {
                out.push(Edit::replace(
                    store.start..store.start + 3,
                    "let".to_string(),
                ));
            }
            continue;
        }
        let Some(rest) = text.strip_prefix(name) else {
            continue;
        };
        let rest = rest.trim_start();
        if !rest.starts_with('=') || rest.starts_with("==") {
            continue;
        }
        // The declaration with its `;`, on a line of its own where it has one.
        let after = &code[decl.end..];
        let semi = after.len() - after.trim_start().len();
        if !after[semi..].starts_with(';') || !code[decl.clone()].trim_start().starts_with("var") {
            continue;
        }
        let decl = super::whole_line(a, &(decl.start..decl.end + semi + 1));
        if decl.end > store.start {
            continue;
        }
        let ty = a.type_name(local.ty);
        out.push(Edit::replace(decl, String::new()));
        out.push(Edit::replace(
            store.start..store.start + name.len(),
            format!("let {name}: {ty}"),
        ));
    }
    out
}

/// `for (t ..) { lets; for (i ..) { c[base + i] += f(t, i); } }` →
/// `for (i ..) { for (t ..) { lets; c[base + i] += f(t, i); } }`: an accumulation into the output
/// buffer that runs over an outer loop (web-llm's attention sums its values so: every key
/// position adds its weighted value row into the output row) with the loops interchanged, so each
/// element's accumulation becomes one inner loop that [`global_accumulators`] keeps in a register
/// and the operators split. Exact, not reassociated: the elements `base + i` of distinct `i` are
/// distinct, so each element receives the same updates in the same order of `t` as before.
/// Proven from the IR: both are `for` loops declaring their counters in their headers; the outer
/// body is `let`s and the inner loop, nothing else; the inner body stores only to `c`, and makes
/// no calls; every access to `c` in the outer loop is in the inner one, at one index `base + i`
/// (`i` the inner counter, `base` the same in every iteration of the outer loop); no other buffer
/// is written in the outer loop; the inner loop's start, bounds and step are the same in every
/// iteration of the outer loop; the `let`s do not name the inner counter and the outer header
/// does not name it either, so no name changes meaning when the headers swap.
pub(super) fn interchange_accumulations(a: &Analysis<'_>) -> Vec<Edit> {
    let mut out: Vec<Edit> = Vec::new();
    for (outer, lo) in a.loops.iter().enumerate() {
        let Some(edit) = interchange(a, outer, lo) else {
            continue;
        };
        if !out.iter().any(|e| super::overlaps(&e.range, &edit.range)) {
            out.push(edit);
        }
    }
    out
}

/// The edit that interchanges loop `outer` with the one loop in its body (see
/// [`interchange_accumulations`]).
fn interchange(a: &Analysis<'_>, outer: usize, lo: &ir::LoopInfo<'_>) -> Option<Edit> {
    let ft = lo.for_loop.as_ref()?;
    // The one loop directly inside.
    let inner_ids: Vec<usize> = a
        .loops
        .iter()
        .enumerate()
        .filter(|(_, l)| l.parent == Some(outer))
        .map(|(id, _)| id)
        .collect();
    let [inner] = inner_ids[..] else {
        return None;
    };
    let li = &a.loops[inner];
    let fi = li.for_loop.as_ref()?;
    if ft.kind != ir::LoopKind::For
        || fi.kind != ir::LoopKind::For
        || !ft.declared_in_header
        || !fi.declared_in_header
        || a.loops.iter().any(|l| l.parent == Some(inner))
    {
        return None;
    }
    // The outer body: `let`s (emits) and the inner loop; the inner body: emits and stores to `c`.
    let mut stores = Vec::new();
    for s in a.loop_stmts(outer) {
        let in_inner = a.in_loop(s, inner);
        let f = if in_inner { fi } else { ft };
        let ok = match *a.stmts[s].stmt {
            // naga wraps a `for` (its counter's start and the loop) and a body in blocks.
            Statement::Emit(_) | Statement::Block(_) => true,
            Statement::Loop { .. } => s == li.stmt,
            Statement::Store { .. } if s == f.step_stmt => true,
            // The inner counter's start, stored again in every iteration of the outer loop.
            Statement::Store { pointer, .. }
                if !in_inner
                    && matches!(a.function.expressions[pointer],
                        Expression::LocalVariable(v) if v == fi.var) =>
            {
                true
            }
            Statement::Store { pointer, .. } if in_inner => {
                stores.push(a.root_global(pointer)?);
                true
            }
            _ => s == f.step_stmt || a.is_header_test(s, f),
        };
        if !ok {
            return None;
        }
    }
    let g = *stores.first()?;
    if stores.iter().any(|&x| x != g) {
        return None;
    }
    // Every access to `c` at one index `base + i`; nothing else written.
    let mut index = None;
    for x in a.accesses.iter().filter(|x| a.in_loop(x.stmt, outer)) {
        if x.write && x.global != g {
            return None;
        }
        if x.global != g {
            continue;
        }
        if !a.in_loop(x.stmt, inner) || x.component.is_some() {
            return None;
        }
        let i = x.index?;
        match index {
            None => index = Some(i),
            Some(first) if super::same_value(a, first, i) => {}
            Some(_) => return None,
        }
    }
    if !a.counter_plus_invariant(index?, fi.var, outer) {
        return None;
    }
    // The inner loop's range is the same in every iteration of the outer one.
    let range_exprs = fi.init.into_iter().chain(std::iter::once(fi.step)).chain(
        fi.bounds
            .iter()
            .flat_map(|b| std::iter::once(b.bound).chain(b.offset)),
    );
    for h in range_exprs {
        if !invariant(a, h, outer, &mut Vec::new()) {
            return None;
        }
    }
    // The text: the outer header, the `let`s before the inner loop, the inner header and body.
    let code = a.code();
    let (outer_span, inner_span) = (lo.span.clone()?, li.span.clone()?);
    let (th, tb) = (ft.header_span.clone()?, ft.body_span.clone()?);
    let (ih, ib) = (fi.header_span.clone()?, fi.body_span.clone()?);
    if !(tb.start < inner_span.start && inner_span.end < tb.end) {
        return None;
    }
    let lets = &code[tb.start + 1..inner_span.start];
    let after = &code[inner_span.end..tb.end - 1];
    if !crate::analysis::text::blank_comments(after)
        .trim()
        .is_empty()
        || super::identifiers(lets).contains(&fi.var_name.as_str())
        || super::identifiers(&code[th.clone()]).contains(&fi.var_name.as_str())
    {
        return None;
    }
    let line_start = code[..outer_span.start].rfind('\n').map_or(0, |p| p + 1);
    let indent: String = code[line_start..outer_span.start]
        .chars()
        .take_while(|c| c.is_whitespace())
        .collect();
    let text = format!(
        "{} {{\n{indent}    {} {{{}{}}}\n{indent}}}",
        code[ih].trim_end(),
        code[th].trim_end(),
        lets,
        &code[ib.start + 1..ib.end - 1],
    );
    Some(Edit::replace(outer_span, text))
}

/// The most elements [`scalarise_arrays`] splits an array into.
const MAX_SCALARISED: usize = 256;

/// `var x : array<array<T, N>, M>;` read and written only at constant indices (`x[1][3]`) →
/// one `var x_1_3 : T = T();` per element, each access the element's name. Exact: every access
/// names one element, the elements share no memory, and each starts at zero as the array's
/// elements did. Register-blocked kernels keep their block this way (surfgrad's `sums[i][j]`
/// once its zeroing loops are gone); the de-blocking reads scalars.
pub(super) fn scalarise_arrays(a: &Analysis<'_>) -> Vec<Edit> {
    let f = a.function;
    let code = a.code();
    let mut out = Vec::new();
    'vars: for (v, local) in f.local_variables.iter() {
        let Some(name) = &local.name else {
            continue;
        };
        if !local.init.is_none_or(|i| a.is_zero_value(i)) {
            continue;
        }
        // The extents, outermost first, down to a scalar or vector element.
        let mut extents = Vec::new();
        let mut ty = local.ty;
        while let naga::TypeInner::Array {
            base,
            size: naga::ArraySize::Constant(n),
            ..
        } = a.module.types[ty].inner
        {
            extents.push(n.get() as usize);
            ty = base;
        }
        let count: usize = extents.iter().product();
        if extents.is_empty()
            || !(2..=MAX_SCALARISED).contains(&count)
            || !matches!(
                a.module.types[ty].inner,
                naga::TypeInner::Scalar(_) | naga::TypeInner::Vector { .. }
            )
        {
            continue;
        }
        let refs = variable_refs(f, v);
        if statements_use(&f.body, &refs) {
            continue;
        }
        // Follow each access chain from the variable to its element.
        let mut elements: Vec<(Handle<Expression>, Vec<usize>)> = Vec::new();
        let mut frontier: Vec<(Handle<Expression>, Vec<usize>)> =
            refs.iter().map(|&h| (h, Vec::new())).collect();
        while let Some((h, path)) = frontier.pop() {
            let users: Vec<(Handle<Expression>, &Expression)> = f
                .expressions
                .iter()
                .filter(|(_, e)| crate::analysis::expr::operands(e).contains(&h))
                .collect();
            if path.len() == extents.len() {
                elements.push((h, path));
                continue;
            }
            if !path.is_empty() && statements_use(&f.body, &[h]) {
                continue 'vars;
            }
            for (u, e) in users {
                let index = match *e {
                    Expression::AccessIndex { base, index } if base == h => index as usize,
                    Expression::Access { base, index } if base == h => match a.const_int(index) {
                        Some(i) if i >= 0 => i as usize,
                        _ => continue 'vars,
                    },
                    _ => continue 'vars,
                };
                if index >= extents[path.len()] {
                    continue 'vars;
                }
                let mut p = path.clone();
                p.push(index);
                frontier.push((u, p));
            }
        }
        let element = |p: &[usize]| {
            let suffix: Vec<String> = p.iter().map(|i| i.to_string()).collect();
            format!("{name}_{}", suffix.join("_"))
        };
        let elem_ty = a.type_name(ty);
        let Some(decl) = var_declaration(a, v) else {
            continue;
        };
        let mut names = Vec::with_capacity(count);
        let mut index = vec![0usize; extents.len()];
        for _ in 0..count {
            names.push(element(&index));
            for d in (0..extents.len()).rev() {
                index[d] += 1;
                if index[d] < extents[d] {
                    break;
                }
                index[d] = 0;
            }
        }
        if names
            .iter()
            .any(|n| super::word_positions(code, n).next().is_some())
        {
            continue;
        }
        let indent = a.indent_at(decl.start);
        let decls: Vec<String> = names
            .iter()
            .map(|n| format!("var {n} : {elem_ty} = {elem_ty}()"))
            .collect();
        let mut edits = vec![Edit::replace(
            decl.clone(),
            decls.join(&format!(";\n{indent}")),
        )];
        for (h, path) in &elements {
            match a.expr_range(*h) {
                Some(r) if a.text(&r).starts_with(name.as_str()) && a.text(&r).ends_with(']') => {
                    edits.push(Edit::replace(r, element(path)))
                }
                _ => continue 'vars,
            }
        }
        out.extend(edits);
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::operators::testkit;

    /// The canonical text of `wgsl` resolved with `spec`, checked valid, if it changes.
    fn canon_with(spec: &str, wgsl: &str) -> Option<String> {
        testkit::canonical_text(spec, wgsl).map(|(_, text)| text)
    }

    fn canon_of(wgsl: &str) -> Option<String> {
        canon_with(
            "sizes(m = 9, n = 7, k = 5), bind(a = input(m * k), b = input(k * n), c = output(m * n), d = uniform(m, n, k)), grid = (n, m)",
            wgsl,
        )
    }

    const GEMM: &str = r#"
struct D { m: u32, n: u32, k: u32 }
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> d: D;
@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let col = gid.x;
    let row = gid.y;
    if (row >= d.m || col >= d.n) { return; }
    c[row * d.n + col] = 0.0;
    for (var t = 0u; t < d.k; t++) {
        c[row * d.n + col] += a[row * d.k + t] * b[t * d.n + col];
    }
}
"#;

    #[test]
    fn an_accumulation_into_the_output_moves_into_a_register() {
        let out = canon_of(GEMM).expect("a canonical form");
        assert!(out.contains("var kf_acc0: f32 = 0.0;"), "{out}");
        assert!(out.contains("kf_acc0 += a[row * d.k + t]"), "{out}");
        assert!(
            out.contains("}\n    c[row * d.n + col] = kf_acc0;"),
            "{out}"
        );
    }

    #[test]
    fn without_a_first_store_the_register_starts_from_memory() {
        let src = GEMM.replace("    c[row * d.n + col] = 0.0;\n", "");
        let out = canon_of(&src).expect("a canonical form");
        assert!(
            out.contains("var kf_acc0: f32 = c[row * d.n + col];"),
            "{out}"
        );
    }

    #[test]
    fn an_index_the_loop_changes_or_a_second_element_is_left_alone() {
        // The element moves with the counter: a different element every iteration.
        let src = GEMM.replace("c[row * d.n + col] += a", "c[row * d.n + t % d.n] += a");
        assert!(canon_of(&src).is_none_or(|o| !o.contains("kf_acc")));
        // Two elements of the buffer in the loop.
        let src = GEMM.replace(
            "        c[row * d.n + col] += a[row * d.k + t] * b[t * d.n + col];",
            "        c[row * d.n + col] += a[row * d.k + t] * b[t * d.n + col];\n        c[0] = 1.0;",
        );
        assert!(canon_of(&src).is_none_or(|o| !o.contains("kf_acc")));
        // A return inside the loop would skip the store after it.
        let src = GEMM.replace(
            "        c[row * d.n + col] += a",
            "        if (t > 100u) { return; }\n        c[row * d.n + col] += a",
        );
        assert!(canon_of(&src).is_none_or(|o| !o.contains("kf_acc")));
    }

    /// A single workgroup's reduction keeps each lane's partial in its slot of workgroup memory
    /// (wgebra's spelling); with no barrier in the loop the slot is the lane's alone there.
    const SLOTS: &str = r#"
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
var<workgroup> ws: array<f32, 64>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) t: u32) {
    ws[t] = -3.0e38;
    for (var i = t; i < arrayLength(&x); i += 64u) {
        ws[t] = max(ws[t], x[i]);
    }
    workgroupBarrier();
    if (t == 0u) {
        var m = ws[0];
        for (var k = 1u; k < 64u; k++) { m = max(m, ws[k]); }
        y[0] = m;
    }
}
"#;

    #[test]
    fn a_workgroup_slot_a_loop_accumulates_into_moves_into_a_register() {
        let spec = "sizes(n = 1000), bind(x = input(n), y = output(1)), workgroups = (1)";
        let out = canon_with(spec, SLOTS).expect("a canonical form");
        // The loop counter's own start sits between the first store and the loop.
        assert!(out.contains("var kf_acc0: f32 = -3.0e38;"), "{out}");
        assert!(out.contains("kf_acc0 = max(kf_acc0, x[i]);"), "{out}");
        assert!(out.contains("}\n    ws[t] = kf_acc0;"), "{out}");
        // A barrier in the loop lets other lanes read the slot meanwhile: left alone.
        let src = SLOTS
            .replace(
                "for (var i = t; i < arrayLength(&x); i += 64u) {",
                "for (var j = 0u; j < 4u; j++) {\n        let i = j * 64u + t;",
            )
            .replace(
                "ws[t] = max(ws[t], x[i]);",
                "ws[t] = max(ws[t], x[i]);\n        workgroupBarrier();",
            );
        let out = canon_with(spec, &src.replace("workgroupBarrier();\n    }", "}"))
            .expect("without the barrier, a canonical form");
        assert!(out.contains("kf_acc0"), "{out}");
        assert!(canon_with(spec, &src).is_none_or(|o| !o.contains("kf_acc")));
        // Another lane's slot read in the loop: left alone.
        let src = SLOTS.replace("max(ws[t], x[i])", "max(ws[t], ws[(t + 1u) % 64u] + x[i])");
        assert!(canon_with(spec, &src).is_none_or(|o| !o.contains("kf_acc")));
    }

    #[test]
    fn a_declaration_without_a_value_starts_at_zero() {
        let src = r#"
@group(0) @binding(0) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    var s: f32;
    var i: u32;
    loop {
        if (i >= 8u) { break; }
        s = s + f32(i);
        i = i + 1u;
    }
    y[gid.x] = s;
}
"#;
        let out = canon_with("sizes(n = 64), bind(y = output(n)), grid = (n)", src)
            .expect("a canonical form");
        assert!(out.contains("var s: f32 = f32();"), "{out}");
    }
}

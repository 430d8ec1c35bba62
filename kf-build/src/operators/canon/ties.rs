//! An arg-reduction whose tie rule is spelled as a predicate over the running index.
//!
//! TVM (and so web-llm) writes an argmax as a (index, value) pair updated by `select`s on a
//! generated "keep the old pair" predicate:
//!
//! ```wgsl
//! let keep : bool = (m > v) || ((m == v) && (idx < k));
//! let idx_next : i32 = select(k, idx, keep);
//! let m_next : f32 = select(v, m, keep);
//! idx = idx_next;
//! m = m_next;
//! ```
//!
//! `k` is the counter of the loop the update sits in, rising by a literal step from a literal
//! start, and `idx` is only ever given a literal below that start (before the loop) or `k` itself
//! (here): so `idx < k` holds at every test, the predicate is `(m > v) || (m == v)`, and the pair
//! is replaced exactly when `v > m`: `if (v > m) { m = v; idx = k; }`, the form the analysis
//! reads as a (value, index) accumulator with first-index ties ([`crate::analysis::ir::ArgAccumulator`]).
//! Equal for every value but NaN, as `canon`'s other extremum rewrites (with a NaN `v` the
//! predicate replaces the pair, the `if` does not). The `let`s the predicate and the selects were
//! named by are removed with the stores, once no other statement names them.

use super::{load_of, same_value, statement_start, stored_select, whole_line, word_positions};
use crate::analysis::ir::{Analysis, Edit, Naming};
use naga::{BinaryOperator as B, Expression, Handle, LocalVariable, Statement};

/// The rewrite of the update whose first store is statement `s` (see the module documentation).
pub(super) fn tie_break_pair(a: &Analysis<'_>, s: usize) -> Option<(Vec<Edit>, &'static str)> {
    let (x1, new1, c1) = mirrored_select(a, s)?;
    let second = a.siblings(s).into_iter().find(|&o| {
        a.stmts[o].index_in_block > a.stmts[s].index_in_block
            && !matches!(a.stmts[o].stmt, Statement::Emit(_))
    })?;
    let (x2, new2, c2) = mirrored_select(a, second)?;
    if x1 == x2 || c1 != c2 {
        return None;
    }
    // keep = (m > v) || ((m == v) && (idx < k))
    let (greater, tie) = logical(a, c1, B::LogicalOr)?;
    let (equal, below) = logical(a, tie, B::LogicalAnd)?;
    let (m, v) = ordered(a, greater, B::Greater)?;
    let (idx, k) = ordered(a, below, B::Less)?;
    let (Some(idx), Some(k)) = (load_of(a, idx), load_of(a, k)) else {
        return None;
    };
    let m = load_of(a, m)?;
    let Expression::Binary {
        op: B::Equal,
        left,
        right,
    } = a.function.expressions[equal]
    else {
        return None;
    };
    let equal_ok = (load_of(a, left) == Some(m) && same_value(a, right, v))
        || (load_of(a, right) == Some(m) && same_value(a, left, v));
    // Which store is the value's and which the index's.
    let (value_new, index_new) = match (x1 == m && x2 == idx, x2 == m && x1 == idx) {
        (true, false) => (new1, new2),
        (false, true) => (new2, new1),
        _ => return None,
    };
    if !equal_ok
        || !same_value(a, value_new, v)
        || load_of(a, index_new) != Some(k)
        || a.reads_local(v, m)
        || a.reads_local(v, idx)
    {
        return None;
    }
    let index_store = if x1 == idx { s } else { second };
    if !index_below_counter(a, index_store, idx, k) {
        return None;
    }
    // The stores, adjacent, become the `if`.
    let (span1, span2) = (a.stmts[s].span.clone()?, a.stmts[second].span.clone()?);
    let between = a.with_semicolon(&span1).end;
    if !a.code()[between..span2.start].trim().is_empty() {
        return None;
    }
    let name = |x: Handle<LocalVariable>| a.function.local_variables[x].name.clone();
    let (m_name, idx_name, k_name) = (name(m)?, name(idx)?, name(k)?);
    let v_text = a.expr_wgsl(v, Naming::Names)?;
    let stores = span1.start..a.with_semicolon(&span2).end;
    let mut edits = vec![Edit::replace(
        stores.clone(),
        format!("if ({v_text} > {m_name}) {{ {m_name} = {v_text}; {idx_name} = {k_name}; }}"),
    )];
    // The `let`s of the predicate and the selects, named nowhere else once the stores are gone.
    let code = a.code();
    let body = a.loops[*a.stmts[s].loops.last()?].span.clone()?;
    let mut removed: Vec<std::ops::Range<usize>> = vec![stores];
    let stored = |st: usize| match *a.stmts[st].stmt {
        Statement::Store { value, .. } => Some(value),
        _ => None,
    };
    let named = [c1, stored(s)?, stored(second)?];
    for h in named {
        let Some(n) = a.function.named_expressions.get(&h) else {
            continue;
        };
        let range = let_statement(a, body.start..span1.start, n)?;
        removed.push(range.clone());
        edits.push(Edit::replace(range, String::new()));
    }
    for (h, n) in a.function.named_expressions.iter() {
        if !named.contains(h) {
            continue;
        }
        let named_elsewhere =
            word_positions(code, n).any(|p| !removed.iter().any(|r| r.contains(&p)));
        if named_elsewhere {
            return None;
        }
    }
    Some((edits, "arg-tie"))
}

/// `x = select(new, x, c)` of a local `x` (the old value kept when `c` holds): `x`, `new`, `c`.
fn mirrored_select(
    a: &Analysis<'_>,
    s: usize,
) -> Option<(
    Handle<LocalVariable>,
    Handle<Expression>,
    Handle<Expression>,
)> {
    let (x, [new, kept, c]) = stored_select(a, s)?;
    (load_of(a, kept) == Some(x)).then_some((x, new, c))
}

/// The operands of `h` when it is `l op r` for the logical `op`, written as an operator or
/// lowered by naga to a short-circuit temporary.
fn logical(
    a: &Analysis<'_>,
    h: Handle<Expression>,
    op: B,
) -> Option<(Handle<Expression>, Handle<Expression>)> {
    if let Some((o, l, r)) = a.short_circuit(h) {
        return (o == op).then_some((l, r));
    }
    match a.function.expressions[h] {
        Expression::Binary { op: o, left, right } if o == op => Some((left, right)),
        _ => None,
    }
}

/// `(x, y)` for a comparison that holds exactly when `x op y`, with `op` `>` or `<`, written
/// either way round (`y < x` for `x > y`).
fn ordered(
    a: &Analysis<'_>,
    h: Handle<Expression>,
    op: B,
) -> Option<(Handle<Expression>, Handle<Expression>)> {
    let Expression::Binary { op: o, left, right } = a.function.expressions[h] else {
        return None;
    };
    let mirror = match op {
        B::Greater => B::Less,
        B::Less => B::Greater,
        _ => return None,
    };
    if o == op {
        Some((left, right))
    } else if o == mirror {
        Some((right, left))
    } else {
        None
    }
}

/// Whether `idx < k` holds wherever statement `s`, the update's store to `idx`, runs: `k` is the
/// counter of the innermost loop around `s`, rising by a positive literal step from a literal
/// start; `s` is the only store to `idx` in that loop (it stores `k` or keeps `idx`, checked by
/// the caller), every other store gives it a literal below the start, and so does its declared
/// value unless one of those stores comes before the loop in the loop's own block.
fn index_below_counter(
    a: &Analysis<'_>,
    s: usize,
    idx: Handle<LocalVariable>,
    k: Handle<LocalVariable>,
) -> bool {
    let Some(&id) = a.stmts[s].loops.last() else {
        return false;
    };
    let Some(f) = a.loops[id].for_loop.as_ref() else {
        return false;
    };
    let (Some(start), Some(step)) = (f.init.and_then(|i| a.const_int(i)), a.const_int(f.step))
    else {
        return false;
    };
    if f.var != k || f.decreasing || step <= 0 {
        return false;
    }
    let below = |value: Handle<Expression>| a.const_int(value).is_some_and(|c| c < start);
    let outside: Vec<usize> = a
        .stores_to(idx)
        .iter()
        .copied()
        .filter(|&st| st != s)
        .collect();
    let stores_ok = outside.iter().all(|&st| {
        !a.in_loop(st, id)
            && matches!(*a.stmts[st].stmt, Statement::Store { value, .. } if below(value))
    });
    let head = &a.stmts[a.loops[id].stmt];
    let set_before = outside.iter().any(|&st| {
        let x = &a.stmts[st];
        x.parent == head.parent && x.part == head.part && x.index_in_block < head.index_in_block
    });
    stores_ok
        && (set_before
            || match a.function.local_variables[idx].init {
                // WGSL starts a variable declared without a value at zero.
                None => 0 < start,
                Some(i) => below(i),
            })
}

/// The text of `let name ..;` within `within`, on a line of its own where it has one.
fn let_statement(
    a: &Analysis<'_>,
    within: std::ops::Range<usize>,
    name: &str,
) -> Option<std::ops::Range<usize>> {
    let code = a.code();
    let at = word_positions(&code[within.clone()], name)
        .map(|p| within.start + p)
        .find(|&p| code[..p].trim_end().ends_with("let"))?;
    let start = statement_start(code, at)?;
    if !code[start..at].trim_start().starts_with("let") {
        return None;
    }
    let mut depth = 0i32;
    let mut end = None;
    for (i, c) in code[at..].char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ';' if depth == 0 => {
                end = Some(at + i + 1);
                break;
            }
            _ => {}
        }
    }
    Some(whole_line(a, &(start..end?)))
}

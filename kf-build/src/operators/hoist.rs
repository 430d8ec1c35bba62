//! Hoisting loop-invariant loads: a value read from a uniform or read-only storage buffer inside a
//! loop, at an address the loop does not change, is read once into a `let` before the loop.
//!
//! GPU compilers often keep such loads in the loop: they cannot always prove that stores to other
//! buffers in the loop leave the address alone. WGSL can: a binding is either read-only storage,
//! uniform or read_write, and a buffer bound read-only cannot be written by the same dispatch.
//!
//! What it proves from the IR, per loop (`for`, `while` or `loop`):
//!
//! - the expression is loop-invariant (`loops::LoopScope::is_invariant`): built from constants,
//!   builtins, values computed before the loop, loads of locals the loop never writes (nor passes
//!   by pointer), and loads from uniform or read-only storage buffers at invariant addresses. Loads
//!   from read_write storage, workgroup or private memory are never hoisted: the loop, another
//!   invocation or a called function may change them;
//! - it reads at least one such buffer (pure arithmetic is left to the compiler) and is the
//!   largest such expression (`dims.k * 4u`, not `dims.k` inside it);
//! - it is evaluated on every iteration that reaches the body: emitted at the top level of the loop
//!   body or its condition, before any statement that may leave the iteration (a conditional
//!   `break`, `continue` or `return`), and never inside an `if`, `switch` or nested loop, whose
//!   condition may guard the address's validity;
//! - its text can move: its span covers it (loads, indexing, member access, arithmetic, casts,
//!   constructors; naga gives a call like `max(a, b)` the span of its name only, so calls are moved
//!   only inside a larger expression), and every name in it is declared before the loop (no `let`
//!   or `var` of the loop body inside it; a `let` of the body whose value is invariant is itself
//!   hoisted by value: `let off = kf_hoist0;`).
//!
//! One rewrite hoists everything provable in the kernel; identical texts share one `let`. Should a
//! moved text not validate (a case the proofs did not foresee), the hoists that do validate are
//! kept, one by one. A loop
//! that runs zero times now performs the load once anyway: WGSL bounds every buffer access, so an
//! out-of-range address there reads an unspecified value that is never used, never faults.
//!
//! Moves: none. The kernel keeps its memory technique, algorithm, cooperation and outputs per
//! invocation; hoisting refines its cell's elite.

use super::{Moves, Operator, Rewrite, Skip, Subject};
use crate::analysis::loops::{self, LoopScope};
use crate::analysis::text::{self, Edit};
use naga::{Block, Expression, Function, Handle, Module, Statement};
use std::collections::{BTreeMap, HashSet};
use std::ops::Range;

/// The loop-invariant load hoisting operator.
#[derive(Clone, Copy, Debug, Default)]
pub struct Hoist;

impl Operator for Hoist {
    fn name(&self) -> &'static str {
        "hoist"
    }

    fn moves(&self) -> Moves {
        &[]
    }

    fn apply(&self, subject: &Subject<'_>) -> Result<Vec<Rewrite>, Skip> {
        let program = subject.program;
        let wgsl = program.wgsl.as_ref();
        let entry = program.entry.as_ref();
        let r = kf_runtime::resolve::reflect(wgsl, Some(entry), "parent")
            .map_err(|e| Skip(format!("the parent does not validate: {e}")))?;
        let ep = loops::entry_index(&r.module, entry)
            .ok_or_else(|| Skip(format!("no compute entry point `{entry}`")))?;
        let taken = names(&r.module);
        let mut next = 0usize;
        let mut fresh = || loop {
            let n = format!("kf_hoist{next}");
            next += 1;
            if !taken.contains(&n) {
                return n;
            }
        };
        // One group per loop and distinct text: the `let` before the loop and the replacements.
        let mut groups: Vec<(Vec<Edit>, usize, String)> = Vec::new();
        let mut n_loops = 0;
        for fref in loops::reachable(&r.module, ep) {
            let f = loops::function(&r.module, fref);
            let mut loops = Vec::new();
            loops::walk(&f.body, &mut |s, span| {
                if let Statement::Loop {
                    body, continuing, ..
                } = s
                {
                    loops.push((body, continuing, span));
                }
            });
            for (body, continuing, span) in loops {
                let Some(span) = text::range(span) else {
                    continue;
                };
                if !matches!(
                    wgsl.get(text::token_at(wgsl, span.start)),
                    Some("for" | "while" | "loop")
                ) {
                    continue;
                }
                n_loops += 1;
                let found = candidates(&r.module, f, body, continuing, &span);
                let indent = indent_at(wgsl, span.start);
                let mut by_text: BTreeMap<&str, usize> = BTreeMap::new();
                for range in &found {
                    let t = &wgsl[range.clone()];
                    let g = *by_text.entry(t).or_insert_with(|| {
                        let n = fresh();
                        groups.push((
                            vec![Edit::insert(
                                span.start,
                                format!("let {n} = {t};\n{indent}"),
                            )],
                            0,
                            n,
                        ));
                        groups.len() - 1
                    });
                    let name = groups[g].2.clone();
                    groups[g].0.push(Edit::replace(range.clone(), name));
                    groups[g].1 += 1;
                }
            }
        }
        if groups.is_empty() {
            return Err(Skip(if n_loops == 0 {
                "no loop".into()
            } else {
                "no loop-invariant load from a uniform or read-only buffer in a loop".into()
            }));
        }
        let build = |chosen: &[&(Vec<Edit>, usize, String)]| -> Result<Rewrite, Skip> {
            let edits: Vec<Edit> = chosen.iter().flat_map(|g| g.0.iter().cloned()).collect();
            let hoisted: usize = chosen.iter().map(|g| g.1).sum();
            let new =
                text::apply_edits(wgsl, &edits).ok_or_else(|| Skip("overlapping hoists".into()))?;
            super::finish(
                subject,
                new,
                &[],
                format!("hoist({hoisted} loads)"),
                Vec::new(),
            )
        };
        let all: Vec<&(Vec<Edit>, usize, String)> = groups.iter().collect();
        match build(&all) {
            Ok(rw) => Ok(vec![rw]),
            // A text the proofs did not foresee failed to validate: keep every group that does.
            Err(first) => {
                let mut kept: Vec<&(Vec<Edit>, usize, String)> = Vec::new();
                for g in &groups {
                    kept.push(g);
                    if build(&kept).is_err() {
                        kept.pop();
                    }
                }
                if kept.is_empty() {
                    return Err(first);
                }
                build(&kept).map(|rw| vec![rw])
            }
        }
    }
}

/// Every identifier the module declares, so a new `let` never shadows or clashes with one.
fn names(module: &Module) -> HashSet<String> {
    let mut out = HashSet::new();
    let mut add = |n: &Option<String>| {
        if let Some(n) = n {
            out.insert(n.clone());
        }
    };
    for (_, g) in module.global_variables.iter() {
        add(&g.name);
    }
    for (_, c) in module.constants.iter() {
        add(&c.name);
    }
    for (_, o) in module.overrides.iter() {
        add(&o.name);
    }
    for (_, t) in module.types.iter() {
        add(&t.name);
    }
    let functions = module
        .functions
        .iter()
        .map(|(_, f)| f)
        .chain(module.entry_points.iter().map(|e| &e.function));
    for f in functions {
        add(&f.name);
        for a in &f.arguments {
            add(&a.name);
        }
        for (_, l) in f.local_variables.iter() {
            add(&l.name);
        }
        for n in f.named_expressions.values() {
            add(&Some(n.clone()));
        }
    }
    out
}

/// The whitespace that starts the line holding `pos`, to indent inserted lines like the loop.
fn indent_at(src: &str, pos: usize) -> String {
    let line_start = src[..pos].rfind('\n').map_or(0, |p| p + 1);
    src[line_start..pos]
        .chars()
        .take_while(|c| c.is_whitespace())
        .collect()
}

/// Expressions emitted on every iteration that reaches the loop body: the top level of the
/// condition and the body, up to the first statement that may leave the iteration.
fn unconditional(block: &Block, out: &mut Vec<Handle<Expression>>, head: bool) -> bool {
    let mut seen_check = !head;
    for s in block.iter() {
        match s {
            Statement::Emit(r) => out.extend(r.clone()),
            Statement::Block(b) if !unconditional(b, out, false) => return false,
            // The loop's own condition check: `if (cond) {} else { break; }`.
            Statement::If { accept, reject, .. }
                if !seen_check
                    && accept.is_empty()
                    && matches!(
                        reject.iter().collect::<Vec<_>>().as_slice(),
                        [Statement::Break]
                    ) =>
            {
                seen_check = true;
            }
            Statement::If { .. } | Statement::Switch { .. } if leaves(s) => return false,
            Statement::Break | Statement::Continue | Statement::Return { .. } | Statement::Kill => {
                return false;
            }
            _ => {}
        }
    }
    true
}

/// Whether a statement may leave the current iteration of the enclosing loop.
fn leaves(s: &Statement) -> bool {
    fn stmt(s: &Statement, in_switch: bool) -> bool {
        match s {
            Statement::Break => !in_switch,
            Statement::Continue | Statement::Return { .. } | Statement::Kill => true,
            Statement::Block(b) => block(b, in_switch),
            Statement::If { accept, reject, .. } => {
                block(accept, in_switch) || block(reject, in_switch)
            }
            Statement::Switch { cases, .. } => cases.iter().any(|c| block(&c.body, true)),
            // `break`/`continue` in a nested loop are that loop's; a `return` is not.
            Statement::Loop {
                body, continuing, ..
            } => {
                let mut found = false;
                for b in [body, continuing] {
                    loops::walk(b, &mut |s, _| {
                        found |= matches!(s, Statement::Return { .. } | Statement::Kill);
                    });
                }
                found
            }
            _ => false,
        }
    }
    fn block(b: &Block, in_switch: bool) -> bool {
        b.iter().any(|s| stmt(s, in_switch))
    }
    stmt(s, false)
}

/// The spans of the expressions to hoist out of one loop.
fn candidates(
    module: &Module,
    f: &Function,
    body: &Block,
    continuing: &Block,
    loop_span: &Range<usize>,
) -> Vec<Range<usize>> {
    let scope = LoopScope::new(f, body, continuing);
    let mut top = Vec::new();
    unconditional(body, &mut top, true);
    let readonly_load = |e: Handle<Expression>| match &f.expressions[e] {
        Expression::Load { pointer } => loops::root_global(f, *pointer)
            .is_some_and(|g| crate::analysis::access::read_only(module, g)),
        _ => false,
    };
    // Whether the text of `e` can move before the loop, and whether it reads a buffer.
    let movable = |e: Handle<Expression>| -> Option<bool> {
        let mut stack = vec![e];
        let mut reads = false;
        while let Some(x) = stack.pop() {
            if !scope.is_inside(x) {
                // Computed before the loop, a constant, an argument, or a variable's address:
                // a local variable must be declared before the loop for its name to resolve.
                if let Expression::LocalVariable(l) = f.expressions[x] {
                    let decl = text::range(f.local_variables.get_span(l))?;
                    if decl.start >= loop_span.start && decl.start < loop_span.end {
                        return None;
                    }
                }
                continue;
            }
            if x != e && f.named_expressions.contains_key(&x) {
                return None; // a `let` of the loop body: its name is not visible before the loop
            }
            reads |= readonly_load(x);
            stack.extend(crate::analysis::expr::operands(&f.expressions[x]));
        }
        Some(reads)
    };
    let spanned_kind = |e: &Expression| {
        matches!(
            e,
            Expression::Load { .. }
                | Expression::Access { .. }
                | Expression::AccessIndex { .. }
                | Expression::Binary { .. }
                | Expression::Unary { .. }
                | Expression::As { .. }
                | Expression::Compose { .. }
        )
    };
    let mut chosen: Vec<Handle<Expression>> = top
        .iter()
        .copied()
        .filter(|&e| {
            spanned_kind(&f.expressions[e])
                && scope.is_invariant(module, f, e)
                && movable(e) == Some(true)
                && text::range(f.expressions.get_span(e)).is_some_and(|r| !r.is_empty())
        })
        .collect();
    // Keep the largest: drop a candidate that is an operand (at any depth) of another one.
    let mut inner: HashSet<Handle<Expression>> = HashSet::new();
    for &c in &chosen {
        let mut stack = crate::analysis::expr::operands(&f.expressions[c]);
        while let Some(x) = stack.pop() {
            if inner.insert(x) {
                stack.extend(crate::analysis::expr::operands(&f.expressions[x]));
            }
        }
    }
    chosen.retain(|c| !inner.contains(c));
    // A `let` of an invariant value that is not a candidate's part: its initializer text moves.
    let mut out: Vec<Range<usize>> = Vec::new();
    for c in chosen {
        let r = text::range(f.expressions.get_span(c)).expect("checked above");
        // Sanity: the span covers the operands naga gave spans to.
        let covers = crate::analysis::expr::operands(&f.expressions[c])
            .iter()
            .all(|o| {
                !scope.is_inside(*o)
                    || text::range(f.expressions.get_span(*o))
                        .is_none_or(|s| s.start >= r.start && s.end <= r.end)
            });
        if covers && !out.iter().any(|o| o.start < r.end && r.start < o.end) {
            out.push(r);
        }
    }
    out
}

#[cfg(test)]
mod tests;

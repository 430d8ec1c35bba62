//! Loops over a block of registers written out, and element reads of a `let` array resolved, so
//! that a register block is addressed at constant indices (which `scalarise` and `deblock` read).
//!
//! People who block a product in registers address the block with short loops
//! (`for (var i = 0u; i < 4u; i++) { for (var j = 0u; j < 4u; j++) { c[..] = acc[i][j]; } }`),
//! or gather it into a `let` array first (meganeura's `let s = array<array<f32, 4>, 4>(s0_0, ..)`
//! read as `s[i][j]`). A register array indexed by a variable is memory to the compiler and to
//! the analysis; indexed by literals it is a set of scalars.
//!
//! - `unroll-registers`: an innermost counted `for` loop with a known trip count of at most
//!   [`MAX_TRIPS`] whose counter indexes a local array (a `var` or a `let` built by a
//!   constructor) → one copy of the body per value (each in its own `{ }` where it declares
//!   names), the counter a literal
//!   at the exact spans of its uses. The same statements in the same order; the body may not
//!   leave the loop, write the counter or synchronise (`loops::body_blocker`).
//! - `let-element`: `s[i][j]` with literal indices, `s` a `let` built by constructors whose
//!   element is a load of a local variable no statement writes after the constructor → that
//!   variable: the same value, read where it still holds it.

use super::whole_line;
use crate::analysis::ir::{Analysis, Edit};
use crate::analysis::loops::{self, FnRef, Known, Update};
use crate::analysis::text;
use naga::{Expression, Handle};

/// The longest loop written out.
pub const MAX_TRIPS: i64 = 16;
/// The most text a written-out loop may take.
const MAX_TEXT: usize = 16 * 1024;

/// The edits of `unroll-registers` (see the module documentation).
pub(super) fn unroll_register_loops(a: &Analysis<'_>) -> Vec<Edit> {
    let module = a.module;
    let f = a.function;
    let wgsl = a.source;
    let Some(ep) = loops::entry_index(module, &a.entry.name) else {
        return Vec::new();
    };
    let all = loops::for_loops(module, wgsl, FnRef::Entry(ep), f);
    let mut out: Vec<Edit> = Vec::new();
    for lp in &all {
        // Innermost first: an outer loop waits for the next round.
        if all.iter().any(|o| {
            o.span != lp.span && lp.span.start <= o.span.start && o.span.end <= lp.span.end
        }) {
            continue;
        }
        if !indexes_register(a, lp.counter) {
            continue;
        }
        if let Some(text) = written_out(a, lp) {
            let range = whole_line(a, &lp.span);
            let keep_indent = range.start != lp.span.start;
            let indent = a.indent_at(lp.span.start);
            let text = if keep_indent {
                format!("{indent}{text}\n")
            } else {
                text
            };
            out.push(Edit::replace(range, text));
        }
    }
    out
}

/// Whether `counter` is read in the index of an access to a local array or a constructed value.
fn indexes_register(a: &Analysis<'_>, counter: Handle<naga::LocalVariable>) -> bool {
    let f = a.function;
    f.expressions.iter().any(|(_, e)| {
        let Expression::Access { base, index } = *e else {
            return false;
        };
        a.reads_local(index, counter) && register_root(a, base, counter)
    })
}

/// Whether `h`, through accesses, is a local variable other than `counter` or a constructed
/// value.
fn register_root(
    a: &Analysis<'_>,
    mut h: Handle<Expression>,
    counter: Handle<naga::LocalVariable>,
) -> bool {
    loop {
        match a.function.expressions[h] {
            Expression::Access { base, .. } | Expression::AccessIndex { base, .. } => h = base,
            Expression::Compose { .. } => return true,
            Expression::LocalVariable(v) => return v != counter,
            _ => return false,
        }
    }
}

/// The loop written out, one `{ }` per value of its counter, when it qualifies.
fn written_out(a: &Analysis<'_>, lp: &loops::ForLoop<'_>) -> Option<String> {
    let module = a.module;
    let f = a.function;
    let wgsl = a.source;
    let Update::Add(step) = lp.update else {
        return None;
    };
    let known = |h| match loops::known_int(module, &f.expressions, h, &[]) {
        Some(Known {
            value,
            from_override: false,
        }) => Some(value),
        _ => None,
    };
    let (init, bound, step) = (known(lp.init)?, known(lp.bound)?, known(step)?);
    let end = match lp.cmp {
        naga::BinaryOperator::Less => bound,
        naga::BinaryOperator::LessEqual => bound + 1,
        _ => return None,
    };
    if step <= 0 || end <= init {
        return None;
    }
    let trips = (end - init + step - 1) / step;
    if trips > MAX_TRIPS || trips as usize * lp.body_text.len() > MAX_TEXT {
        return None;
    }
    if loops::body_blocker(module, f, lp.body, lp.counter).is_some() {
        return None;
    }
    let uses = loops::counter_uses(module, wgsl, f, lp).ok()?;
    // Each copy in its own `{ }` where the body declares names; otherwise the copies share the
    // loop's block, so a value a copy stores is read after it as in one block.
    let declares = text::blank_comments(&wgsl[lp.body_text.clone()])
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|w| matches!(w, "let" | "var" | "const"));
    let (open, close) = if declares { (" {", "}") } else { (" ", "") };
    let mut s = String::new();
    for k in 0..trips {
        let v = text::int_literal(init + k * step, lp.signed);
        let edits: Vec<text::Edit> = uses
            .iter()
            .map(|u| text::Edit::replace(u.clone(), v.clone()))
            .collect();
        let body = text::apply_within(wgsl, lp.body_text.clone(), &edits)?;
        s.push_str(&format!("{open}{body}{close}"));
    }
    Some(s.trim().to_owned())
}

/// The constructor `h` is, through the accesses at literal indices it is reached by.
fn composed(a: &Analysis<'_>, h: Handle<Expression>) -> Option<Handle<Expression>> {
    match a.function.expressions[h] {
        Expression::Compose { .. } => Some(h),
        _ => None,
    }
}

/// The element a chain of accesses at literal indices reaches in a constructed value.
fn element(a: &Analysis<'_>, h: Handle<Expression>) -> Option<Handle<Expression>> {
    let f = a.function;
    let (base, index) = match f.expressions[h] {
        Expression::AccessIndex { base, index } => (base, index as usize),
        Expression::Access { base, index } => (base, usize::try_from(a.const_int(index)?).ok()?),
        _ => return None,
    };
    let inner = composed(a, base).or_else(|| element(a, base))?;
    let Expression::Compose { ref components, .. } = f.expressions[inner] else {
        return None;
    };
    components.get(index).copied()
}

/// The edits of `let-element` (see the module documentation).
pub(super) fn let_elements(a: &Analysis<'_>) -> Vec<Edit> {
    let f = a.function;
    let mut out: Vec<Edit> = Vec::new();
    for (h, _) in f.expressions.iter() {
        let Some(target) = element(a, h) else {
            continue;
        };
        // The longest chain only: a user that is itself an element read takes it.
        if f.expressions.iter().any(|(u, _)| {
            element(a, u).is_some()
                && crate::analysis::expr::operands(&f.expressions[u]).contains(&h)
        }) {
            continue;
        }
        let Expression::Load { pointer } = f.expressions[target] else {
            continue;
        };
        let Expression::LocalVariable(v) = f.expressions[pointer] else {
            continue;
        };
        // The variable still holds the value: no store to it after the constructor's load.
        let (Some(at), Some(read)) = (a.evaluated_at(target), a.evaluated_at(h)) else {
            continue;
        };
        // Nor a call that is handed a pointer to it.
        let handed = a.stmts[at..].iter().any(|st| match st.stmt {
            naga::Statement::Call { arguments, .. } => {
                arguments.iter().any(|&x| a.local_root(x) == Some(v))
            }
            _ => false,
        });
        if handed || a.stores_to(v).iter().any(|&s| s >= at) || read < at {
            continue;
        }
        let (Some(range), Some(name)) = (a.expr_range(h), f.local_variables[v].name.as_ref())
        else {
            continue;
        };
        if out
            .iter()
            .any(|e| e.range.start < range.end && range.start < e.range.end)
        {
            continue;
        }
        out.push(Edit::replace(range, name.clone()));
    }
    out
}

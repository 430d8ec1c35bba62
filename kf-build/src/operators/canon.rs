//! The canonical form: equivalent spellings of one computation rewritten into one spelling before
//! any operator looks at a program.
//!
//! People write the same reduction many ways (`m = max(m, v)`, `if (v > m) { m = v; }`,
//! `m = select(m, v, v > m)`). An operator that proves its pattern from the IR sees each spelling
//! as a different IR and would need a pattern per spelling, repeated in every operator. Instead
//! the search rewrites each parent once into the canonical spelling ([`canonicalise`]) and hands
//! the operators that program: every operator matches one form, and a new spelling is taught once,
//! here.
//!
//! Each normalisation is proven from naga's IR and applied as text edits at naga's spans (the
//! [`crate::analysis::ir::Edit`] machinery); the result is re-parsed, re-validated and checked against the
//! baseline's interface ([`super::finish`]). A normalisation that cannot be proven is not
//! applied; when the result does not validate, the parent is used as written.
//!
//! Normalisations (the canonical side on the right):
//!
//! - `if (v > m) { m = v; }` (also `>=`, `m < v`, `m <= v`) → `m = max(m, v);`, and the `<`
//!   spellings → `min`: the `if` has no `else`, its only statement stores the compared value
//!   into the local `m` it was compared with. Equal for every non-NaN value (with a NaN the
//!   `if` keeps `m` and `max` may return either; the evaluator compares NaN with NaN);
//! - `m = select(m, v, v > m)` and its mirror spellings → `m = max(m, v)` (likewise `min`);
//! - an arg-reduction's pair of selects, `k = select(k, i, v > m); m = select(m, v, v > m);`
//!   (the index first, so both tests see the old `m`) or both under one `let take = v > m;` in
//!   either order → `if (v > m) { m = v; k = i; }`, the form the analysis recognises as a
//!   (value, index) accumulator ([`super::ir::ArgAccumulator`]). Exact: the test is evaluated
//!   once, before either store, as in the original; `v` and `i` read neither variable.
//!
//! Forms that naga's IR already makes equal need nothing here: `x op= y` is lowered to
//! `x = x op y`, `i++` to `i = i + 1`, and `for`, `while` and `loop { if c { break; } .. }` to the
//! same `Loop` (the analysis in [`crate::analysis::ir`] recognises all three as counted loops).
//!
//! Invariant: a normalisation changes no value the kernel computes except as noted above, and
//! never reassociates a floating-point sum; one that did would have to say so in its step.

use super::{Rewrite, Subject};
use crate::analysis::ir::{self, Analysis, Edit, Naming};
use naga::{BinaryOperator, Expression, Handle, LocalVariable, MathFunction, Statement};

/// Rounds of normalisation (each round re-parses the text the previous one wrote).
const ROUNDS: usize = 4;

/// `subject`'s program in canonical spelling, or `None` when it already is (or nothing could be
/// proven). The rewrite's step names the normalisations applied, e.g. `canon(max ×2)`.
pub fn canonicalise(subject: &Subject<'_>) -> Option<Rewrite> {
    // A sequence is rewritten only by operators that keep every stage (`Operator::handles_sequences`).
    if subject.program.is_sequence() {
        return None;
    }
    let mut text = subject.program.wgsl.to_string();
    let mut applied: Vec<&'static str> = Vec::new();
    for _ in 0..ROUNDS {
        let Ok(parsed) = ir::parse(&text) else {
            break;
        };
        let Ok(a) = parsed.analyse(&subject.program.entry) else {
            break;
        };
        let found = normalisations(&a);
        if found.is_empty() {
            break;
        }
        let edits: Vec<Edit> = found.iter().map(|(e, _)| e.clone()).collect();
        let Some(next) = ir::apply_edits(&text, &edits) else {
            break;
        };
        if ir::parse(&next).is_err() {
            break;
        }
        applied.extend(found.iter().map(|(_, what)| *what));
        text = next;
    }
    if applied.is_empty() {
        return None;
    }
    let mut names: Vec<&str> = applied.clone();
    names.sort_unstable();
    names.dedup();
    let step = format!(
        "canon({})",
        names
            .iter()
            .map(|n| match applied.iter().filter(|a| *a == n).count() {
                1 => (*n).to_owned(),
                k => format!("{n} ×{k}"),
            })
            .collect::<Vec<_>>()
            .join(", ")
    );
    super::finish(subject, text, &[], step, Vec::new()).ok()
}

/// The edits of every normalisation that applies to `a`, each with its name; no two overlap.
fn normalisations(a: &Analysis<'_>) -> Vec<(Edit, &'static str)> {
    let mut out: Vec<(Edit, &'static str)> = Vec::new();
    // Pairs first: their value select alone would otherwise become a `max`.
    for s in 0..a.stmts.len() {
        if let Some(found) = select_pair_to_if(a, s)
            && !out.iter().any(|(e, _)| overlaps(&e.range, &found.0.range))
        {
            out.push(found);
        }
    }
    for s in 0..a.stmts.len() {
        let found = if_to_extremum(a, s).or_else(|| select_to_extremum(a, s));
        if let Some(found) = found
            && !out.iter().any(|(e, _)| overlaps(&e.range, &found.0.range))
        {
            out.push(found);
        }
    }
    out
}

fn overlaps(x: &ir::TextRange, y: &ir::TextRange) -> bool {
    x.start < y.end && y.start < x.end
}

/// The local variable `h` loads, if it is a plain load of one.
fn load_of(a: &Analysis<'_>, h: Handle<Expression>) -> Option<Handle<LocalVariable>> {
    match a.function.expressions[h] {
        Expression::Load { pointer } => match a.function.expressions[pointer] {
            Expression::LocalVariable(v) => Some(v),
            _ => None,
        },
        _ => None,
    }
}

/// Whether `x` and `y` are the same value, given that nothing is stored between their
/// evaluations (the caller guarantees that): one expression, or the same expression written twice
/// (`x[i]` in the test and again in the assignment) — printed alike down to globals, literals and
/// local loads, which excludes calls.
fn same_value(a: &Analysis<'_>, x: Handle<Expression>, y: Handle<Expression>) -> bool {
    x == y
        || matches!(
            (a.expr_wgsl(x, Naming::Inline), a.expr_wgsl(y, Naming::Inline)),
            (Some(p), Some(q)) if p == q
        )
}

/// For a comparison `condition` between a load of `m` and another value: that value, and the
/// extremum the comparison picks when it selects the other value (`v > m` and `m < v` pick the
/// larger: `max`).
fn compared(
    a: &Analysis<'_>,
    condition: Handle<Expression>,
    m: Handle<LocalVariable>,
) -> Option<(Handle<Expression>, MathFunction)> {
    let Expression::Binary { op, left, right } = a.function.expressions[condition] else {
        return None;
    };
    let greater = match op {
        BinaryOperator::Greater | BinaryOperator::GreaterEqual => true,
        BinaryOperator::Less | BinaryOperator::LessEqual => false,
        _ => return None,
    };
    let (other, other_on_left) = match (load_of(a, left) == Some(m), load_of(a, right) == Some(m)) {
        (false, true) => (left, true),
        (true, false) => (right, false),
        _ => return None,
    };
    // `v > m` and `m < v` both hold when v is the larger.
    let max = greater == other_on_left;
    Some((
        other,
        if max {
            MathFunction::Max
        } else {
            MathFunction::Min
        },
    ))
}

fn extremum_text(
    a: &Analysis<'_>,
    fun: MathFunction,
    m: &str,
    v: Handle<Expression>,
) -> Option<String> {
    let v = a.expr_wgsl(v, Naming::Names)?;
    let name = if fun == MathFunction::Max {
        "max"
    } else {
        "min"
    };
    Some(format!("{name}({m}, {v})"))
}

/// Whether the value's type is a scalar number (a comparison of vectors cannot be an `if` test,
/// but a `select` can take a vector of conditions).
fn scalar_number(a: &Analysis<'_>, h: Handle<Expression>) -> bool {
    matches!(
        a.type_of(h),
        naga::TypeInner::Scalar(s) if matches!(
            s.kind,
            naga::ScalarKind::Float | naga::ScalarKind::Sint | naga::ScalarKind::Uint
        )
    )
}

/// `if (v > m) { m = v; }` → `m = max(m, v);` (see the module documentation).
fn if_to_extremum(a: &Analysis<'_>, s: usize) -> Option<(Edit, &'static str)> {
    let st = &a.stmts[s];
    let Statement::If {
        condition,
        ref accept,
        ref reject,
    } = *st.stmt
    else {
        return None;
    };
    if reject.iter().any(|r| !matches!(r, Statement::Emit(_))) {
        return None;
    }
    let mut stores = accept.iter().filter(|x| !matches!(x, Statement::Emit(_)));
    let Some(&Statement::Store { pointer, value }) = stores.next() else {
        return None;
    };
    if stores.next().is_some() {
        return None;
    }
    let Expression::LocalVariable(m) = a.function.expressions[pointer] else {
        return None;
    };
    let (other, fun) = compared(a, condition, m)?;
    if !same_value(a, other, value) || !scalar_number(a, value) {
        return None;
    }
    // The text: from `if` to the accept block's `}`, with no `else` after it.
    let span = st.span.clone()?;
    if !a.code()[span.clone()].trim_start().starts_with("if") {
        return None;
    }
    let cond_end = a.expr_range(condition)?.end;
    let open = cond_end + a.code()[cond_end..].find('{')?;
    if !a.code()[cond_end..open]
        .chars()
        .all(|c| c == ')' || c.is_whitespace())
    {
        return None;
    }
    let close = matching_brace(a.code(), open)?;
    let after = a.code()[close + 1..].trim_start();
    if after.starts_with("else") {
        return None;
    }
    let name = a.function.local_variables[m].name.clone()?;
    let text = format!("{name} = {};", extremum_text(a, fun, &name, other)?);
    Some((Edit::replace(span.start..close + 1, text), op_label(fun)))
}

/// `m = select(m, v, v > m)` → `m = max(m, v)` (see the module documentation).
fn select_to_extremum(a: &Analysis<'_>, s: usize) -> Option<(Edit, &'static str)> {
    let (m, accept, condition) = select_store(a, s)?;
    let Statement::Store { value, .. } = *a.stmts[s].stmt else {
        return None;
    };
    let (other, fun) = compared(a, condition, m)?;
    // `select(f, t, c)` is `c ? t : f`: the stored value is the other one when the test holds.
    if !same_value(a, accept, other) {
        return None;
    }
    let name = a.function.local_variables[m].name.clone()?;
    let range = a.expr_range(value)?;
    Some((
        Edit::replace(range, extremum_text(a, fun, &name, other)?),
        op_label(fun),
    ))
}

/// `store(x, select(x, t, c))` of a local `x`: `x`, `t` and `c`.
fn select_store(
    a: &Analysis<'_>,
    s: usize,
) -> Option<(
    Handle<LocalVariable>,
    Handle<Expression>,
    Handle<Expression>,
)> {
    let Statement::Store { pointer, value } = *a.stmts[s].stmt else {
        return None;
    };
    let Expression::LocalVariable(x) = a.function.expressions[pointer] else {
        return None;
    };
    let Expression::Select {
        condition,
        accept,
        reject,
    } = a.function.expressions[value]
    else {
        return None;
    };
    (load_of(a, reject) == Some(x) && scalar_number(a, value)).then_some((x, accept, condition))
}

/// `k = select(k, i, v > m); m = select(m, v, v > m);` (or both under one `let`) → `if (v > m)
/// { m = v; k = i; }` (see the module documentation). `s` is the first of the two statements.
fn select_pair_to_if(a: &Analysis<'_>, s: usize) -> Option<(Edit, &'static str)> {
    let (x1, t1, c1) = select_store(a, s)?;
    let second = a.siblings(s).into_iter().find(|&o| {
        a.stmts[o].index_in_block > a.stmts[s].index_in_block
            && !matches!(a.stmts[o].stmt, Statement::Emit(_))
    })?;
    let (x2, t2, c2) = select_store(a, second)?;
    if x1 == x2 || !same_value(a, c1, c2) {
        return None;
    }
    // Which one is the value: the variable the test compares with.
    let ((m, v), (k, i)) = match (compared(a, c1, x1), compared(a, c1, x2)) {
        (Some((other, _)), None) => {
            // The value is stored first: only one shared test sees the old value in both.
            if c1 != c2 {
                return None;
            }
            ((x1, (t1, other)), (x2, t2))
        }
        (None, Some((other, _))) => ((x2, (t2, other)), (x1, t1)),
        _ => return None,
    };
    let (stored, element) = v;
    if !same_value(a, stored, element) {
        return None;
    }
    for h in [element, i] {
        if a.reads_local(h, m) || a.reads_local(h, k) {
            return None;
        }
    }
    let (span1, span2) = (a.stmts[s].span.clone()?, a.stmts[second].span.clone()?);
    let end = a.with_semicolon(&span2).end;
    // Nothing but whitespace and comments between the two statements.
    let between = a.with_semicolon(&span1).end;
    if !a.code()[between..span2.start].trim().is_empty() {
        return None;
    }
    let name = |x: Handle<LocalVariable>| a.function.local_variables[x].name.clone();
    let (m_name, k_name) = (name(m)?, name(k)?);
    let cond = a.expr_wgsl(c1, Naming::Names)?;
    let cond = match cond.strip_prefix('(').and_then(|c| c.strip_suffix(')')) {
        // One pair of parentheses around the whole test (not `(a) > (b)`).
        Some(inner) if matching_paren(&cond) == Some(cond.len() - 1) => inner.to_owned(),
        _ => cond,
    };
    let text = format!(
        "if ({cond}) {{ {m_name} = {}; {k_name} = {}; }}",
        a.expr_wgsl(element, Naming::Names)?,
        a.expr_wgsl(i, Naming::Names)?
    );
    Some((Edit::replace(span1.start..end, text), "arg-if"))
}

fn op_label(fun: MathFunction) -> &'static str {
    if fun == MathFunction::Max {
        "max"
    } else {
        "min"
    }
}

/// The `)` matching a text's opening `(`.
fn matching_paren(text: &str) -> Option<usize> {
    let mut depth = 0i32;
    for (i, b) in text.bytes().enumerate() {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The `}` matching the `{` at `open`, in comment-blanked text.
fn matching_brace(code: &str, open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (i, b) in code.bytes().enumerate().skip(open) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests;

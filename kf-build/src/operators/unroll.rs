//! Loop unrolling: counted `for` loops copied 2, 4 or 8 times per iteration with a remainder loop,
//! or fully when the trip count is known and short.
//!
//! What it proves from the IR, per loop (see `loops::for_loop`):
//!
//! - the loop is `for (var i = INIT; i < BOUND; i += STEP)` (or `<=`, `i++`, `i = i + STEP`,
//!   `BOUND > i`), the counter declared in the header, STEP a positive constant;
//! - BOUND has the same value in every iteration (constants, overrides, builtins, values computed
//!   before the loop, loads from uniform or read-only storage, locals the loop never writes);
//! - the body never writes the counter, takes its address, leaves the loop (`break`, `continue`,
//!   `return`) or synchronises invocations (barriers, subgroup operations, also inside calls).
//!
//! The body is copied as text; each copy replaces the counter at the exact spans of its uses
//! (`loops::counter_uses`) with `(i + k·STEP)`, or with the literal value when the counter's
//! values are known. Each copy sits in its own `{ }` so its declarations stay apart. A factor-F
//! unroll runs `for (; COND[i := i + (F-1)·STEP]; i += F·STEP) { copies }` then the original loop
//! as the remainder: the condition is monotone in the counter, so the main loop runs only whole
//! groups, which is correct for any trip count, including a different one per invocation.
//!
//! A full unroll is offered when INIT, BOUND and STEP are known and the trip count is at most 16.
//! When BOUND comes from an `override`, each copy is guarded by its condition (the pipeline
//! compiler folds the guards) and the original loop follows for the iterations past the current
//! value, so the rewrite stays right when the parameter search changes the override.
//!
//! `while` and `loop { if .. { break; } .. }` spellings reach it as this `for` through the
//! canonical form (`super::canon`), which the search applies before any operator.
//!
//! Limits: decreasing or multiplicative counters, non-constant steps and a counter that lives on
//! after its loop are not recognised; `i + (F-1)·STEP` must not
//! overflow (BOUND within `(F-1)·STEP` of the type's maximum); bodies larger than 16 KiB of text
//! after copying are not unrolled.
//!
//! Moves: none. Unrolling is a local optimisation: it keeps the algorithm, the memory technique,
//! the cooperation and the outputs per invocation, so it keeps its parent's archive cell and
//! competes there on speed alone.

use super::{Moves, Operator, Rewrite, Skip, Subject};
use crate::analysis::loops::{self, ForLoop, Known, LoopScope, Update};
use crate::analysis::text::{self, Edit};
use naga::common::wgsl::TypeContext;

/// The loop unrolling operator.
#[derive(Clone, Copy, Debug, Default)]
pub struct Unroll;

/// Unroll factors offered, each as its own rewrite.
pub const FACTORS: [i64; 3] = [2, 4, 8];
/// Longest trip count unrolled fully.
pub const FULL_MAX: i64 = 16;
/// Largest copied body text, in bytes.
const MAX_TEXT: usize = 16 * 1024;

impl Operator for Unroll {
    fn name(&self) -> &'static str {
        "unroll"
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
        let constants = program.constants_pairs();
        let mut out = Vec::new();
        let mut skips = Vec::new();
        let mut n_loops = 0;
        for fref in loops::reachable(&r.module, ep) {
            let f = loops::function(&r.module, fref);
            for lp in loops::for_loops(&r.module, wgsl, fref, f) {
                n_loops += 1;
                match unroll_loop(subject, &r.module, f, &lp, &constants) {
                    Ok(mut rws) => out.append(&mut rws),
                    Err(e) => {
                        skips.push(format!("line {}: {e}", text::line_of(wgsl, lp.span.start)))
                    }
                }
            }
        }
        if out.is_empty() {
            return Err(Skip(if n_loops == 0 {
                "no counted `for` loop".into()
            } else {
                skips.join("; ")
            }));
        }
        Ok(out)
    }
}

/// Every rewrite of one loop: a full unroll where the trip count allows, then each factor.
fn unroll_loop(
    subject: &Subject<'_>,
    module: &naga::Module,
    f: &naga::Function,
    lp: &ForLoop<'_>,
    constants: &[(&str, f64)],
) -> Result<Vec<Rewrite>, Skip> {
    let wgsl = subject.program.wgsl.as_ref();
    let Update::Add(step) = lp.update else {
        return Err(Skip("the counter does not grow by addition".into()));
    };
    // A step that is an `override` (a lane count, `r += KF_REDUCE_GROUP`) is kept by name, so the
    // unrolled loop stays right for every value the parameter search gives it; only an unsigned
    // counter, whose step can never be negative (a zero step never ends, unrolled or not).
    let step_override = match &f.expressions[step] {
        naga::Expression::Override(o) if !lp.signed => module.overrides[*o].name.clone(),
        _ => None,
    };
    let step = match loops::known_int(module, &f.expressions, step, constants) {
        Some(Known {
            value,
            from_override: false,
        }) if value > 0 => value,
        Some(Known {
            value,
            from_override: true,
        }) if value > 0 && step_override.is_some() => value,
        _ => return Err(Skip("the step is not a positive constant".into())),
    };
    let inclusive = match lp.cmp {
        naga::BinaryOperator::Less => false,
        naga::BinaryOperator::LessEqual => true,
        _ => {
            return Err(Skip(
                "the condition is not `i < bound` or `i <= bound`".into(),
            ));
        }
    };
    if let Some(why) = loops::body_blocker(module, f, lp.body, lp.counter) {
        return Err(Skip(why));
    }
    let scope = LoopScope::new(f, lp.loop_body, lp.continuing);
    if !scope.is_invariant(module, f, lp.bound) {
        return Err(Skip("the bound changes inside the loop".into()));
    }
    let uses = loops::counter_uses(module, wgsl, f, lp)?;
    let name = f.local_variables[lp.counter]
        .name
        .clone()
        .unwrap_or_default();
    let ty = module
        .to_ctx()
        .type_to_string(f.local_variables[lp.counter].ty);
    let lit = |v: i64| {
        let l = text::int_literal(v, lp.signed);
        if v < 0 { format!("({l})") } else { l }
    };
    // `k` steps: a literal, or `k * NAME` for a step that is an override.
    let steps = |k: i64| match &step_override {
        None => lit(k * step),
        Some(n) if k == 1 => n.clone(),
        Some(n) => format!("({} * {n})", lit(k)),
    };
    let cond_range = text::range(f.expressions.get_span(lp.cond))
        .ok_or_else(|| Skip("the condition has no span".into()))?;
    let init_range = lp.init_text.clone();
    // A range of the text with every use of the counter replaced by `with`.
    let subst = |range: std::ops::Range<usize>, with: &str| -> Result<String, Skip> {
        let edits: Vec<Edit> = uses
            .iter()
            .map(|u| Edit::replace(u.clone(), with.to_owned()))
            .collect();
        text::apply_within(wgsl, range, &edits).ok_or_else(|| Skip("overlapping edits".into()))
    };
    let body = |with: &str| subst(lp.body_text.clone(), with);
    let cond = |with: &str| subst(cond_range.clone(), with);
    let original = &wgsl[lp.span.clone()];
    let line = text::line_of(wgsl, lp.span.start);
    let body_len = lp.body_text.len();

    // The loop with `factor` copies per iteration, then the original loop for the rest.
    let by_factor = |factor: i64| -> Result<String, Skip> {
        let at = |k: i64| {
            if k == 0 {
                name.clone()
            } else {
                format!("({name} + {})", steps(k))
            }
        };
        let mut s = format!(
            "{{ // KernelFoundry: `{name}` loop unrolled by {factor}\nvar {name}: {ty} = {};\nfor (; {}; {name} += {}) {{\n",
            &wgsl[init_range.clone()],
            cond(&at(factor - 1))?,
            steps(factor)
        );
        for k in 0..factor {
            s.push_str(&format!("{{{}}}\n", body(&at(k))?));
        }
        s.push_str(&format!(
            "}}\nfor (; {}; {name} += {}) {{{}}}\n}}",
            &wgsl[cond_range.clone()],
            steps(1),
            &wgsl[lp.body_text.clone()]
        ));
        Ok(s)
    };
    let mut texts: Vec<(String, String)> = Vec::new();
    // Full unroll: known counter values.
    let init = loops::known_int(module, &f.expressions, lp.init, constants);
    let bound = loops::known_int(module, &f.expressions, lp.bound, constants);
    if let (Some(init), Some(bound)) = (init, bound)
        && !init.from_override
        && step_override.is_none()
    {
        let end = bound.value + i64::from(inclusive);
        let trips = if end > init.value {
            (end - init.value + step - 1) / step
        } else {
            0
        };
        if trips == 0 && !bound.from_override {
            return Err(Skip("the loop never runs".into()));
        }
        if (1..=FULL_MAX).contains(&trips) && trips as usize * body_len <= MAX_TEXT {
            let mut s = format!("{{ // KernelFoundry: `{name}` loop unrolled fully\n");
            for k in 0..trips {
                let v = lit(init.value + k * step);
                if bound.from_override {
                    s.push_str(&format!("if ({}) {{{}}}\n", cond(&v)?, body(&v)?));
                } else {
                    s.push_str(&format!("{{{}}}\n", body(&v)?));
                }
            }
            if bound.from_override {
                // The iterations past the override's current value.
                s.push_str(&format!(
                    "for (var {name}: {ty} = {}; {}; {name} += {}) {{{}}}\n",
                    lit(init.value + trips * step),
                    &wgsl[cond_range.clone()],
                    lit(step),
                    &wgsl[lp.body_text.clone()]
                ));
            }
            s.push('}');
            texts.push((format!("unroll({name}@{line}, full)"), s));
        }
        for factor in FACTORS {
            if factor >= trips {
                continue;
            }
            texts.push((
                format!("unroll({name}@{line}, x{factor})"),
                by_factor(factor)?,
            ));
        }
    } else {
        for factor in FACTORS {
            texts.push((
                format!("unroll({name}@{line}, x{factor})"),
                by_factor(factor)?,
            ));
        }
    }
    let mut out = Vec::new();
    let mut last = None;
    for (step_name, replacement) in texts {
        if replacement.len() > MAX_TEXT + original.len() {
            continue;
        }
        let new = text::apply_edits(wgsl, &[Edit::replace(lp.span.clone(), replacement)])
            .ok_or_else(|| Skip("edit".into()))?;
        match super::finish(subject, new, &[], step_name, Vec::new()) {
            Ok(rw) => out.push(rw),
            Err(e) => last = Some(e),
        }
    }
    if out.is_empty() {
        return Err(
            last.unwrap_or_else(|| Skip("no unroll fits the trip count and the size limit".into()))
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests;

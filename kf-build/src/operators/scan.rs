//! A row scan per workgroup: a loop that writes its running sum at every step (an inclusive
//! prefix sum, `run += x[i]; out[i] = run;`, or an exclusive one, `out[i] = run; run += x[i];`)
//! becomes a scan across the lanes of one workgroup.
//!
//! Written one row per invocation, a prefix sum is a chain: each step needs the one before, so an
//! invocation walks its whole row alone and neighbouring invocations read addresses a row apart.
//! Addition is associative (up to rounding), so the row can be cut into tiles of `W` steps: the
//! `W` lanes of a workgroup load one tile side by side (coalesced), scan it in workgroup memory
//! (`log2 W` rounds of the Hillis–Steele scan), add the carry of the tiles before, store side by
//! side, and carry the tile's total on. No second launch is needed: a row's carry stays in a
//! register of every lane.
//!
//! **What is proven from naga's IR** (the shared analysis in `analysis::ir` and `analysis::flow`):
//! - the entry point reads only `global_invocation_id`; its body is straight-line code and bounds
//!   guards (`if c { return; }`, or the rest of the body wrapped in `if c { .. }`) that depend
//!   only on the invocation id and invariants, exactly one loop, and nothing after it;
//! - the loop is a counted loop (`for`, `while` with the step last, `loop` with `continuing`)
//!   from an invariant start while `counter < K` (or `<=`) with `K` invariant, stepping by +1;
//! - its body is the exit test, then any number of stores to storage buffers of values computed
//!   from `acc` and the counter (these see the exclusive prefix: an exclusive scan), then
//!   `acc = acc + e` for one `f32` local `acc` (the only loop-carried value), where `e` does not
//!   read `acc`, then any number of such stores again (these see the inclusive prefix), then the
//!   counter's step; nothing else (no calls, barriers, atomics, other locals carried across
//!   iterations);
//! - the loop reads no buffer it writes.
//!
//! **The rewrite** replaces the entry point (its text range; the rest of the module is kept) with
//! one workgroup per baseline invocation: `global_invocation_id` becomes `workgroup_id`, the
//! launch rule `workgroups = (the baseline's invocations per axis)`, the guards are re-emitted
//! for that id (uniform across the workgroup, so every barrier stays in uniform control flow),
//! and the loop walks the row in tiles of `W` counter values, lane `l` taking value `t + l`.
//! A lane whose value fails the loop condition contributes `0.0` and stores nothing. A store
//! before the update reads the lane's exclusive prefix: the scanned value of the lane before it
//! (`subgroupExclusiveAdd` in the subgroup form), plus the carry. Each configuration (`W` = 256 or 1024 lanes, within the adapter's limits) is its own rewrite.
//!
//! Invariant: every store the baseline makes, the rewrite makes once, at the same index, with the
//! prefix the baseline had there computed in another order: the step says
//! "float sums reassociated".

use super::{Moves, Operator, Rewrite, Skip, Subject};
use crate::analysis::flow::{
    Entry, Exprs, Guard, Locals, Printer, Value, flatten, is_break, one_unit_loop, statement_kind,
};
use crate::analysis::ir::{self, AccOp, Analysis};
use crate::evolve::descriptor::Dim;
use naga::{Expression, Handle, Statement};
use std::fmt::Write as _;

/// The symbol numbers of the loop counter and the running sum.
const COUNTER: usize = 0;
const ACC: usize = 1;

/// Prefix of every identifier the rewrite introduces.
const PREFIX: &str = "kfs_";

/// Lanes per workgroup the operator offers.
const WIDTHS: [u32; 2] = [256, 1024];

/// The row-scan operator (see the module documentation).
#[derive(Clone, Copy, Debug, Default)]
pub struct Scan;

impl Operator for Scan {
    fn name(&self) -> &'static str {
        "scan"
    }

    fn moves(&self) -> Moves {
        &[(Dim::Parallelism, 2), (Dim::Memory, 1)]
    }

    fn fixes_workgroup(&self) -> bool {
        true
    }

    fn apply(&self, subject: &Subject<'_>) -> Result<Vec<Rewrite>, Skip> {
        let program = subject.program;
        let wgsl = program.wgsl.as_ref();
        if wgsl.contains(PREFIX) {
            return Err(Skip("already a workgroup scan".into()));
        }
        let parsed = ir::parse(wgsl).map_err(|e| Skip(e.to_string()))?;
        let analysis = parsed
            .analyse(&program.entry)
            .map_err(|e| Skip(e.to_string()))?;
        let entry = Entry::new(&analysis)?;
        let (scan, locals) = recognise(&entry, &analysis)?;
        let x = Exprs {
            e: &entry,
            locals: &locals,
        };
        let range = analysis.entry_range()?;
        let dispatch = super::one_workgroup_per_invocation(program);
        let limit = subject
            .target
            .limit("max_compute_workgroups_per_dimension", 65535);
        for shape in subject.kernel.tune_shapes.iter() {
            let sizes = |n: &str| shape.get(n).copied();
            for e in &dispatch.size {
                if e.eval(sizes).is_ok_and(|n| n > limit) {
                    return Err(Skip(format!(
                        "one workgroup per invocation needs more than {limit} workgroups along an axis"
                    )));
                }
            }
        }
        let target = subject.target;
        let mut rewrites = Vec::new();
        let forms: &[bool] = if target.has_subgroups() {
            &[false, true]
        } else {
            &[false]
        };
        for (w, &subgroups) in WIDTHS
            .iter()
            .flat_map(|&w| forms.iter().map(move |s| (w, s)))
        {
            if u64::from(w) > target.limit("max_compute_invocations_per_workgroup", 256)
                || u64::from(w) > target.limit("max_compute_workgroup_size_x", 256)
                || u64::from(w) * 4 > target.limit("max_compute_workgroup_storage_size", 16384)
            {
                continue;
            }
            let function = generate(&scan, &x, w, subgroups, &program.entry)?;
            rewrites.push(Rewrite {
                program: super::replaced_entry(
                    program,
                    range.clone(),
                    &function,
                    [w, 1, 1],
                    w * 4,
                    dispatch.clone(),
                ),
                step: format!(
                    "scan({w} lanes{}, float sums reassociated)",
                    if subgroups { ", subgroups" } else { "" }
                ),
                params: Vec::new(),
            });
        }
        if rewrites.is_empty() {
            return Err(Skip("no workgroup width fits the adapter's limits".into()));
        }
        Ok(rewrites)
    }
}

/// The scan pattern, proven.
struct RowScan {
    counter_ty: String,
    counter_start: Value,
    /// The loop continues while `cond == continue_when`.
    cond: Handle<Expression>,
    continue_when: bool,
    acc_init: Value,
    /// What each step adds (`e` in `acc = acc + e`).
    term: Handle<Expression>,
    guards: Vec<Guard>,
    /// The stores: pointer, value, and whether the store comes before the update (it then sees
    /// the exclusive prefix).
    stores: Vec<(Handle<Expression>, Handle<Expression>, bool)>,
}

/// Proves the pattern on `e`, or says why it does not hold.
fn recognise<'a>(e: &'a Entry<'a>, a: &'a Analysis<'a>) -> Result<(RowScan, Locals), Skip> {
    if e.gid_arg.is_none() {
        return Err(Skip(
            "the entry point does not read global_invocation_id".into(),
        ));
    }
    let fl = one_unit_loop(a)?;
    let fx = a.loop_effects(0);
    let mut carried: Vec<Handle<naga::LocalVariable>> = fx
        .accumulators
        .iter()
        .map(|acc| acc.var)
        .chain(fx.carried.iter().map(|(v, _)| *v))
        .collect();
    carried.dedup();
    let [acc] = carried[..] else {
        return Err(Skip(
            "the loop does not carry exactly one running value".into(),
        ));
    };
    if !fx.args.is_empty()
        || fx.accumulators.iter().any(|x| x.op != AccOp::Add)
        || !matches!(
            e.module.types[e.func.local_variables[acc].ty].inner,
            naga::TypeInner::Scalar(naga::Scalar::F32)
        )
    {
        return Err(Skip("the running value is not an f32 sum".into()));
    }
    if fx.global_writes.is_empty() {
        return Err(Skip(
            "the loop stores nothing: a sum that is only read at the end is a reduction".into(),
        ));
    }
    if !fx.effectful_calls.is_empty() || !fx.other.is_empty() {
        return Err(Skip("the loop has effects besides its stores".into()));
    }
    let written: Vec<_> = fx
        .global_writes
        .iter()
        .map(|&i| a.accesses[i].global)
        .collect();
    if fx
        .global_reads
        .iter()
        .any(|&i| written.contains(&a.accesses[i].global))
    {
        return Err(Skip("the loop reads a buffer it writes".into()));
    }

    // The statements around the loop: straight-line code, guards, the loop, nothing after.
    let mut locals = Locals::new(e.func);
    let mut guards = Vec::new();
    let mut list = Vec::new();
    flatten(&e.func.body, &mut list);
    let mut body: Option<(&naga::Block, &naga::Block)> = None;
    let mut i = 0;
    while i < list.len() {
        let s = list[i];
        let rest_is_return = list[i + 1..]
            .iter()
            .all(|s| matches!(s, Statement::Return { value: None }));
        match s {
            Statement::Emit(r) => locals.emit(e, r)?,
            Statement::Store { pointer, value } if body.is_none() => {
                let l = e
                    .as_local(*pointer)
                    .ok_or_else(|| Skip("stores to memory outside the loop".into()))?;
                locals.current.insert(l, Value::Expr(*value));
            }
            Statement::If {
                condition,
                accept,
                reject,
            } if body.is_none() => {
                if locals.short_circuit(e, *condition, accept, reject)? {
                    i += 1;
                    continue;
                }
                let (guard, inner) =
                    crate::analysis::flow::bounds_guard(*condition, accept, reject, rest_is_return)
                        .ok_or_else(|| Skip("branches that are not bounds guards".into()))?;
                guards.push(guard);
                if let Some(inner) = inner {
                    // The rest of the body wrapped in the guard: walk it instead.
                    list.truncate(i);
                    flatten(inner, &mut list);
                    continue;
                }
            }
            Statement::Loop {
                body: b,
                continuing,
                break_if: None,
            } if body.is_none() => body = Some((b, continuing)),
            Statement::Return { value: None } if rest_is_return => break,
            other => {
                return Err(Skip(format!(
                    "the kernel has {} outside the pattern",
                    statement_kind(other)
                )));
            }
        }
        i += 1;
    }
    let (loop_body, continuing) = body.ok_or_else(|| Skip("no loop".into()))?;
    let counter = fl.var;
    let counter_start = *locals
        .current
        .get(&counter)
        .ok_or_else(|| Skip("the loop counter has no value before the loop".into()))?;
    let acc_init = *locals
        .current
        .get(&acc)
        .ok_or_else(|| Skip("the running value has no value before the loop".into()))?;
    {
        let x = Exprs { e, locals: &locals };
        for g in &guards {
            let d = x.deps(g.cond);
            if d.symbols != 0 || d.unknown || d.gid_whole || d.varying_load {
                return Err(Skip(
                    "a guard is not a bounds test on the invocation id".into(),
                ));
            }
        }
        let invariant = |v: Value| match v {
            Value::Expr(h) => x.deps(h).is_invariant(),
            _ => false,
        };
        if !invariant(counter_start) || !x.deps(fl.bounds[0].bound).is_invariant() {
            return Err(Skip(
                "the loop's start or bound varies between invocations".into(),
            ));
        }
        let init = match acc_init {
            Value::Expr(h) => x.deps(h),
            _ => return Err(Skip("the running value's start is not understood".into())),
        };
        if init.symbols != 0 || init.unknown {
            return Err(Skip("the running value's start is not understood".into()));
        }
    }
    locals.current.insert(counter, Value::Symbol(COUNTER));
    locals.current.insert(acc, Value::Symbol(ACC));

    // The body: its exit test, the update, the stores, the step.
    let mut list = Vec::new();
    flatten(loop_body, &mut list);
    flatten(continuing, &mut list);
    let (mut exit_seen, mut term, mut stores) = (false, None, Vec::new());
    for s in list {
        match s {
            Statement::Emit(r) => locals.emit(e, r)?,
            Statement::If { accept, reject, .. }
                if !exit_seen
                    && term.is_none()
                    && ((accept.is_empty() && is_break(reject))
                        || (is_break(accept) && reject.is_empty())) =>
            {
                exit_seen = true;
            }
            Statement::Store { pointer, value }
                if exit_seen && term.is_none() && e.as_local(*pointer) == Some(acc) =>
            {
                let Expression::Binary {
                    op: naga::BinaryOperator::Add,
                    left,
                    right,
                } = e.func.expressions[*value]
                else {
                    return Err(Skip("the running value is not updated as `acc + e`".into()));
                };
                let is_acc = |h| locals.loads.get(&h) == Some(&Value::Symbol(ACC));
                let t = match (is_acc(left), is_acc(right)) {
                    (true, false) => right,
                    (false, true) => left,
                    _ => return Err(Skip("the running value is not updated as `acc + e`".into())),
                };
                let x = Exprs { e, locals: &locals };
                let d = x.deps(t);
                if d.has_symbol(ACC) || d.unknown {
                    return Err(Skip("what the step adds reads the running value".into()));
                }
                term = Some(t);
                // Later reads see the updated value, which is the symbol again.
                locals.current.insert(acc, Value::Symbol(ACC));
            }
            Statement::Store { pointer, value } if exit_seen && e.as_local(*pointer).is_none() => {
                if e.root_global(*pointer)
                    .is_none_or(|g| !e.is_writable_storage(g))
                {
                    return Err(Skip("a store is not to a storage buffer".into()));
                }
                stores.push((*pointer, *value, term.is_none()));
            }
            Statement::Store { pointer, .. }
                if exit_seen && e.as_local(*pointer) == Some(counter) =>
            {
                locals.current.remove(&counter);
            }
            other => {
                return Err(Skip(format!(
                    "the loop has {} besides its test, update, stores and step",
                    statement_kind(other)
                )));
            }
        }
    }
    let term = term.ok_or_else(|| Skip("the loop does not update its running value".into()))?;
    if stores.is_empty() {
        return Err(Skip("nothing is stored in the loop".into()));
    }
    Ok((
        RowScan {
            counter_ty: e.type_name(fl.var_ty),
            counter_start,
            cond: fl.cond,
            continue_when: !fl.cond_negated,
            acc_init,
            term,
            guards,
            stores,
        },
        locals,
    ))
}

/// The scanning entry point (with its workgroup memory), as WGSL text.
fn generate(
    m: &RowScan,
    x: &Exprs<'_>,
    w: u32,
    subgroups: bool,
    entry: &str,
) -> Result<String, Skip> {
    let ty = &m.counter_ty;
    let printer = |symbols: &[Option<String>], h: Handle<Expression>| {
        Printer {
            x,
            gid: "kfs_gid",
            symbols,
        }
        .expr(h)
    };
    let cond = |counter: &str| -> Result<String, Skip> {
        let c = printer(&[Some(counter.to_owned()), None], m.cond)?;
        Ok(if m.continue_when { c } else { format!("!{c}") })
    };
    let plain = Printer {
        x,
        gid: "kfs_gid",
        symbols: &[],
    };
    let start = plain.value(m.counter_start)?;
    let init = plain.value(m.acc_init)?;
    let active: Vec<String> = m
        .guards
        .iter()
        .map(|g| {
            plain
                .expr(g.cond)
                .map(|c| if g.active_when { c } else { format!("!{c}") })
        })
        .collect::<Result<_, _>>()?;
    let lane_syms = [Some("kfs_j".to_owned()), None];
    let term = printer(&lane_syms, m.term)?;
    let inclusive_syms = [Some("kfs_j".to_owned()), Some("kfs_acc".to_owned())];
    let exclusive_syms = [Some("kfs_j".to_owned()), Some("kfs_exc".to_owned())];
    let exclusive = m.stores.iter().any(|s| s.2);

    let mut o = String::new();
    let w_ = &mut o;
    let _ = writeln!(
        w_,
        "// KernelFoundry scan: one workgroup per row; the row is scanned {w} steps at a time across\n\
         // the lanes, each tile's total carried to the next."
    );
    let _ = writeln!(w_, "var<workgroup> kfs_buf: array<f32, {w}>;");
    let _ = writeln!(w_);
    let _ = writeln!(w_, "@compute @workgroup_size({w}, 1, 1)");
    let _ = writeln!(
        w_,
        "fn {entry}(@builtin(workgroup_id) kfs_gid: vec3<u32>, @builtin(local_invocation_index) kfs_lid: u32{}) {{",
        if subgroups {
            ", @builtin(subgroup_id) kfs_sg: u32, @builtin(subgroup_invocation_id) kfs_sl: u32, @builtin(subgroup_size) kfs_sgsize: u32, @builtin(num_subgroups) kfs_nsg: u32"
        } else {
            ""
        }
    );
    // The lane's place in a tile: with subgroups, subgroup by subgroup, so that a subgroup's
    // inclusive sum and the totals of the subgroups before it make the prefix.
    if subgroups {
        let _ = writeln!(w_, "    let kfs_lane = kfs_sg * kfs_sgsize + kfs_sl;");
    } else {
        let _ = writeln!(w_, "    let kfs_lane = kfs_lid;");
    }
    if !active.is_empty() {
        // The id is the workgroup's: every lane takes the same branch.
        let _ = writeln!(w_, "    if !({}) {{", active.join(" && "));
        let _ = writeln!(w_, "        return;");
        let _ = writeln!(w_, "    }}");
    }
    let _ = writeln!(w_, "    var kfs_carry: f32 = {init};");
    let _ = writeln!(
        w_,
        "    for (var kfs_t: {ty} = {start}; {}; kfs_t = kfs_t + {ty}({w})) {{",
        cond("kfs_t")?
    );
    let _ = writeln!(w_, "        let kfs_j = kfs_t + {ty}(kfs_lane);");
    let _ = writeln!(w_, "        let kfs_in = {};", cond("kfs_j")?);
    let _ = writeln!(w_, "        var kfs_v = 0.0f;");
    let _ = writeln!(w_, "        if kfs_in {{");
    let _ = writeln!(w_, "            kfs_v = {term};");
    let _ = writeln!(w_, "        }}");
    if subgroups {
        // The subgroup's inclusive sums; its last lane leaves the subgroup's total.
        let _ = writeln!(w_, "        let kfs_x = subgroupInclusiveAdd(kfs_v);");
        let _ = writeln!(w_, "        if kfs_sl == kfs_sgsize - 1u {{");
        let _ = writeln!(w_, "            kfs_buf[kfs_sg] = kfs_x;");
        let _ = writeln!(w_, "        }}");
        let _ = writeln!(w_, "        workgroupBarrier();");
        let _ = writeln!(w_, "        var kfs_before = 0.0f;");
        let _ = writeln!(w_, "        var kfs_total = 0.0f;");
        let _ = writeln!(
            w_,
            "        for (var kfs_s = 0u; kfs_s < kfs_nsg; kfs_s = kfs_s + 1u) {{"
        );
        let _ = writeln!(w_, "            if kfs_s == kfs_sg {{");
        let _ = writeln!(w_, "                kfs_before = kfs_total;");
        let _ = writeln!(w_, "            }}");
        let _ = writeln!(w_, "            kfs_total = kfs_total + kfs_buf[kfs_s];");
        let _ = writeln!(w_, "        }}");
        let _ = writeln!(
            w_,
            "        let kfs_acc = kfs_carry + (kfs_before + kfs_x);"
        );
        if exclusive {
            let _ = writeln!(
                w_,
                "        let kfs_exc = kfs_carry + (kfs_before + subgroupExclusiveAdd(kfs_v));"
            );
        }
    } else {
        let _ = writeln!(w_, "        kfs_buf[kfs_lane] = kfs_v;");
        let _ = writeln!(w_, "        workgroupBarrier();");
        let _ = writeln!(
            w_,
            "        for (var kfs_o = 1u; kfs_o < {w}u; kfs_o = kfs_o * 2u) {{"
        );
        let _ = writeln!(w_, "            var kfs_add = 0.0f;");
        let _ = writeln!(w_, "            if kfs_lane >= kfs_o {{");
        let _ = writeln!(w_, "                kfs_add = kfs_buf[kfs_lane - kfs_o];");
        let _ = writeln!(w_, "            }}");
        let _ = writeln!(w_, "            workgroupBarrier();");
        let _ = writeln!(
            w_,
            "            kfs_buf[kfs_lane] = kfs_buf[kfs_lane] + kfs_add;"
        );
        let _ = writeln!(w_, "            workgroupBarrier();");
        let _ = writeln!(w_, "        }}");
        let _ = writeln!(w_, "        let kfs_acc = kfs_carry + kfs_buf[kfs_lane];");
        if exclusive {
            // The lane before's inclusive prefix is this lane's exclusive one.
            let _ = writeln!(w_, "        var kfs_exc = kfs_carry;");
            let _ = writeln!(w_, "        if kfs_lane > 0u {{");
            let _ = writeln!(
                w_,
                "            kfs_exc = kfs_carry + kfs_buf[kfs_lane - 1u];"
            );
            let _ = writeln!(w_, "        }}");
        }
    }
    let _ = writeln!(w_, "        if kfs_in {{");
    for &(pointer, value, before) in &m.stores {
        let p = Printer {
            x,
            gid: "kfs_gid",
            symbols: if before {
                &exclusive_syms
            } else {
                &inclusive_syms
            },
        };
        let _ = writeln!(
            w_,
            "            {} = {};",
            p.place(pointer)?,
            p.expr(value)?
        );
    }
    let _ = writeln!(w_, "        }}");
    if subgroups {
        let _ = writeln!(w_, "        kfs_carry = kfs_carry + kfs_total;");
    } else {
        let _ = writeln!(w_, "        kfs_carry = kfs_carry + kfs_buf[{}u];", w - 1);
    }
    let _ = writeln!(w_, "        workgroupBarrier();");
    let _ = writeln!(w_, "    }}");
    let _ = writeln!(w_, "}}");
    Ok(o)
}

#[cfg(test)]
mod tests;

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
//!   TVM's pair, `k = select(i, k, keep); m = select(v, m, keep);` on the tie predicate `keep =
//!   (m > v) || ((m == v) && (k < i))` with `i` the loop's rising counter and `k` only ever a
//!   literal below its start or `i` → the same `if` (`arg-tie`, [`ties`]): `k < i` always
//!   holds, so the pair is replaced exactly when `v > m` (NaN aside, as for `max`).
//!
//! - a counted loop written as `var i = a; while (c) { ..; i += s; }` or `loop { if (!c) {
//!   break; } ..; continuing { i += s; } }` (update last in the body or in `continuing`) → `for
//!   (var i: T = a; c; i += s) { .. }`, the counter declared in the header. Proven from the IR
//!   ([`crate::analysis::ir::ForLoop`]: the test first, one update of the counter last, no
//!   `continue`, nothing else writes it) and from the text: the counter is named nowhere but in
//!   its declaration, its loops and their resets (`i = 0u;` before a second loop gives that loop
//!   its own counter), and the start value reads nothing written between where it was given and
//!   the loop. A break test becomes the bound it negates (`if (i >= n) { break; }` → `i < n`).
//!   Exact: the same values in the same order. The loop operators (unroll, hoist) read only the
//!   `for` spelling, so this is how they reach the other two.
//!
//! - a do-while under a guard that makes its first test, `if (j < n) { loop { ..; continuing {
//!   j += s; break if j >= n; } } }` with `j` holding the tested start → `for (; j < n; j += s)
//!   { .. }`: the same iterations, and `j` ends with the same value.
//!
//! - a component of a vector built from an invocation id (`let o = gid.xy; .. o.x ..`, `let pos =
//!   vec2<i32>(gid.xy); pos.y`) → the component's scalar expression (`gid.x`, `i32(gid.y)`),
//!   through swizzles, constructors, splats, conversions and arithmetic; vector `let`s no longer
//!   read are removed. Exact: vector operations act on each component alone.
//!
//! - along an axis the launch has one invocation on (a workgroup one wide there, one
//!   workgroup), the ids' components → `0u` and `num_workgroups`' → `1u`; then an integer
//!   product with a literal zero factor → zero: an index flattened over a two-dimensional launch
//!   (`gid.x + gid.y * num_workgroups.x * 64u`) launched along x alone reads as `gid.x`.
//!
//! - a loop counting down to zero, `for (var i = n; i > 0u; i--)` → a loop counting up from zero
//!   with `let i = n - k;` first in its body: the same values in the same order.
//!
//! - `if (c) { continue; } rest` at the top level of a `for` or `while` body, in the entry point or
//!   a helper function → `if (!(c)) { rest }` (`rest` running to the end of the body): exact, the test is evaluated where it was and
//!   `rest` runs exactly when it did. Loop operators refuse bodies that leave early; padding tests
//!   in convolutions are written this way.
//!
//! - `workgroup_id.x * 64u + local_invocation_id.x` in a kernel whose workgroup size is the
//!   literal 64 along x (or `local_invocation_index` in a one-dimensional workgroup) →
//!   `global_invocation_id.x`, the parameter added if missing: equal by definition, for every id.
//!   The operators that need the global id (`coarsen`, `widen`) then find one.
//!
//!   A multiple of it too: `workgroup_id.y * 64u + local_invocation_id.y * 4u` over a workgroup
//!   16 high → `(global_invocation_id.y * 4u)`, the corner of a register block (`deblock`).
//!
//!   The same in `i32` (`i32(blockIdx.x) * 64 + i32(threadIdx.x)`, TVM's spelling) →
//!   `i32(global_invocation_id.x)`: equal modulo 2³², as WGSL's integer arithmetic wraps.
//!
//!   The same with the workgroup size set by an override (`@workgroup_size(WG)` and
//!   `workgroup_id.x * WG + local_invocation_index`), where the product is the global id for
//!   every value of the override.
//!
//! - workgroup and local ids still read on their own once nothing else applies (`row =
//!   workgroup_id.x` in a workgroup of one, TVM's packed-grid guard) → `global_invocation_id.d /
//!   W_d` and `% W_d` ([`ids::lone_ids`]); not where invocations of a workgroup cooperate.
//!
//! - a flat id over a workgroup of several dimensions rebuilt from `num_workgroups` (burn and
//!   cubecl's ABSOLUTE_POS, `gid.z * nwg.x * 16u * nwg.y * 16u + gid.y * nwg.x * 16u + gid.x`
//!   over `@workgroup_size(16, 16, 1)`) in a launch one workgroup high and deep →
//!   `global_invocation_id.x` over `@workgroup_size(256)` ([`ids::flat_workgroup`]): the same
//!   ids, each once, computed by other invocations; only where invocations share nothing and no
//!   other id is read. Likewise a workgroup-major flat id (`workgroup_id.x * 64u +
//!   local_invocation_index` over `(8, 8, 1)`, ratchet's elementwise kernels).
//!
//! - `var t: T; .. t = e;` assigned once, every read after the store and inside what encloses it
//!   → `let t: T = e;` at the store ([`registers::assigned_once`], code generators' temporaries):
//!   a guard `if t { return; }` then reads as the bounds test it is.
//!
//! - `x >> c` and `x & (2ᶜ - 1)` of a `u32`, or of an `i32` index over the ids that cannot be
//!   negative → `x / 2ᶜ` and `x % 2ᶜ` ([`ids::shifts_to_division`]), the spelling the digit
//!   analysis of flat ids reads.
//!
//! - in a loop stepping by a literal `U`, one update adding `U` unrolled terms, `sum += a0 * b0 +
//!   a1 * b1 + ..` → `U` updates (`reroll::split_sums`), which the reroll then rolls; the
//!   step is named `reassociate-sum`, since it changes the order of the additions.
//!
//! - `var r : array<T, 1>` used only as `r[0]` (TVM's registers) → `var r : T` and `r`
//!   ([`registers::single_element_arrays`]).
//!
//! - a call of a helper whose body is one `return <expr>;` → `(<expr>)`, each parameter
//!   replaced by its argument (index helpers such as `fn idx(r: u32, c: u32) -> u32 { return r
//!   * cols + c; }`); a call of a helper with several statements and one final `return` (a dot
//!   product with its loop) → the helper's statements spelled out before the statement holding
//!   the call, its parameters `let`s of the arguments, the call a `let` of the returned value.
//!   A helper that computes an index through `let`s (tfjs's `getCoordsFromIndex`) is spelled
//!   out the same way, and so is a call statement of a helper without a result (tfjs's
//!   `setOutputAtIndex(i, v);`, which may store to memory), and so is a helper that also waits at
//!   barriers and calls helpers (a workgroup reduction that returns its total, called as
//!   `let t = block_sum(lane, v);`, and its steps, `halve(lane, 32u);`) where the call is a
//!   statement of its own or the whole value of a `let`, `var` or assignment. An integer
//!   `dot(u, v)` becomes the sum of the components' products (`int-dot`), so an index computed
//!   as a `dot` reads as one.
//!   Exact: the helper writes nothing but its own locals and runs where the call ran, once, on
//!   the same values; refused where a name could be captured either way, and where the call
//!   sits in a loop header, an `else if`, behind `&&`/`||` or in `continuing`.
//!
//! - a slice loop staging operand tiles through workgroup memory (one element per invocation,
//!   a barrier, an inner loop updating sums from the tiles, a barrier) → one loop over the
//!   fused counter reading the loads the tiles held ([`destage`]): the same products added in
//!   the same order; zero padding past `K` is dropped with the iterations it zeroed.
//!
//! - `var<private> v: T;` stored once at the top level of the entry point and read only after
//!   that → `let v: T = value;` at the store (the analysis reads a `let` as a value; a private
//!   variable is memory to it, and a store to memory before a loop stops the tiling operators).
//!
//! - a loop nest that only stores zeros into a local array nothing touched before (`for (..) {
//!   for (..) { sums[i][j] = 0.0; } }`) → nothing, since WGSL starts the array at zero
//!   (`zero-stores`); a local array read and written only at constant indices → one scalar per
//!   element (`scalarise`, `sums[1][3]` → `sums_1_3`); a `let` that nothing reads, of a value
//!   without effects → nothing (`unused-let`); an innermost short loop whose counter indexes a
//!   local array or constructed value → written out with the counter a literal
//!   (`unroll-registers`), and a literal element of a `let` array built from variables → the
//!   variable, where nothing writes it after the construction (`let-element`), both in
//!   [`unindex`].
//!
//! - a register-blocked kernel, each invocation computing a `TM × TN` block of outputs in as
//!   many accumulators that are translates of the block's corner → the corner alone over a
//!   launch `TM × TN` times as wide (`deblock`, [`deblock`]): the tilings then choose their own
//!   block for the adapter. The same sums in the same order. Alone in its round, since it
//!   changes the launch rule.
//!
//! A normalisation whose text does not parse costs only itself: the others of its round are
//! kept.
//!
//! Forms that naga's IR already makes equal need nothing here: `x op= y` is lowered to
//! `x = x op y` and `i++` to `i = i + 1`.
//!
//! Invariant: a normalisation changes no value the kernel computes except as noted above, and
//! never reassociates a floating-point sum; one that did would have to say so in its step.

use super::{Rewrite, Subject};
use crate::analysis::ir::{self, Analysis, Edit, ForLoop, LoopKind, Naming, Part};
use crate::analysis::text;
use naga::{BinaryOperator, Expression, Handle, LocalVariable, MathFunction, Statement};

/// Rounds of normalisation at most (each round re-parses the text the previous one wrote; the
/// rounds stop as soon as one finds nothing). A helper with statements is spelled out one call per
/// round, and what it brings in is normalised in the rounds after, so a kernel with several such
/// calls needs several rounds.
const ROUNDS: usize = 12;

/// `subject`'s program in canonical spelling, or `None` when it already is (or nothing could be
/// proven). The rewrite's step names the normalisations applied, e.g. `canon(max ×2)`.
pub fn canonicalise(subject: &Subject<'_>) -> Option<Rewrite> {
    // A sequence is rewritten only by operators that keep every stage (`Operator::handles_sequences`).
    if subject.program.is_sequence() {
        return None;
    }
    let mut text = subject.program.wgsl.to_string();
    let mut applied: Vec<&'static str> = Vec::new();
    // How much wider the launch has grown (a de-blocking), per axis.
    let mut scale = [1u64; 3];
    for _ in 0..ROUNDS {
        let Ok(parsed) = ir::parse(&text) else {
            break;
        };
        let Ok(a) = parsed.analyse(&subject.program.entry) else {
            break;
        };
        let mut widen = [1u64; 3];
        let mut found = normalisations(&a, subject.program, subject.kernel, &mut widen);
        if found.is_empty() {
            break;
        }
        let apply = |groups: &[(Vec<Edit>, &'static str)]| {
            let edits: Vec<Edit> = groups.iter().flat_map(|(e, _)| e.iter().cloned()).collect();
            ir::apply_edits(&text, &edits).filter(|next| ir::parse(next).is_ok())
        };
        let mut next = apply(&found);
        if next.is_none() {
            // One normalisation whose text does not parse costs only itself: keep those that
            // parse alone, and take them together if they still parse together.
            found.retain(|g| apply(std::slice::from_ref(g)).is_some());
            found.truncate(if apply(&found).is_some() {
                found.len()
            } else {
                1
            });
            next = apply(&found);
        }
        let Some(next) = next else {
            break;
        };
        if found.iter().any(|(_, what)| *what == "deblock") {
            for (s, w) in scale.iter_mut().zip(widen) {
                *s *= w;
            }
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
    let mut r = super::finish(subject, text, &[], step, Vec::new()).ok()?;
    widen_launch(&mut r.program, scale);
    Some(r)
}

/// The launch of a de-blocked program: `scale[d]` times the invocations along `d`. A `grid`
/// rule is rounded up to whole workgroups first: the original launched those invocations too,
/// and each computed a block.
fn widen_launch(program: &mut kf_runtime::Program, scale: [u64; 3]) {
    use kf_runtime::expr::{Op, SizeExpr};
    for (d, &s) in scale.iter().enumerate() {
        if s == 1 {
            continue;
        }
        let mut ops = program.dispatch.size[d].ops().to_vec();
        if program.dispatch.mode == kf_runtime::program::DispatchMode::Grid {
            let w = u64::from(program.workgroup_size[d]);
            ops.extend([Op::Lit(w), Op::CeilDiv, Op::Lit(w), Op::Mul]);
        }
        ops.extend([Op::Lit(s), Op::Mul]);
        program.dispatch.size[d] = SizeExpr::from_ops(ops);
    }
}

/// The edits of every normalisation that applies to `a`, each group with its name; no two edits
/// overlap (a normalisation that would overlap one already taken waits for the next round).
fn normalisations(
    a: &Analysis<'_>,
    program: &kf_runtime::Program,
    kernel: &kf_runtime::resolve::ResolvedKernel,
    widen: &mut [u64; 3],
) -> Vec<(Vec<Edit>, &'static str)> {
    let single = single_axes(program);
    let mut out: Vec<(Vec<Edit>, &'static str)> = Vec::new();
    let take = |found: (Vec<Edit>, &'static str), out: &mut Vec<(Vec<Edit>, &'static str)>| {
        let clash = out
            .iter()
            .flat_map(|(e, _)| e)
            .any(|e| found.0.iter().any(|f| overlaps(&e.range, &f.range)));
        if !clash {
            out.push(found);
        }
    };
    // Tests of what the spec fixes go first: the branch not taken is not normalised for nothing.
    let fixed = fixed::fixed_uniforms(a, kernel);
    if !fixed.is_empty() {
        take((fixed, "fixed-uniform"), &mut out);
    }
    // Pairs first: their value select alone would otherwise become a `max`.
    for s in 0..a.stmts.len() {
        if let Some((e, what)) = select_pair_to_if(a, s) {
            take((vec![e], what), &mut out);
        } else if let Some(found) = ties::tie_break_pair(a, s) {
            take(found, &mut out);
        }
    }
    for s in 0..a.stmts.len() {
        if let Some((e, what)) = if_to_extremum(a, s).or_else(|| select_to_extremum(a, s)) {
            take((vec![e], what), &mut out);
        }
    }
    let zeros = registers::zero_initialisers(a);
    if !zeros.is_empty() {
        take((zeros, "zero-init"), &mut out);
    }
    let once = registers::assigned_once(a);
    if !once.is_empty() {
        take((once, "var-let"), &mut out);
    }
    let registers = registers::single_element_arrays(a);
    if !registers.is_empty() {
        take((registers, "array-1"), &mut out);
    }
    let zeroed = deblock::dead_zero_stores(a);
    if !zeroed.is_empty() {
        take((zeroed, "zero-stores"), &mut out);
    }
    let scalars = registers::scalarise_arrays(a);
    if !scalars.is_empty() {
        take((scalars, "scalarise"), &mut out);
    }
    let unrolled = unindex::unroll_register_loops(a);
    if !unrolled.is_empty() {
        take((unrolled, "unroll-registers"), &mut out);
    }
    let elements = unindex::let_elements(a);
    if !elements.is_empty() {
        take((elements, "let-element"), &mut out);
    }
    let unused = deblock::unused_lets(a);
    if !unused.is_empty() {
        take((unused, "unused-let"), &mut out);
    }
    for found in counted_loops_to_for(a) {
        take(found, &mut out);
    }
    for e in registers::interchange_accumulations(a) {
        take((vec![e], "interchange"), &mut out);
    }
    for edits in registers::global_accumulators(a) {
        take((edits, "register-acc"), &mut out);
    }
    for edits in reroll::reroll(a, kernel) {
        take((edits, "reroll"), &mut out);
    }
    for e in reroll::split_sums(a, kernel) {
        take((vec![e], "reassociate-sum"), &mut out);
    }
    for s in 0..a.stmts.len() {
        if let Some((e, what)) = continue_to_if(a, s) {
            take((vec![e], what), &mut out);
        }
    }
    for e in helper_continues_to_if(a) {
        take((vec![e], "continue-if"), &mut out);
    }
    if let Some(found) = global_ids(a) {
        take(found, &mut out);
    }
    for e in inline_expression_helpers(a) {
        take((vec![e], "inline-fn"), &mut out);
    }
    for e in private_to_let(a) {
        take((vec![e], "private-let"), &mut out);
    }
    for edits in inline_statement_helpers(a) {
        take((edits, "inline-fn"), &mut out);
    }
    let pinned = single_axis_ids(a, single);
    if !pinned.is_empty() {
        take((pinned, "single-axis"), &mut out);
    }
    let zeros = zero_products(a);
    if !zeros.is_empty() {
        take((zeros, "zero-product"), &mut out);
    }
    let divisions = ids::shifts_to_division(a);
    if !divisions.is_empty() {
        take((divisions, "shift-div"), &mut out);
    }
    let dots = integer_dots(a);
    if !dots.is_empty() {
        take((dots, "int-dot"), &mut out);
    }
    let scalarised = scalarise_id_vectors(a);
    if !scalarised.is_empty() {
        take((scalarised, "id-components"), &mut out);
    }
    for id in 0..a.loops.len() {
        if let Some(e) = guarded_do_while_to_for(a, id) {
            take((vec![e], "do-while"), &mut out);
        }
        if let Some(e) = count_down_to_up(a, id) {
            take((e, "count-up"), &mut out);
        }
    }
    for edits in destage::destage(a) {
        take((edits, "destage"), &mut out);
    }
    if let Some(edits) = ids::flat_workgroup(a, program) {
        take((edits, "flat-workgroup"), &mut out);
    }
    // Last: the ids that `global-id` (and the steps it waits on) did not fold.
    if out.is_empty()
        && let Some(edits) = ids::lone_ids(a)
    {
        take((edits, "lone-ids"), &mut out);
    }
    // Alone in its round, on a program every other normalisation is done with: it widens the
    // launch, which the round's other groups could not be told about.
    if out.is_empty()
        && let Some(d) = deblock::deblock(a)
    {
        *widen = d.scale;
        take((d.edits, "deblock"), &mut out);
    }
    out
}

/// `for (var i = n; i > 0; i--) { body }` → `for (var kf_up = 0; kf_up < n; kf_up++) { let i =
/// n - kf_up; body }`: the same values of `i` in the same order (`n` down to 1), counted by a
/// variable that rises from zero, which is the form the operators split and unroll. Proven from
/// the IR: a counted `for` with the counter declared in its header, a step of 1 down, the bound
/// `> 0`, a start that reads no local variable (evaluated again in the header and the body).
fn count_down_to_up(a: &Analysis<'_>, id: usize) -> Option<Vec<Edit>> {
    let f = a.loops[id].for_loop.as_ref()?;
    let [bound] = &f.bounds[..] else {
        return None;
    };
    let start = f.init?;
    if f.kind != LoopKind::For
        || !f.declared_in_header
        || !f.decreasing
        || a.const_int(f.step) != Some(1)
        || bound.cmp != ir::Cmp::Gt
        || bound.offset.is_some()
        || a.const_int(bound.bound) != Some(0)
        || !a.locals_read(start).is_empty()
    {
        return None;
    }
    let header = f.header_span.clone()?;
    let body = f.body_span.clone()?;
    let code = a.code();
    if !code[header.clone()].trim_start().starts_with("for") || code.as_bytes()[body.start] != b'{'
    {
        return None;
    }
    let up = format!("kf_up{id}");
    if code.contains(&up) {
        return None;
    }
    let ty = a.type_name(f.var_ty);
    let n = a.text(&a.expr_range(start)?).to_owned();
    let name = &f.var_name;
    let indent = a.indent_at(body.start);
    Some(vec![
        Edit::replace(
            header,
            format!("for (var {up}: {ty} = {ty}(0); {up} < ({n}); {up} = {up} + {ty}(1)) "),
        ),
        Edit::insert(
            body.start + 1,
            format!("\n{indent}    let {name}: {ty} = ({n}) - {up};"),
        ),
    ])
}

/// The axes along which `program` launches one invocation: a workgroup one invocation wide there
/// and one workgroup (or one invocation, in a `grid` rule).
fn single_axes(program: &kf_runtime::Program) -> [bool; 3] {
    std::array::from_fn(|d| {
        program.workgroup_size[d] == 1 && program.dispatch.size[d].as_constant() == Some(1)
    })
}

/// Along an axis with one invocation (see [`single_axes`]), the ids' components are 0 and
/// `num_workgroups`' is 1: `global_invocation_id.y` → `0u`, `num_workgroups.y` → `1u`. Exact
/// for the launch the program has; an index flattened over a two-dimensional launch (`gid.x +
/// gid.y * num_workgroups.x * 64u`) then reads as the one-dimensional id it is.
fn single_axis_ids(a: &Analysis<'_>, single: [bool; 3]) -> Vec<Edit> {
    use naga::BuiltIn as B;
    let f = a.function;
    let mut out = Vec::new();
    for (h, e) in f.expressions.iter() {
        let Expression::AccessIndex { base, index } = *e else {
            continue;
        };
        if !single.get(index as usize).copied().unwrap_or(false) {
            continue;
        }
        let Expression::FunctionArgument(i) = f.expressions[base] else {
            continue;
        };
        let value = match f.arguments.get(i as usize).and_then(|x| x.binding.as_ref()) {
            Some(naga::Binding::BuiltIn(
                B::GlobalInvocationId | B::LocalInvocationId | B::WorkGroupId,
            )) => "0u",
            Some(naga::Binding::BuiltIn(B::NumWorkGroups)) => "1u",
            _ => continue,
        };
        let Some(r) = a.expr_range(h) else {
            continue;
        };
        if !a
            .text(&r)
            .trim_end()
            .ends_with(["x", "y", "z"][index as usize % 3])
        {
            continue;
        }
        out.push(Edit::replace(r, value.to_owned()));
    }
    out
}

/// An integer product with a literal zero factor (`0u * num_workgroups.x * 64u`) → `u32(0)` (or
/// `i32(0)`): what [`single_axis_ids`] leaves behind, so that the other factors, often ids the
/// operators would refuse, are no longer read. Exact for integers.
fn zero_products(a: &Analysis<'_>) -> Vec<Edit> {
    use naga::{ScalarKind, TypeInner};
    let f = a.function;
    fn zero(a: &Analysis<'_>, h: Handle<Expression>, depth: u32) -> bool {
        if depth > 16 {
            return false;
        }
        match a.function.expressions[h] {
            Expression::Literal(_) => a.const_int(h) == Some(0),
            Expression::Binary {
                op: BinaryOperator::Multiply,
                left,
                right,
            } => zero(a, left, depth + 1) || zero(a, right, depth + 1),
            _ => false,
        }
    }
    let products: Vec<Handle<Expression>> = f
        .expressions
        .iter()
        .filter(|(h, e)| {
            matches!(
                e,
                Expression::Binary {
                    op: BinaryOperator::Multiply,
                    ..
                }
            ) && zero(a, *h, 0)
                && matches!(
                    a.type_of(*h),
                    TypeInner::Scalar(s) if matches!(s.kind, ScalarKind::Uint | ScalarKind::Sint) && s.width == 4
                )
        })
        .map(|(h, _)| h)
        .collect();
    let mut out: Vec<Edit> = Vec::new();
    for &h in &products {
        if products.iter().any(|&g| g != h && a.visit_contains(g, h)) {
            continue; // inside a larger zero product
        }
        let Some(r) = a.expr_range(h) else {
            continue;
        };
        if out.iter().any(|e| overlaps(&e.range, &r)) {
            continue;
        }
        let ty = a.type_name_of(h);
        out.push(Edit::replace(r, format!("{ty}(0)")));
    }
    out
}

/// `dot(u, v)` of integer vectors → `(u.x * v.x + u.y * v.y + ..)`, a vector built in place or
/// by a `let` of a constructor read by its components (`dot(coords, vec2<i32>(stride, 1))` →
/// `(coords_x * (stride) + coords_y * (1))`, tfjs's index helpers): the index analysis reads sums
/// of products, not `dot`. Exact: integer arithmetic wraps the same in any order.
fn integer_dots(a: &Analysis<'_>) -> Vec<Edit> {
    use naga::{ScalarKind, TypeInner};
    let f = a.function;
    let components = |h: Handle<Expression>, n: usize| -> Option<Vec<String>> {
        match f.expressions[h] {
            Expression::Compose { ref components, .. } if components.len() == n => components
                .iter()
                .map(|&c| a.expr_wgsl(c, Naming::Names).map(|t| format!("({t})")))
                .collect(),
            Expression::Splat { value, .. } => {
                let t = a.expr_wgsl(value, Naming::Names)?;
                Some(vec![format!("({t})"); n])
            }
            _ => {
                let t = a.expr_wgsl(h, Naming::Names)?;
                Some(
                    (0..n)
                        .map(|i| format!("({t}).{}", ["x", "y", "z", "w"][i]))
                        .collect(),
                )
            }
        }
    };
    let mut out = Vec::new();
    for (h, e) in f.expressions.iter() {
        let Expression::Math {
            fun: MathFunction::Dot,
            arg,
            arg1: Some(arg1),
            ..
        } = *e
        else {
            continue;
        };
        let TypeInner::Vector { size, scalar } = *a.type_of(arg) else {
            continue;
        };
        if !matches!(scalar.kind, ScalarKind::Sint | ScalarKind::Uint) {
            continue;
        }
        let n = size as usize;
        let (Some(u), Some(v), Some(r)) =
            (components(arg, n), components(arg1, n), a.expr_range(h))
        else {
            continue;
        };
        let sum: Vec<String> = u
            .iter()
            .zip(&v)
            .map(|(x, y)| format!("{x} * {y}"))
            .collect();
        if out.iter().any(|e: &Edit| overlaps(&e.range, &r)) {
            continue;
        }
        out.push(Edit::replace(r, format!("({})", sum.join(" + "))));
    }
    out
}

/// Whether the vector `h` is built from an invocation id and reads nothing else that could
/// change between its `let` and a later read: its expression tree (up to the `let`s it names,
/// which keep their values) reaches a built-in argument and holds no load and no call. A vector
/// of loads (`let q = vec2(r.c * v[i] - r.s * v[i + 1], ..)`, then `v[i] = q.x; v[i + 1] = q.y;`)
/// must not be read again at its component's use: the first store changes what it loads.
fn id_vector(a: &Analysis<'_>, h: Handle<Expression>) -> bool {
    reaches_id(a, h, true)
}

/// Whether `h`'s expression tree reaches a built-in argument. With `fixed`, reads (loads, call
/// results) refuse it unless a `let` other than `h` names them, and `let`s are not walked into
/// for reads: their values are fixed where they were named.
fn reaches_id(a: &Analysis<'_>, h: Handle<Expression>, fixed: bool) -> bool {
    let f = a.function;
    let named = |x: Handle<Expression>| x != h && f.named_expressions.contains_key(&x);
    let (mut from_id, mut stack, mut seen) = (false, vec![h], Vec::new());
    while let Some(x) = stack.pop() {
        if seen.contains(&x) {
            continue;
        }
        seen.push(x);
        match f.expressions[x] {
            Expression::FunctionArgument(i) => {
                from_id |= f
                    .arguments
                    .get(i as usize)
                    .is_some_and(|arg| matches!(arg.binding, Some(naga::Binding::BuiltIn(_))));
            }
            Expression::Load { .. }
            | Expression::CallResult(_)
            | Expression::AtomicResult { .. }
            | Expression::ImageLoad { .. }
            | Expression::ImageSample { .. }
                if fixed && !named(x) =>
            {
                return false;
            }
            _ if fixed && named(x) => from_id |= reaches_id(a, x, false),
            ref e => stack.extend(crate::analysis::expr::operands(e)),
        }
    }
    from_id
}

/// A component of a vector built from an invocation id (`let pos = vec2<i32>(gid.xy);` read as
/// `pos.x`, `let i = gid.xy * 2u;` read as `i.y`) → the scalar expression of that component
/// (`i32(gid.x)`, `(gid.y * 2u)`), through swizzles, constructors, splats, conversions and
/// arithmetic; the vector `let`s no longer read are removed. Exact: a vector operation acts on
/// each component alone. The operators read ids component by component (a swizzle of the id is
/// a use of it "as a whole vector" to them).
fn scalarise_id_vectors(a: &Analysis<'_>) -> Vec<Edit> {
    use naga::{ScalarKind, TypeInner};
    let f = a.function;
    const XYZW: [&str; 4] = ["x", "y", "z", "w"];
    fn comp(a: &Analysis<'_>, h: Handle<Expression>, c: u32, depth: u32) -> Option<String> {
        if depth > 16 {
            return None;
        }
        let f = a.function;
        let print = |x: Handle<Expression>| a.expr_wgsl(x, Naming::Names);
        let vector = |x: Handle<Expression>| matches!(a.type_of(x), TypeInner::Vector { .. });
        let part = |x: Handle<Expression>| {
            if vector(x) {
                comp(a, x, c, depth + 1)
            } else {
                print(x)
            }
        };
        match f.expressions[h] {
            Expression::FunctionArgument(i) => {
                let arg = f.arguments.get(i as usize)?;
                matches!(arg.binding, Some(naga::Binding::BuiltIn(_))).then_some(())?;
                Some(format!(
                    "{}.{}",
                    arg.name.as_deref()?,
                    XYZW.get(c as usize)?
                ))
            }
            Expression::Swizzle {
                size,
                vector: v,
                pattern,
            } => {
                ((c as usize) < size as usize).then_some(())?;
                comp(a, v, pattern[c as usize] as u32, depth + 1)
            }
            Expression::Compose { ref components, .. } => {
                if components.iter().any(|&x| vector(x)) {
                    return None;
                }
                print(*components.get(c as usize)?)
            }
            Expression::Splat { value, .. } => print(value),
            Expression::As {
                expr,
                kind,
                convert: Some(w),
            } => {
                let ty = match (kind, w) {
                    (ScalarKind::Sint, 4) => "i32",
                    (ScalarKind::Uint, 4) => "u32",
                    (ScalarKind::Float, 4) => "f32",
                    _ => return None,
                };
                Some(format!("{ty}({})", comp(a, expr, c, depth + 1)?))
            }
            Expression::Binary { op, left, right } => {
                use naga::BinaryOperator as B;
                if !matches!(
                    op,
                    B::Add | B::Subtract | B::Multiply | B::Divide | B::Modulo
                ) {
                    return None;
                }
                Some(format!(
                    "({} {} {})",
                    part(left)?,
                    crate::analysis::expr::binary_op_wgsl(op),
                    part(right)?
                ))
            }
            _ => None,
        }
    }
    // The reads of one component, replaced.
    let mut edits: Vec<Edit> = Vec::new();
    let mut replaced: Vec<ir::TextRange> = Vec::new();
    for (h, e) in f.expressions.iter() {
        let Expression::AccessIndex { base, index } = *e else {
            continue;
        };
        if !matches!(a.type_of(base), TypeInner::Vector { .. })
            || matches!(f.expressions[base], Expression::FunctionArgument(_))
            || !id_vector(a, base)
        {
            continue;
        }
        let Some(text) = comp(a, base, index, 0) else {
            continue;
        };
        let Some(r) = a.expr_range(h) else {
            continue;
        };
        if !a.text(&r).trim_end().ends_with(XYZW[index as usize % 4]) {
            continue;
        }
        if replaced.iter().any(|x| overlaps(x, &r)) {
            continue;
        }
        replaced.push(r.clone());
        edits.push(Edit::replace(r, format!("({text})")));
    }
    if edits.is_empty() {
        return edits;
    }
    // Vector `let`s of the id no longer named outside their own statement and the removed ones.
    let code = a.code();
    let lets: Vec<(ir::TextRange, String)> = f
        .named_expressions
        .keys()
        .filter(|&&h| matches!(a.type_of(h), TypeInner::Vector { .. }))
        .filter(|&&h| comp(a, h, 0, 0).is_some())
        .filter_map(|&h| a.let_statement(h))
        .collect();
    let mut removed: Vec<usize> = Vec::new();
    loop {
        let before = removed.len();
        for (i, (range, name)) in lets.iter().enumerate() {
            if removed.contains(&i) {
                continue;
            }
            let used = word_positions(code, name).any(|p| {
                !(range.contains(&p)
                    || replaced.iter().any(|r| r.contains(&p))
                    || removed.iter().any(|&j| lets[j].0.contains(&p)))
            });
            if !used {
                removed.push(i);
            }
        }
        if removed.len() == before {
            break;
        }
    }
    for i in removed {
        let range = lets[i].0.clone();
        if edits.iter().any(|e| overlaps(&e.range, &range)) {
            continue;
        }
        edits.push(Edit::replace(range, String::new()));
    }
    edits
}

/// Where identifier `name` occurs in `code` as a whole word, not as a member name.
fn word_positions<'c>(code: &'c str, name: &'c str) -> impl Iterator<Item = usize> + 'c {
    code.match_indices(name).map(|(p, _)| p).filter(move |&p| {
        let bytes = code.as_bytes();
        let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
        let before_ok = p == 0 || !ident(bytes[p - 1]);
        let end = p + name.len();
        let after_ok = end >= bytes.len() || !ident(bytes[end]);
        before_ok && after_ok && !code[..p].trim_end().ends_with('.')
    })
}

/// `if (j < n) { loop { body; continuing { j += s; break if j >= n; } } }` (the test also
/// `n > j`, the break also `j > n - ..` spelled `n <= j`) with `j` holding the tested start
/// value → `for (; j < n; j += s) { body }`: a do-while whose first test the guard makes, which
/// is a counted loop. Exact: the body runs for the same values of `j` in the same order, `j`
/// ends with the same value either way (the start when the guard fails), and a `continue` in the
/// body goes to the update and the test in both.
fn guarded_do_while_to_for(a: &Analysis<'_>, id: usize) -> Option<Edit> {
    let l = &a.loops[id];
    let Statement::Loop {
        break_if: Some(brk),
        ..
    } = *a.stmts[l.stmt].stmt
    else {
        return None;
    };
    // The continuing block: one store to the counter `j`, `j = j + s` (or `-`).
    let mut cont = l
        .continuing
        .iter()
        .filter(|s| !matches!(s, Statement::Emit(_)));
    let (Some(&Statement::Store { pointer, value }), None) = (cont.next(), cont.next()) else {
        return None;
    };
    let Expression::LocalVariable(j) = a.function.expressions[pointer] else {
        return None;
    };
    let Expression::Binary {
        op: BinaryOperator::Add,
        left,
        ..
    } = a.function.expressions[value]
    else {
        return None;
    };
    if load_of(a, left) != Some(j) {
        return None;
    }
    // The break: `j >= n` or `n <= j`.
    let Expression::Binary { op, left, right } = a.function.expressions[brk] else {
        return None;
    };
    let bound = match op {
        BinaryOperator::GreaterEqual if load_of(a, left) == Some(j) => right,
        BinaryOperator::LessEqual if load_of(a, right) == Some(j) => left,
        _ => return None,
    };
    if a.reads_local(bound, j) {
        return None;
    }
    // The guard: the loop is the only statement of an `if` without `else` testing `j < n` on
    // the value `j` holds there.
    let guard = a.stmts[l.stmt].parent?;
    let Statement::If {
        condition,
        ref accept,
        ref reject,
    } = *a.stmts[guard].stmt
    else {
        return None;
    };
    let only_loop = accept
        .iter()
        .filter(|s| !matches!(s, Statement::Emit(_)))
        .count()
        == 1;
    if !only_loop || reject.iter().any(|s| !matches!(s, Statement::Emit(_))) {
        return None;
    }
    let Expression::Binary { op, left, right } = a.function.expressions[condition] else {
        return None;
    };
    let (start, limit) = match op {
        BinaryOperator::Less => (left, right),
        BinaryOperator::Greater => (right, left),
        _ => return None,
    };
    if !same_value(a, limit, bound) {
        return None;
    }
    let start_is_j = load_of(a, start) == Some(j)
        || matches!(a.value_before(guard, j), Some(ir::InitialValue::Expr(v)) if same_value(a, v, start));
    if !start_is_j {
        return None;
    }
    // The text: the guard's whole `if`, the loop's body up to `continuing`, the update.
    let if_span = a.stmts[guard].span.clone()?;
    let loop_span = l.span.clone()?;
    let code = a.code();
    let open = code[loop_span.clone()].find('{')? + loop_span.start;
    let close = matching_brace(code, open)?;
    let mut depth = 0;
    let mut continuing = None;
    let mut i = open;
    while i < close {
        match code.as_bytes()[i] {
            b'{' => depth += 1,
            b'}' => depth -= 1,
            b'c' if depth == 1
                && code[i..].starts_with("continuing")
                && !code.as_bytes()[i - 1].is_ascii_alphanumeric() =>
            {
                continuing = Some(i);
                break;
            }
            _ => {}
        }
        i += 1;
    }
    let continuing = continuing?;
    let store = l
        .continuing
        .iter()
        .find(|s| !matches!(s, Statement::Emit(_)))?;
    let update_stmt = a.stmts.iter().position(|st| std::ptr::eq(st.stmt, store))?;
    let update = a
        .text(&a.stmts[update_stmt].span.clone()?)
        .trim()
        .to_owned();
    let name = a.function.local_variables[j].name.clone()?;
    let limit_text = a.text(&a.expr_range(bound)?).to_owned();
    let body = code[open + 1..continuing].trim_end();
    let indent = a.indent_at(if_span.start);
    Some(Edit::replace(
        if_span,
        format!("for (; {name} < {limit_text}; {update}) {{{body}\n{indent}}}"),
    ))
}

/// The entry point's calls of helpers that return a value and take only values (no pointers, no
/// builtins): the statement, the helper, its arguments.
fn value_calls<'a>(
    a: &'a Analysis<'_>,
) -> impl Iterator<Item = (usize, Handle<naga::Function>, &'a [Handle<Expression>])> + 'a {
    helper_calls(a).filter(|&(s, ..)| {
        matches!(
            a.stmts[s].stmt,
            Statement::Call {
                result: Some(_),
                ..
            }
        )
    })
}

/// The entry point's calls of helpers that take only values (no pointers, no builtins), with a
/// result or without: the statement, the helper, its arguments.
fn helper_calls<'a>(
    a: &'a Analysis<'_>,
) -> impl Iterator<Item = (usize, Handle<naga::Function>, &'a [Handle<Expression>])> + 'a {
    let module = a.module;
    a.stmts.iter().enumerate().filter_map(move |(s, st)| {
        let Statement::Call {
            function,
            ref arguments,
            ..
        } = *st.stmt
        else {
            return None;
        };
        by_value(module, &module.functions[function]).then_some((s, function, &arguments[..]))
    })
}

/// Whether helper `f` takes only values (no pointers, no builtins).
fn by_value(module: &naga::Module, f: &naga::Function) -> bool {
    f.arguments.iter().all(|x| {
        x.binding.is_none() && !matches!(module.types[x.ty].inner, naga::TypeInner::Pointer { .. })
    })
}

/// A call's arguments as the kernel wrote them (or restated, where naga kept no text).
fn argument_texts(a: &Analysis<'_>, arguments: &[Handle<Expression>]) -> Option<Vec<String>> {
    arguments
        .iter()
        .map(|&h| {
            // A `let` is passed by its name: naga's span of it is its definition, whose text may
            // read a name the `let` shadows at the call (`let s = f(s); .. g(s)`).
            if let Some(name) = a.function.named_expressions.get(&h) {
                return Some(name.clone());
            }
            a.expr_range(h)
                .map(|r| a.text(&r).to_owned())
                .or_else(|| a.expr_wgsl(h, Naming::Names))
        })
        .collect()
}

/// Every name a function declares: its parameters, local variables and `let`s.
fn declared_names(f: &naga::Function) -> Vec<&str> {
    f.local_variables
        .iter()
        .filter_map(|(_, v)| v.name.as_deref())
        .chain(f.named_expressions.values().map(String::as_str))
        .chain(f.arguments.iter().filter_map(|x| x.name.as_deref()))
        .collect()
}

/// The identifiers `text` names, member names (after `.`) left out.
pub(super) fn identifiers(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            if !text[..start].trim_end().ends_with('.') {
                out.push(&text[start..i]);
            }
        } else if c.is_ascii_digit() {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'.') {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    out
}

/// One call in the entry point of a helper with a body of several statements and one `return
/// <expr>;`, last (a dot product with its loop, a clamp with its branches) → the helper's
/// statements spelled out before the statement that holds the call, each parameter a `let` of
/// its argument, and the call replaced by `kf_ret_N`, a `let` of the returned value: the loop is
/// then the entry point's own, which is where the operators look for it. Also a helper of one
/// `return` whose parts are named by `let`s when it computes an integer or an integer vector
/// (tfjs's `getCoordsFromIndex`), and a call statement of a helper without a result (tfjs's
/// `setOutputAtIndex(i, v) { result[i] = v; }`), spelled out in place of the call; such a helper
/// may store to memory, and may leave only at its end. A helper that also waits at barriers and
/// calls helpers (a workgroup reduction: `let total = run_reduction(lane);`, `reduce(lane, 64u);`)
/// is spelled out too where its call is a statement of its own or the whole value of a `let`, a
/// `var` or an assignment, so nothing else in the statement is evaluated around its effects.
///
/// Exact: the helper writes no memory but its own locals (or, without a result, is the whole
/// statement, so its stores happen where the call's did), calls nothing, uses no barrier or
/// atomic, and is evaluated where the call was, once, on the same values. Refused where it could
/// be otherwise: the call sits in a loop header, an `else if`, behind `&&`/`||`, or in a
/// `continuing` block; or a name the helper declares is a name of the module (it could shadow
/// one the helper reads); or a name the helper reads is declared in the entry point. The
/// helper's parameters and locals are renamed apart (`kf3_sum`), so they capture nothing of the
/// entry point's. Every such call a round, one a statement.
fn inline_statement_helpers(a: &Analysis<'_>) -> Vec<Vec<Edit>> {
    let module = a.module;
    // The names a spelled-out helper must not shadow or be shadowed by, once for every call.
    let entry_names = declared_names(a.function);
    let module_names: Vec<&str> = module
        .global_variables
        .iter()
        .filter_map(|(_, g)| g.name.as_deref())
        .chain(
            module
                .constants
                .iter()
                .filter_map(|(_, c)| c.name.as_deref()),
        )
        .chain(
            module
                .overrides
                .iter()
                .filter_map(|(_, o)| o.name.as_deref()),
        )
        .chain(
            module
                .functions
                .iter()
                .filter_map(|(_, f)| f.name.as_deref()),
        )
        .collect();
    let names = (entry_names.as_slice(), module_names.as_slice());
    let mut out = Vec::new();
    let mut starts = Vec::new();
    for (n, function, arguments) in helper_calls(a) {
        if let Some((start, edits)) = inline_statement_helper(a, names, n, function, arguments)
            && !starts.contains(&start)
        {
            starts.push(start);
            out.push(edits);
        }
    }
    out
}

/// The edits that spell out the call of `function` in statement `n`, and where that statement
/// starts. `names`: the entry point's locals and the module's names.
fn inline_statement_helper(
    a: &Analysis<'_>,
    (entry_names, module_names): (&[&str], &[&str]),
    n: usize,
    function: Handle<naga::Function>,
    arguments: &[Handle<Expression>],
) -> Option<(usize, Vec<Edit>)> {
    let module = a.module;
    let code = a.code();
    let st = &a.stmts[n];
    let f = &module.functions[function];
    let name = f.name.as_deref()?;
    let void = f.result.is_none();
    let pure = writes_only_locals(f);
    let effects = !(pure || void && writes_plainly(f));
    if effects && !runs_in_place(f) {
        return None;
    }
    let user: Vec<_> = f
        .body
        .span_iter()
        .filter(|(x, _)| !matches!(x, Statement::Emit(_)))
        .collect();
    let fn_span = module.functions.get_span(function).to_range()?;
    // The body's text: from the `{` that opens it to the `return` (or the closing `}`), and
    // the returned expression's.
    let (before, returned) = if void {
        // Only a trailing `return;` may leave the helper (one earlier would leave the caller).
        let last = user.last().map(|(x, _)| *x);
        let open = code[fn_span.start..fn_span.end].find('{')? + fn_span.start;
        // naga ends a body without a `return` with one of its own, which has no text.
        let closing = code[..fn_span.end].rfind('}')?;
        let end = match last {
            Some(Statement::Return { value: None }) => user
                .last()?
                .1
                .to_range()
                .filter(|r| code[r.clone()].trim_start().starts_with("return"))
                .map_or(closing, |r| r.start),
            _ => closing,
        };
        if user.len() < 2 && !has_lets(f) && last.is_none() {
            return None;
        }
        (&code[open + 1..end], "")
    } else {
        let Some((Statement::Return { value: Some(_) }, ret_span)) = user.last() else {
            return None;
        };
        // One `return` is `inline_expression_helpers`' unless `let`s name its parts. Those
        // are spelled out where the helper computes an index (an integer or integer vector),
        // which the operators must read; a pure value helper with `let`s (an activation) is
        // left a call, which the operators re-emit as written.
        let integers = f.result.as_ref().is_some_and(|r| {
            matches!(
                module.types[r.ty].inner.scalar_kind(),
                Some(naga::ScalarKind::Sint | naga::ScalarKind::Uint)
            )
        });
        if user.len() < 2 && !(has_lets(f) && integers) {
            return None;
        }
        let ret = ret_span.to_range()?;
        let open = code[fn_span.start..ret.start].find('{')? + fn_span.start;
        let returned = code[ret.clone()]
            .trim()
            .strip_prefix("return")?
            .trim()
            .trim_end_matches(';')
            .trim();
        let after = code[ret.end..]
            .trim_start()
            .trim_start_matches(';')
            .trim_start();
        if !after.starts_with('}') {
            return None;
        }
        (&code[open + 1..ret.start], returned)
    };
    // The helper's own names are renamed apart (`kf3_sum`), so none captures or is captured.
    let helper_names = declared_names(f);
    if helper_names.iter().any(|h| module_names.contains(h)) {
        return None;
    }
    let read = identifiers(before)
        .into_iter()
        .chain(identifiers(returned))
        .filter(|w| !helper_names.contains(w));
    if read.clone().any(|w| entry_names.contains(&w)) {
        return None;
    }
    let fresh = |w: &str| format!("kf{n}_{w}");
    if helper_names.iter().any(|h| code.contains(&fresh(h))) {
        return None;
    }
    let renamed: Vec<String> = helper_names.iter().map(|h| fresh(h)).collect();
    let rename = |text: &str| replace_names(text, &helper_names, &renamed, false, &[]);
    let (Some(before), Some(returned)) = (rename(before), rename(returned)) else {
        return None;
    };
    // Where the statement holding the call begins, and what kind of statement it is.
    let call = st.span.clone()?;
    if !a.text(&call).trim_start().starts_with(name) {
        return None;
    }
    let call_open = code[call.start..].find('(')? + call.start;
    let call_close = matching_paren(code, call_open)?;
    let start = statement_start(code, call.start)?;
    let head = code[start..call.start].trim_start();
    let word = identifiers(head).first().copied().unwrap_or("");
    if matches!(
        word,
        "for" | "while" | "loop" | "else" | "break" | "continuing" | "switch" | "case"
    ) || head.contains("&&")
        || head.contains("||")
        || in_continuing(a, n)
    {
        return None;
    }
    // A call without a result is a statement of its own: `helper(args);`.
    let alone = code[call_close + 1..].trim_start().starts_with(';');
    if void && (start != call.start || !alone) {
        return None;
    }
    // One with effects is the whole value of its statement (`let t = helper(args);`), so
    // nothing of the statement is evaluated before the effects that was evaluated after them.
    if effects && !void && !whole_value(head, &code[call_close + 1..]) {
        return None;
    }
    let args = argument_texts(a, arguments)?;
    let indent = a.indent_at(start);
    let mut text = String::new();
    for (arg, value) in f.arguments.iter().zip(&args) {
        let pname = fresh(arg.name.as_deref()?);
        text.push_str(&format!(
            "let {pname}: {} = ({value});\n{indent}",
            a.type_name(arg.ty)
        ));
    }
    if void {
        // The statement's `;` stays, an empty statement after the body.
        text.push_str(&format!(
            "// {name}(..), inlined\n{indent}{}\n{indent}",
            reindent(&before, indent)
        ));
        return Some((start, vec![Edit::replace(call.start..call_close + 1, text)]));
    }
    let result = format!("kf_ret_{n}");
    text.push_str(&format!(
        "// {name}(..), inlined\n{indent}{}\n{indent}let {result} = {returned};\n{indent}",
        reindent(&before, indent)
    ));
    Some((
        start,
        vec![
            Edit::insert(start, text),
            Edit::replace(call.start..call_close + 1, result),
        ],
    ))
}

/// Whether a call is the whole value its statement binds: `head`, the statement's text before the
/// call, is a binding ([`is_binding_head`]) and parentheses opened after it close right after the
/// call (`after`, the text that follows the call), before the `;`.
fn whole_value(head: &str, after: &str) -> bool {
    let mut head = head.trim_end();
    let mut after = after.trim_start();
    while let Some(h) = head.strip_suffix('(') {
        let Some(a) = after.strip_prefix(')') else {
            return false;
        };
        head = h.trim_end();
        after = a.trim_start();
    }
    after.starts_with(';') && is_binding_head(head)
}

/// Whether `head`, the text of a statement before its value, binds that value to a name: `let x
/// =`, `let x: T =`, `var x =`, `var x: T =` or `x =`.
fn is_binding_head(head: &str) -> bool {
    let Some(lhs) = head.trim().strip_suffix('=') else {
        return false;
    };
    if lhs.ends_with(['=', '!', '<', '>', '+', '-', '*', '/', '%', '&', '|', '^']) {
        return false;
    }
    let lhs = lhs
        .trim()
        .strip_prefix("let ")
        .or_else(|| lhs.trim().strip_prefix("var "))
        .unwrap_or(lhs.trim());
    let name = lhs.split(':').next().unwrap_or("").trim();
    !name.is_empty() && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// A helper's statements moved to `indent`: trimmed, and every line after the first shifted by
/// the helper's own indentation (the least of its lines).
fn reindent(body: &str, indent: &str) -> String {
    let body = body.trim();
    let mut lines = body.lines();
    let first = lines.next().unwrap_or_default();
    let rest: Vec<&str> = lines.collect();
    let least = rest
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out = first.to_owned();
    for l in rest {
        out.push('\n');
        if !l.trim().is_empty() {
            out.push_str(indent);
            out.push_str(&l[least.min(l.len() - l.trim_start().len())..]);
        }
    }
    out
}

/// Whether `f` names values with `let` (naga keeps those as named expressions, no statement).
fn has_lets(f: &naga::Function) -> bool {
    f.named_expressions
        .iter()
        .any(|(h, _)| !matches!(f.expressions[*h], Expression::FunctionArgument(_)))
}

/// Whether `f` stores to memory only by plain stores (no call, barrier or atomic), returning
/// only at its end: a statement helper such as tfjs's `setOutputAtIndex(i, v) { result[i] = v;
/// }`, which runs where the call was when spelled out there.
fn writes_plainly(f: &naga::Function) -> bool {
    straight_body(f, Effects::Memory)
}

/// Whether `f` stores only to its own local variables and uses no call, barrier or atomic.
fn writes_only_locals(f: &naga::Function) -> bool {
    straight_body(f, Effects::Locals)
}

/// Whether `f` may also wait at barriers and call other helpers, returning only at its end: a
/// workgroup reduction written as a helper (`fn run_reduction(lane: u32) -> f32 { W[lane] = ..;
/// workgroupBarrier(); reduce(lane, 64u); .. return W[0]; }`), which runs where the call was when
/// spelled out there, each barrier reached by the same invocations in the same order.
fn runs_in_place(f: &naga::Function) -> bool {
    straight_body(f, Effects::Barriers)
}

/// What a helper's statements may do besides computing values and storing to its own locals.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Effects {
    Locals,
    /// Plain stores to memory.
    Memory,
    /// Plain stores, workgroup and memory barriers, and calls of helpers.
    Barriers,
}

/// Whether `f`'s statements are plain stores (to its own locals only, unless `effects` allows
/// memory), control flow and evaluations, with no call, barrier or atomic (unless `effects` is
/// `Barriers`, which allows barriers and calls), and a `return` only last (or one naga added at
/// the end of a path, which has no text).
fn straight_body(f: &naga::Function, effects: Effects) -> bool {
    let local = |mut p: Handle<Expression>| loop {
        match f.expressions[p] {
            Expression::LocalVariable(_) => break true,
            Expression::Access { base, .. } | Expression::AccessIndex { base, .. } => p = base,
            _ => break false,
        }
    };
    fn ok(
        f: &naga::Function,
        block: &naga::Block,
        store_ok: &dyn Fn(Handle<Expression>) -> bool,
        effects: Effects,
    ) -> bool {
        block.span_iter().all(|(s, span)| match s {
            Statement::Store { pointer, .. } => store_ok(*pointer),
            Statement::Return { value: None } if !span.is_defined() => true,
            Statement::Return { .. } => std::ptr::eq(s, f.body.last().unwrap_or(s)),
            Statement::Block(b) => ok(f, b, store_ok, effects),
            Statement::If { accept, reject, .. } => {
                ok(f, accept, store_ok, effects) && ok(f, reject, store_ok, effects)
            }
            Statement::Loop {
                body, continuing, ..
            } => ok(f, body, store_ok, effects) && ok(f, continuing, store_ok, effects),
            Statement::Switch { cases, .. } => {
                cases.iter().all(|c| ok(f, &c.body, store_ok, effects))
            }
            Statement::Emit(_) | Statement::Break | Statement::Continue => true,
            Statement::ControlBarrier(_) | Statement::MemoryBarrier(_) | Statement::Call { .. } => {
                effects == Effects::Barriers
            }
            _ => false,
        })
    }
    ok(
        f,
        &f.body,
        &|p| effects >= Effects::Memory || local(p),
        effects,
    )
}

/// Whether statement `s` sits in a loop's `continuing` block.
fn in_continuing(a: &Analysis<'_>, s: usize) -> bool {
    let mut p = Some(s);
    while let Some(i) = p {
        if a.stmts[i].part == Part::Continuing {
            return true;
        }
        p = a.stmts[i].parent;
    }
    false
}

/// Whether position `i` is inside an unclosed `(` of its statement (a `for` header).
fn inside_parens(code: &str, i: usize) -> bool {
    let mut depth = 0i32;
    for &c in code.as_bytes()[..i].iter().rev() {
        match c {
            b')' => depth += 1,
            b'(' if depth == 0 => return true,
            b'(' => depth -= 1,
            b'{' | b'}' => return false,
            _ => {}
        }
    }
    false
}

/// Where the statement that holds position `pos` begins: after the `;`, `{` or `}` before it
/// that no bracket encloses `pos` from.
fn statement_start(code: &str, pos: usize) -> Option<usize> {
    let bytes = code.as_bytes();
    let mut depth = 0i32;
    let mut i = pos;
    while i > 0 {
        i -= 1;
        match bytes[i] {
            b')' | b']' => depth += 1,
            b'(' | b'[' => {
                depth -= 1;
                if depth < 0 {
                    depth = 0; // inside a header: keep going out
                }
            }
            b';' | b'{' | b'}' if depth == 0 => {
                if bytes[i] == b';' && inside_parens(code, i) {
                    return None; // a `for` header's `;`: the call is in the loop's header
                }
                let rest = &code[i + 1..pos];
                return Some(i + 1 + (rest.len() - rest.trim_start().len()));
            }
            _ => {}
        }
    }
    None
}

/// A call in the entry point of a helper whose body is one `return <expr>;` (no local
/// variables, no calls, no pointer parameters) → `(<expr>)` with each parameter replaced by its
/// argument, parenthesised: an index helper (`fn index_of(r: u32, c: u32) -> u32 { return r *
/// shape.cols + c; }`) then reads as the index it computes, which is what the operators prove
/// patterns from. Exact: the expression is evaluated where the call was, on the same values.
/// Refused when a name the expression reads besides its parameters is declared in the entry
/// point (a local, a `let` or a parameter that would capture it there).
fn inline_expression_helpers(a: &Analysis<'_>) -> Vec<Edit> {
    let module = a.module;
    let code = a.code();
    let entry_names = declared_names(a.function);
    let mut out = Vec::new();
    for (s, function, arguments) in value_calls(a) {
        let st = &a.stmts[s];
        let f = &module.functions[function];
        if !f.local_variables.is_empty() || has_lets(f) {
            continue;
        }
        // Calls of other helpers that take values, return one and have no effect (they write no
        // memory, directly or through calls) may come first: their text stays in the returned
        // expression, where the call may move, and is inlined in turn in the next round
        // (wgebra's `it(view, i, j, t)` returns `t * view.stride_mat + im(view, i, j)`).
        let mut body = f.body.span_iter().filter(|(x, _)| {
            !matches!(x, Statement::Emit(_))
                && !matches!(x, Statement::Call { function: g, result: Some(_), arguments }
                    if *g != function
                        && by_value(module, &module.functions[*g])
                        && !a.function_is_effectful(*g)
                        && arguments.iter().all(|&x| !matches!(f.expressions[x], Expression::CallResult(_))))
        });
        let (Some((Statement::Return { value: Some(_) }, span)), None) = (body.next(), body.next())
        else {
            continue;
        };
        let Some(ret) = span.to_range() else {
            continue;
        };
        let Some(expr) = code[ret]
            .trim()
            .strip_prefix("return")
            .map(|t| t.trim().trim_end_matches(';').trim())
        else {
            continue;
        };
        let Some(params) = f
            .arguments
            .iter()
            .map(|x| x.name.as_deref())
            .collect::<Option<Vec<&str>>>()
        else {
            continue;
        };
        let Some(args) = argument_texts(a, arguments) else {
            continue;
        };
        let Some(inlined) = substitute(expr, &params, &args, &entry_names) else {
            continue;
        };
        // The call's text: naga's span of the call, widened over its argument list.
        let Some(call) = st.span.clone() else {
            continue;
        };
        let name = f.name.as_deref().unwrap_or_default();
        if !a.text(&call).trim_start().starts_with(name) {
            continue;
        }
        let Some(open) = code[call.start..].find('(').map(|i| call.start + i) else {
            continue;
        };
        let Some(close) = matching_paren(code, open) else {
            continue;
        };
        out.push(Edit::replace(call.start..close + 1, format!("({inlined})")));
    }
    out
}

/// `var<private> v: T;` stored once at the top level of the entry point, read only after that
/// and only there → the store becomes `let v: T = value;`, a function-scope name that shadows the
/// module's variable: the value is fixed from that statement on, which is what the analysis reads
/// from a `let` (a private variable is memory to it, and a store to memory before a loop stops
/// the tiling operators).
fn private_to_let(a: &Analysis<'_>) -> Vec<Edit> {
    let module = a.module;
    let mut out = Vec::new();
    for (g, var) in module.global_variables.iter() {
        if var.space != naga::AddressSpace::Private {
            continue;
        }
        let Some(name) = var.name.as_deref() else {
            continue;
        };
        // No helper function names it.
        let in_helper = module.functions.iter().any(|(_, f)| {
            f.expressions
                .iter()
                .any(|(_, e)| matches!(e, Expression::GlobalVariable(x) if *x == g))
        });
        if in_helper {
            continue;
        }
        let accesses: Vec<&ir::Access> = a.accesses.iter().filter(|x| x.global == g).collect();
        let stores: Vec<&&ir::Access> = accesses.iter().filter(|x| x.write).collect();
        let [store] = stores[..] else {
            continue;
        };
        let st = &a.stmts[store.stmt];
        let whole = matches!(
            a.function.expressions[store.pointer],
            Expression::GlobalVariable(_)
        );
        if st.parent.is_some()
            || !whole
            || !matches!(st.stmt, Statement::Store { .. })
            || accesses.iter().any(|x| !x.write && x.stmt <= store.stmt)
        {
            continue;
        }
        let Some(span) = st.span.clone() else {
            continue;
        };
        let text = a.text(&span);
        let Some(rest) = text.trim_start().strip_prefix(name) else {
            continue;
        };
        let rest = rest.trim_start();
        if !rest.starts_with('=') || rest.starts_with("==") {
            continue;
        }
        let ty = a.type_name(var.ty);
        out.push(Edit::replace(span, format!("let {name}: {ty} {rest}")));
    }
    out
}

/// The `)` that closes the `(` at `open`.
fn matching_paren(code: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in code[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `expr` with every identifier that names a parameter replaced by its argument in parentheses;
/// `None` when `expr` reads another name that `shadowing` holds.
fn substitute(expr: &str, params: &[&str], args: &[String], shadowing: &[&str]) -> Option<String> {
    replace_names(expr, params, args, true, shadowing)
}

/// `text` with every identifier (not a member name) in `names` replaced by its `by`, in
/// parentheses when `wrap`; `None` when `text` names another identifier `shadowing` holds.
fn replace_names(
    text: &str,
    names: &[&str],
    by: &[String],
    wrap: bool,
    shadowing: &[&str],
) -> Option<String> {
    let (expr, params, args) = (text, names, by);
    let mut out = String::new();
    let bytes = expr.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let word = &expr[start..i];
            let member = expr[..start].trim_end().ends_with('.');
            match params.iter().position(|p| *p == word) {
                Some(k) if !member => {
                    if wrap {
                        out.push('(');
                    }
                    out.push_str(&args[k]);
                    if wrap {
                        out.push(')');
                    }
                }
                _ => {
                    if !member && shadowing.contains(&word) {
                        return None;
                    }
                    out.push_str(word);
                }
            }
        } else if c.is_ascii_digit() {
            // A number with its suffix (`2u`, `0x1fu`) is not a name.
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'.') {
                i += 1;
            }
            out.push_str(&expr[start..i]);
        } else {
            out.push(c as char);
            i += 1;
        }
    }
    Some(out)
}

/// `workgroup_id.d * W + local_invocation_id.d` with `W` the literal workgroup size along `d` (and
/// `local_invocation_index` for `local_invocation_id.x` in a one-dimensional workgroup) →
/// `global_invocation_id.d`, which is that value by definition. The entry point gains the
/// `global_invocation_id` parameter if it has none. Exact for every id; operators that need the
/// global id (`coarsen`, `widen`) then see one, and the workgroup and local ids are often left
/// unused.
fn global_ids(a: &Analysis<'_>) -> Option<(Vec<Edit>, &'static str)> {
    use naga::BuiltIn;
    use naga::ir::{Scalar, ScalarKind, TypeInner};
    let size = a.entry.workgroup_size;
    let overrides = a.entry.workgroup_size_overrides.unwrap_or([None; 3]);
    // The workgroup size along `d` as the index forms spell it: the literal, or the override
    // that sets it (then `workgroup_id.x * WG + local_invocation_index` is the global id for
    // every value of `WG`).
    let extent = |d: usize| -> Option<ir::Poly> {
        match overrides[d] {
            None => Some(ir::Poly::constant(i64::from(size[d]))),
            Some(h) => match a.module.global_expressions[h] {
                Expression::Override(o) => {
                    Some(ir::Poly::atom(a.module.overrides[o].name.clone()?))
                }
                _ => None,
            },
        }
    };
    let one = Some(ir::Poly::constant(1));
    let flat = extent(1) == one && extent(2) == one;
    // `c · (W·wid.d + lid.d)` for a constant `c ≥ 1`: the axis and `c`.
    let matches = |h: Handle<Expression>| -> Option<(u32, i64)> {
        let form = a.index_form(h)?;
        if !form.offset.is_zero() || form.terms.len() != 2 {
            return None;
        }
        let scale = form
            .terms
            .iter()
            .find(|(v, _)| {
                matches!(
                    v,
                    ir::Var::Builtin(
                        BuiltIn::LocalInvocationId | BuiltIn::LocalInvocationIndex,
                        _
                    )
                )
            })?
            .1
            .as_constant()
            .filter(|&c| c >= 1)?;
        let (mut wid, mut lid) = (None, None);
        for (v, c) in &form.terms {
            match *v {
                ir::Var::Builtin(BuiltIn::WorkGroupId, d)
                    if extent(d as usize).map(|e| e.scale(scale)).as_ref() == Some(c) =>
                {
                    wid = Some(d)
                }
                ir::Var::Builtin(BuiltIn::LocalInvocationId, d) => lid = Some(d),
                ir::Var::Builtin(BuiltIn::LocalInvocationIndex, 0) if flat => lid = Some(0),
                _ => return None,
            }
        }
        (wid? == lid?).then_some((wid?, scale))
    };
    let is_int = |h: Handle<Expression>, kind: ScalarKind| {
        matches!(
            a.type_of(h),
            TypeInner::Scalar(Scalar { kind: k, width: 4 }) if *k == kind
        )
    };
    let is_u32 = |h| is_int(h, ScalarKind::Uint);
    // TVM computes ids in `i32` (`i32(blockIdx.x) * 64 + i32(threadIdx.x)`): the same value
    // modulo 2³², as WGSL's integer arithmetic wraps.
    let is_i32 = |h| is_int(h, ScalarKind::Sint);
    // The outermost expressions with that value: those no matching expression contains.
    let found: Vec<(Handle<Expression>, (u32, i64))> = a
        .function
        .expressions
        .iter()
        .filter(|(_, e)| matches!(e, Expression::Binary { .. }))
        .filter_map(|(h, _)| {
            matches(h)
                .filter(|_| is_u32(h) || is_i32(h))
                .map(|d| (h, d))
        })
        .collect();
    let outer: Vec<(Handle<Expression>, (u32, i64))> = found
        .iter()
        .copied()
        .filter(|(h, _)| {
            !found
                .iter()
                .any(|(g, _)| g != h && a.visit_contains(*g, *h))
        })
        .collect();
    if outer.is_empty() {
        return None;
    }
    let (name, mut edits) = global_id_parameter(a)?;
    for (h, (d, c)) in outer {
        let r = a.expr_range(h)?;
        let id = format!("{name}.{}", ["x", "y", "z"][d as usize]);
        let id = if is_i32(h) { format!("i32({id})") } else { id };
        edits.push(Edit::replace(
            r,
            match (c, is_i32(h)) {
                (1, _) => id,
                (c, true) => format!("({id} * {c})"),
                (c, false) => format!("({id} * {c}u)"),
            },
        ));
    }
    Some((edits, "global-id"))
}

/// How the entry point names `global_invocation_id`, and the edit that adds the parameter
/// (`kf_global_id`) when it has none; `None` when it is a member of a struct argument.
pub(super) fn global_id_parameter(a: &Analysis<'_>) -> Option<(String, Vec<Edit>)> {
    match a.builtin(naga::BuiltIn::GlobalInvocationId) {
        Some(g) if g.member.is_none() => Some((g.name.clone(), Vec::new())),
        Some(_) => None,
        None => {
            if identifiers(a.code()).contains(&"kf_global_id") {
                return None;
            }
            let sig = a.entry_signature()?;
            let params = a.text(&sig.params).trim_end();
            // After a trailing comma (`fn main(\n    @builtin(..) id: u32,\n)`), no second one.
            let sep = if params.is_empty() || params.ends_with(',') {
                " "
            } else {
                ", "
            };
            Some((
                "kf_global_id".to_owned(),
                vec![Edit::insert(
                    sig.params.end,
                    format!("{sep}@builtin(global_invocation_id) kf_global_id: vec3<u32>"),
                )],
            ))
        }
    }
}

/// `if (c) { continue; } rest` at the top of a loop body's block → `if (!(c)) { rest }` (see the
/// module documentation).
fn continue_to_if(a: &Analysis<'_>, s: usize) -> Option<(Edit, &'static str)> {
    let st = &a.stmts[s];
    let Statement::If {
        ref accept,
        ref reject,
        ..
    } = *st.stmt
    else {
        return None;
    };
    let only = |b: &naga::Block, want: fn(&Statement) -> bool| {
        let mut rest = b.iter().filter(|x| !matches!(x, Statement::Emit(_)));
        rest.next().is_some_and(want) && rest.next().is_none()
    };
    if !only(accept, |x| matches!(x, Statement::Continue))
        || reject.iter().any(|x| !matches!(x, Statement::Emit(_)))
    {
        return None;
    }
    // The `if` sits in the block that is a `for`/`while` loop's body, so `continue` ends the
    // iteration's body and what follows the `if` in that block is the rest of it.
    let block = st.parent?;
    if st.part != Part::Block
        || !matches!(a.stmts[block].stmt, Statement::Block(_))
        || a.stmts[block].part != Part::LoopBody
    {
        return None;
    }
    continue_edit(a, st.span.clone()?.start, a.stmts[block].span.clone()?)
}

/// The same normalisation in the module's helper functions (the analysis covers the entry point
/// only): naga's statements and spans read directly, a `for`/`while` body being the `Block` last
/// in the loop's body.
fn helper_continues_to_if(a: &Analysis<'_>) -> Vec<Edit> {
    fn visit(a: &Analysis<'_>, block: &naga::Block, out: &mut Vec<Edit>) {
        for (st, _) in block.span_iter() {
            match st {
                Statement::Loop { body, .. } => {
                    let user = body
                        .span_iter()
                        .filter(|(x, _)| !matches!(x, Statement::Emit(_)))
                        .last();
                    if let Some((Statement::Block(b), span)) = user
                        && let Some(range) = span.to_range()
                    {
                        for (inner, inner_span) in b.span_iter() {
                            let Statement::If { accept, reject, .. } = inner else {
                                continue;
                            };
                            let mut taken =
                                accept.iter().filter(|x| !matches!(x, Statement::Emit(_)));
                            let only_continue = matches!(taken.next(), Some(Statement::Continue))
                                && taken.next().is_none();
                            if only_continue
                                && reject.iter().all(|x| matches!(x, Statement::Emit(_)))
                                && let Some(r) = inner_span.to_range()
                                && let Some((e, _)) = continue_edit(a, r.start, range.clone())
                            {
                                out.push(e);
                            }
                        }
                    }
                    visit(a, body, out);
                }
                Statement::Block(b) => visit(a, b, out),
                Statement::If { accept, reject, .. } => {
                    visit(a, accept, out);
                    visit(a, reject, out);
                }
                Statement::Switch { cases, .. } => {
                    for c in cases {
                        visit(a, &c.body, out);
                    }
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    for (_, f) in a.module.functions.iter() {
        visit(a, &f.body, &mut out);
    }
    out
}

/// The edit for an `if (c) { continue; }` whose `if` starts at `start`, in the loop body block
/// `body` (braces included): everything after it in the block goes inside `if (!(c)) { .. }`.
fn continue_edit(
    a: &Analysis<'_>,
    start: usize,
    body: ir::TextRange,
) -> Option<(Edit, &'static str)> {
    let code = a.code();
    if !(code[start..].starts_with("if") && body.start < start && start < body.end) {
        return None;
    }
    // The `if` must sit in `body` itself, not in a block nested in it.
    if !same_block(code, body.start + 1, start) {
        return None;
    }
    let open = start + code[start..].find('{')?;
    let close = matching_brace(code, open)?;
    let inner: String = code[open + 1..close].split_whitespace().collect();
    if inner != "continue;" || code[close + 1..].trim_start().starts_with("else") {
        return None;
    }
    let end = body.end - 1;
    if code.as_bytes()[end] != b'}' || end <= close {
        return None;
    }
    let rest = &a.source[close + 1..end];
    if rest.trim().is_empty() {
        return None;
    }
    let cond = code[start + 2..open].trim();
    Some((
        Edit::replace(
            start..end,
            format!(
                "if (!({cond})) {{{}\n{}}}\n",
                rest.trim_end(),
                a.indent_at(start)
            ),
        ),
        "continue-if",
    ))
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

/// A store of a number `select(f, t, c)` to a local `x`: `x`, `f`, `t` and `c`.
fn stored_select(
    a: &Analysis<'_>,
    s: usize,
) -> Option<(Handle<LocalVariable>, [Handle<Expression>; 3])> {
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
    scalar_number(a, value).then_some((x, [reject, accept, condition]))
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
    let (x, [kept, taken, c]) = stored_select(a, s)?;
    (load_of(a, kept) == Some(x)).then_some((x, taken, c))
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
    let cond = unparenthesised(&cond);
    let text = format!(
        "if ({cond}) {{ {m_name} = {}; {k_name} = {}; }}",
        a.expr_wgsl(element, Naming::Names)?,
        a.expr_wgsl(i, Naming::Names)?
    );
    Some((Edit::replace(span1.start..end, text), "arg-if"))
}

/// `var i = a; while (i < n) { ..; i += s; }` and `loop { if (i >= n) { break; } ..; continuing
/// { i += s; } }` → `for (var i: T = a; i < n; i += s) { .. }`, for every counter that lives only
/// in its loops (see the module documentation). One group of edits per counter: its declaration
/// and resets removed, each of its loops rewritten.
fn counted_loops_to_for(a: &Analysis<'_>) -> Vec<(Vec<Edit>, &'static str)> {
    let Some(body) = a.entry_signature().map(|s| s.body) else {
        return Vec::new();
    };
    let mut counters: Vec<Handle<LocalVariable>> = Vec::new();
    for l in &a.loops {
        if let Some(f) = &l.for_loop
            && f.kind != LoopKind::For
            && !counters.contains(&f.var)
        {
            counters.push(f.var);
        }
    }
    counters
        .into_iter()
        .filter_map(|v| counter_to_for(a, v, &body).map(|e| (e, "for")))
        .collect()
}

/// The edits that move counter `v` into `for` headers, or `None` when any of its loops cannot be
/// rewritten or the variable is read or written anywhere else in the entry point's `body`.
fn counter_to_for(
    a: &Analysis<'_>,
    v: Handle<LocalVariable>,
    body: &ir::TextRange,
) -> Option<Vec<Edit>> {
    let decl = a.local_span(v)?;
    let decl_full = whole_line(a, &a.with_semicolon(&decl));
    let name = a.function.local_variables[v].name.clone()?;
    let ty = a.type_name(a.function.local_variables[v].ty);
    let mut edits = vec![Edit::replace(decl_full.clone(), "")];
    // Where the variable may be named: its declaration, its loops and their resets.
    let mut allowed = vec![decl_full.clone()];
    for (id, l) in a.loops.iter().enumerate() {
        let Some(f) = l.for_loop.as_ref().filter(|f| f.var == v) else {
            continue;
        };
        if f.kind == LoopKind::For || f.declared_in_header {
            return None;
        }
        let span = l.span.clone()?;
        let init = f.init_span.clone();
        let init_full = match &init {
            Some(r) if *r == decl => decl_full.clone(),
            Some(r) => {
                let full = whole_line(a, &a.with_semicolon(r));
                edits.push(Edit::replace(full.clone(), ""));
                allowed.push(full.clone());
                full
            }
            // The zero value of a declaration without initializer.
            None if f.init.is_none() => decl_full.clone(),
            None => return None,
        };
        if !entry_unchanged_between(a, id, f, &init_full, &span) {
            return None;
        }
        let init_text = match (&f.init_value_span, f.init) {
            (Some(r), Some(_)) => a.text(r).trim().to_owned(),
            (None, None) => format!("{ty}()"),
            _ => return None,
        };
        let cond = header_condition(a, f, &name)?;
        let update = a.text(&f.step_span.clone()?).trim().to_owned();
        let block = loop_block(a, id, f, &span)?;
        allowed.push(span.clone());
        edits.push(Edit::replace(
            span,
            format!("for (var {name}: {ty} = {init_text}; {cond}; {update}) {block}"),
        ));
    }
    // Every other mention of the name would see a variable that no longer exists there.
    let mentions = text::tokens(a.code(), body.clone())
        .into_iter()
        .filter(|t| a.code()[t.clone()] == *name);
    for t in mentions {
        if !allowed.iter().any(|r| r.start <= t.start && t.end <= r.end) {
            return None;
        }
    }
    (edits.len() > 1).then_some(edits)
}

/// Whether the counter's initial value, written at `init` (its declaration or a reset before the
/// loop, in the loop's own block), is the same when the `for` header evaluates it at the loop:
/// the two sit in one block and everything between them only declares values or assigns locals
/// the initial value does not read.
fn entry_unchanged_between(
    a: &Analysis<'_>,
    id: usize,
    f: &ForLoop,
    init: &ir::TextRange,
    span: &ir::TextRange,
) -> bool {
    if init.end > span.start || !same_block(a.code(), init.end, span.start) {
        return false;
    }
    let l = a.loops[id].stmt;
    a.siblings(l).into_iter().all(|o| {
        let st = &a.stmts[o];
        if st.index_in_block >= a.stmts[l].index_in_block || matches!(st.stmt, Statement::Emit(_)) {
            return true;
        }
        let Some(r) = st.span.clone() else {
            return false;
        };
        if r.start < init.end {
            return true;
        }
        match *st.stmt {
            Statement::Store { pointer, .. } => match a.function.expressions[pointer] {
                Expression::LocalVariable(w) => {
                    w != f.var && f.init.is_none_or(|i| !a.reads_local(i, w))
                }
                _ => false,
            },
            _ => false,
        }
    })
}

/// `range` widened to its whole line, indentation and line break included, when nothing else is
/// on that line (so a removed statement leaves no blank line).
fn whole_line(a: &Analysis<'_>, range: &ir::TextRange) -> ir::TextRange {
    let code = a.code();
    let start = code[..range.start].rfind('\n').map_or(0, |p| p + 1);
    let end = code[range.end..]
        .find('\n')
        .map_or(code.len(), |p| range.end + p + 1);
    let blank = |t: &str| t.trim().is_empty();
    if blank(&code[start..range.start]) && blank(&code[range.end..end]) {
        start..end
    } else {
        range.clone()
    }
}

/// Whether `code[from..to]` closes no block it did not open (so `from` and `to` are in one block).
fn same_block(code: &str, from: usize, to: usize) -> bool {
    let mut depth = 0i32;
    for b in code[from..to].bytes() {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0
}

/// The `for` header's condition: the `while` condition as written, or a break test `i >= n`
/// turned into its negation `i < n` (the bounded form the loop operators read).
fn header_condition(a: &Analysis<'_>, f: &ForLoop, name: &str) -> Option<String> {
    let written = a.text(&f.cond_span.clone()?).trim().to_owned();
    if !f.cond_negated {
        // `while (c)` keeps its parentheses in naga's span; the header has its own.
        return Some(unparenthesised(&written));
    }
    match (f.bounds.as_slice(), &a.function.expressions[f.cond]) {
        ([b], Expression::Binary { .. }) if b.offset.is_none() => {
            let bound = a.text(&a.expr_range(b.bound)?).trim().to_owned();
            let simple = bound
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.');
            let bound = if simple { bound } else { format!("({bound})") };
            Some(format!("{name} {} {bound}", b.cmp.wgsl()))
        }
        // `if (!(i < n)) { break; }`: the test under the negation.
        (
            _,
            &Expression::Unary {
                op: naga::UnaryOperator::LogicalNot,
                expr,
            },
        ) => Some(unparenthesised(a.text(&a.expr_range(expr)?))),
        _ => Some(format!("!({written})")),
    }
}

/// The loop's body as a block without the counter's test and update: the `while` body less its
/// last statement, or the `loop` body less its leading `if (..) { break; }` and its update (last
/// in the body, or the `continuing` block).
fn loop_block(a: &Analysis<'_>, id: usize, f: &ForLoop, span: &ir::TextRange) -> Option<String> {
    let code = a.code();
    let step = a.with_semicolon(&f.step_span.clone()?);
    let continuing = a.stmts[f.step_stmt].part == Part::Continuing;
    let (open, close) = match f.kind {
        LoopKind::While => {
            let b = f.body_span.clone()?;
            (b.start, b.end - 1)
        }
        LoopKind::Loop => {
            let open = span.start + code[span.clone()].find('{')?;
            (open, span.end - 1)
        }
        LoopKind::For => return None,
    };
    if code.as_bytes()[open] != b'{' || code.as_bytes()[close] != b'}' {
        return None;
    }
    // What is cut out of `open + 1..close`.
    let mut cuts: Vec<ir::TextRange> = Vec::new();
    if f.kind == LoopKind::Loop {
        // The test must come first: statements before it would run once more than the body.
        let guard = guard_range(a, id, f)?;
        if !code[open + 1..guard.start].trim().is_empty() {
            return None;
        }
        cuts.push(guard);
    }
    if continuing {
        let start = code[..step.start].rfind("continuing")?;
        let brace = start + code[start..].find('{')?;
        let end = matching_brace(code, brace)?;
        if start <= open || !code[start + "continuing".len()..brace].trim().is_empty() {
            return None;
        }
        // Nothing but the update in the continuing block, nothing after it in the loop.
        let inside =
            code[brace + 1..step.start].trim().is_empty() && code[step.end..end].trim().is_empty();
        if !inside || !code[end + 1..close].trim().is_empty() {
            return None;
        }
        cuts.push(start..end + 1);
    } else {
        if !code[step.end..close].trim().is_empty() {
            return None;
        }
        cuts.push(step);
    }
    cuts.sort_by_key(|r| r.start);
    let mut out = String::from("{");
    let mut pos = open + 1;
    for c in cuts {
        out.push_str(&a.source[pos..c.start]);
        pos = c.end;
    }
    out.push_str(&a.source[pos..close + 1]);
    Some(out)
}

/// The text of a `loop`'s leading `if (test) { break; }`.
fn guard_range(a: &Analysis<'_>, id: usize, f: &ForLoop) -> Option<ir::TextRange> {
    let l = a.loops[id].stmt;
    let first = (l + 1..a.stmts.len()).find(|&s| {
        a.stmts[s].parent == Some(l)
            && a.stmts[s].part == Part::LoopBody
            && !matches!(a.stmts[s].stmt, Statement::Emit(_))
    })?;
    let Statement::If { condition, .. } = *a.stmts[first].stmt else {
        return None;
    };
    if condition != f.cond || !f.cond_negated {
        return None;
    }
    let code = a.code();
    let start = a.stmts[first].span.clone()?.start;
    if !code[start..].starts_with("if") {
        return None;
    }
    let cond_end = a.expr_range(condition)?.end;
    let open = cond_end + code[cond_end..].find('{')?;
    if !code[cond_end..open]
        .chars()
        .all(|c| c == ')' || c.is_whitespace())
    {
        return None;
    }
    let close = matching_brace(code, open)?;
    let inner: String = code[open + 1..close].split_whitespace().collect();
    (inner == "break;" && !code[close + 1..].trim_start().starts_with("else"))
        .then_some(start..close + 1)
}

fn op_label(fun: MathFunction) -> &'static str {
    if fun == MathFunction::Max {
        "max"
    } else {
        "min"
    }
}

/// `text` without one pair of parentheses around the whole of it (`(a < b)` → `a < b`, but
/// `(a) > (b)` stays).
fn unparenthesised(text: &str) -> String {
    let text = text.trim();
    match text.strip_prefix('(').and_then(|c| c.strip_suffix(')')) {
        Some(inner) if ir::matching(text, 0, b'(', b')') == Some(text.len() - 1) => {
            inner.trim().to_owned()
        }
        _ => text.to_owned(),
    }
}

/// The `}` matching the `{` at `open`, in comment-blanked text.
fn matching_brace(code: &str, open: usize) -> Option<usize> {
    ir::matching(code, open, b'{', b'}')
}

mod deblock;
mod destage;
mod fixed;
mod ids;
mod registers;
mod reroll;
mod ties;
mod unindex;

#[cfg(test)]
mod tests;

//! A loop unrolled by hand, rolled back up.
//!
//! Hand-tuned kernels often unroll their reduction loop: `for (var t = 0u; t < K; t += 4u) {
//! acc += a[r * K + t] * b[t * N + c]; acc += a[r * K + t + 1u] * b[(t + 1u) * N + c]; .. }`.
//! The operators that tile or split a loop (`tile`, `implicit-gemm`) take a loop stepping by
//! one with one accumulation, so this is written back as `for (var t = 0u; t < K; t += 1) {
//! acc += a[r * K + t] * b[t * N + c]; }` — and the operators unroll again where it pays.
//!
//! **Proven from the IR**: a counted `for` from zero while `t < K`, stepping up by a literal
//! `U` (2 to 16); its body, besides its exit test and `let`s, is exactly `U` stores where store
//! `c` is store 0 with every index that reads `t` moved by `c` steps of `t` (their affine forms
//! differ by `c` times `t`'s coefficient, `ir::IndexForm`) and everything else the same
//! expression (the counter read anywhere but in an index refuses it); and `K` is a multiple of
//! `U` — a literal, or a size the spec's constraints make one (`constraints(k % 4 == 0)`), which
//! the runtime enforces on every dispatch. Then the rolled loop runs `t = 0, 1, .., K - 1` and
//! performs the same stores in the same order: exact, floating-point sums included.
//!
//! **The unrolled terms in one sum** (`sum += a0 * b0 + a1 * b1 + a2 * b2 + a3 * b3;` in a loop
//! stepping by 4): [`split_sums`] writes the one update as `U` updates, `sum = sum + (a0 * b0);
//! ..`, which the reroll above then rolls. Proven as for the reroll: the same loop, its one
//! store `acc = acc + t₀ + t₁ + .. + t_{U-1}` (a left-nested sum of exactly `U` terms added to
//! the accumulator) whose term `c` is term 0 moved `c` steps. It changes the order of the
//! floating-point additions (`acc + (t₀ + t₁ + ..)` becomes `((acc + t₀) + t₁) + ..`), so its
//! step says so (`reassociate-sum`; written `acc = acc + t₀ + t₁ + ..`, the order is already
//! that one); the tiling it opens the loop to reassociates the sum anyway.

use crate::analysis::ir::{self, Analysis, Cmp, Edit, LoopKind, Part, Var};
use kf_runtime::resolve::ResolvedKernel;
use naga::{Expression, Handle, Statement};

/// The edits that roll each hand-unrolled loop of `a` back up.
pub(super) fn reroll(a: &Analysis<'_>, kernel: &ResolvedKernel) -> Vec<Vec<Edit>> {
    let mut out = Vec::new();
    for l in &a.loops {
        if let Some(edits) = roll(a, kernel, l) {
            out.push(edits);
        }
    }
    out
}

/// A counted `for` from zero stepping up by a literal `U` (2 to 16) while `t < K`, `K` a multiple
/// of `U` on every shape: the loop, `U`, and the statements of its body after its exit test
/// (`Emit`s left out; naga keeps a `for` loop's own block as one block statement after the
/// test).
fn unrolled_loop<'l>(
    a: &Analysis<'_>,
    kernel: &ResolvedKernel,
    l: &'l ir::LoopInfo<'_>,
) -> Option<(&'l ir::ForLoop, i64, Vec<usize>)> {
    let fl = l.for_loop.as_ref()?;
    if fl.kind != LoopKind::For || fl.decreasing {
        return None;
    }
    let u = a.const_int(fl.step)?;
    if !(2..=16).contains(&u) || fl.init.is_some_and(|h| a.const_int(h) != Some(0)) {
        return None;
    }
    let [bound] = fl.bounds.as_slice() else {
        return None;
    };
    if bound.cmp != Cmp::Lt || bound.offset.is_some() || !multiple(a, kernel, bound.bound, u) {
        return None;
    }
    let within = |parent: usize, part: Part| -> Vec<usize> {
        (0..a.stmts.len())
            .filter(|&s| {
                let st = &a.stmts[s];
                st.parent == Some(parent)
                    && st.part == part
                    && !matches!(st.stmt, Statement::Emit(_))
            })
            .collect()
    };
    let direct = within(l.stmt, Part::LoopBody);
    let (&test, rest) = direct.split_first()?;
    if !matches!(a.stmts[test].stmt, Statement::If { .. }) {
        return None;
    }
    let body = match rest {
        [b] if matches!(a.stmts[*b].stmt, Statement::Block(_)) => within(*b, Part::Block),
        _ => rest.to_vec(),
    };
    Some((fl, u, body))
}

fn roll(a: &Analysis<'_>, kernel: &ResolvedKernel, l: &ir::LoopInfo<'_>) -> Option<Vec<Edit>> {
    // The body: `U` stores.
    let (fl, u, stores) = unrolled_loop(a, kernel, l)?;
    if stores.len() != u as usize {
        return None;
    }
    let parts = |s: usize| match *a.stmts[s].stmt {
        Statement::Store { pointer, value } => Some((pointer, value)),
        _ => None,
    };
    let (p0, v0) = parts(stores[0])?;
    let var = fl.var;
    for (c, &s) in stores.iter().enumerate().skip(1) {
        let (pc, vc) = parts(s)?;
        let step = c as i64;
        if !shifted(a, var, p0, pc, step, 0) || !shifted(a, var, v0, vc, step, 0) {
            return None;
        }
    }
    let code = a.code();
    let mut edits = vec![Edit::replace(
        fl.step_span.clone()?,
        format!("{} += 1", fl.var_name),
    )];
    for &s in &stores[1..] {
        let mut r = a.stmts[s].span.clone()?;
        let rest = &code[r.end..];
        let semi = rest.len() - rest.trim_start().len();
        if rest.trim_start().starts_with(';') {
            r.end += semi + 1;
        }
        edits.push(Edit::replace(super::whole_line(a, &r), ""));
    }
    Some(edits)
}

/// The edits that write each loop's one update of a sum of `U` unrolled terms as `U` updates (see
/// the module documentation).
pub(super) fn split_sums(a: &Analysis<'_>, kernel: &ResolvedKernel) -> Vec<Edit> {
    a.loops
        .iter()
        .filter_map(|l| split_sum(a, kernel, l))
        .collect()
}

fn split_sum(a: &Analysis<'_>, kernel: &ResolvedKernel, l: &ir::LoopInfo<'_>) -> Option<Edit> {
    let (fl, u, stores) = unrolled_loop(a, kernel, l)?;
    let [store] = stores[..] else {
        return None;
    };
    let Statement::Store { pointer, value } = *a.stmts[store].stmt else {
        return None;
    };
    let exprs = &a.function.expressions;
    let Expression::LocalVariable(acc) = exprs[pointer] else {
        return None;
    };
    // `acc + t₀ + .. + t_{U-1}` as naga reads `acc += t₀ + ..` or `acc = acc + t₀ + ..`.
    let Expression::Binary {
        op: naga::BinaryOperator::Add,
        left,
        right,
    } = exprs[value]
    else {
        return None;
    };
    let is_acc = |h: Handle<Expression>| {
        matches!(exprs[h], Expression::Load { pointer: p }
            if matches!(exprs[p], Expression::LocalVariable(v) if v == acc))
    };
    let mut terms = Vec::new();
    if is_acc(left) {
        flatten_sum(exprs, right, &mut terms);
    } else {
        // `acc + t₀ + t₁ ..` left-nested: the accumulator is the innermost left operand.
        flatten_sum(exprs, value, &mut terms);
        if terms.first().is_none_or(|t| !is_acc(*t)) {
            return None;
        }
        terms.remove(0);
    }
    if terms.len() != u as usize || terms.iter().any(|t| is_acc(*t)) {
        return None;
    }
    if !matches!(
        a.type_of(terms[0]),
        naga::TypeInner::Scalar(naga::Scalar::F32)
    ) {
        return None;
    }
    for (c, t) in terms.iter().enumerate().skip(1) {
        if !shifted(a, fl.var, terms[0], *t, c as i64, 0) {
            return None;
        }
    }
    let name = a.function.local_variables[acc].name.clone()?;
    let printed = terms
        .iter()
        .map(|t| a.expr_wgsl(*t, ir::Naming::Names))
        .collect::<Option<Vec<_>>>()?;
    let code = a.code();
    let mut r = a.stmts[store].span.clone()?;
    let after = &code[r.end..];
    if !after.trim_start().starts_with(';') {
        return None;
    }
    r.end += after.len() - after.trim_start().len() + 1;
    let indent = a.indent_at(r.start);
    let text = printed
        .iter()
        .map(|t| format!("{name} = {name} + ({t});"))
        .collect::<Vec<_>>()
        .join(&format!("\n{indent}"));
    Some(Edit::replace(r, text))
}

/// The terms of a left-nested sum `((t₀ + t₁) + t₂) + ..`, in order.
fn flatten_sum(
    exprs: &naga::Arena<Expression>,
    h: Handle<Expression>,
    out: &mut Vec<Handle<Expression>>,
) {
    match exprs[h] {
        Expression::Binary {
            op: naga::BinaryOperator::Add,
            left,
            right,
        } => {
            flatten_sum(exprs, left, out);
            out.push(right);
        }
        _ => out.push(h),
    }
}

/// Whether `k` is a multiple of `u` on every shape the spec allows.
fn multiple(a: &Analysis<'_>, kernel: &ResolvedKernel, k: Handle<Expression>, u: i64) -> bool {
    if let Some(v) = a.const_int(k) {
        return v % u == 0;
    }
    let Some(size) = a.spec_size(kernel, k) else {
        return false;
    };
    let divisors = kf_runtime::views::size_divisors(&kernel.size_constraints());
    kf_runtime::views::multiple_of(&size, &divisors, u as u64)
}

/// Whether `y` is `x` with the counter `var` moved `c` steps: indices that read it differ by `c`
/// times its coefficient; everything else is the same expression, and the counter is read
/// nowhere else.
fn shifted(
    a: &Analysis<'_>,
    var: Handle<naga::LocalVariable>,
    x: Handle<Expression>,
    y: Handle<Expression>,
    c: i64,
    depth: u32,
) -> bool {
    if depth > 64 {
        return false;
    }
    let exprs = &a.function.expressions;
    let reads_counter = |h: Handle<Expression>| reads_var(a, h, var, 0);
    if x == y {
        return !reads_counter(x);
    }
    let same = |p: Handle<Expression>, q: Handle<Expression>| shifted(a, var, p, q, c, depth + 1);
    use Expression as E;
    match (&exprs[x], &exprs[y]) {
        (
            E::Access {
                base: b0,
                index: i0,
            },
            E::Access {
                base: b1,
                index: i1,
            },
        ) => {
            if !same(*b0, *b1) {
                return false;
            }
            match (a.index_form(*i0), a.index_form(*i1)) {
                (Some(f0), Some(f1)) => {
                    let d = f1.sub(&f0);
                    d.terms.is_empty() && d.offset == f0.coeff(Var::Loop(var)).scale(c)
                }
                _ => same(*i0, *i1),
            }
        }
        (E::Literal(p), E::Literal(q)) => p == q,
        (E::Constant(p), E::Constant(q)) => p == q,
        (E::Override(p), E::Override(q)) => p == q,
        (E::ZeroValue(p), E::ZeroValue(q)) => p == q,
        (E::GlobalVariable(p), E::GlobalVariable(q)) => p == q,
        (E::LocalVariable(p), E::LocalVariable(q)) => p == q && *p != var,
        (E::FunctionArgument(p), E::FunctionArgument(q)) => p == q,
        (E::Load { pointer: p }, E::Load { pointer: q }) => {
            // A load of a local: the same local; of memory: the same place, shifted.
            same(*p, *q)
        }
        (
            E::AccessIndex {
                base: b0,
                index: i0,
            },
            E::AccessIndex {
                base: b1,
                index: i1,
            },
        ) => i0 == i1 && same(*b0, *b1),
        (
            E::Binary {
                op: o0,
                left: l0,
                right: r0,
            },
            E::Binary {
                op: o1,
                left: l1,
                right: r1,
            },
        ) => o0 == o1 && same(*l0, *l1) && same(*r0, *r1),
        (E::Unary { op: o0, expr: e0 }, E::Unary { op: o1, expr: e1 }) => {
            o0 == o1 && same(*e0, *e1)
        }
        (
            E::Math {
                fun: f0,
                arg: a0,
                arg1: x0,
                arg2: y0,
                arg3: z0,
            },
            E::Math {
                fun: f1,
                arg: a1,
                arg1: x1,
                arg2: y1,
                arg3: z1,
            },
        ) => {
            let opt = |p: &Option<Handle<Expression>>, q: &Option<Handle<Expression>>| match (p, q)
            {
                (None, None) => true,
                (Some(p), Some(q)) => same(*p, *q),
                _ => false,
            };
            f0 == f1 && same(*a0, *a1) && opt(x0, x1) && opt(y0, y1) && opt(z0, z1)
        }
        (
            E::As {
                expr: e0,
                kind: k0,
                convert: c0,
            },
            E::As {
                expr: e1,
                kind: k1,
                convert: c1,
            },
        ) => k0 == k1 && c0 == c1 && same(*e0, *e1),
        (
            E::Select {
                condition: c0,
                accept: a0,
                reject: r0,
            },
            E::Select {
                condition: c1,
                accept: a1,
                reject: r1,
            },
        ) => same(*c0, *c1) && same(*a0, *a1) && same(*r0, *r1),
        (
            E::Splat {
                size: s0,
                value: v0,
            },
            E::Splat {
                size: s1,
                value: v1,
            },
        ) => s0 == s1 && same(*v0, *v1),
        (
            E::Compose {
                ty: t0,
                components: c0,
            },
            E::Compose {
                ty: t1,
                components: c1,
            },
        ) => t0 == t1 && c0.len() == c1.len() && c0.iter().zip(c1).all(|(p, q)| same(*p, *q)),
        _ => false,
    }
}

/// Whether `h` reads local `var`.
fn reads_var(
    a: &Analysis<'_>,
    h: Handle<Expression>,
    var: Handle<naga::LocalVariable>,
    depth: u32,
) -> bool {
    if depth > 64 {
        return true;
    }
    let e = &a.function.expressions[h];
    if let Expression::LocalVariable(v) = *e {
        return v == var;
    }
    crate::analysis::expr::operands(e)
        .into_iter()
        .any(|o| reads_var(a, o, var, depth + 1))
}

#[cfg(test)]
mod tests {
    use crate::operators::testkit;

    const SPEC: &str = "sizes(m = 9, n = 7, k = 16), bind(a = input(m * k), b = input(k * n), c = output(m * n), d = uniform(m, n, k)), grid = (n, m), constraints(k % 4 == 0)";

    fn gemm(body: &str) -> String {
        format!(
            r#"
struct D {{ m: u32, n: u32, k: u32 }}
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> d: D;
@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
    let col = gid.x;
    let row = gid.y;
    if (row >= d.m || col >= d.n) {{ return; }}
    var acc = 0.0;
    for (var t = 0u; t < d.k; t += 4u) {{
{body}
    }}
    c[row * d.n + col] = acc;
}}
"#
        )
    }

    const UNROLLED: &str = "        acc += a[row * d.k + t] * b[t * d.n + col];
        acc += a[row * d.k + t + 1u] * b[(t + 1u) * d.n + col];
        acc += a[row * d.k + (t + 2u)] * b[(t + 2u) * d.n + col];
        acc = acc + a[row * d.k + t + 3u] * b[(t + 3u) * d.n + col];";

    fn canon_with(spec: &str, wgsl: &str) -> Option<(String, String)> {
        testkit::canonical_text(spec, wgsl)
    }

    #[test]
    fn a_loop_unrolled_by_hand_is_rolled_back_up() {
        // The fourth copy is spelled `acc = acc + ..`: the same store in the IR.
        let (step, out) = canon_with(SPEC, &gemm(UNROLLED)).expect("a canonical form");
        assert!(step.contains("reroll"), "{step}");
        assert!(out.contains("t += 1)"), "{out}");
        assert_eq!(out.matches("acc +").count(), 1, "{out}");
        assert!(!out.contains("t + 1u"), "{out}");
    }

    #[test]
    fn unless_the_bound_is_a_multiple_of_the_step_or_the_copies_differ() {
        let loose = SPEC.replace(", constraints(k % 4 == 0)", "");
        assert!(canon_with(&loose, &gemm(UNROLLED)).is_none_or(|(s, _)| !s.contains("reroll")));
        let constrained_by_two = SPEC.replace("k % 4 == 0", "k % 2 == 0");
        assert!(
            canon_with(&constrained_by_two, &gemm(UNROLLED))
                .is_none_or(|(s, _)| !s.contains("reroll"))
        );
        // A copy off by one step.
        let wrong = UNROLLED.replace("(t + 2u) * d.n", "(t + 1u) * d.n");
        assert!(canon_with(SPEC, &gemm(&wrong)).is_none_or(|(s, _)| !s.contains("reroll")));
        // Three copies for a step of four.
        let three: String = UNROLLED.lines().take(3).collect::<Vec<_>>().join("\n");
        assert!(canon_with(SPEC, &gemm(&three)).is_none_or(|(s, _)| !s.contains("reroll")));
        // The counter read outside an index.
        let value = UNROLLED.replace(
            "acc += a[row * d.k + t] * b[t * d.n + col];",
            "acc += f32(t) * b[t * d.n + col];",
        );
        assert!(canon_with(SPEC, &gemm(&value)).is_none_or(|(s, _)| !s.contains("reroll")));
    }
}

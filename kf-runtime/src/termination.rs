//! Proving that every loop of a program ends, so it can be built without naga's forced loop bound.
//!
//! An infinite loop is undefined behaviour in SPIR-V, MSL and HLSL, so naga gives every loop of
//! every shader a hidden 64-bit iteration counter (wgpu's `force_loop_bounding`). On NVIDIA's
//! Vulkan driver that counter is not free: it keeps the compiler from unrolling and from
//! recognising induction variables. On an H100, with the other checks on, a naive matmul with
//! K = 65 536 ran 3.3 times slower with the counter than without it, and of the committed tuned
//! variants GEMM_LARGE_K 1.47 and GEMM_DIVIDE_SUM 1.75 times slower; a few (TRANSPOSE) ran faster
//! with it (BENCHMARKS.md, "What wgpu's shader runtime checks cost").
//!
//! A loop needs no counter when it provably ends. The proof here covers the loops people write
//! and the operators emit, read from naga's IR whatever their spelling (`for`, `while`, `loop`
//! with a `break` or a `break if`, `i++`, `i += c`, `i = i + c`, counting up, down or halving):
//!
//! * one local integer variable, the counter, is written in the loop only by one update that runs
//!   on every iteration (a top-level store of the continuing block; or of the body, after the
//!   exit test, when no `continue` can skip it), and is never handed to a call;
//! * the update moves it by a constant: `i ± c`, or `i / c`, `i >> c` towards zero, or a `u32`
//!   counter `i * c`, `i << c` away from it (`s *= 2u`, a scan's doubling stride); or up by a
//!   `u32` step that has one value for the whole loop (computed before it, or from invocation
//!   inputs and uniform or read-only storage memory: `i += params.stride`,
//!   `i += num_workgroups.x * 64u`);
//! * the exit test runs on every iteration (the body's first statement, or `break if`) and
//!   compares the counter, plus a constant offset, with any bound in the direction the update
//!   moves it; or it is an `&&` (as an exit, `||`) with such a comparison in one half (naga
//!   lowers a short-circuit to an `if` writing a temporary, read through that `if`).
//!
//! Counting up by one while `i < n`, the counter never wraps, so the loop ends within 2³² steps
//! whatever `n` does. Where the counter could wrap before passing the bound (`i += 16u` while
//! `i < n` with `n` within 16 of `u32` max, or `i <= n`), the bound is clamped so that it cannot:
//! `i < min(n, MAX - c + 1)`. A step known only at run time is clamped the same way at the test,
//! `i < min(n, MAX - max(c, 1) + 1) && c != 0`, its expressions evaluated again there when the
//! loop computes them. The clamp changes nothing for an input on which the loop ends; on the
//! inputs where it would change the result the original loop never ends. A multiplied counter
//! is clamped so that it cannot wrap either, `i < min(n, MAX / c + 1)`, and the loop goes on only
//! while `i != 0` (from 0 it would never move); taken only where nothing else leaves the loop
//! (no `break` of it, no `return`), so at 0 the original loop could not have ended. If any loop
//! of the module is not proven, the module is built with the forced bound as before.

use naga::{
    Arena, BinaryOperator, Block, Expression, Handle, Literal, MathFunction, Module, ScalarKind,
    Span, Statement, TypeInner, UnaryOperator,
};

/// What [`prove`] did to a module whose loops all end.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Proof {
    /// Loops proven to end.
    pub loops: usize,
    /// Of those, loops whose bound was clamped so that the counter cannot wrap.
    pub clamped: usize,
}

/// Proves that every loop of `module` ends, clamping bounds where the counter could otherwise
/// wrap (see the module docs). `constants` are the pipeline's override values, by name or id.
/// On `Err` (the first loop not proven, and why) the module may have been partly rewritten and
/// must be dropped.
pub fn prove(module: &mut Module, constants: &[(&str, f64)]) -> Result<Proof, String> {
    let mut proof = Proof::default();
    let Module {
        types,
        constants: consts,
        overrides,
        global_expressions,
        global_variables,
        functions,
        entry_points,
        ..
    } = module;
    let globals = Globals {
        types,
        constants: consts,
        overrides,
        expressions: global_expressions,
        variables: global_variables,
        values: constants,
    };
    let bodies = functions
        .iter_mut()
        .map(|(_, f)| f)
        .chain(entry_points.iter_mut().map(|e| &mut e.function));
    for function in bodies {
        let name = function.name.clone().unwrap_or_default();
        let mut ctx = FnCtx {
            globals: &globals,
            expressions: &mut function.expressions,
            locals: &function.local_variables,
        };
        visit(&mut function.body, &mut ctx, &mut proof).map_err(|e| format!("in `{name}`: {e}"))?;
    }
    Ok(proof)
}

/// [`prove`] on a program's WGSL with its pipeline constants (the module is dropped): whether
/// it would be built without the forced loop bound, and if not, why.
pub fn prove_program(program: &crate::Program) -> Result<Proof, String> {
    let mut module = naga::front::wgsl::parse_str(&program.wgsl).map_err(|e| e.to_string())?;
    prove(&mut module, &program.constants_pairs())
}

struct Globals<'a> {
    types: &'a naga::UniqueArena<naga::Type>,
    constants: &'a Arena<naga::Constant>,
    overrides: &'a Arena<naga::Override>,
    expressions: &'a Arena<Expression>,
    variables: &'a Arena<naga::GlobalVariable>,
    values: &'a [(&'a str, f64)],
}

struct FnCtx<'a> {
    globals: &'a Globals<'a>,
    expressions: &'a mut Arena<Expression>,
    locals: &'a Arena<naga::LocalVariable>,
}

fn visit(block: &mut Block, ctx: &mut FnCtx, proof: &mut Proof) -> Result<(), String> {
    for statement in block.iter_mut() {
        match statement {
            Statement::Block(inner) => visit(inner, ctx, proof)?,
            Statement::If { accept, reject, .. } => {
                visit(accept, ctx, proof)?;
                visit(reject, ctx, proof)?;
            }
            Statement::Switch { cases, .. } => {
                for case in cases {
                    visit(&mut case.body, ctx, proof)?;
                }
            }
            Statement::Loop {
                body,
                continuing,
                break_if,
            } => {
                visit(body, ctx, proof)?;
                visit(continuing, ctx, proof)?;
                let plan = analyse(body, continuing, *break_if, ctx)?;
                proof.loops += 1;
                if let Some(clamp) = plan.clamp {
                    apply(clamp, &plan.exit, body, continuing, break_if, ctx);
                    proof.clamped += 1;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Where the loop's exit test is.
#[derive(Clone, Copy, Debug)]
enum Exit {
    /// `if cond {} else { break; }` (or `if cond { break; }`) at index `at` of the body, preceded
    /// only by emits. `negated`: the loop goes on while the condition is false.
    Guard { at: usize, negated: bool },
    /// `break if cond`: the loop goes on while the condition is false.
    BreakIf,
}

/// The comparison that keeps the loop going, as `counter_side OP bound` once normalised.
struct Test {
    /// The comparison expression.
    compare: Handle<Expression>,
    /// The comparison's operator with the counter on the left, after any negation.
    op: BinaryOperator,
    counter: Handle<naga::LocalVariable>,
    /// The load of the counter the comparison reads.
    counter_load: Handle<Expression>,
    /// The constant added to the counter on the counter's side (`i + 3u < n`).
    offset: i64,
    /// Whether the counter is the comparison's left operand as written.
    counter_left: bool,
    bound: Handle<Expression>,
    /// The other halves of an `&&` (or, in an exit test, `||`) around the comparison: each
    /// condition, and whether the loop goes on while it is false.
    rest: Vec<(Handle<Expression>, bool)>,
    /// Whether the comparison's operands can be read where the test is (not so for the right
    /// half of a short-circuit `&&`, evaluated inside its `if`): a clamp needs them.
    side_in_scope: bool,
}

struct Plan {
    exit: Exit,
    clamp: Option<Clamp>,
}

/// How the exit test is rewritten: the loop goes on while `side OP bound'`, where `bound'` is
/// the bound clamped by `fun` against `limit` (a constant, or for a step known only at run time
/// `MAX - max(step, 1) + 1`), and, for such a step, while the step is not zero.
#[derive(Clone, Debug)]
struct Clamp {
    /// The counter's side of the comparison (`i` or `i + k`) and the operator with it on the left,
    /// for the loop to go on.
    side: Handle<Expression>,
    op: BinaryOperator,
    bound: Handle<Expression>,
    /// `min` (counting up) or `max` (counting down).
    fun: MathFunction,
    limit: Limit,
    signed: bool,
    /// The rest of the condition, kept as it is (see `Test::rest`).
    rest: Vec<(Handle<Expression>, bool)>,
    /// Whether the loop goes on only while the counter (`side`) is not zero: a multiplied
    /// counter never moves from 0.
    nonzero: bool,
}

#[derive(Clone, Copy, Debug)]
enum Limit {
    Constant(i64),
    /// `MAX - max(step, 1) + 1` for a `u32` step fixed before the loop.
    Step(Handle<Expression>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Up(i64),
    /// `i + c` with `c` a `u32` value fixed before the loop but not a constant.
    UpBy(Handle<Expression>),
    Down(i64),
    /// `i / c` or `i >> c`: towards zero.
    Halve,
    /// `i * c` or `i << k` (`c = 2^k`), `c >= 2`: away from zero, unless it is zero.
    Grow(i64),
}

fn analyse(
    body: &Block,
    continuing: &Block,
    break_if: Option<Handle<Expression>>,
    ctx: &FnCtx,
) -> Result<Plan, String> {
    let (exit, condition) = exit_test(body, break_if).ok_or("no exit test at the loop's head")?;
    let negated = match exit {
        Exit::Guard { negated, .. } => negated,
        Exit::BreakIf => true,
    };
    let prefix = match exit {
        Exit::Guard { at, .. } => &body[..at],
        Exit::BreakIf => &[],
    };
    let test =
        test_of(condition, negated, prefix, ctx).ok_or("the exit test is not a comparison")?;
    let ty = ctx.locals[test.counter].ty;
    let signed = match ctx.globals.types[ty].inner {
        TypeInner::Scalar(s) if s.width == 4 && s.kind == ScalarKind::Uint => false,
        TypeInner::Scalar(s) if s.width == 4 && s.kind == ScalarKind::Sint => true,
        _ => return Err("the counter is not a 32-bit integer".into()),
    };
    let step = update(body, continuing, exit, test.counter, ctx)?;
    // The counter must be read afresh each iteration: a load emitted before the loop is a value
    // fixed for the whole loop (`let x = i; for (; x < n; i++)`, `continuing { i = x + 1u; }`).
    let loads = [
        Some(test.counter_load),
        step_load(body, continuing, test.counter, ctx),
    ];
    if loads
        .into_iter()
        .flatten()
        .any(|load| !emitted_in(body, load) && !emitted_in(continuing, load))
    {
        return Err("the counter is read before the loop, not in it".into());
    }
    let (min, max) = if signed {
        (i64::from(i32::MIN), i64::from(i32::MAX))
    } else {
        (0, i64::from(u32::MAX))
    };
    use BinaryOperator as B;
    let side = match ctx.expressions[test.compare] {
        Expression::Binary { left, right, .. } => {
            if test.counter_left {
                left
            } else {
                right
            }
        }
        _ => unreachable!("the test is a comparison"),
    };
    let clamp = |fun, limit: Limit| -> Result<Option<Clamp>, String> {
        if let Limit::Constant(limit) = limit
            && (limit < min || limit > max)
        {
            return Err("the step is too large to clamp".into());
        }
        Ok(Some(Clamp {
            side,
            op: test.op,
            bound: test.bound,
            fun,
            limit,
            signed,
            rest: test.rest.clone(),
            nonzero: matches!(step, Step::Grow(_)),
        }))
    };
    let constant = |fun, limit| clamp(fun, Limit::Constant(limit));
    let offset = test.offset;
    let clamp = match (step, test.op) {
        (Step::Up(1), B::Less) if offset == 0 => None,
        (Step::Up(c), B::Less) => constant(MathFunction::Min, max - c - offset + 1)?,
        (Step::Up(c), B::LessEqual) => constant(MathFunction::Min, max - c - offset)?,
        (Step::UpBy(c), B::Less) if offset == 0 && !signed => {
            clamp(MathFunction::Min, Limit::Step(c))?
        }
        (Step::Down(1), B::Greater) if offset == 0 => None,
        (Step::Down(c), B::Greater) if offset == 0 => constant(MathFunction::Max, min + c - 1)?,
        (Step::Down(c), B::GreaterEqual) if offset == 0 => constant(MathFunction::Max, min + c)?,
        (Step::Halve, B::Greater) if offset == 0 && !signed => None,
        (Step::Halve, B::Greater) if offset == 0 => constant(MathFunction::Max, 0)?,
        (Step::Halve, B::GreaterEqual) if offset == 0 => constant(MathFunction::Max, 1)?,
        (Step::Grow(c), B::Less | B::LessEqual) if offset == 0 && !signed => {
            let exit_at = match exit {
                Exit::Guard { at, .. } => Some(at),
                Exit::BreakIf => None,
            };
            if leaves(body, exit_at, false) {
                return Err(
                    "the counter is multiplied and something else leaves the loop: from 0 it \
                     would wait for that exit"
                        .into(),
                );
            }
            let limit = if test.op == B::Less {
                max / c + 1
            } else {
                max / c
            };
            constant(MathFunction::Min, limit)?
        }
        (step, op) => {
            return Err(format!(
                "the counter moves {step:?} but the loop goes on while `{op:?}`"
            ));
        }
    };
    if clamp.is_some() && !test.side_in_scope {
        return Err("the counter's test needs a clamp but sits on the right of `&&`".into());
    }
    Ok(Plan { exit, clamp })
}

/// The loop's exit test: a guard first in the body (after emits), else `break if`.
fn exit_test(
    body: &Block,
    break_if: Option<Handle<Expression>>,
) -> Option<(Exit, Handle<Expression>)> {
    for (at, statement) in body.iter().enumerate() {
        match statement {
            Statement::Emit(_) => continue,
            Statement::If {
                condition,
                accept,
                reject,
            } => {
                let only_break =
                    |b: &Block| matches!(b.first(), Some(Statement::Break)) && b.len() == 1;
                if accept.is_empty() && only_break(reject) {
                    return Some((Exit::Guard { at, negated: false }, *condition));
                }
                if reject.is_empty() && only_break(accept) {
                    return Some((Exit::Guard { at, negated: true }, *condition));
                }
                if short_circuit(statement).is_some() {
                    continue;
                }
                break;
            }
            _ => break,
        }
    }
    break_if.map(|c| (Exit::BreakIf, c))
}

/// naga's lowering of a short-circuit `a && b` (`a || b`) outside a constant expression:
/// `if a { ..; t = b; } else { t = false; }` (`if !a { ..; t = b; } else { t = true; }`).
/// The temporary's pointer, the `if`'s condition (`a`, or `!a`) and `b`.
fn short_circuit(statement: &Statement) -> Option<ShortCircuit> {
    let Statement::If {
        condition,
        accept,
        reject,
    } = statement
    else {
        return None;
    };
    let [Statement::Store { pointer, .. }] = &reject[..] else {
        return None;
    };
    let Some(Statement::Store {
        pointer: p,
        value: rhs,
    }) = accept.last()
    else {
        return None;
    };
    let plain = accept[..accept.len() - 1]
        .iter()
        .all(|s| matches!(s, Statement::Emit(_)) || short_circuit(s).is_some());
    (p == pointer && plain).then_some(ShortCircuit {
        pointer: *pointer,
        condition: *condition,
        rhs: *rhs,
    })
}

#[derive(Clone, Copy, Debug)]
struct ShortCircuit {
    pointer: Handle<Expression>,
    condition: Handle<Expression>,
    rhs: Handle<Expression>,
}

/// Reads `condition` (negated when the loop goes on while it is false) as a comparison of the
/// counter (plus a constant) with a bound. `prefix` holds the statements before the test.
fn test_of(
    condition: Handle<Expression>,
    negated: bool,
    prefix: &[Statement],
    ctx: &FnCtx,
) -> Option<Test> {
    match ctx.expressions[condition] {
        Expression::Unary {
            op: UnaryOperator::LogicalNot,
            expr,
        } => test_of(expr, !negated, prefix, ctx),
        // A short-circuit `&&` (`||`): the temporary holds `a && b` (`a || b`). Either half's
        // comparison proves the loop when it goes on only while the whole holds (for `||`,
        // exits when it holds); the temporary itself is the rest kept beside a clamped test,
        // which is exact since the clamped comparison implies the original one.
        Expression::Load { pointer } => {
            // The last statement before the test that writes the temporary decides its value.
            let (
                writer,
                ShortCircuit {
                    condition: a,
                    rhs: b,
                    ..
                },
            ) = prefix.iter().rev().find_map(|st| {
                short_circuit(st)
                    .filter(|sc| same_local(sc.pointer, pointer, ctx.expressions))
                    .map(|sc| (st, sc))
            })?;
            let (kind_or, a) = match (&ctx.expressions[a], &else_literal(writer, ctx)) {
                (_, Some(false)) => (false, a),
                (
                    Expression::Unary {
                        op: UnaryOperator::LogicalNot,
                        expr,
                    },
                    Some(true),
                ) => (true, *expr),
                _ => return None,
            };
            if kind_or != negated {
                return None;
            }
            [(a, true), (b, false)]
                .into_iter()
                .find_map(|(half, in_scope)| {
                    let mut test = test_of(half, negated, prefix, ctx)?;
                    test.side_in_scope &= in_scope;
                    test.rest.push((condition, negated));
                    Some(test)
                })
        }
        // `a && b` goes on only while both hold (`a || b` as an exit test, when neither does):
        // a comparison of the counter in either half proves the loop; the other half is kept
        // beside the clamped comparison.
        Expression::Binary {
            op: BinaryOperator::LogicalAnd,
            left,
            right,
        } if !negated => halves(left, right, negated, prefix, ctx),
        Expression::Binary {
            op: BinaryOperator::LogicalOr,
            left,
            right,
        } if negated => halves(left, right, negated, prefix, ctx),
        _ => comparison(condition, negated, ctx),
    }
}

/// A non-short-circuit `&&` (`||`): the counter's comparison in either half, the other kept.
fn halves(
    left: Handle<Expression>,
    right: Handle<Expression>,
    negated: bool,
    prefix: &[Statement],
    ctx: &FnCtx,
) -> Option<Test> {
    [(left, right), (right, left)]
        .into_iter()
        .find_map(|(this, other)| {
            let mut test = test_of(this, negated, prefix, ctx)?;
            test.rest.push((other, negated));
            Some(test)
        })
}

/// Whether two pointer expressions name the same local variable.
fn same_local(a: Handle<Expression>, b: Handle<Expression>, exprs: &Arena<Expression>) -> bool {
    local_of(a, exprs).is_some_and(|l| local_of(b, exprs) == Some(l))
}

/// The boolean literal a short-circuit's `else` branch stores.
fn else_literal(statement: &Statement, ctx: &FnCtx) -> Option<bool> {
    let Statement::If { reject, .. } = statement else {
        return None;
    };
    let [Statement::Store { value, .. }] = &reject[..] else {
        return None;
    };
    match ctx.expressions[*value] {
        Expression::Literal(Literal::Bool(b)) => Some(b),
        _ => None,
    }
}

fn comparison(compare: Handle<Expression>, not: bool, ctx: &FnCtx) -> Option<Test> {
    let Expression::Binary { op, left, right } = ctx.expressions[compare] else {
        return None;
    };
    use BinaryOperator as B;
    let flip = |op| match op {
        B::Less => B::Greater,
        B::LessEqual => B::GreaterEqual,
        B::Greater => B::Less,
        B::GreaterEqual => B::LessEqual,
        other => other,
    };
    let negate = |op| match op {
        B::Less => Some(B::GreaterEqual),
        B::LessEqual => Some(B::Greater),
        B::Greater => Some(B::LessEqual),
        B::GreaterEqual => Some(B::Less),
        B::NotEqual => Some(B::Equal),
        B::Equal => Some(B::NotEqual),
        _ => None,
    };
    if !matches!(
        op,
        B::Less | B::LessEqual | B::Greater | B::GreaterEqual | B::NotEqual | B::Equal
    ) {
        return None;
    }
    let (counter, counter_load, offset, bound, counter_left, op) =
        if let Some((c, l, k)) = counter_side(left, ctx) {
            (c, l, k, right, true, op)
        } else if let Some((c, l, k)) = counter_side(right, ctx) {
            (c, l, k, left, false, flip(op))
        } else {
            return None;
        };
    let op = if not { negate(op)? } else { op };
    Some(Test {
        compare,
        op,
        counter,
        counter_load,
        offset,
        counter_left,
        bound,
        rest: Vec::new(),
        side_in_scope: true,
    })
}

/// `i` or `i + k` (`k + i`) with `k` a non-negative constant: the counter, its load and `k`.
fn counter_side(
    h: Handle<Expression>,
    ctx: &FnCtx,
) -> Option<(Handle<naga::LocalVariable>, Handle<Expression>, i64)> {
    if let Some(local) = load_of_counter(h, ctx) {
        return Some((local, h, 0));
    }
    let Expression::Binary {
        op: BinaryOperator::Add,
        left,
        right,
    } = ctx.expressions[h]
    else {
        return None;
    };
    let (local, load, k) = match (load_of_counter(left, ctx), load_of_counter(right, ctx)) {
        (Some(local), None) => (local, left, right),
        (None, Some(local)) => (local, right, left),
        _ => return None,
    };
    let k = int_const(k, ctx.expressions, ctx.globals)?;
    (k >= 0).then_some((local, load, k))
}

/// The load of the counter that its update reads (`i` in `i = i + 1u`).
fn step_load(
    body: &Block,
    continuing: &Block,
    counter: Handle<naga::LocalVariable>,
    ctx: &FnCtx,
) -> Option<Handle<Expression>> {
    let mut stores = Vec::new();
    stores_to(body, counter, ctx.expressions, &mut stores).ok()?;
    stores_to(continuing, counter, ctx.expressions, &mut stores).ok()?;
    let Expression::Binary { left, right, .. } = ctx.expressions[*stores.first()?] else {
        return None;
    };
    [left, right]
        .into_iter()
        .find(|&h| load_of_local(h, ctx) == Some(counter))
}

/// Whether `h` is emitted somewhere in `block` (nested blocks included).
fn emitted_in(block: &Block, h: Handle<Expression>) -> bool {
    let index = h.index() as u32;
    block.iter().any(|s| match s {
        Statement::Emit(range) => range.index_range().contains(&index),
        Statement::Block(b) => emitted_in(b, h),
        Statement::If { accept, reject, .. } => emitted_in(accept, h) || emitted_in(reject, h),
        Statement::Switch { cases, .. } => cases.iter().any(|c| emitted_in(&c.body, h)),
        Statement::Loop {
            body, continuing, ..
        } => emitted_in(body, h) || emitted_in(continuing, h),
        _ => false,
    })
}

fn load_of_local(h: Handle<Expression>, ctx: &FnCtx) -> Option<Handle<naga::LocalVariable>> {
    let Expression::Load { pointer } = ctx.expressions[h] else {
        return None;
    };
    local_of(pointer, ctx.expressions)
}

/// A load of a local 32-bit integer: a counter can be nothing else.
fn load_of_counter(h: Handle<Expression>, ctx: &FnCtx) -> Option<Handle<naga::LocalVariable>> {
    let local = load_of_local(h, ctx)?;
    match ctx.globals.types[ctx.locals[local].ty].inner {
        TypeInner::Scalar(s)
            if s.width == 4 && matches!(s.kind, ScalarKind::Uint | ScalarKind::Sint) =>
        {
            Some(local)
        }
        _ => None,
    }
}

fn local_of(
    pointer: Handle<Expression>,
    exprs: &Arena<Expression>,
) -> Option<Handle<naga::LocalVariable>> {
    match exprs[pointer] {
        Expression::LocalVariable(local) => Some(local),
        _ => None,
    }
}

/// The counter's one update, and how it moves the counter.
fn update(
    body: &Block,
    continuing: &Block,
    exit: Exit,
    counter: Handle<naga::LocalVariable>,
    ctx: &FnCtx,
) -> Result<Step, String> {
    let mut stores = Vec::new();
    stores_to(body, counter, ctx.expressions, &mut stores)?;
    stores_to(continuing, counter, ctx.expressions, &mut stores)?;
    let [value] = stores[..] else {
        return Err(format!(
            "the counter is written {} times in the loop",
            stores.len()
        ));
    };
    // A store at the top of the continuing block always runs; one at the top of the body runs
    // unless a `continue` jumps over it (and, with the test at the head, only after the test).
    let from = match exit {
        Exit::Guard { at, .. } => at + 1,
        Exit::BreakIf => 0,
    };
    let runs_every_iteration = top_level_store(continuing, value)
        || (body[from..].iter().any(|s| top_level_store_in(s, value)) && !has_continue(body));
    if !runs_every_iteration {
        return Err("the counter's update does not run on every iteration".into());
    }
    let Expression::Binary { op, left, right } = ctx.expressions[value] else {
        return Err("the counter's update is not an arithmetic step".into());
    };
    let constant = |h| int_const(h, ctx.expressions, ctx.globals);
    use BinaryOperator as B;
    let step = match (
        op,
        load_of_local(left, ctx) == Some(counter),
        load_of_local(right, ctx) == Some(counter),
    ) {
        (B::Add, true, false) | (B::Add, false, true) => {
            let c = if load_of_local(left, ctx) == Some(counter) {
                right
            } else {
                left
            };
            let in_loop = |h| emitted_in(body, h) || emitted_in(continuing, h);
            match constant(c) {
                Some(c) if c < 0 => Some(Step::Down(-c)),
                Some(c) => Some(Step::Up(c)),
                None if invariant(c, ctx, &in_loop) => Some(Step::UpBy(c)),
                None => None,
            }
        }
        (B::Subtract, true, false) => {
            constant(right).map(|c| if c < 0 { Step::Up(-c) } else { Step::Down(c) })
        }
        (B::Divide, true, false) => constant(right).filter(|&c| c >= 2).map(|_| Step::Halve),
        (B::ShiftRight, true, false) => constant(right)
            .filter(|&c| (1..32).contains(&c))
            .map(|_| Step::Halve),
        (B::Multiply, true, false) | (B::Multiply, false, true) => {
            let c = if load_of_local(left, ctx) == Some(counter) {
                right
            } else {
                left
            };
            constant(c).filter(|&c| c >= 2).map(Step::Grow)
        }
        (B::ShiftLeft, true, false) => constant(right)
            .filter(|&k| (1..32).contains(&k))
            .map(|k| Step::Grow(1 << k)),
        _ => None,
    };
    match step {
        Some(Step::Up(0) | Step::Down(0)) | None => {
            Err("the counter's step is not a non-zero constant".into())
        }
        Some(step) => Ok(step),
    }
}

/// Whether `h` has one value for the whole loop: computed before it (not emitted in it), or
/// built only from constants, invocation inputs and loads of uniform or read-only storage memory.
fn invariant(
    h: Handle<Expression>,
    ctx: &FnCtx,
    in_loop: &dyn Fn(Handle<Expression>) -> bool,
) -> bool {
    let e = &ctx.expressions[h];
    if e.needs_pre_emit() {
        return !matches!(
            e,
            Expression::LocalVariable(_) | Expression::GlobalVariable(_)
        );
    }
    if !in_loop(h) {
        return true;
    }
    match *e {
        Expression::Load { pointer } => read_only_pointer(pointer, ctx, in_loop),
        _ => operands(e).is_some_and(|o| o.into_iter().all(|x| invariant(x, ctx, in_loop))),
    }
}

/// Whether `pointer` points into a uniform or read-only storage binding (memory nothing writes
/// during a dispatch) through indices that are [`invariant`].
fn read_only_pointer(
    pointer: Handle<Expression>,
    ctx: &FnCtx,
    in_loop: &dyn Fn(Handle<Expression>) -> bool,
) -> bool {
    match ctx.expressions[pointer] {
        Expression::GlobalVariable(g) => match ctx.globals.variables[g].space {
            naga::AddressSpace::Uniform => true,
            naga::AddressSpace::Storage { access } => !access.contains(naga::StorageAccess::STORE),
            _ => false,
        },
        Expression::AccessIndex { base, .. } => read_only_pointer(base, ctx, in_loop),
        Expression::Access { base, index } => {
            read_only_pointer(base, ctx, in_loop) && invariant(index, ctx, in_loop)
        }
        _ => false,
    }
}

/// Every value stored to `counter` in `block` (nested blocks included); an error if the counter's
/// pointer goes to a call.
fn stores_to(
    block: &Block,
    counter: Handle<naga::LocalVariable>,
    exprs: &Arena<Expression>,
    out: &mut Vec<Handle<Expression>>,
) -> Result<(), String> {
    for statement in block {
        match statement {
            Statement::Store { pointer, value } if local_of(*pointer, exprs) == Some(counter) => {
                out.push(*value)
            }
            Statement::Call { arguments, .. }
                if arguments
                    .iter()
                    .any(|&a| local_of(a, exprs) == Some(counter)) =>
            {
                return Err("the counter is passed to a function by pointer".into());
            }
            Statement::Block(b) => stores_to(b, counter, exprs, out)?,
            Statement::If { accept, reject, .. } => {
                stores_to(accept, counter, exprs, out)?;
                stores_to(reject, counter, exprs, out)?;
            }
            Statement::Switch { cases, .. } => {
                for case in cases {
                    stores_to(&case.body, counter, exprs, out)?;
                }
            }
            Statement::Loop {
                body, continuing, ..
            } => {
                stores_to(body, counter, exprs, out)?;
                stores_to(continuing, counter, exprs, out)?;
            }
            _ => {}
        }
    }
    Ok(())
}

fn top_level_store(block: &Block, value: Handle<Expression>) -> bool {
    block.iter().any(|s| top_level_store_in(s, value))
}

/// Whether `statement` is, or is a plain block that always runs down to, the store of `value`.
fn top_level_store_in(statement: &Statement, value: Handle<Expression>) -> bool {
    match statement {
        Statement::Store { value: v, .. } => *v == value,
        Statement::Block(b) => top_level_store(b, value),
        _ => false,
    }
}

/// Whether `block` (a loop's body, the statement at `skip` aside: its exit test) can leave the
/// loop another way: a `break` of this loop (not of a nested loop or `switch`, `inner`), or a
/// `return` or `kill` anywhere.
fn leaves(block: &Block, skip: Option<usize>, inner: bool) -> bool {
    block.iter().enumerate().any(|(i, s)| {
        Some(i) != skip
            && match s {
                Statement::Break => !inner,
                Statement::Return { .. } | Statement::Kill => true,
                Statement::Block(b) => leaves(b, None, inner),
                Statement::If { accept, reject, .. } => {
                    leaves(accept, None, inner) || leaves(reject, None, inner)
                }
                Statement::Switch { cases, .. } => {
                    cases.iter().any(|c| leaves(&c.body, None, true))
                }
                Statement::Loop {
                    body, continuing, ..
                } => leaves(body, None, true) || leaves(continuing, None, true),
                _ => false,
            }
    })
}

/// Whether a `continue` of this loop (not of a nested one) appears in `block`.
fn has_continue(block: &Block) -> bool {
    block.iter().any(|s| match s {
        Statement::Continue => true,
        Statement::Block(b) => has_continue(b),
        Statement::If { accept, reject, .. } => has_continue(accept) || has_continue(reject),
        Statement::Switch { cases, .. } => cases.iter().any(|c| has_continue(&c.body)),
        _ => false,
    })
}

/// An integer constant: literals, module constants, overrides (by the pipeline's values, else
/// their defaults), zero values, casts and arithmetic of those.
fn int_const(h: Handle<Expression>, exprs: &Arena<Expression>, g: &Globals) -> Option<i64> {
    let bin = |op, a: i64, b: i64| -> Option<i64> {
        use BinaryOperator as B;
        match op {
            B::Add => a.checked_add(b),
            B::Subtract => a.checked_sub(b),
            B::Multiply => a.checked_mul(b),
            B::Divide if b != 0 => a.checked_div(b),
            B::Modulo if b != 0 => a.checked_rem(b),
            B::ShiftLeft if (0..32).contains(&b) => a.checked_shl(b as u32),
            B::ShiftRight if (0..32).contains(&b) => Some(a >> b),
            _ => None,
        }
    };
    let value = match exprs[h] {
        Expression::Literal(l) => match l {
            Literal::U32(v) => i64::from(v),
            Literal::I32(v) => i64::from(v),
            Literal::U64(v) => i64::try_from(v).ok()?,
            Literal::I64(v) | Literal::AbstractInt(v) => v,
            _ => return None,
        },
        Expression::ZeroValue(_) => 0,
        Expression::Constant(c) => int_const(g.constants[c].init, g.expressions, g)?,
        Expression::Override(o) => {
            let o = &g.overrides[o];
            let by_name = o
                .name
                .as_deref()
                .and_then(|n| g.values.iter().find(|(k, _)| *k == n));
            let by_id = o.id.and_then(|id| {
                let id = id.to_string();
                g.values.iter().find(|(k, _)| *k == id)
            });
            match by_name.or(by_id) {
                Some(&(_, v)) if v.fract() == 0.0 && v.abs() < 9.0e15 => v as i64,
                Some(_) => return None,
                None => int_const(o.init?, g.expressions, g)?,
            }
        }
        Expression::As {
            expr,
            kind,
            convert: Some(4),
        } => {
            let v = int_const(expr, exprs, g)?;
            match kind {
                ScalarKind::Uint => i64::from(v as u32),
                ScalarKind::Sint => i64::from(v as i32),
                _ => return None,
            }
        }
        Expression::Binary { op, left, right } => {
            bin(op, int_const(left, exprs, g)?, int_const(right, exprs, g)?)?
        }
        _ => return None,
    };
    Some(value)
}

/// Rewrites the exit test to go on while `side OP clamped bound` (and, for a step known only at
/// run time, while that step is not zero: a zero step never ends a loop it enters). New
/// expressions are appended after every handle they use: the literals first (never emitted),
/// then the rest, emitted together right before the test.
fn apply(
    clamp: Clamp,
    exit: &Exit,
    body: &mut Block,
    continuing: &mut Block,
    break_if: &mut Option<Handle<Expression>>,
    ctx: &mut FnCtx,
) {
    let literal = |v: i64| {
        if clamp.signed {
            Literal::I32(v as i32)
        } else {
            Literal::U32(v as u32)
        }
    };
    let in_loop = |h: Handle<Expression>| emitted_in(body, h) || emitted_in(continuing, h);
    // Which of the step's expressions the test's position cannot see, to be evaluated again there.
    let step_in_loop: Vec<Handle<Expression>> = match clamp.limit {
        Limit::Step(step) => {
            let mut order = Vec::new();
            post_order(step, ctx.expressions, &|h| in_loop(h), &mut order);
            order
        }
        Limit::Constant(_) => Vec::new(),
    };
    let exprs = &mut *ctx.expressions;
    let mut append = |e| exprs.append(e, Span::UNDEFINED);
    let (zero, one, max) = (
        append(Expression::Literal(literal(0))),
        append(Expression::Literal(literal(1))),
        append(Expression::Literal(literal(match clamp.limit {
            Limit::Constant(limit) => limit,
            Limit::Step(_) => i64::from(u32::MAX),
        }))),
    );
    let mut first = None;
    let mut emit = |exprs: &mut Arena<Expression>, e| {
        let h = exprs.append(e, Span::UNDEFINED);
        first.get_or_insert(h);
        h
    };
    // The step again where the test is: each expression the loop computes is copied, with its
    // operands mapped to their copies; what was computed before the loop is used as it is.
    let mut copies = std::collections::HashMap::new();
    for &h in &step_in_loop {
        let mut e = exprs[h].clone();
        remap(&mut e, &copies);
        copies.insert(h, emit(exprs, e));
    }
    let (limit, step) = match clamp.limit {
        Limit::Constant(_) => (max, None),
        Limit::Step(step) => {
            let step = copies.get(&step).copied().unwrap_or(step);
            let at_least_one = emit(
                exprs,
                Expression::Math {
                    fun: MathFunction::Max,
                    arg: step,
                    arg1: Some(one),
                    arg2: None,
                    arg3: None,
                },
            );
            let room = emit(
                exprs,
                Expression::Binary {
                    op: BinaryOperator::Subtract,
                    left: max,
                    right: at_least_one,
                },
            );
            let limit = emit(
                exprs,
                Expression::Binary {
                    op: BinaryOperator::Add,
                    left: room,
                    right: one,
                },
            );
            (limit, Some(step))
        }
    };
    let bound = emit(
        exprs,
        Expression::Math {
            fun: clamp.fun,
            arg: clamp.bound,
            arg1: Some(limit),
            arg2: None,
            arg3: None,
        },
    );
    let mut goes_on = emit(
        exprs,
        Expression::Binary {
            op: clamp.op,
            left: clamp.side,
            right: bound,
        },
    );
    // A run-time step, and a multiplied counter, must not be 0: neither would ever move.
    for moving in step.into_iter().chain(clamp.nonzero.then_some(clamp.side)) {
        let moves = emit(
            exprs,
            Expression::Binary {
                op: BinaryOperator::NotEqual,
                left: moving,
                right: zero,
            },
        );
        goes_on = emit(
            exprs,
            Expression::Binary {
                op: BinaryOperator::LogicalAnd,
                left: goes_on,
                right: moves,
            },
        );
    }
    for &(other, goes_on_while_false) in &clamp.rest {
        let other = if goes_on_while_false {
            emit(
                exprs,
                Expression::Unary {
                    op: UnaryOperator::LogicalNot,
                    expr: other,
                },
            )
        } else {
            other
        };
        goes_on = emit(
            exprs,
            Expression::Binary {
                op: BinaryOperator::LogicalAnd,
                left: goes_on,
                right: other,
            },
        );
    }
    let negated = match *exit {
        Exit::Guard { negated, .. } => negated,
        Exit::BreakIf => true,
    };
    let condition = if negated {
        emit(
            exprs,
            Expression::Unary {
                op: UnaryOperator::LogicalNot,
                expr: goes_on,
            },
        )
    } else {
        goes_on
    };
    let first = first.expect("the test emits at least one expression");
    let emit = Statement::Emit(naga::Range::new_from_bounds(first, condition));
    match *exit {
        Exit::Guard { at, .. } => {
            if let Statement::If { condition: c, .. } = &mut body[at] {
                *c = condition;
            }
            body.splice(at..at, Block::from_vec(vec![emit]));
        }
        Exit::BreakIf => {
            continuing.push(emit, Span::UNDEFINED);
            *break_if = Some(condition);
        }
    }
}

/// The expressions under `h` (itself included) that `copy` selects, operands before users.
fn post_order(
    h: Handle<Expression>,
    exprs: &Arena<Expression>,
    copy: &dyn Fn(Handle<Expression>) -> bool,
    out: &mut Vec<Handle<Expression>>,
) {
    if !copy(h) || out.contains(&h) {
        return;
    }
    for o in operands(&exprs[h]).unwrap_or_default() {
        post_order(o, exprs, copy, out);
    }
    out.push(h);
}

/// Points `e`'s operands at their copies.
fn remap(
    e: &mut Expression,
    copies: &std::collections::HashMap<Handle<Expression>, Handle<Expression>>,
) {
    let mapped = |h: Handle<Expression>| copies.get(&h).copied().unwrap_or(h);
    match e {
        Expression::Load { pointer: a }
        | Expression::AccessIndex { base: a, .. }
        | Expression::Unary { expr: a, .. }
        | Expression::As { expr: a, .. }
        | Expression::Splat { value: a, .. }
        | Expression::Swizzle { vector: a, .. } => *a = mapped(*a),
        Expression::Access { base: a, index: b }
        | Expression::Binary {
            left: a, right: b, ..
        } => {
            *a = mapped(*a);
            *b = mapped(*b);
        }
        Expression::Math {
            arg,
            arg1,
            arg2,
            arg3,
            ..
        } => {
            *arg = mapped(*arg);
            for a in [arg1, arg2, arg3].into_iter().flatten() {
                *a = mapped(*a);
            }
        }
        _ => {}
    }
}

/// The operands of the expressions a loop-invariant value may be built of (loads, accesses,
/// arithmetic, conversions, math), or `None` for any other expression.
fn operands(e: &Expression) -> Option<Vec<Handle<Expression>>> {
    Some(match *e {
        Expression::Load { pointer: a }
        | Expression::AccessIndex { base: a, .. }
        | Expression::Unary { expr: a, .. }
        | Expression::As { expr: a, .. }
        | Expression::Splat { value: a, .. }
        | Expression::Swizzle { vector: a, .. } => vec![a],
        Expression::Access { base: a, index: b }
        | Expression::Binary {
            left: a, right: b, ..
        } => {
            vec![a, b]
        }
        Expression::Math {
            arg,
            arg1,
            arg2,
            arg3,
            ..
        } => [Some(arg), arg1, arg2, arg3]
            .into_iter()
            .flatten()
            .collect(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proof(wgsl: &str) -> Result<Proof, String> {
        proof_with(wgsl, &[])
    }

    fn proof_with(wgsl: &str, constants: &[(&str, f64)]) -> Result<Proof, String> {
        let mut module = naga::front::wgsl::parse_str(wgsl).expect("test WGSL parses");
        let result = prove(&mut module, constants);
        if result.is_ok() {
            naga::valid::Validator::new(
                naga::valid::ValidationFlags::all(),
                naga::valid::Capabilities::all(),
            )
            .validate(&module)
            .unwrap_or_else(|e| panic!("the clamped module does not validate: {e:?}"));
        }
        result
    }

    /// Asserts that `wgsl` is proven with these counts; `label` names the case.
    fn assert_proof(wgsl: &str, loops: usize, clamped: usize, label: &str) {
        let proof = proof(wgsl).unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!(proof, Proof { loops, clamped }, "{label}");
    }

    fn kernel(body: &str) -> String {
        format!(
            "struct P {{ n: u32, m: i32 }}
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@group(0) @binding(1) var<uniform> p: P;
override WG: u32 = 64u;
const STEP: u32 = 4u;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
    var acc = 0.0;
    {body}
    out[gid.x] = acc;
}}"
        )
    }

    #[test]
    fn counting_up_by_one_needs_no_clamp_however_spelled() {
        for body in [
            "for (var i = 0u; i < p.n; i++) { acc += 1.0; }",
            "for (var i = 0u; p.n > i; i = i + 1u) { acc += 1.0; }",
            "var i = 0u; while (i < p.n) { acc += 1.0; i += 1u; }",
            "var i = 0u; loop { if (i >= p.n) { break; } acc += 1.0; i++; }",
            "var i = 0u; loop { if !(i < p.n) { break; } acc += 1.0; continuing { i = 1u + i; } }",
            "for (var i: i32 = 0; i < p.m; i++) { acc += 1.0; }",
            "for (var i = p.n; i > 0u; i--) { acc += 1.0; }",
        ] {
            assert_proof(&kernel(body), 1, 0, body);
        }
    }

    #[test]
    fn strides_and_offsets_are_clamped() {
        for body in [
            "for (var i = 0u; i < p.n; i += 16u) { acc += 1.0; }",
            "for (var i = gid.x; i < p.n; i += STEP * WG) { acc += 1.0; }",
            "for (var i = 0u; i + 3u < p.n; i += 4u) { acc += 1.0; }",
            "for (var i = 0u; i <= p.n; i++) { acc += 1.0; }",
            "for (var i: i32 = p.m; i >= 0; i--) { acc += 1.0; }",
            "for (var s = WG / 2u; s >= 1u; s = s / 2u) { acc += 1.0; }",
            "for (var s: i32 = p.m; s > 0; s >>= 1u) { acc += 1.0; }",
            "var k = 0u; loop { acc += 1.0; continuing { k += 8u; break if k >= p.n; } }",
        ] {
            assert_proof(&kernel(body), 1, 1, body);
        }
        let halving = kernel("for (var s = WG / 2u; s > 0u; s = s / 2u) { acc += 1.0; }");
        assert_eq!(
            proof(&halving),
            Ok(Proof {
                loops: 1,
                clamped: 0
            })
        );
    }

    #[test]
    fn multiplied_counters_are_clamped_and_stop_at_zero() {
        for body in [
            "for (var s = 1u; s < p.n; s = s * 2u) { acc += 1.0; }",
            "for (var s = 1u; s < WG; s *= 2u) { acc += 1.0; }",
            "for (var s = 1u; s <= p.n; s = 4u * s) { acc += 1.0; }",
            "var s = gid.x; while (s < p.n) { acc += 1.0; s <<= 1u; }",
            "var s = 1u; loop { if s >= p.n { break; } acc += 1.0; continuing { s = s << 2u; } }",
            "for (var s = 1u; s < p.n; s *= 2u) { for (var j = 0u; j < 4u; j++) { if acc > 2.0 { break; } acc += 1.0; } }",
        ] {
            // The nested loop counts up by one (no clamp); its `break` leaves it, not the outer.
            assert_proof(&kernel(body), body.matches("for").count().max(1), 1, body);
        }
    }

    #[test]
    fn nested_loops_and_helpers_are_each_proven() {
        let wgsl = format!(
            "fn dot_row(r: u32, n: u32) -> f32 {{ var s = 0.0; for (var k = 0u; k < n; k++) {{ s += f32(r + k); }} return s; }}
{}",
            kernel(
                "for (var i = 0u; i < p.n; i += 2u) { for (var j = 0u; j < 4u; j++) { acc += dot_row(i, j); } }"
            )
        );
        assert_eq!(
            proof(&wgsl),
            Ok(Proof {
                loops: 3,
                clamped: 1
            })
        );
    }

    #[test]
    fn loops_that_may_not_end_are_not_proven() {
        for (body, why) in [
            ("loop { acc += 1.0; if acc > 10.0 { break; } }", "exit test"),
            (
                "var i = 0u; while (i < p.n) { acc += 1.0; if acc > 3.0 { continue; } i++; }",
                "every iteration",
            ),
            (
                "for (var i = 0u; i < p.n; i++) { if acc > 2.0 { i = 0u; } acc += 1.0; }",
                "written 2 times",
            ),
            (
                "for (var i = 1u; i < p.n; i = i * 1u) { acc += 1.0; }",
                "step",
            ),
            (
                "for (var i: i32 = 1; i < p.m; i = i * 2) { acc += 1.0; }",
                "goes on while",
            ),
            (
                "for (var i = 0u; i < p.n; i = i * 2u) { acc += 1.0; if acc > 5.0 { break; } }",
                "something else leaves",
            ),
            (
                "for (var i = 0u; i < p.n; i <<= 1u) { if acc > 5.0 { return; } acc += 1.0; }",
                "something else leaves",
            ),
            (
                "for (var i = 1u; i > p.n; i *= 2u) { acc += 1.0; }",
                "goes on while",
            ),
            (
                "for (var i = 0u; i > p.n; i++) { acc += 1.0; }",
                "goes on while",
            ),
            (
                "for (var i = p.n; i >= 0u; i /= 2u) { acc += 1.0; }",
                "0 clamps",
            ),
            (
                "for (var i = 0u; i < p.n; i = i + 0u) { acc += 1.0; }",
                "non-zero",
            ),
            (
                "var i = 0u; loop { if (i >= p.n) { break; } acc += 1.0; }",
                "written 0 times",
            ),
            (
                "for (var i = 0u; i != p.n; i++) { acc += 1.0; }",
                "goes on while",
            ),
            (
                "var i = 0u; let x = i; for (; x < p.n; i++) { acc += 1.0; }",
                "read before the loop",
            ),
            (
                "var i = 0u; let x = i; loop { if i >= p.n { break; } acc += 1.0; continuing { i = x + 1u; } }",
                "read before the loop",
            ),
        ] {
            match proof(&kernel(body)) {
                Err(e) => {
                    if why != "0 clamps" {
                        assert!(e.contains(why), "{body}: {e}");
                    }
                }
                Ok(p) if why == "0 clamps" => assert_eq!(p.clamped, 1, "{body}"),
                Ok(p) => panic!("{body}: proven {p:?}"),
            }
        }
    }

    #[test]
    fn overrides_take_the_pipeline_value() {
        let body = kernel("for (var i = 0u; i < p.n; i += WG) { acc += 1.0; }");
        assert!(proof_with(&body, &[("WG", 256.0)]).is_ok());
        let wgsl = "override STRIDE: u32;
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(1) fn main() { var n = 0u; for (var i = 0u; i < out[0]; i += STRIDE) { n++; } out[1] = n; }";
        // Without a value the step is known only when the pipeline is made: clamped at run time.
        assert_eq!(
            proof_with(wgsl, &[]),
            Ok(Proof {
                loops: 1,
                clamped: 1
            })
        );
        assert!(proof_with(wgsl, &[("STRIDE", 0.0)]).is_err());
        assert_eq!(
            proof_with(wgsl, &[("STRIDE", 8.0)]),
            Ok(Proof {
                loops: 1,
                clamped: 1
            })
        );
    }

    #[test]
    fn a_program_is_proven_with_its_constants() {
        let mut program = crate::kernel::tests::program(
            "override STRIDE: u32 = 0u;
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(1) fn main() { var n = 0u; for (var i = 0u; i < out[0]; i += STRIDE) { n++; } out[1] = n; }",
        );
        assert!(
            prove_program(&program)
                .unwrap_err()
                .contains("non-zero constant")
        );
        program.constants = vec![("STRIDE".into(), 4.0)].into();
        assert_eq!(
            prove_program(&program),
            Ok(Proof {
                loops: 1,
                clamped: 1
            })
        );
    }

    #[test]
    fn steps_fixed_before_the_loop_are_clamped_at_run_time() {
        let grid = "@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@group(0) @binding(1) var<storage, read> ro: array<u32>;
struct P { n: u32, stride: u32 }
@group(0) @binding(2) var<uniform> p: P;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    var acc = 0.0;
    BODY
    out[gid.x] = acc;
}";
        for body in [
            "for (var i = gid.x; i < p.n; i += p.stride) { acc += 1.0; }",
            "for (var i = gid.x; i < p.n; i += nwg.x * 64u) { acc += 1.0; }",
            "let s = p.n / 4u; for (var i = gid.x; i < p.n; i = i + s) { acc += 1.0; }",
            "for (var i = gid.x; i < p.n; i += ro[p.stride]) { acc += 1.0; }",
            "var i = gid.x; while (i < p.n) { acc += 1.0; i += max(p.stride, 2u); }",
        ] {
            let wgsl = grid.replace("BODY", body);
            assert_proof(&wgsl, 1, 1, body);
        }
        for body in [
            // read-write memory may change while the loop runs
            "for (var i = gid.x; i < p.n; i += u32(out[0])) { acc += 1.0; }",
            // a step the loop itself changes
            "var s = 1u; for (var i = gid.x; i < p.n; i += s) { acc += 1.0; s = s * 2u; }",
            // wrapping with <= needs a constant step
            "for (var i = gid.x; i <= p.n; i += p.stride) { acc += 1.0; }",
            // an offset with a run-time step
            "for (var i = gid.x; i + 1u < p.n; i += p.stride) { acc += 1.0; }",
        ] {
            let wgsl = grid.replace("BODY", body);
            assert!(proof(&wgsl).is_err(), "{body}: proven");
        }
        let signed = grid.replace(
            "BODY",
            "for (var i = i32(gid.x); i < i32(p.n); i += i32(p.stride)) { acc += 1.0; }",
        );
        assert!(
            proof(&signed).is_err(),
            "a signed run-time step may be negative"
        );
    }

    #[test]
    fn a_counted_half_of_an_and_proves_the_loop() {
        for (body, clamped) in [
            (
                "for (var i = 0u; i < p.n && acc < 100.0; i++) { acc += 1.0; }",
                0,
            ),
            (
                "for (var i = 0u; i < p.n && acc < 100.0; i += 4u) { acc += 1.0; }",
                1,
            ),
            (
                "for (var i = 0u; acc < 100.0 && i < p.n; i++) { acc += 1.0; }",
                0,
            ),
            (
                "var i = 0u; loop { if (i >= p.n || acc > 5.0) { break; } acc += 1.0; i += 2u; }",
                1,
            ),
            (
                "var i = 0u; while (!(i >= p.n) && acc < 3.0) { acc += 1.0; i++; }",
                0,
            ),
            (
                "var i = 0u; while ((i < p.n && acc > -1.0) && acc < 3.0) { acc += 1.0; i += 3u; }",
                1,
            ),
        ] {
            assert_proof(&kernel(body), 1, clamped, body);
        }
        // The right half is evaluated inside naga's `if`: a clamp could not read it at the test.
        // A temporary written again after the `&&`'s `if` holds what the last write says.
        let rewritten = kernel(
            "var i = 0u; var t: bool; loop { if i < p.n { t = acc < 3.0; } else { t = false; } \
             if acc > 1.0 { t = true; } else { t = true; } if !t { break; } acc += 1.0; i++; }",
        );
        assert!(
            proof(&rewritten).is_err(),
            "t is always true: the loop never ends"
        );
        let right = kernel("for (var i = 0u; acc < 100.0 && i < p.n; i += 4u) { acc += 1.0; }");
        assert!(proof(&right).unwrap_err().contains("right of `&&`"));
        let either = kernel("for (var i = 0u; i < p.n || acc < 3.0; i++) { acc += 1.0; }");
        assert!(
            proof(&either).is_err(),
            "`||` goes on while either half holds"
        );
    }
}

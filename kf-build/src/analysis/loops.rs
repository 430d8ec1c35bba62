//! IR queries the unrolling, hoisting, reshaping and lifting operators need: which builtins an
//! entry point really uses, whether anything ties invocations of a workgroup together, counted
//! `for` loops with their header parts, the exact spans of a loop counter's uses, values known at
//! pipeline-creation time, and which expressions derive from the local invocation index.
//!
//! Everything is read from naga's IR. Where the IR has no span for something an operator must edit
//! (naga gives a local variable's loads no span of their own), the span is recovered by asking
//! naga again about a probe text, never by searching the source (see [`counter_uses`]).
//!
//! Part of this overlaps the shared analysis in `analysis::ir` (builtins, counted loops, loop
//! invariance), which covers the entry point only; these queries also cover the functions it
//! calls, counters that double or halve (tree reductions) and the exact spans of a counter's uses.
//! They belong in `ir` once the two are merged.
//!
//! Invariant: every query is conservative: when the IR does not have the expected shape, the
//! answer is "not recognised" (`None` or `Err(Skip)`), never a guess.

use super::Skip;
use super::expr::{literal_int, operands};
use super::text::{self, Edit};
use naga::{Arena, BinaryOperator, Block, Expression, Function, Handle, Module, Span, Statement};
use std::collections::HashSet;
use std::ops::Range;

/// A function reachable from the entry point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FnRef {
    /// The entry point at this index of `module.entry_points`.
    Entry(usize),
    /// A helper function.
    Helper(Handle<Function>),
}

/// The function behind `f`.
pub fn function(module: &Module, f: FnRef) -> &Function {
    match f {
        FnRef::Entry(i) => &module.entry_points[i].function,
        FnRef::Helper(h) => &module.functions[h],
    }
}

/// The validator's analysis of `f`.
pub fn function_info(info: &naga::valid::ModuleInfo, f: FnRef) -> &naga::valid::FunctionInfo {
    match f {
        FnRef::Entry(i) => info.get_entry_point(i),
        FnRef::Helper(h) => &info[h],
    }
}

/// Index of the compute entry point `name`.
pub fn entry_index(module: &Module, name: &str) -> Option<usize> {
    module
        .entry_points
        .iter()
        .position(|e| e.name == name && e.stage == naga::ShaderStage::Compute)
}

/// Calls `visit` on every statement of `block`, nested ones included, with its span.
pub fn walk<'a>(block: &'a Block, visit: &mut impl FnMut(&'a Statement, Span)) {
    for (s, span) in block.span_iter() {
        visit(s, *span);
        match s {
            Statement::Block(b) => walk(b, visit),
            Statement::If { accept, reject, .. } => {
                walk(accept, visit);
                walk(reject, visit);
            }
            Statement::Switch { cases, .. } => {
                for c in cases {
                    walk(&c.body, visit);
                }
            }
            Statement::Loop {
                body, continuing, ..
            } => {
                walk(body, visit);
                walk(continuing, visit);
            }
            _ => {}
        }
    }
}

/// The entry point and every function it calls, directly or not.
pub fn reachable(module: &Module, entry: usize) -> Vec<FnRef> {
    let mut out = vec![FnRef::Entry(entry)];
    let mut i = 0;
    while i < out.len() {
        let f = function(module, out[i]);
        walk(&f.body, &mut |s, _| {
            if let Statement::Call { function: h, .. } = s
                && !out.contains(&FnRef::Helper(*h))
            {
                out.push(FnRef::Helper(*h));
            }
        });
        i += 1;
    }
    out
}

/// What ties the invocations of one workgroup together in `f`'s statements, if anything: a barrier,
/// a workgroup-uniform load or a subgroup operation.
pub fn workgroup_sync(block: &Block) -> Option<&'static str> {
    let mut found = None;
    walk(block, &mut |s, _| {
        let what = match s {
            Statement::ControlBarrier(_) | Statement::MemoryBarrier(_) => Some("a barrier"),
            Statement::WorkGroupUniformLoad { .. } => Some("workgroupUniformLoad"),
            Statement::SubgroupBallot { .. }
            | Statement::SubgroupGather { .. }
            | Statement::SubgroupCollectiveOperation { .. } => Some("a subgroup operation"),
            _ => None,
        };
        if found.is_none() {
            found = what;
        }
    });
    found
}

/// One builtin input of an entry point and the expressions that read it.
#[derive(Clone, Debug)]
pub struct BuiltinUse {
    /// The builtin.
    pub builtin: naga::BuiltIn,
    /// Expressions whose value is the builtin (the argument, or `arg.member` of a struct argument).
    pub exprs: Vec<Handle<Expression>>,
    /// Whether any of them is used.
    pub used: bool,
}

/// The builtin inputs of entry point `entry`, each with whether the body reads it.
pub fn builtins(module: &Module, info: &naga::valid::ModuleInfo, entry: usize) -> Vec<BuiltinUse> {
    let f = &module.entry_points[entry].function;
    let fi = info.get_entry_point(entry);
    let mut out = Vec::new();
    for (i, arg) in f.arguments.iter().enumerate() {
        let Some(arg_expr) = f
            .expressions
            .iter()
            .find(|(_, e)| matches!(e, Expression::FunctionArgument(n) if *n as usize == i))
            .map(|(h, _)| h)
        else {
            continue;
        };
        match &arg.binding {
            Some(naga::Binding::BuiltIn(b)) => out.push(BuiltinUse {
                builtin: *b,
                exprs: vec![arg_expr],
                used: fi[arg_expr].ref_count > 0,
            }),
            Some(_) => {}
            None => {
                let naga::TypeInner::Struct { members, .. } = &module.types[arg.ty].inner else {
                    continue;
                };
                let member_reads: Vec<(u32, Handle<Expression>)> = f
                    .expressions
                    .iter()
                    .filter_map(|(h, e)| match e {
                        Expression::AccessIndex { base, index } if *base == arg_expr => {
                            Some((*index, h))
                        }
                        _ => None,
                    })
                    .collect();
                // The struct used whole (passed on, copied) counts as using every member.
                let whole = fi[arg_expr].ref_count > member_reads.len();
                for (m, member) in members.iter().enumerate() {
                    if let Some(naga::Binding::BuiltIn(b)) = &member.binding {
                        let exprs: Vec<Handle<Expression>> = member_reads
                            .iter()
                            .filter(|(i, _)| *i as usize == m)
                            .map(|(_, h)| *h)
                            .collect();
                        let used = whole || exprs.iter().any(|h| fi[*h].ref_count > 0);
                        out.push(BuiltinUse {
                            builtin: *b,
                            exprs,
                            used,
                        });
                    }
                }
            }
        }
    }
    out
}

/// The variable a pointer expression points into (`v`, `v[i]`, `v.f`), if it is a local one.
pub fn root_local(
    f: &Function,
    mut ptr: Handle<Expression>,
) -> Option<Handle<naga::LocalVariable>> {
    loop {
        match &f.expressions[ptr] {
            Expression::LocalVariable(l) => return Some(*l),
            Expression::Access { base, .. } | Expression::AccessIndex { base, .. } => ptr = *base,
            _ => return None,
        }
    }
}

/// The global variable a pointer expression points into, if any.
pub fn root_global(
    f: &Function,
    mut ptr: Handle<Expression>,
) -> Option<Handle<naga::GlobalVariable>> {
    loop {
        match &f.expressions[ptr] {
            Expression::GlobalVariable(g) => return Some(*g),
            Expression::Access { base, .. } | Expression::AccessIndex { base, .. } => ptr = *base,
            _ => return None,
        }
    }
}

/// Every expression of `f` whose value depends on one of `seeds`, through operands, locals stored
/// from them and calls taking them (a fixed point over the function's stores).
pub fn derived_from(f: &Function, seeds: &[Handle<Expression>]) -> HashSet<Handle<Expression>> {
    let mut tainted: HashSet<Handle<Expression>> = seeds.iter().copied().collect();
    let mut locals: HashSet<Handle<naga::LocalVariable>> = HashSet::new();
    loop {
        let before = (tainted.len(), locals.len());
        for (h, e) in f.expressions.iter() {
            if tainted.contains(&h) {
                continue;
            }
            let from_local = match e {
                Expression::Load { pointer } => {
                    root_local(f, *pointer).is_some_and(|l| locals.contains(&l))
                }
                _ => false,
            };
            if from_local || operands(e).iter().any(|o| tainted.contains(o)) {
                tainted.insert(h);
            }
        }
        walk(&f.body, &mut |s, _| match s {
            Statement::Store { pointer, value } if tainted.contains(value) => {
                if let Some(l) = root_local(f, *pointer) {
                    locals.insert(l);
                }
            }
            Statement::Call {
                arguments,
                result: Some(r),
                ..
            } if arguments.iter().any(|a| tainted.contains(a)) => {
                tainted.insert(*r);
            }
            _ => {}
        });
        if (tainted.len(), locals.len()) == before {
            return tainted;
        }
    }
}

/// An integer value known when the pipeline is created, and whether it came from an `override`
/// (then it holds only for the override's current value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Known {
    /// The value.
    pub value: i64,
    /// Whether an override contributed to it.
    pub from_override: bool,
}

/// The integer value of `expr` (of `arena`: a function's expressions, or the module's global
/// ones) when it is built from literals, constants and overrides; overrides take their value from
/// `constants` or their default.
pub fn known_int(
    module: &Module,
    arena: &Arena<Expression>,
    expr: Handle<Expression>,
    constants: &[(&str, f64)],
) -> Option<Known> {
    let global =
        |h: Handle<Expression>| known_int(module, &module.global_expressions, h, constants);
    let plain = |value| {
        Some(Known {
            value,
            from_override: false,
        })
    };
    match &arena[expr] {
        Expression::Literal(l) => plain(literal_int(l)?),
        Expression::Constant(c) => global(module.constants[*c].init),
        Expression::Override(o) => {
            let o = &module.overrides[*o];
            let name = o.name.as_deref().unwrap_or_default();
            let value = match constants.iter().find(|(k, _)| *k == name) {
                Some((_, v)) if v.fract() == 0.0 => *v as i64,
                Some(_) => return None,
                None => global(o.init?)?.value,
            };
            Some(Known {
                value,
                from_override: true,
            })
        }
        Expression::As {
            expr,
            kind: naga::ScalarKind::Uint | naga::ScalarKind::Sint,
            ..
        } => known_int(module, arena, *expr, constants),
        Expression::Unary {
            op: naga::UnaryOperator::Negate,
            expr,
        } => {
            let k = known_int(module, arena, *expr, constants)?;
            Some(Known {
                value: -k.value,
                ..k
            })
        }
        Expression::Binary { op, left, right } => {
            let a = known_int(module, arena, *left, constants)?;
            let b = known_int(module, arena, *right, constants)?;
            let value = match op {
                BinaryOperator::Add => a.value.checked_add(b.value)?,
                BinaryOperator::Subtract => a.value.checked_sub(b.value)?,
                BinaryOperator::Multiply => a.value.checked_mul(b.value)?,
                BinaryOperator::Divide => a.value.checked_div(b.value)?,
                BinaryOperator::Modulo => a.value.checked_rem(b.value)?,
                BinaryOperator::ShiftLeft => a.value.checked_shl(u32::try_from(b.value).ok()?)?,
                BinaryOperator::ShiftRight => a.value.checked_shr(u32::try_from(b.value).ok()?)?,
                _ => return None,
            };
            Some(Known {
                value,
                from_override: a.from_override || b.from_override,
            })
        }
        _ => None,
    }
}

/// Whether `ty` is a signed integer scalar.
pub fn is_signed(module: &Module, ty: Handle<naga::Type>) -> bool {
    matches!(
        module.types[ty].inner,
        naga::TypeInner::Scalar(naga::Scalar {
            kind: naga::ScalarKind::Sint,
            ..
        })
    )
}

/// A counted `for` loop as naga lowers it:
/// `for (var i = INIT; i CMP BOUND; i = i OP STEP) { BODY }` becomes
/// `Loop { body: [Emit.., If (cond) {} else { Break }, Block(BODY)], continuing: [Emit.., Store(i, ..)] }`.
#[derive(Clone, Debug)]
pub struct ForLoop<'a> {
    /// The function holding the loop.
    pub func: FnRef,
    /// The whole `for` statement.
    pub span: Range<usize>,
    /// The counter.
    pub counter: Handle<naga::LocalVariable>,
    /// The counter's pointer expression (`LocalVariable`).
    pub counter_ptr: Handle<Expression>,
    /// The counter's initial value.
    pub init: Handle<Expression>,
    /// The text of `var i [: T] =` in the header, up to the initial value.
    pub decl: Range<usize>,
    /// The initial value's text in the header. naga gives a `let` named elsewhere
    /// (`let sub = …; for (var r = sub; …)`) the span of its definition, so this is the header's
    /// own text (`sub`), which names the same value wherever the loop is copied within the scope.
    pub init_text: Range<usize>,
    /// The condition, a comparison with the counter on one side.
    pub cond: Handle<Expression>,
    /// The comparison read as `counter OP bound`.
    pub cmp: BinaryOperator,
    /// The other side of the comparison.
    pub bound: Handle<Expression>,
    /// How the counter changes per iteration.
    pub update: Update,
    /// The value stored into the counter in the continuing block.
    pub update_expr: Handle<Expression>,
    /// The user's loop body (the statements after the condition check).
    pub body: &'a Block,
    /// The whole loop body: the condition's evaluation and check, then the user's body.
    pub loop_body: &'a Block,
    /// The continuing block.
    pub continuing: &'a Block,
    /// The text between the body's braces.
    pub body_text: Range<usize>,
    /// The header's text between `(` and `)`.
    pub header: Range<usize>,
    /// Whether the counter is a signed integer.
    pub signed: bool,
}

/// How a loop counter changes per iteration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Update {
    /// `i = i + step` (also `i++`, `i += step`).
    Add(Handle<Expression>),
    /// `i = i - step`.
    Sub(Handle<Expression>),
    /// `i = i * step`.
    Mul(Handle<Expression>),
    /// `i = i / step`.
    Div(Handle<Expression>),
    /// `i = i >> step`.
    Shr(Handle<Expression>),
    /// `i = i << step`.
    Shl(Handle<Expression>),
}

impl Update {
    /// The step operand.
    pub fn step(self) -> Handle<Expression> {
        match self {
            Update::Add(h)
            | Update::Sub(h)
            | Update::Mul(h)
            | Update::Div(h)
            | Update::Shr(h)
            | Update::Shl(h) => h,
        }
    }
}

fn is_load_of(f: &Function, e: Handle<Expression>, ptr: Handle<Expression>) -> bool {
    matches!(f.expressions[e], Expression::Load { pointer } if pointer == ptr)
}

/// Every counted `for` loop of `f` (the function `fref`), outer loops before the loops they hold.
pub fn for_loops<'a>(
    module: &Module,
    wgsl: &str,
    fref: FnRef,
    f: &'a Function,
) -> Vec<ForLoop<'a>> {
    fn visit<'a>(
        module: &Module,
        wgsl: &str,
        fref: FnRef,
        f: &'a Function,
        block: &'a Block,
        out: &mut Vec<ForLoop<'a>>,
    ) {
        let mut prev = None;
        for (s, span) in block.span_iter() {
            if let Some(l) = for_loop(module, wgsl, fref, f, s, *span, prev) {
                out.push(l);
            }
            match s {
                Statement::Block(b) => visit(module, wgsl, fref, f, b, out),
                Statement::If { accept, reject, .. } => {
                    visit(module, wgsl, fref, f, accept, out);
                    visit(module, wgsl, fref, f, reject, out);
                }
                Statement::Switch { cases, .. } => {
                    for c in cases {
                        visit(module, wgsl, fref, f, &c.body, out);
                    }
                }
                Statement::Loop {
                    body, continuing, ..
                } => {
                    visit(module, wgsl, fref, f, body, out);
                    visit(module, wgsl, fref, f, continuing, out);
                }
                _ => {}
            }
            prev = Some((s, *span));
        }
    }
    let mut out = Vec::new();
    visit(module, wgsl, fref, f, &f.body, &mut out);
    out
}

/// Recognises `stmt` (a `Loop` with span `span` in `f`) as a counted `for` loop. `prev` is the
/// statement before it in the same block, which holds the counter's initial value when that value
/// is not a constant expression.
pub fn for_loop<'a>(
    module: &Module,
    wgsl: &str,
    fref: FnRef,
    f: &'a Function,
    stmt: &'a Statement,
    span: Span,
    prev: Option<(&'a Statement, Span)>,
) -> Option<ForLoop<'a>> {
    let Statement::Loop {
        body,
        continuing,
        break_if: None,
    } = stmt
    else {
        return None;
    };
    let span = text::range(span)?;
    if wgsl.get(text::token_at(wgsl, span.start)) != Some("for") {
        return None;
    }
    // Continuing: emits, then exactly one store into a local.
    let mut store = None;
    for s in continuing.iter() {
        match s {
            Statement::Emit(_) => {}
            Statement::Store { pointer, value } if store.is_none() => {
                store = Some((*pointer, *value))
            }
            _ => return None,
        }
    }
    let (counter_ptr, update_expr) = store?;
    let Expression::LocalVariable(counter) = f.expressions[counter_ptr] else {
        return None;
    };
    let update = match &f.expressions[update_expr] {
        Expression::Binary { op, left, right } if is_load_of(f, *left, counter_ptr) => match op {
            BinaryOperator::Add => Update::Add(*right),
            BinaryOperator::Subtract => Update::Sub(*right),
            BinaryOperator::Multiply => Update::Mul(*right),
            BinaryOperator::Divide => Update::Div(*right),
            BinaryOperator::ShiftRight => Update::Shr(*right),
            BinaryOperator::ShiftLeft => Update::Shl(*right),
            _ => return None,
        },
        Expression::Binary {
            op: BinaryOperator::Add,
            left,
            right,
        } if is_load_of(f, *right, counter_ptr) => Update::Add(*left),
        _ => return None,
    };
    // Body: emits, the condition check, then the user's body as one block.
    let mut cond = None;
    let mut user = None;
    for s in body.iter() {
        match s {
            Statement::Emit(_) if cond.is_none() => {}
            Statement::If {
                condition,
                accept,
                reject,
            } if cond.is_none()
                && accept.is_empty()
                && matches!(
                    reject.iter().collect::<Vec<_>>().as_slice(),
                    [Statement::Break]
                ) =>
            {
                cond = Some(*condition);
            }
            Statement::Block(b) if cond.is_some() && user.is_none() => user = Some(b),
            _ => return None,
        }
    }
    let cond = cond?;
    let body_block = user?;
    let (cmp, bound) = match &f.expressions[cond] {
        Expression::Binary { op, left, right } if is_load_of(f, *left, counter_ptr) => {
            (*op, *right)
        }
        Expression::Binary { op, left, right } if is_load_of(f, *right, counter_ptr) => {
            let flipped = match op {
                BinaryOperator::Less => BinaryOperator::Greater,
                BinaryOperator::LessEqual => BinaryOperator::GreaterEqual,
                BinaryOperator::Greater => BinaryOperator::Less,
                BinaryOperator::GreaterEqual => BinaryOperator::LessEqual,
                other => *other,
            };
            (flipped, *left)
        }
        _ => return None,
    };
    // The initial value: the local's constant initializer, or the store just before the loop.
    let local = &f.local_variables[counter];
    let init = match (local.init, prev) {
        (Some(init), _) => init,
        (None, Some((Statement::Store { pointer, value }, _))) if *pointer == counter_ptr => *value,
        _ => return None,
    };
    let init_range = text::range(f.expressions.get_span(init))?;
    // The header: `for ( var NAME [: T] = INIT ; COND ; UPDATE ) {`, the declaration inside it.
    let open = text::skip_trivia(wgsl, span.start + 3);
    if wgsl.get(open..open + 1) != Some("(") {
        return None;
    }
    let init_range = if init_range.start > open && init_range.end <= span.end {
        init_range
    } else {
        // A named value defined before the loop: the header's text between `=` and `;`.
        let toks = text::tokens(wgsl, open + 1..span.end);
        let eq = toks.iter().position(|t| &wgsl[t.clone()] == "=")?;
        let semi = toks.iter().position(|t| &wgsl[t.clone()] == ";")?;
        if semi <= eq + 1 {
            return None;
        }
        toks[eq + 1].start..toks[semi - 1].end
    };
    let decl = open + 1..init_range.start;
    let decl_tokens: Vec<&str> = text::tokens(wgsl, decl.clone())
        .into_iter()
        .map(|r| &wgsl[r])
        .collect();
    let name = local.name.as_deref()?;
    if decl_tokens.first() != Some(&"var")
        || decl_tokens.get(1) != Some(&name)
        || decl_tokens.last() != Some(&"=")
    {
        return None;
    }
    // The update statement's span ends the header; `)` and `{` follow.
    let (_, update_span) = continuing
        .span_iter()
        .find(|(s, _)| matches!(s, Statement::Store { .. }))?;
    let update_range = text::range(*update_span)?;
    let close = text::skip_trivia(wgsl, update_range.end);
    let brace = text::skip_trivia(wgsl, close + 1);
    if wgsl.get(close..close + 1) != Some(")")
        || wgsl.get(brace..brace + 1) != Some("{")
        || span.end < 1
        || wgsl.get(span.end - 1..span.end) != Some("}")
        || brace >= span.end
    {
        return None;
    }
    Some(ForLoop {
        func: fref,
        span: span.clone(),
        counter,
        counter_ptr,
        init,
        decl,
        init_text: init_range,
        cond,
        cmp,
        bound,
        update,
        update_expr,
        body: body_block,
        loop_body: body,
        continuing,
        body_text: brace + 1..span.end - 1,
        header: open + 1..close,
        signed: is_signed(module, local.ty),
    })
}

/// Expressions emitted by the statements of `block`, nested blocks included.
pub fn emitted(block: &Block) -> HashSet<Handle<Expression>> {
    let mut out = HashSet::new();
    walk(block, &mut |s, _| {
        if let Statement::Emit(r) = s {
            out.extend(r.clone());
        }
    });
    out
}

/// The exact spans of every use of `lp`'s counter in its condition and body.
///
/// naga gives the loads of a local variable no span of their own, so this asks naga about a probe
/// text instead: the header's `var i [: T] =` becomes an assignment `i =` of the same length and a
/// module-scope `var<private> i: T;` is appended, so offsets do not move and every mention of the
/// counter becomes a global-variable expression with its own span. naga resolves the names, so a
/// declaration in the body that shadows the counter keeps its own uses. The result is checked
/// against the original IR: as many uses as the loop has loads of its counter (a declaration of
/// the same name enclosing the loop would capture them all, and the loop is refused).
pub fn counter_uses(
    module: &Module,
    wgsl: &str,
    f: &Function,
    lp: &ForLoop<'_>,
) -> Result<Vec<Range<usize>>, Skip> {
    use naga::common::wgsl::TypeContext;
    let skip = |why: &str| Skip(format!("loop counter: {why}"));
    let local = &f.local_variables[lp.counter];
    let name = local.name.as_deref().ok_or_else(|| skip("unnamed"))?;
    // Another declaration of the same name that encloses the loop (an outer counter, an argument,
    // a `let`) would capture the uses in the probe; the count check below then refuses the loop.
    // Sibling loops reusing the name declare their own scopes and do not interfere.
    let ty = module.to_ctx().type_to_string(local.ty);
    let assign = format!("{name} =");
    if assign.len() > lp.decl.len() {
        return Err(skip("unexpected declaration"));
    }
    let padded = format!("{assign}{}", " ".repeat(lp.decl.len() - assign.len()));
    let probe = text::apply_edits(
        wgsl,
        &[
            Edit::replace(lp.decl.clone(), padded),
            Edit::insert(wgsl.len(), format!("\nvar<private> {name}: {ty};\n")),
        ],
    )
    .ok_or_else(|| skip("probe edit"))?;
    let pm = naga::front::wgsl::parse_str(&probe).map_err(|e| {
        skip(&format!(
            "`{name}` is also declared at module scope or around the loop ({})",
            e.message()
        ))
    })?;
    let pf = match lp.func {
        FnRef::Entry(i) => {
            &pm.entry_points
                .get(i)
                .ok_or_else(|| skip("probe"))?
                .function
        }
        FnRef::Helper(h) => {
            let fname = module.functions[h].name.as_deref();
            pm.functions
                .iter()
                .find(|(_, g)| g.name.as_deref() == fname)
                .map(|(_, g)| g)
                .ok_or_else(|| skip("probe"))?
        }
    };
    let g = pm
        .global_variables
        .iter()
        .find(|(_, v)| v.name.as_deref() == Some(name) && v.space == naga::AddressSpace::Private)
        .map(|(h, _)| h)
        .ok_or_else(|| skip("probe"))?;
    let cond = text::range(f.expressions.get_span(lp.cond)).ok_or_else(|| skip("no span"))?;
    let inside = |r: &Range<usize>| {
        (r.start >= lp.body_text.start && r.end <= lp.body_text.end)
            || (r.start >= cond.start && r.end <= cond.end)
    };
    let mut uses = Vec::new();
    for (h, e) in pf.expressions.iter() {
        if matches!(e, Expression::GlobalVariable(x) if *x == g) {
            let r = text::range(pf.expressions.get_span(h)).ok_or_else(|| skip("no span"))?;
            if r.start >= lp.decl.start && r.end <= lp.decl.end {
                continue; // the probe's own assignment of the initial value
            }
            if wgsl.get(r.clone()) != Some(name) {
                return Err(skip("a use's span is not the counter's name"));
            }
            if inside(&r) {
                uses.push(r);
            }
        }
    }
    // Cross-check: one use per load of the counter outside the continuing block.
    let updates = emitted(lp.continuing);
    let loads = f
        .expressions
        .iter()
        .filter(|(h, e)| {
            matches!(e, Expression::Load { pointer } if *pointer == lp.counter_ptr)
                && !updates.contains(h)
        })
        .count();
    if loads != uses.len() {
        return Err(skip(&format!(
            "{} uses in the text, {loads} loads in the IR",
            uses.len()
        )));
    }
    uses.sort_by_key(|r| r.start);
    Ok(uses)
}

/// Why a loop body cannot be copied: it writes `counter`, leaves the loop (`break`, `continue`,
/// `return`, `discard`) or synchronises invocations, directly or through a call.
pub fn body_blocker(
    module: &Module,
    f: &Function,
    body: &Block,
    counter: Handle<naga::LocalVariable>,
) -> Option<String> {
    // `loops`/`switches`: how deep inside nested loops and switches a statement sits.
    fn visit(
        module: &Module,
        f: &Function,
        block: &Block,
        counter: Handle<naga::LocalVariable>,
        loops: usize,
        switches: usize,
    ) -> Option<String> {
        for s in block.iter() {
            let why = match s {
                Statement::Store { pointer, .. } if root_local(f, *pointer) == Some(counter) => {
                    Some("the body writes its counter".to_owned())
                }
                Statement::Break if loops == 0 && switches == 0 => {
                    Some("the body has a `break`".to_owned())
                }
                Statement::Continue if loops == 0 => Some("the body has a `continue`".to_owned()),
                Statement::Return { .. } | Statement::Kill => {
                    Some("the body has a `return`".to_owned())
                }
                Statement::Call {
                    function,
                    arguments,
                    ..
                } => {
                    if arguments.iter().any(|a| root_local(f, *a) == Some(counter)) {
                        Some("the body passes its counter by pointer".to_owned())
                    } else {
                        let callee = FnRef::Helper(*function);
                        let mut calls = vec![callee];
                        let mut i = 0;
                        let mut found = None;
                        while i < calls.len() && found.is_none() {
                            let g = self::function(module, calls[i]);
                            found = workgroup_sync(&g.body);
                            walk(&g.body, &mut |s, _| {
                                if let Statement::Call { function: h, .. } = s
                                    && !calls.contains(&FnRef::Helper(*h))
                                {
                                    calls.push(FnRef::Helper(*h));
                                }
                            });
                            i += 1;
                        }
                        found.map(|w| format!("the body calls a function with {w}"))
                    }
                }
                _ => None,
            };
            if why.is_some() {
                return why;
            }
            let nested = match s {
                Statement::Block(b) => visit(module, f, b, counter, loops, switches),
                Statement::If { accept, reject, .. } => {
                    visit(module, f, accept, counter, loops, switches)
                        .or_else(|| visit(module, f, reject, counter, loops, switches))
                }
                Statement::Switch { cases, .. } => cases
                    .iter()
                    .find_map(|c| visit(module, f, &c.body, counter, loops, switches + 1)),
                Statement::Loop {
                    body, continuing, ..
                } => visit(module, f, body, counter, loops + 1, 0)
                    .or_else(|| visit(module, f, continuing, counter, loops + 1, 0)),
                _ => None,
            };
            if nested.is_some() {
                return nested;
            }
        }
        None
    }
    if let Some(w) = workgroup_sync(body) {
        return Some(format!("the body has {w}"));
    }
    visit(module, f, body, counter, 0, 0)
}

/// Where a loop's code lives, for invariance: the expressions its statements emit and the results
/// its statements produce (calls, atomics, …), which change from one iteration to the next.
#[derive(Clone, Debug, Default)]
pub struct LoopScope {
    emitted: HashSet<Handle<Expression>>,
    results: HashSet<Handle<Expression>>,
    stored_locals: HashSet<Handle<naga::LocalVariable>>,
    calls: bool,
}

impl LoopScope {
    /// The scope of a loop with body `body` and continuing block `continuing` in `f`.
    pub fn new(f: &Function, body: &Block, continuing: &Block) -> Self {
        let mut scope = LoopScope::default();
        for block in [body, continuing] {
            scope.emitted.extend(emitted(block));
            walk(block, &mut |s, _| match s {
                Statement::Store { pointer, .. } => {
                    if let Some(l) = root_local(f, *pointer) {
                        scope.stored_locals.insert(l);
                    }
                }
                Statement::Call {
                    result, arguments, ..
                } => {
                    scope.calls = true;
                    scope.results.extend(*result);
                    // A pointer argument may be written through.
                    for a in arguments {
                        if let Some(l) = root_local(f, *a) {
                            scope.stored_locals.insert(l);
                        }
                    }
                }
                Statement::Atomic { result, .. } => scope.results.extend(*result),
                Statement::WorkGroupUniformLoad { result, .. } => {
                    scope.results.insert(*result);
                }
                Statement::SubgroupBallot { result, .. }
                | Statement::SubgroupGather { result, .. }
                | Statement::SubgroupCollectiveOperation { result, .. } => {
                    scope.results.insert(*result);
                }
                _ => {}
            });
        }
        scope
    }

    /// Whether `e` is emitted inside the loop.
    pub fn is_inside(&self, e: Handle<Expression>) -> bool {
        self.emitted.contains(&e) || self.results.contains(&e)
    }

    /// Whether `e` has the same value in every iteration of the loop: it is computed before the
    /// loop, or built from constants, builtins, values computed before the loop, loads from uniform
    /// or read-only storage buffers, and loads of locals the loop never writes.
    pub fn is_invariant(&self, module: &Module, f: &Function, e: Handle<Expression>) -> bool {
        if self.results.contains(&e) {
            return false;
        }
        if !self.emitted.contains(&e) {
            // Computed before the loop, or a constant, an argument, or a variable's address.
            return true;
        }
        match &f.expressions[e] {
            Expression::Load { pointer } => {
                let readonly = match root_global(f, *pointer) {
                    Some(g) => super::access::read_only(module, g),
                    None => {
                        root_local(f, *pointer).is_some_and(|l| !self.stored_locals.contains(&l))
                    }
                };
                readonly && self.is_invariant(module, f, *pointer)
            }
            other if super::expr::is_effect_result(other) => false,
            other => operands(other)
                .into_iter()
                .all(|o| self.is_invariant(module, f, o)),
        }
    }
}

#[cfg(test)]
mod tests;

//! IR queries the tiling operator needs beyond the shared analysis in `ir.rs`: what a
//! function-local variable holds at each load, flow-sensitively through straight-line code
//! (a local may be assigned several times) and through naga's lowering of `&&` / `||` (a local
//! written in both arms of an `if`); which invocation-id components and loop-carried values an
//! expression depends on; and a printer that turns an IR expression back into WGSL text *in a
//! new context*, with the invocation id and the loop-carried values replaced by text the caller
//! chooses.
//!
//! The printer is what lets a rewrite keep the user's arithmetic "as written" in a function it
//! generates from scratch: an index, a guard or an epilogue is re-emitted from naga's IR for
//! another invocation id and another loop counter, instead of being pattern-matched out of the
//! source text. It prints every expression fully inlined and parenthesised, so its output never
//! depends on the user's `let` names or their scopes (`ir::Analysis::expr_wgsl` prints the
//! user's names, which is right for edits in place and wrong here).
//!
//! Invariant: every query refuses (returns `Err`) rather than guesses. An expression kind the
//! printer does not know, a local read before it is written, or a local read through a pointer
//! makes the caller skip the kernel.

use super::Skip;
use super::ir::{Analysis, Mono};
use super::print::{Leaf, Leaves, Wgsl};
use kf_runtime::expr::{Op, SizeExpr};
use kf_runtime::resolve::ResolvedKernel;
use naga::{Expression, Handle, LocalVariable, Statement};
use std::collections::HashMap;

/// The entry point under analysis.
pub struct Entry<'a> {
    /// The module.
    pub module: &'a naga::Module,
    /// The entry point's function.
    pub func: &'a naga::Function,
    /// naga's analysis of that function (expression types).
    pub info: &'a naga::valid::FunctionInfo,
    /// The argument that carries `@builtin(global_invocation_id)`, if any.
    pub gid_arg: Option<u32>,
}

impl<'a> Entry<'a> {
    /// The entry point `ir` analysed. Refuses entry points whose body uses a builtin other than
    /// `global_invocation_id`, or reads it through a struct argument.
    pub fn new(ir: &Analysis<'a>) -> Result<Self, Skip> {
        let mut gid_arg = None;
        for b in &ir.builtins {
            if b.builtin == naga::BuiltIn::GlobalInvocationId && b.member.is_none() {
                gid_arg = Some(b.arg as u32);
            } else if b.used() {
                return Err(Skip(format!(
                    "the entry point uses {:?}{}; only global_invocation_id is understood",
                    b.builtin,
                    if b.member.is_some() {
                        " (in a struct)"
                    } else {
                        ""
                    }
                )));
            }
        }
        if let Some(i) = gid_arg {
            let ty = &ir.module.types[ir.function.arguments[i as usize].ty].inner;
            if !matches!(
                ty,
                naga::TypeInner::Vector {
                    size: naga::VectorSize::Tri,
                    scalar: naga::Scalar::U32
                }
            ) {
                return Err(Skip("global_invocation_id is not a vec3<u32>".into()));
            }
        }
        Ok(Entry {
            module: ir.module,
            func: ir.function,
            info: ir.info,
            gid_arg,
        })
    }

    /// The resolved type of `h`.
    pub fn ty(&self, h: Handle<Expression>) -> &naga::TypeInner {
        self.info[h].ty.inner_with(&self.module.types)
    }

    /// The WGSL spelling of `h`'s type.
    pub fn ty_name(&self, h: Handle<Expression>) -> String {
        use naga::common::wgsl::TypeContext;
        self.module
            .to_ctx()
            .type_resolution_to_string(&self.info[h].ty)
    }

    /// The WGSL spelling of a type.
    pub fn type_name(&self, ty: Handle<naga::Type>) -> String {
        use naga::common::wgsl::TypeContext;
        self.module.to_ctx().type_to_string(ty)
    }

    /// The global variable a pointer expression (a chain of `Access`/`AccessIndex`) is rooted at.
    pub fn root_global(&self, pointer: Handle<Expression>) -> Option<Handle<naga::GlobalVariable>> {
        match self.func.expressions[pointer] {
            Expression::GlobalVariable(g) => Some(g),
            Expression::Access { base, .. } | Expression::AccessIndex { base, .. } => {
                self.root_global(base)
            }
            _ => None,
        }
    }

    /// The local variable a pointer expression is, when it is one directly.
    pub fn as_local(&self, pointer: Handle<Expression>) -> Option<Handle<LocalVariable>> {
        match self.func.expressions[pointer] {
            Expression::LocalVariable(l) => Some(l),
            _ => None,
        }
    }

    /// Whether `g` is a storage buffer the shader may write.
    pub fn is_writable_storage(&self, g: Handle<naga::GlobalVariable>) -> bool {
        matches!(
            self.module.global_variables[g].space,
            naga::AddressSpace::Storage { access } if access.contains(naga::StorageAccess::STORE)
        )
    }
}

/// The index of an array element pointer (`buf[i]` or `buf.member[i]` of a global).
pub fn element_index(e: &Entry<'_>, pointer: Handle<Expression>) -> Option<Handle<Expression>> {
    match e.func.expressions[pointer] {
        Expression::Access { base, index } => match e.func.expressions[base] {
            Expression::GlobalVariable(_) => Some(index),
            Expression::AccessIndex { base: b, .. }
                if matches!(e.func.expressions[b], Expression::GlobalVariable(_)) =>
            {
                Some(index)
            }
            _ => None,
        },
        _ => None,
    }
}

/// The two factors of an accumulation `acc + x * y`, `x * y + acc` or `fma(x, y, acc)`, where
/// `is_acc` says which loads read the accumulator.
pub fn sum_of_products(
    e: &Entry<'_>,
    update: Handle<Expression>,
    is_acc: impl Fn(Handle<Expression>) -> bool,
) -> Option<(Handle<Expression>, Handle<Expression>)> {
    let product = |h: Handle<Expression>| match e.func.expressions[h] {
        Expression::Binary {
            op: naga::BinaryOperator::Multiply,
            left,
            right,
        } => Some((left, right)),
        _ => None,
    };
    match e.func.expressions[update] {
        Expression::Binary {
            op: naga::BinaryOperator::Add,
            left,
            right,
        } if is_acc(left) => product(right),
        Expression::Binary {
            op: naga::BinaryOperator::Add,
            left,
            right,
        } if is_acc(right) => product(left),
        Expression::Math {
            fun: naga::MathFunction::Fma,
            arg,
            arg1: Some(arg1),
            arg2: Some(arg2),
            ..
        } if is_acc(arg2) => Some((arg, arg1)),
        _ => None,
    }
}

/// A bounds guard of an entry point that computes one result per invocation: `if c { return; }`
/// (or its `else` form), or an `if` around the rest of the body (`rest_is_return`: only returns
/// follow it), whose arm the caller walks on. `None` when the `if` is neither.
pub fn bounds_guard<'b>(
    condition: Handle<Expression>,
    accept: &'b naga::Block,
    reject: &'b naga::Block,
    rest_is_return: bool,
) -> Option<(Guard, Option<&'b naga::Block>)> {
    let guard = |active_when| Guard {
        cond: condition,
        active_when,
    };
    if is_return(accept) && reject.is_empty() {
        Some((guard(false), None))
    } else if accept.is_empty() && is_return(reject) {
        Some((guard(true), None))
    } else if rest_is_return && (reject.is_empty() || is_return(reject)) {
        Some((guard(true), Some(accept)))
    } else if rest_is_return && (accept.is_empty() || is_return(accept)) {
        Some((guard(false), Some(reject)))
    } else {
        None
    }
}

/// What an entry point that computes one result per invocation around one loop (or one nest of
/// loops) holds outside it: the values of its locals, its bounds guards, whether the loop has been
/// walked, and its one store to memory after the loop.
#[derive(Clone, Debug)]
pub struct TopLevel {
    /// Values of locals.
    pub locals: Locals,
    /// The bounds guards (before the loop, or around the store after it).
    pub guards: Vec<Guard>,
    /// Whether the loop has been walked.
    pub looped: bool,
    /// The store after the loop: pointer and value.
    pub store: Option<(Handle<Expression>, Handle<Expression>)>,
}

impl TopLevel {
    /// The state at function entry.
    pub fn new(func: &naga::Function) -> Self {
        TopLevel {
            locals: Locals::new(func),
            guards: Vec::new(),
            looped: false,
            store: None,
        }
    }
}

/// An operator's proof of such an entry point: where its [`TopLevel`] is, and what it requires of
/// the loop.
pub trait LoopPattern {
    /// The state outside the loop.
    fn top(&mut self) -> &mut TopLevel;
    /// Proves the loop (the one top-level `Loop` statement), or says why it does not fit.
    fn on_loop(
        &mut self,
        body: &naga::Block,
        continuing: &naga::Block,
        break_if: Option<Handle<Expression>>,
    ) -> Result<(), Skip>;
}

/// Walks `block`, the body of `e`: straight-line code (locals assigned any number of times,
/// naga's lowering of `&&`/`||`), bounds guards ([`bounds_guard`]), one loop (proven by
/// `w.on_loop`), straight-line code with calls to pure functions, one store to memory, and
/// returns. Anything else is a [`Skip`] that names it.
pub fn walk_entry<W: LoopPattern>(
    w: &mut W,
    e: &Entry<'_>,
    block: &naga::Block,
) -> Result<(), Skip> {
    let mut list = Vec::new();
    flatten(block, &mut list);
    for (i, s) in list.iter().enumerate() {
        let rest_is_return = list[i + 1..]
            .iter()
            .all(|s| matches!(s, Statement::Return { value: None }));
        let top = w.top();
        match s {
            Statement::Emit(r) => top.locals.emit(e, r)?,
            Statement::Store { pointer, value } => {
                if let Some(l) = e.as_local(*pointer) {
                    top.locals.current.insert(l, Value::Expr(*value));
                } else if top.looped && top.store.is_none() {
                    top.store = Some((*pointer, *value));
                } else {
                    return Err(Skip(if top.looped {
                        "stores to memory more than once".into()
                    } else {
                        "stores to memory before the loop".into()
                    }));
                }
            }
            Statement::If {
                condition,
                accept,
                reject,
            } => {
                if top.locals.short_circuit(e, *condition, accept, reject)? {
                    continue;
                }
                // After the loop only a bounds guard around the one store (`if (row < m && col
                // < n) { c[..] = acc; }`), the same guard as one before the loop: whoever reads
                // the guards refuses one that reads a value the loop carries.
                if top.looped && top.store.is_some() {
                    return Err(Skip("branches after the store".into()));
                }
                let (guard, inner) = bounds_guard(*condition, accept, reject, rest_is_return)
                    .ok_or_else(|| Skip("branches that are not bounds guards".into()))?;
                top.guards.push(guard);
                if let Some(block) = inner {
                    return walk_entry(w, e, block);
                }
            }
            Statement::Loop {
                body,
                continuing,
                break_if,
            } => {
                if top.looped {
                    return Err(Skip("more than one loop".into()));
                }
                w.on_loop(body, continuing, *break_if)?;
                w.top().looped = true;
            }
            // A pure function in the epilogue (`c[..] = gelu(acc)`): re-emitted as called.
            Statement::Call {
                function,
                arguments,
                result,
            } if top.looped
                && top.store.is_none()
                && top.locals.call(e, *function, arguments, *result) => {}
            Statement::Return { value: None } if rest_is_return => return Ok(()),
            other => {
                return Err(Skip(format!(
                    "the kernel has {} outside the pattern",
                    statement_kind(other)
                )));
            }
        }
    }
    Ok(())
}

/// What a function-local variable holds, as straight-line analysis knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    /// The value of an IR expression (its own loads of locals are bound where they were emitted).
    Expr(Handle<Expression>),
    /// `cond ? accept : reject`: a local written in both arms of an `if`, which is how naga lowers
    /// `a && b` and `a || b`.
    Select {
        /// The condition.
        cond: Handle<Expression>,
        /// The value when it holds.
        accept: Handle<Expression>,
        /// The value otherwise.
        reject: Handle<Expression>,
    },
    /// A value the caller names (a loop counter, an accumulator), printed as the caller says.
    Symbol(usize),
}

/// One arm of a short-circuit `if`: its emitted ranges, the local it stores and the value.
type Arm = (
    Vec<naga::Range<Expression>>,
    Handle<LocalVariable>,
    Handle<Expression>,
);

/// A call to a pure function: the callee and its arguments.
pub type Call = (Handle<naga::Function>, Vec<Handle<Expression>>);

/// Values of locals now, and the value each emitted load of a local read.
#[derive(Clone, Debug, Default)]
pub struct Locals {
    /// Current values.
    pub current: HashMap<Handle<LocalVariable>, Value>,
    /// What each `Load` of a local read, bound when it was emitted.
    pub loads: HashMap<Handle<Expression>, Value>,
    /// Results of calls to pure functions ([`is_pure`]): the callee and its arguments.
    pub calls: HashMap<Handle<Expression>, Call>,
}

impl Locals {
    /// The state at function entry: locals with an initializer hold it.
    pub fn new(func: &naga::Function) -> Self {
        let mut current = HashMap::new();
        for (h, l) in func.local_variables.iter() {
            if let Some(init) = l.init {
                current.insert(h, Value::Expr(init));
            }
        }
        Locals {
            current,
            loads: HashMap::new(),
            calls: HashMap::new(),
        }
    }

    /// Records a call statement whose result the caller may read like an expression: the callee
    /// must be pure ([`is_pure`]). Returns whether it was recorded.
    pub fn call(
        &mut self,
        e: &Entry<'_>,
        function: Handle<naga::Function>,
        arguments: &[Handle<Expression>],
        result: Option<Handle<Expression>>,
    ) -> bool {
        match result {
            Some(r) if is_pure(e.module, function) => {
                self.calls.insert(r, (function, arguments.to_vec()));
                true
            }
            _ => false,
        }
    }

    /// Binds the loads of locals in an `Emit` range to the locals' current values.
    pub fn emit(&mut self, e: &Entry<'_>, range: &naga::Range<Expression>) -> Result<(), Skip> {
        for h in range.clone() {
            if let Expression::Load { pointer } = e.func.expressions[h] {
                match e.func.expressions[pointer] {
                    Expression::LocalVariable(l) => {
                        let v = *self.current.get(&l).ok_or_else(|| {
                            Skip(format!(
                                "local `{}` is read before it is written",
                                local_name(e, l)
                            ))
                        })?;
                        self.loads.insert(h, v);
                    }
                    Expression::Access { .. } | Expression::AccessIndex { .. }
                        if e.root_global(pointer).is_none() =>
                    {
                        return Err(Skip("reads an element of a local array or struct".into()));
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// Recognises naga's lowering of `a && b` / `a || b`: an `if` whose arms only emit
    /// expressions and store one value each into the same local; or one arm empty and the other
    /// such a store, which keeps the local's current value when the test fails. Returns whether it
    /// did.
    pub fn short_circuit(
        &mut self,
        e: &Entry<'_>,
        cond: Handle<Expression>,
        accept: &naga::Block,
        reject: &naga::Block,
    ) -> Result<bool, Skip> {
        let arm = |block: &naga::Block| -> Option<Arm> {
            let mut emits = Vec::new();
            let mut store = None;
            for s in block.iter() {
                match s {
                    naga::Statement::Emit(r) if store.is_none() => emits.push(r.clone()),
                    naga::Statement::Store { pointer, value } if store.is_none() => {
                        store = Some((e.as_local(*pointer)?, *value));
                    }
                    _ => return None,
                }
            }
            let (l, v) = store?;
            Some((emits, l, v))
        };
        // An arm that does nothing keeps the local's current value (`var v = 0.0; if c { v = x; }`,
        // a conditional read as people write a padding test).
        let kept = |other: &Option<Arm>| -> Option<Arm> {
            let (_, l, _) = other.as_ref()?;
            match self.current.get(l)? {
                Value::Expr(h) => Some((Vec::new(), *l, *h)),
                _ => None,
            }
        };
        let (a, r) = (arm(accept), arm(reject));
        let (a, r) = match (a, r) {
            (None, r) if accept.is_empty() => (kept(&r), r),
            (a, None) if reject.is_empty() => {
                let k = kept(&a);
                (a, k)
            }
            other => other,
        };
        let (Some((ea, la, va)), Some((er, lr, vr))) = (a, r) else {
            return Ok(false);
        };
        if la != lr {
            return Ok(false);
        }
        for r in ea.iter().chain(&er) {
            self.emit(e, r)?;
        }
        self.current.insert(
            la,
            Value::Select {
                cond,
                accept: va,
                reject: vr,
            },
        );
        Ok(true)
    }
}

/// Whether calling `f` only computes a value from its arguments: it reads no global variable, takes
/// no pointer, and calls, stores to memory outside its locals, synchronises and samples nothing.
/// Such a call can be re-emitted anywhere its arguments can (`gelu(acc)` in an epilogue).
pub fn is_pure(module: &naga::Module, f: Handle<naga::Function>) -> bool {
    let func = &module.functions[f];
    if func
        .arguments
        .iter()
        .any(|a| matches!(module.types[a.ty].inner, naga::TypeInner::Pointer { .. }))
    {
        return false;
    }
    let expressions_ok = func.expressions.iter().all(|(_, x)| {
        !matches!(x, Expression::GlobalVariable(_)) && !super::expr::is_effect_result(x)
    });
    fn block_ok(b: &naga::Block, func: &naga::Function) -> bool {
        b.iter().all(|s| match s {
            naga::Statement::Emit(_)
            | naga::Statement::Break
            | naga::Statement::Continue
            | naga::Statement::Return { .. } => true,
            naga::Statement::Block(b) => block_ok(b, func),
            naga::Statement::If { accept, reject, .. } => {
                block_ok(accept, func) && block_ok(reject, func)
            }
            naga::Statement::Loop {
                body, continuing, ..
            } => block_ok(body, func) && block_ok(continuing, func),
            naga::Statement::Switch { cases, .. } => cases.iter().all(|c| block_ok(&c.body, func)),
            naga::Statement::Store { pointer, .. } => {
                // Only into the function's own locals.
                let mut p = *pointer;
                loop {
                    match func.expressions[p] {
                        Expression::LocalVariable(_) => break true,
                        Expression::Access { base, .. } | Expression::AccessIndex { base, .. } => {
                            p = base
                        }
                        _ => break false,
                    }
                }
            }
            _ => false,
        })
    }
    expressions_ok && block_ok(&func.body, func)
}

/// The kernel's one loop as a counted loop that steps its counter by +1 while `counter < K` (or
/// `<=`), `K` with no offset: the loop of a matrix product's sum or a row's scan.
pub fn one_unit_loop<'a>(a: &'a super::ir::Analysis<'_>) -> Result<&'a super::ir::ForLoop, Skip> {
    if a.loops.len() != 1 {
        return Err(Skip("the kernel does not have exactly one loop".into()));
    }
    unit_loop(a, 0)
}

/// Loop `id` of `a` as a counted loop `counter < K` (or `<=`) stepping by one, or why it is not.
pub fn unit_loop<'a>(
    a: &'a super::ir::Analysis<'_>,
    id: usize,
) -> Result<&'a super::ir::ForLoop, Skip> {
    let fl = a.loops[id].for_loop.as_ref().ok_or_else(|| {
        Skip(format!(
            "the loop is not a counted loop ({})",
            a.loops[id].not_counted.as_deref().unwrap_or("unrecognised")
        ))
    })?;
    let bound_ok = matches!(
        fl.bounds.as_slice(),
        [super::ir::Bound {
            cmp: super::ir::Cmp::Lt | super::ir::Cmp::Le,
            offset: None,
            ..
        }]
    );
    if !bound_ok || fl.decreasing || a.const_int(fl.step) != Some(1) {
        return Err(Skip(
            "the loop is not `counter < K` (or `<=`) stepping by one".into(),
        ));
    }
    Ok(fl)
}

/// A guard of an entry point that computes one result per invocation: the result is computed only
/// where `cond == active_when` (for every guard).
#[derive(Clone, Copy, Debug)]
pub struct Guard {
    /// The condition.
    pub cond: Handle<Expression>,
    /// The value for which the invocation goes on.
    pub active_when: bool,
}

/// Whether `block` is exactly `return;`.
pub fn is_return(block: &naga::Block) -> bool {
    matches!(
        block.iter().collect::<Vec<_>>().as_slice(),
        [Statement::Return { value: None }]
    )
}

/// Whether `block` is exactly `break;`.
pub fn is_break(block: &naga::Block) -> bool {
    matches!(
        block.iter().collect::<Vec<_>>().as_slice(),
        [Statement::Break]
    )
}

/// Statements of a block with nested plain blocks spliced in.
pub fn flatten<'b>(block: &'b naga::Block, out: &mut Vec<&'b Statement>) {
    for s in block.iter() {
        match s {
            Statement::Block(b) => flatten(b, out),
            other => out.push(other),
        }
    }
}

/// A statement's kind, for skip reasons ("a function call").
pub fn statement_kind(s: &Statement) -> &'static str {
    match s {
        Statement::Call { .. } => "a function call",
        Statement::Atomic { .. } => "an atomic",
        Statement::ControlBarrier(_) | Statement::MemoryBarrier(_) => "a barrier",
        Statement::Switch { .. } => "a switch",
        Statement::Loop { .. } => "a second loop",
        Statement::Store { .. } => "a store",
        Statement::If { .. } => "an if",
        Statement::Return { .. } => "a return",
        Statement::Break | Statement::Continue => "a break or continue",
        _ => "a statement",
    }
}

/// The name of a local, for messages.
pub fn local_name(e: &Entry<'_>, l: Handle<LocalVariable>) -> String {
    e.func.local_variables[l]
        .name
        .clone()
        .unwrap_or_else(|| "<temporary>".into())
}

/// What an expression's value depends on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Deps {
    /// Components of `global_invocation_id` read one at a time (x, y, z).
    pub gid: [bool; 3],
    /// The invocation id used as a whole vector (a swizzle, a comparison of vectors).
    pub gid_whole: bool,
    /// Symbols (by the caller's numbering) the value depends on.
    pub symbols: u32,
    /// A load from memory whose address varies between invocations or iterations, or from memory
    /// the shader writes.
    pub varying_load: bool,
    /// Something the analysis does not model (a call result, an atomic, a texture).
    pub unknown: bool,
}

impl Deps {
    fn union(mut self, o: Deps) -> Deps {
        for d in 0..3 {
            self.gid[d] |= o.gid[d];
        }
        self.gid_whole |= o.gid_whole;
        self.symbols |= o.symbols;
        self.varying_load |= o.varying_load;
        self.unknown |= o.unknown;
        self
    }

    /// Whether the value is the same for every invocation and iteration.
    pub fn is_invariant(&self) -> bool {
        *self == Deps::default()
    }

    /// Whether it depends on symbol `s`.
    pub fn has_symbol(&self, s: usize) -> bool {
        self.symbols & (1 << s) != 0
    }
}

/// Analyses and prints expressions of one entry point, given the locals' bindings.
pub struct Exprs<'a> {
    /// The entry point.
    pub e: &'a Entry<'a>,
    /// Bindings of loads of locals.
    pub locals: &'a Locals,
}

impl<'a> Exprs<'a> {
    /// The IR expressions `h` directly uses, or `None` for kinds the analysis does not model.
    fn operands(&self, h: Handle<Expression>) -> Option<Vec<Handle<Expression>>> {
        use Expression as E;
        match &self.e.func.expressions[h] {
            e @ (E::Literal(_)
            | E::Constant(_)
            | E::Override(_)
            | E::ZeroValue(_)
            | E::Compose { .. }
            | E::Access { .. }
            | E::AccessIndex { .. }
            | E::Splat { .. }
            | E::Swizzle { .. }
            | E::Unary { .. }
            | E::Binary { .. }
            | E::Select { .. }
            | E::Relational { .. }
            | E::Math { .. }
            | E::As { .. }) => Some(super::expr::operands(e)),
            _ => None,
        }
    }

    /// What the value of `h` depends on.
    pub fn deps(&self, h: Handle<Expression>) -> Deps {
        let mut memo = HashMap::new();
        self.deps_memo(h, &mut memo)
    }

    fn value_deps(&self, v: Value, memo: &mut HashMap<Handle<Expression>, Deps>) -> Deps {
        match v {
            Value::Expr(x) => self.deps_memo(x, memo),
            Value::Select {
                cond,
                accept,
                reject,
            } => self
                .deps_memo(cond, memo)
                .union(self.deps_memo(accept, memo))
                .union(self.deps_memo(reject, memo)),
            Value::Symbol(s) => Deps {
                symbols: 1 << s,
                ..Deps::default()
            },
        }
    }

    fn deps_memo(
        &self,
        h: Handle<Expression>,
        memo: &mut HashMap<Handle<Expression>, Deps>,
    ) -> Deps {
        if let Some(d) = memo.get(&h) {
            return *d;
        }
        use Expression as E;
        let func = &self.e.func;
        let d = match &func.expressions[h] {
            E::FunctionArgument(_) => Deps {
                gid_whole: true,
                ..Deps::default()
            },
            E::AccessIndex { base, index }
                if matches!(func.expressions[*base], E::FunctionArgument(_)) && *index < 3 =>
            {
                let mut d = Deps::default();
                d.gid[*index as usize] = true;
                d
            }
            E::CallResult(_) => match self.locals.calls.get(&h) {
                Some((_, args)) => args.iter().fold(Deps::default(), |acc, a| {
                    acc.union(self.deps_memo(*a, memo))
                }),
                None => Deps {
                    unknown: true,
                    ..Deps::default()
                },
            },
            E::GlobalVariable(_) | E::LocalVariable(_) => Deps::default(),
            E::ArrayLength(_) => Deps::default(),
            E::Load { pointer } => match func.expressions[*pointer] {
                E::LocalVariable(_) => match self.locals.loads.get(&h) {
                    Some(v) => self.value_deps(*v, memo),
                    None => Deps {
                        unknown: true,
                        ..Deps::default()
                    },
                },
                _ => {
                    let index_deps = self.pointer_index_deps(*pointer, memo);
                    let varying = match self.e.root_global(*pointer) {
                        Some(g) => !super::access::read_only(self.e.module, g),
                        None => true,
                    };
                    let mut d = index_deps;
                    d.varying_load |= varying || !index_deps.is_invariant();
                    d
                }
            },
            _ => match self.operands(h) {
                Some(ops) => ops
                    .into_iter()
                    .fold(Deps::default(), |acc, o| acc.union(self.deps_memo(o, memo))),
                None => Deps {
                    unknown: true,
                    ..Deps::default()
                },
            },
        };
        memo.insert(h, d);
        d
    }

    /// Dependencies of the indices along a pointer chain.
    fn pointer_index_deps(
        &self,
        pointer: Handle<Expression>,
        memo: &mut HashMap<Handle<Expression>, Deps>,
    ) -> Deps {
        match self.e.func.expressions[pointer] {
            Expression::Access { base, index } => self
                .pointer_index_deps(base, memo)
                .union(self.deps_memo(index, memo)),
            Expression::AccessIndex { base, .. } => self.pointer_index_deps(base, memo),
            Expression::GlobalVariable(_) => Deps::default(),
            _ => Deps {
                unknown: true,
                ..Deps::default()
            },
        }
    }

    /// Whether `h` is the literal zero of a float type.
    /// A factor that reads memory or zero, as the load and the test under which it is read:
    /// `select(0.0, x[..], inside)`, or a local written under a test (`var v = 0.0; if inside {
    /// v = x[..]; }`). The two spellings compute the same product (a product with zero adds
    /// nothing), so a rewrite that re-emits the load under the test may take either. `None`
    /// where `h` is neither.
    pub fn padded_load(&self, h: Handle<Expression>) -> Option<(Handle<Expression>, Guard)> {
        let e = self.e;
        let (cond, accept, reject) = match e.func.expressions[h] {
            Expression::Load { pointer } if e.as_local(pointer).is_some() => {
                match self.locals.loads.get(&h).copied()? {
                    Value::Select {
                        cond,
                        accept,
                        reject,
                    } => (cond, accept, reject),
                    _ => return None,
                }
            }
            Expression::Select {
                condition,
                accept,
                reject,
            } if e.ty(condition) == &naga::TypeInner::Scalar(naga::Scalar::BOOL) => {
                (condition, accept, reject)
            }
            _ => return None,
        };
        let is_load = |v: Handle<Expression>| matches!(e.func.expressions[v], Expression::Load { pointer } if e.root_global(pointer).is_some());
        let zero = |v: Handle<Expression>| self.is_float_zero(Value::Expr(v));
        // The load on either side, zero on the other: the test lets the load through when it
        // holds (`accept`) or when it fails (`reject`).
        [(accept, reject, true), (reject, accept, false)]
            .into_iter()
            .find(|&(load, other, _)| is_load(load) && zero(other))
            .map(|(load, _, active_when)| (load, Guard { cond, active_when }))
    }

    pub fn is_float_zero(&self, v: Value) -> bool {
        let Value::Expr(h) = v else { return false };
        match &self.e.func.expressions[h] {
            Expression::Literal(naga::Literal::F32(x)) => *x == 0.0,
            Expression::Literal(naga::Literal::AbstractFloat(x)) => *x == 0.0,
            Expression::ZeroValue(_) => true,
            _ => false,
        }
    }
}

/// A uniform monomial of the analysis ([`Mono`]: an integer times uniform atoms, e.g. a digit
/// boundary `m * n` of a flat id) made usable by a rewrite: the expressions behind its atoms, to
/// print it in new code, and its value as a size expression, for a launch rule.
#[derive(Clone, Debug)]
pub struct Factor {
    /// One expression per atom, in the monomial's order.
    pub atoms: Vec<Handle<Expression>>,
    /// The integer factor.
    pub k: i64,
    /// Its value from the spec's sizes.
    pub size: SizeExpr,
}

impl Factor {
    /// `m`, each atom's size read from the spec (a literal, or a uniform the spec fills with a
    /// size); `None` when one is neither, or the factor is not positive.
    pub fn of(ir: &Analysis<'_>, kernel: &ResolvedKernel, m: &Mono) -> Option<Factor> {
        let k = u64::try_from(m.k).ok().filter(|k| *k > 0)?;
        let mut ops = Vec::new();
        if k != 1 || m.atoms.is_empty() {
            ops.push(Op::Lit(k));
        }
        let mut atoms = Vec::new();
        for a in &m.atoms {
            let (h, size) = ir
                .atom_exprs(a)
                .into_iter()
                .find_map(|h| ir.spec_size(kernel, h).map(|s| (h, s)))?;
            let first = ops.is_empty();
            ops.extend_from_slice(size.ops());
            if !first {
                ops.push(Op::Mul);
            }
            atoms.push(h);
        }
        Some(Factor {
            atoms,
            k: m.k,
            size: SizeExpr::from_ops(ops),
        })
    }

    /// As `u32` WGSL text.
    pub fn text(&self, p: &Printer<'_>) -> Result<String, Skip> {
        let mut parts = Vec::new();
        if self.k != 1 || self.atoms.is_empty() {
            parts.push(format!("{}u", self.k));
        }
        for a in &self.atoms {
            parts.push(format!("u32({})", p.expr(*a)?));
        }
        Ok(match &parts[..] {
            [one] => one.clone(),
            _ => format!("({})", parts.join(" * ")),
        })
    }
}

/// Prints IR expressions as WGSL text in a new context.
pub struct Printer<'a> {
    /// The expressions and their bindings.
    pub x: &'a Exprs<'a>,
    /// Text standing for the `global_invocation_id` argument (a `vec3<u32>`).
    pub gid: &'a str,
    /// Text standing for each symbol; `None` where the symbol may not appear.
    pub symbols: &'a [Option<String>],
}

impl Printer<'_> {
    fn no(&self, what: &str) -> Skip {
        Skip(format!("cannot re-emit {what}"))
    }

    /// A local's value.
    pub fn value(&self, v: Value) -> Result<String, Skip> {
        match v {
            Value::Expr(h) => self.expr(h),
            Value::Select {
                cond,
                accept,
                reject,
            } => Ok(format!(
                "select({}, {}, {})",
                self.expr(reject)?,
                self.expr(accept)?,
                self.expr(cond)?
            )),
            Value::Symbol(s) => self
                .symbols
                .get(s)
                .cloned()
                .flatten()
                .map(|t| format!("({t})"))
                .ok_or_else(|| self.no("a loop-carried value outside its loop")),
        }
    }

    /// An expression's value.
    pub fn expr(&self, h: Handle<Expression>) -> Result<String, Skip> {
        let e = self.x.e;
        Wgsl {
            module: e.module,
            func: e.func,
            info: e.info,
            leaves: self,
            max_depth: 512,
        }
        .print(h)
    }

    /// A reference to memory (the target of a store, or what a load reads).
    pub fn place(&self, pointer: Handle<Expression>) -> Result<String, Skip> {
        self.expr(pointer)
    }
}

/// The leaves of a printer in a new context: the invocation id and loop-carried values as the
/// caller chose, a local's load as the value it holds there, a pure call with its arguments.
impl Leaves for &Printer<'_> {
    fn leaf(&self, w: &Wgsl<'_, Self>, h: Handle<Expression>, depth: u32) -> Leaf {
        use Expression as E;
        let e = self.x.e;
        Some(match e.func.expressions[h] {
            E::FunctionArgument(i) if Some(i) == e.gid_arg => Ok(format!("({})", self.gid)),
            E::FunctionArgument(_) => Err(self.no("an entry point argument")),
            E::LocalVariable(_) => Err(self.no("a pointer into local memory")),
            E::Load { pointer } if matches!(e.func.expressions[pointer], E::LocalVariable(_)) => {
                match self.x.locals.loads.get(&h) {
                    Some(v) => self.value(*v),
                    None => Err(self.no("a load of a local")),
                }
            }
            E::CallResult(f) => {
                let Some((_, args)) = self.x.locals.calls.get(&h) else {
                    return Some(Err(self.no("the result of a call that is not pure")));
                };
                let Some(name) = e.module.functions[f].name.clone() else {
                    return Some(Err(self.no("a call to an unnamed function")));
                };
                args.iter()
                    .map(|a| w.at(*a, depth + 1))
                    .collect::<Result<Vec<_>, _>>()
                    .map(|args| format!("{name}({})", args.join(", ")))
            }
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Walks the top-level statements of `src`'s entry point (emits, stores to locals, `&&`/`||`
    /// lowerings) and prints the condition of its first other `if` and the value of its last store,
    /// with the invocation id printed as `g`.
    fn check(src: &str, cond: &str, stored: &str, cond_gid: [bool; 3]) {
        let parsed = crate::analysis::ir::parse(src).unwrap();
        let a = parsed.analyse("main").unwrap();
        let e = Entry::new(&a).unwrap();
        let mut locals = Locals::new(e.func);
        let (mut guard, mut store) = (None, None);
        for s in e.func.body.iter() {
            match s {
                naga::Statement::Emit(r) => locals.emit(&e, r).unwrap(),
                naga::Statement::Store { pointer, value } => match e.as_local(*pointer) {
                    Some(l) => {
                        locals.current.insert(l, Value::Expr(*value));
                    }
                    None => store = Some(*value),
                },
                naga::Statement::If {
                    condition,
                    accept,
                    reject,
                } if !locals
                    .short_circuit(&e, *condition, accept, reject)
                    .unwrap() =>
                {
                    guard.get_or_insert(*condition);
                }
                _ => {}
            }
        }
        let x = Exprs {
            e: &e,
            locals: &locals,
        };
        let p = Printer {
            x: &x,
            gid: "g",
            symbols: &[],
        };
        assert_eq!(p.expr(guard.unwrap()).unwrap(), cond);
        assert_eq!(p.expr(store.unwrap()).unwrap(), stored);
        let d = x.deps(guard.unwrap());
        assert_eq!(d.gid, cond_gid);
        assert!(d.symbols == 0 && !d.varying_load && !d.unknown);
    }

    const HEAD: &str = "struct D { m: u32, n: u32 }\n@group(0) @binding(0) var<uniform> d: D;\n@group(0) @binding(1) var<storage, read_write> o: array<u32>;\n";

    #[test]
    fn short_circuits_become_selects_and_names_disappear() {
        check(
            &format!(
                "{HEAD}@compute @workgroup_size(8, 8)\nfn main(@builtin(global_invocation_id) gid: vec3<u32>) {{\n    let row = gid.y;\n    if (row >= d.m || gid.x >= d.n) {{ return; }}\n    o[row * d.n + gid.x] = row;\n}}\n"
            ),
            "select(true, ((g).x >= d.n), !(((g).y >= d.m)))",
            "(g).y",
            [true, true, false],
        );
    }

    #[test]
    fn a_reassigned_local_is_read_as_it_was_when_loaded() {
        check(
            &format!(
                "{HEAD}@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) gid: vec3<u32>) {{\n    var x = gid.x;\n    let before = x + 1u;\n    x = x * 2u;\n    if (!(x < d.n && gid.z == 0u)) {{ return; }}\n    o[x] = before + x;\n}}\n"
            ),
            "!(select(false, ((g).z == 0u), (((g).x * 2u) < d.n)))",
            "(((g).x + 1u) + ((g).x * 2u))",
            [true, false, true],
        );
    }
}

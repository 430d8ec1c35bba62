//! A workgroup tree reduction folded with subgroup operations.
//!
//! Kernels that already give a row to a workgroup mostly combine their lanes' partial values the
//! way GPU textbooks did before subgroups: every lane stores its value in a workgroup array `W`,
//! then `log2(WG)` halving steps, each behind a barrier, add the upper half onto the lower
//! (`if (lane < s) { W[lane] = W[lane] ⊕ W[lane + s]; }`), and `W[0]` holds the total. Each step
//! costs a barrier and a round trip through workgroup memory, while most lanes idle. With
//! subgroups the same total takes one `subgroupAdd` (or `Max`, `Min`, ..) per subgroup, one
//! workgroup-memory step for the subgroups' partials and two barriers.
//!
//! The pattern is proven from naga's IR by running the entry point's top-level statements
//! symbolically: integer values of locals, constants, overrides and call arguments are tracked,
//! the local invocation index is a symbol, and loops, helper calls and `if`s whose condition is
//! known are executed. So every spelling that performs the same steps is recognised alike: a
//! `for`, `while` or `loop { if s == 0u { break; } .. }` whose counter halves (`s >>= 1u`,
//! `s = s / 2u`), the steps written out one by one, or a helper (`reduce_sum(lane, 64u)`) called
//! once per step, with the barrier before or after each step. The steps a region performs must be:
//! a barrier, then strides `WG/2, WG/4, .., 1` each after a barrier, every step the same `⊕`
//! (`+`, `*`, `max`, `min`, `&`, `|`, `^`) on the same array of a scalar or vector of
//! `f32`/`i32`/`u32`, and nothing else that writes memory.
//!
//! The region is replaced by: a barrier, the fold of `W[lane]` over the workgroup through
//! subgroups (every lane gets the total), `W[0] = total` on lane 0, the trailing barrier if the
//! region ended with one, and the final values of the counters it changed. Only `W[0]` is then
//! what the tree left: the other slots keep the lanes' own values instead of partial sums, so the
//! rest of the entry point must read `W` only at index 0 until every lane stores `W[lane]` again
//! at the top level (the next reduction), and call no function that touches `W`; otherwise the
//! region is left alone. A floating-point sum or product is reassociated (the subgroup order is
//! not the tree's), and the step says so; `max`, `min` and integer operations give the same bits.
//!
//! Needs the adapter's subgroup operations. The workgroup size stays what it was (a lifted
//! `KF_WG_X` too: the fold does not depend on it).

use super::reduce::{combine_expr, op_name, subgroup_fn, type_ident};
use super::{Moves, Operator, Rewrite, Skip, Subject};
use crate::analysis::expr::{literal_int, operands};
use crate::analysis::ir::{self, AccOp, Analysis, Edit};
use crate::analysis::loops::known_int;
use crate::evolve::descriptor::Dim;
use naga::{
    BinaryOperator, Block, BuiltIn, Expression, Function, GlobalVariable, Handle, LocalVariable,
    MathFunction, Statement, TypeInner,
};
use std::collections::{HashMap, HashSet};

/// The operator.
#[derive(Clone, Copy, Debug, Default)]
pub struct SubgroupTree;

impl Operator for SubgroupTree {
    fn name(&self) -> &'static str {
        "subgroup-tree"
    }

    fn moves(&self) -> Moves {
        &[(Dim::Parallelism, 1)]
    }

    fn apply(&self, subject: &Subject<'_>) -> Result<Vec<Rewrite>, Skip> {
        let (text, step) = with_sim(subject, "tree", |sim, slots| {
            let a = sim.a;
            let regions = sim.regions(sim.wg)?;
            let text = render(a, &regions, slots)?;
            let mut what: Vec<String> = Vec::new();
            for t in regions.iter().flat_map(|r| &r.trees) {
                let s = format!("{} {}", op_name(t.op), global_name(a, t.global));
                if !what.contains(&s) {
                    what.push(s);
                }
            }
            let float = regions
                .iter()
                .flat_map(|r| &r.trees)
                .any(|t| matches!(t.op, AccOp::Add | AccOp::Mul) && is_float(a, t.element));
            let step = format!(
                "subgroup-tree({}{})",
                what.join(", "),
                if float {
                    "; float sums reassociated"
                } else {
                    ""
                }
            );
            Ok((text, step))
        })?;
        Ok(vec![super::finish(subject, text, &[], step, Vec::new())?])
    }
}

/// Runs `f` on the simulator over the subject's entry point, with the number of slots one per
/// subgroup needs (the most invocations over the smallest subgroup), after the checks both
/// subgroup operators share: the adapter has subgroups, the workgroup is one-dimensional. `what`
/// names the pattern in the skip.
fn with_sim<R>(
    subject: &Subject<'_>,
    what: &str,
    f: impl FnOnce(&Sim<'_, '_>, u64) -> Result<R, Skip>,
) -> Result<R, Skip> {
    if !subject.target.has_subgroups() {
        return Err(Skip("the adapter has no subgroup operations".into()));
    }
    let wg = subject.program.workgroup_size;
    if wg[1] != 1 || wg[2] != 1 || wg[0] < 2 {
        return Err(Skip(format!(
            "the workgroup is {}×{}×{}; the {what}'s lanes are one dimension",
            wg[0], wg[1], wg[2]
        )));
    }
    let parsed = ir::parse(&subject.program.wgsl).map_err(|e| Skip(e.to_string()))?;
    let a = parsed
        .analyse(&subject.program.entry)
        .map_err(|e| Skip(e.to_string()))?;
    let constants: Vec<(&str, f64)> = subject
        .program
        .constants
        .iter()
        .map(|(k, v)| (k.as_ref(), *v))
        .collect();
    // With one workgroup along x, the global id's x is the local one.
    let x = &subject.program.dispatch.size[0];
    let one_workgroup = match subject.program.dispatch.mode {
        kf_runtime::DispatchMode::Workgroups => x.as_constant() == Some(1),
        kf_runtime::DispatchMode::Grid => x.as_constant() == Some(u64::from(wg[0])),
    };
    let sim = Sim {
        a: &a,
        constants: &constants,
        global_is_local: one_workgroup,
        wg: i64::from(wg[0]),
    };
    let max_invocations = subject
        .target
        .limit("max_compute_invocations_per_workgroup", 256)
        .max(u64::from(wg[0]));
    let min_subgroup = subject.target.limit("subgroup_min_size", 1).max(1);
    f(&sim, max_invocations.div_ceil(min_subgroup))
}

/// One recognised tree: top-level statements `first..=last` of the entry point.
#[derive(Clone, Debug)]
struct Region {
    first: usize,
    last: usize,
    /// The arrays it reduces (one, or several stepped together), each with its element type and
    /// operation.
    trees: Vec<Tree>,
    /// Whether a barrier follows the last step inside the region.
    trailing_barrier: bool,
    /// Locals declared before the region that it changes, and locals declared in it that are
    /// used after it, with their values after it (and whether to declare them).
    finals: Vec<(Handle<LocalVariable>, i64, bool)>,
}

/// One array a region reduces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Tree {
    global: Handle<GlobalVariable>,
    element: Handle<naga::Type>,
    op: AccOp,
}

/// A symbolic value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sym {
    Int(i64),
    Bool(bool),
    /// The local invocation index plus a constant.
    Lane(i64),
    /// `local_invocation_id` (its `.x` is the index: the workgroup is one-dimensional).
    LaneVec,
    /// `global_invocation_id`, and its `.x` (`% WG` is the lane).
    GlobalVec,
    GlobalX,
    /// `lane < k`.
    LaneBelow(i64),
    /// `lane >= k`.
    LaneAtLeast(i64),
    /// While a scan runs (`subgroup-scan`): the combination of the scanned values of lanes
    /// `lane - a ..= lane - b` (`a >= b`), of lane 0 onwards where `lane - a` is below 0.
    Prefix(i64, i64),
    Unknown,
}

/// The state of a workgroup scan being run (`subgroup-scan`): what every lane's slot of the
/// array holds and what the barriers allow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ScanState {
    global: Handle<GlobalVariable>,
    /// What every lane's own slot holds (a `Sym::Prefix`, or `Unknown`).
    held: Sym,
    /// Whether a barrier followed the last store to the array, so other lanes' slots may be read.
    published: bool,
    /// Whether another lane's slot was read since the last barrier, so no slot may be stored.
    read_across: bool,
    /// What the `if`s around the statement running prove: the lane is at least this.
    at_least: i64,
    /// Reads of other lanes' slots so far.
    steps: u32,
}

/// What a statement does that the tree is made of.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Event {
    Barrier,
    /// Lanes below `stride` combine slot `lane + stride` into slot `lane` of each array.
    Step {
        stride: i64,
        arrays: Vec<(Handle<GlobalVariable>, AccOp)>,
    },
}

/// How control leaves a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flow {
    Next,
    Break,
    Continue,
    Return,
}

/// A function being run: its arguments' values, its locals' and the values of the expressions
/// it has evaluated.
#[derive(Clone)]
struct Frame<'m> {
    f: &'m Function,
    entry: bool,
    args: Vec<Sym>,
    locals: HashMap<Handle<LocalVariable>, Sym>,
    values: HashMap<Handle<Expression>, Sym>,
    /// The scan being run, if any (never while trees are looked for).
    scan: Option<ScanState>,
}

struct Sim<'a, 'm> {
    a: &'a Analysis<'m>,
    constants: &'a [(&'a str, f64)],
    /// Whether the launch has one workgroup along x, so `global_invocation_id.x` is the lane.
    global_is_local: bool,
    /// The workgroup size along x.
    wg: i64,
}

/// More iterations than any tree over a workgroup has.
const MAX_TRIPS: usize = 64;

impl<'a, 'm> Sim<'a, 'm> {
    /// A simulator that only locates statements' text (the renderers' use).
    fn for_text(a: &'a Analysis<'m>) -> Self {
        Sim {
            a,
            constants: &[],
            global_is_local: false,
            wg: 0,
        }
    }
}

impl<'m> Sim<'_, 'm> {
    fn frame(&self, f: &'m Function, entry: bool, args: Vec<Sym>) -> Frame<'m> {
        let mut fr = Frame {
            f,
            entry,
            args,
            locals: HashMap::new(),
            values: HashMap::new(),
            scan: None,
        };
        for (h, v) in f.local_variables.iter() {
            let value = match v.init {
                Some(init) => self.eval(&mut fr, init),
                None if matches!(
                    self.a.module.types[v.ty].inner,
                    TypeInner::Scalar(naga::Scalar {
                        kind: naga::ScalarKind::Uint | naga::ScalarKind::Sint,
                        ..
                    })
                ) =>
                {
                    Sym::Int(0)
                }
                None => Sym::Unknown,
            };
            fr.locals.insert(h, value);
        }
        fr
    }

    /// Evaluates the expressions an `Emit` brings into scope afresh (a loop emits them again on
    /// every trip, with new values).
    fn emit(&self, fr: &mut Frame<'m>, range: &naga::Range<Expression>) {
        for h in range.clone() {
            fr.values.remove(&h);
            self.eval(fr, h);
        }
    }

    fn eval(&self, fr: &mut Frame<'m>, h: Handle<Expression>) -> Sym {
        if let Some(v) = fr.values.get(&h) {
            return *v;
        }
        let module = self.a.module;
        let v = match fr.f.expressions[h] {
            Expression::Literal(naga::Literal::Bool(b)) => Sym::Bool(b),
            Expression::Literal(l) => literal_int(&l).map_or(Sym::Unknown, Sym::Int),
            Expression::Constant(_) | Expression::Override(_) => {
                known_int(module, &fr.f.expressions, h, self.constants)
                    .map_or(Sym::Unknown, |k| Sym::Int(k.value))
            }
            Expression::FunctionArgument(i) if !fr.entry => {
                fr.args.get(i as usize).copied().unwrap_or(Sym::Unknown)
            }
            Expression::FunctionArgument(_) | Expression::AccessIndex { .. } if fr.entry => {
                match self.a.builtin_of(h) {
                    Some(BuiltIn::LocalInvocationIndex) => Sym::Lane(0),
                    Some(BuiltIn::LocalInvocationId) => Sym::LaneVec,
                    Some(BuiltIn::GlobalInvocationId) if self.global_is_local => Sym::LaneVec,
                    Some(BuiltIn::GlobalInvocationId) => Sym::GlobalVec,
                    _ => match fr.f.expressions[h] {
                        Expression::AccessIndex { base, index: 0 } => match self.eval(fr, base) {
                            Sym::LaneVec => Sym::Lane(0),
                            Sym::GlobalVec => Sym::GlobalX,
                            _ => Sym::Unknown,
                        },
                        _ => Sym::Unknown,
                    },
                }
            }
            Expression::AccessIndex { base, index: 0 } => match self.eval(fr, base) {
                Sym::LaneVec => Sym::Lane(0),
                _ => Sym::Unknown,
            },
            Expression::Load { pointer } => match fr.f.expressions[pointer] {
                Expression::LocalVariable(v) => fr.locals.get(&v).copied().unwrap_or(Sym::Unknown),
                Expression::Access { base, index } if fr.scan.is_some() => {
                    self.scan_read(fr, base, index)
                }
                _ => Sym::Unknown,
            },
            Expression::As {
                expr,
                kind: naga::ScalarKind::Uint | naga::ScalarKind::Sint,
                ..
            } => match self.eval(fr, expr) {
                v @ (Sym::Int(_) | Sym::Lane(_)) => v,
                _ => Sym::Unknown,
            },
            Expression::Unary {
                op: naga::UnaryOperator::LogicalNot,
                expr,
            } => match self.eval(fr, expr) {
                Sym::Bool(b) => Sym::Bool(!b),
                _ => Sym::Unknown,
            },
            Expression::Binary { op, left, right } => {
                let l = self.eval(fr, left);
                let r = self.eval(fr, right);
                match (op, l, r) {
                    // Workgroups tile x by the workgroup size.
                    (BinaryOperator::Modulo, Sym::GlobalX, Sym::Int(k)) if k == self.wg => {
                        Sym::Lane(0)
                    }
                    _ => binary(op, l, r),
                }
            }
            _ => Sym::Unknown,
        };
        fr.values.insert(h, v);
        v
    }

    /// Runs `block` strictly: every statement must be one a tree is made of.
    fn run(
        &self,
        fr: &mut Frame<'m>,
        block: &'m Block,
        events: &mut Vec<Event>,
        depth: usize,
    ) -> Result<Flow, String> {
        for stmt in block.iter() {
            let flow = self.run_stmt(fr, stmt, events, depth)?;
            if flow != Flow::Next {
                return Ok(flow);
            }
        }
        Ok(Flow::Next)
    }

    fn run_stmt(
        &self,
        fr: &mut Frame<'m>,
        stmt: &'m Statement,
        events: &mut Vec<Event>,
        depth: usize,
    ) -> Result<Flow, String> {
        match stmt {
            Statement::Emit(range) => self.emit(fr, range),
            Statement::ControlBarrier(b) if b.contains(naga::Barrier::WORK_GROUP) => {
                if let Some(scan) = &mut fr.scan {
                    if scan.at_least > 0 {
                        return Err("a barrier inside an `if` on the lane".into());
                    }
                    scan.published = true;
                    scan.read_across = false;
                }
                events.push(Event::Barrier)
            }
            Statement::Store { pointer, value } => match fr.f.expressions[*pointer] {
                Expression::LocalVariable(v) => {
                    let value = self.eval(fr, *value);
                    fr.locals.insert(v, value);
                }
                Expression::Access { base, index } if fr.scan.is_some() => {
                    self.scan_store(fr, base, index, *value)?
                }
                _ => return Err("a store outside a step".into()),
            },
            Statement::If {
                condition,
                accept,
                reject,
            } => match self.eval(fr, *condition) {
                Sym::Bool(true) => return self.run(fr, accept, events, depth),
                Sym::Bool(false) => return self.run(fr, reject, events, depth),
                Sym::LaneAtLeast(k) if fr.scan.is_some() => {
                    return self.scan_if(fr, k, accept, reject, depth);
                }
                Sym::LaneBelow(stride) if fr.scan.is_none() => {
                    // naga ends a helper's last `if` with a `return` in both branches.
                    let returns =
                        |b: &Block| matches!(b.last(), Some(Statement::Return { value: None }));
                    let flow = if reject.is_empty() {
                        Flow::Next
                    } else if !fr.entry && reject.len() == 1 && returns(reject) && returns(accept) {
                        Flow::Return
                    } else {
                        return Err("an `if (lane < s)` with an `else`".into());
                    };
                    events.push(self.step(fr, accept, stride)?);
                    return Ok(flow);
                }
                _ => return Err("an `if` that is not a step".into()),
            },
            Statement::Block(b) => return self.run(fr, b, events, depth),
            Statement::Loop {
                body,
                continuing,
                break_if,
            } => {
                for _ in 0..MAX_TRIPS {
                    match self.run(fr, body, events, depth)? {
                        Flow::Break => return Ok(Flow::Next),
                        Flow::Return => return Ok(Flow::Return),
                        Flow::Next | Flow::Continue => {}
                    }
                    if self.run(fr, continuing, events, depth)? != Flow::Next {
                        return Err("control leaves a loop's continuing block".into());
                    }
                    if let Some(b) = break_if {
                        match self.eval(fr, *b) {
                            Sym::Bool(true) => return Ok(Flow::Next),
                            Sym::Bool(false) => {}
                            _ => return Err("a loop's exit is not known".into()),
                        }
                    }
                }
                return Err(format!("a loop runs more than {MAX_TRIPS} times"));
            }
            Statement::Break => return Ok(Flow::Break),
            Statement::Continue => return Ok(Flow::Continue),
            Statement::Return { value: None } if !fr.entry => return Ok(Flow::Return),
            Statement::Call {
                function,
                arguments,
                result: None,
            } if depth < 8 => {
                let args = arguments.iter().map(|&h| self.eval(fr, h)).collect();
                let callee = &self.a.module.functions[*function];
                let mut inner = self.frame(callee, false, args);
                match self.run(&mut inner, &callee.body, events, depth + 1)? {
                    Flow::Next | Flow::Return => {}
                    _ => return Err("a helper's control leaves it".into()),
                }
            }
            _ => return Err("a statement a tree does not have".into()),
        }
        Ok(Flow::Next)
    }

    /// The step `accept` makes for lanes below `stride`: `W[lane] = W[lane] ⊕ W[lane + stride]`.
    fn step(&self, fr: &mut Frame<'m>, accept: &'m Block, stride: i64) -> Result<Event, String> {
        let not_a_step =
            || "an `if (lane < s)` whose body is not `W[lane] = W[lane] ⊕ W[lane + s]`".to_string();
        let mut stores = Vec::new();
        for stmt in accept.iter() {
            match stmt {
                Statement::Emit(range) => self.emit(fr, range),
                Statement::Store { pointer, value } => stores.push((*pointer, *value)),
                Statement::Return { value: None } if !fr.entry && !stores.is_empty() => {}
                _ => return Err(not_a_step()),
            }
        }
        if stores.is_empty() {
            return Err(not_a_step());
        }
        let f = fr.f;
        let element =
            |fr: &mut Frame<'m>, p: Handle<Expression>| -> Option<(Handle<GlobalVariable>, Sym)> {
                let Expression::Access { base, index } = f.expressions[p] else {
                    return None;
                };
                let Expression::GlobalVariable(g) = f.expressions[base] else {
                    return None;
                };
                Some((g, self.eval(fr, index)))
            };
        let read = |fr: &mut Frame<'m>, h: Handle<Expression>| match f.expressions[h] {
            Expression::Load { pointer } => element(fr, pointer),
            _ => None,
        };
        let mut arrays: Vec<(Handle<GlobalVariable>, AccOp)> = Vec::new();
        for (pointer, value) in stores {
            let (global, at) = element(fr, pointer).ok_or_else(not_a_step)?;
            if at != Sym::Lane(0)
                || self.a.module.global_variables[global].space != naga::AddressSpace::WorkGroup
                || arrays.iter().any(|(g, _)| *g == global)
            {
                return Err(not_a_step());
            }
            let (op, x, y) = match f.expressions[value] {
                Expression::Binary { op, left, right } => {
                    let op = match op {
                        BinaryOperator::Add => AccOp::Add,
                        BinaryOperator::Multiply => AccOp::Mul,
                        BinaryOperator::And => AccOp::And,
                        BinaryOperator::InclusiveOr => AccOp::Or,
                        BinaryOperator::ExclusiveOr => AccOp::Xor,
                        _ => return Err(not_a_step()),
                    };
                    (op, left, right)
                }
                Expression::Math {
                    fun,
                    arg,
                    arg1: Some(arg1),
                    arg2: None,
                    ..
                } => match fun {
                    MathFunction::Max => (AccOp::Max, arg, arg1),
                    MathFunction::Min => (AccOp::Min, arg, arg1),
                    _ => return Err(not_a_step()),
                },
                _ => return Err(not_a_step()),
            };
            let (gx, ax) = read(fr, x).ok_or_else(not_a_step)?;
            let (gy, ay) = read(fr, y).ok_or_else(not_a_step)?;
            let pair = [ax, ay];
            if gx != global
                || gy != global
                || !(pair == [Sym::Lane(0), Sym::Lane(stride)]
                    || pair == [Sym::Lane(stride), Sym::Lane(0)])
            {
                return Err(not_a_step());
            }
            arrays.push((global, op));
        }
        Ok(Event::Step { stride, arrays })
    }

    /// Every tree among the entry point's top-level statements, with the checks on what follows.
    fn regions(&self, wg: i64) -> Result<Vec<Region>, Skip> {
        self.top_level(
            // A tree starts at a barrier, or at a helper call whose body starts with one.
            |s| {
                matches!(
                    s,
                    Statement::ControlBarrier(_) | Statement::Call { result: None, .. }
                )
            },
            |fr, body, i| {
                let (region, after) = self.region_at(fr, body, i, wg)?;
                self.follows_safely(body, &region)?;
                let last = region.last;
                Ok((region, last, after))
            },
            "no workgroup tree reduction (barrier-separated halving steps `if (lane < s) { W[lane] = W[lane] ⊕ W[lane + s]; }`)",
        )
    }

    /// Every region among the entry point's top-level statements, for either operator: `at` is
    /// tried at each statement `starts` accepts and gives the region, the index of its last
    /// statement and the frame after it; every other statement is stepped over. `none` is the
    /// skip when no region was found and no attempt that started said why ([`NOT_STARTED`]).
    fn top_level<R>(
        &self,
        starts: impl Fn(&Statement) -> bool,
        at: impl Fn(&Frame<'m>, &[&'m Statement], usize) -> Result<(R, usize, Frame<'m>), String>,
        none: &str,
    ) -> Result<Vec<R>, Skip> {
        let f = self.a.function;
        let body: Vec<&'m Statement> = f.body.iter().collect();
        let mut fr = self.frame(f, true, Vec::new());
        let mut out = Vec::new();
        let mut why: Option<String> = None;
        let mut i = 0;
        while i < body.len() {
            if starts(body[i]) {
                match at(&fr, &body, i) {
                    Ok((region, last, after)) => {
                        i = last + 1;
                        fr = after;
                        out.push(region);
                        continue;
                    }
                    Err(e) => {
                        if e != NOT_STARTED {
                            why.get_or_insert(e);
                        }
                    }
                }
            }
            self.pass(&mut fr, body[i]);
            i += 1;
        }
        if out.is_empty() {
            return Err(Skip(why.unwrap_or_else(|| none.into())));
        }
        Ok(out)
    }

    /// Steps over a statement outside any tree: its `let`s are evaluated and the locals it may
    /// change are forgotten.
    fn pass(&self, fr: &mut Frame<'m>, stmt: &'m Statement) {
        let mut events = Vec::new();
        let mut trial = fr.clone();
        if self.run_stmt(&mut trial, stmt, &mut events, 0) == Ok(Flow::Next) && events.is_empty() {
            *fr = trial;
            return;
        }
        let mut stored = Vec::new();
        stores_to_locals(fr.f, stmt, &mut stored);
        for v in stored {
            fr.locals.insert(v, Sym::Unknown);
        }
        if let Statement::Emit(range) = stmt {
            self.emit(fr, range);
        }
    }

    /// The tree starting at top-level statement `i` (a barrier), and the frame after it.
    fn region_at(
        &self,
        fr: &Frame<'m>,
        body: &[&'m Statement],
        i: usize,
        wg: i64,
    ) -> Result<(Region, Frame<'m>), String> {
        let mut run = fr.clone();
        // (statement, events) for the statements that run strictly from `i`.
        let mut ran: Vec<(usize, Vec<Event>, Frame<'m>)> = Vec::new();
        for (j, stmt) in body.iter().enumerate().skip(i) {
            let mut events = Vec::new();
            let mut next = run.clone();
            match self.run_stmt(&mut next, stmt, &mut events, 0) {
                Ok(Flow::Next) => {}
                _ => break,
            }
            run = next.clone();
            ran.push((j, events, next));
        }
        let steps = ran
            .iter()
            .flat_map(|(_, e, _)| e)
            .filter(|e| matches!(e, Event::Step { .. }))
            .count();
        if steps == 0 {
            return Err(NOT_STARTED.into());
        }
        // Walk the events: a barrier before every step, strides halving from wg / 2 to 1.
        let mut expect = wg / 2;
        let mut barrier = false;
        let mut kind: Option<Vec<(Handle<GlobalVariable>, AccOp)>> = None;
        let mut last = None;
        let mut trailing = false;
        'walk: for (k, (_, events, _)) in ran.iter().enumerate() {
            for (n, e) in events.iter().enumerate() {
                match e {
                    Event::Barrier => {
                        barrier = true;
                        if expect == 0 {
                            trailing = true;
                        }
                    }
                    Event::Step { stride, arrays } => {
                        let stride = *stride;
                        if expect == 0 {
                            return Err("a step after the stride-1 step".into());
                        }
                        if !barrier {
                            return Err("two steps without a barrier between them".into());
                        }
                        if stride != expect {
                            return Err(format!(
                                "the steps' strides do not halve from {} (the workgroup size {wg} over two) to 1: {stride} where {expect} was due",
                                wg / 2
                            ));
                        }
                        match &kind {
                            None => kind = Some(arrays.clone()),
                            Some(k) if k == arrays => {}
                            Some(_) => {
                                return Err(
                                    "the steps combine different arrays or operations".into()
                                );
                            }
                        }
                        barrier = false;
                        expect /= 2;
                        if expect == 0 {
                            last = Some(k);
                            trailing = events[n + 1..].contains(&Event::Barrier);
                            if n + 1 < events.len() && !trailing {
                                return Err("more than barriers after the last step".into());
                            }
                            // A barrier right after the tree is part of it.
                            if !trailing
                                && let Some((_, next, _)) = ran.get(k + 1)
                                && next.as_slice() == [Event::Barrier]
                                && matches!(body[ran[k + 1].0], Statement::ControlBarrier(_))
                            {
                                trailing = true;
                                last = Some(k + 1);
                            }
                            break 'walk;
                        }
                    }
                }
            }
        }
        let last = last
            .ok_or_else(|| format!("the steps stop at stride {} before reaching 1", expect * 2))?;
        let mut trees = Vec::new();
        for (global, op) in kind.expect("a step was seen") {
            let element = match self.a.module.types[self.a.module.global_variables[global].ty].inner
            {
                TypeInner::Array { base, .. } => base,
                _ => return Err("the tree's workgroup variable is not an array".into()),
            };
            if !foldable(self.a, element) {
                return Err(format!(
                    "the tree combines `{}`, not a scalar or vector of f32, i32 or u32",
                    self.a.type_name(element)
                ));
            }
            trees.push(Tree {
                global,
                element,
                op,
            });
        }
        let after = ran[last].2.clone();
        let mut finals = Vec::new();
        for (v, value, declared_inside) in self.changed_locals(fr, &after, i, ran[last].0)? {
            match value {
                Sym::Int(k) => finals.push((v, k, declared_inside)),
                _ => return Err("the tree leaves a local with a value it cannot restate".into()),
            }
        }
        Ok((
            Region {
                first: i,
                last: ran[last].0,
                trees,
                trailing_barrier: trailing,
                finals,
            },
            after,
        ))
    }

    /// The locals whose values after top-level statements `first..=last` (`after`) must be
    /// restated by whatever replaces them: those declared before them that they change, and those
    /// declared in them that are used after them; each with its value and whether it is declared
    /// inside, in the order of their handles.
    fn changed_locals(
        &self,
        before: &Frame<'m>,
        after: &Frame<'m>,
        first: usize,
        last: usize,
    ) -> Result<Vec<(Handle<LocalVariable>, Sym, bool)>, String> {
        let (region_start, region_end) = self.text_bounds(first, last)?;
        let ids = top_level_ids(self.a);
        let end_id = ids.get(last + 1).copied().unwrap_or(self.a.stmts.len());
        let mut out = Vec::new();
        for (v, value) in &after.locals {
            let declared_inside = self
                .a
                .local_span(*v)
                .is_some_and(|span| span.start >= region_start && span.end <= region_end);
            let used_after = self
                .a
                .loads_of(*v)
                .iter()
                .any(|&l| self.a.evaluated_at(l).is_some_and(|s| s >= end_id))
                || self.a.stores_to(*v).iter().any(|&s| s >= end_id);
            if declared_inside && !used_after
                || !declared_inside && before.locals.get(v) == Some(value)
            {
                continue;
            }
            out.push((*v, *value, declared_inside));
        }
        out.sort_by_key(|(v, _, _)| v.index());
        Ok(out)
    }

    /// The text the top-level statements `first..=last` span (their `;` included).
    fn text_bounds(&self, first: usize, last: usize) -> Result<(usize, usize), String> {
        let spans: Vec<_> = self
            .a
            .function
            .body
            .span_iter()
            .enumerate()
            .filter(|(k, (s, _))| *k >= first && *k <= last && !matches!(s, Statement::Emit(_)))
            .filter_map(|(_, (_, span))| span.to_range())
            .collect();
        let start = spans.iter().map(|r| r.start).min();
        let end = spans.iter().map(|r| self.a.with_semicolon(r).end).max();
        match (start, end) {
            (Some(s), Some(e)) => Ok((s, e)),
            _ => Err("the tree's statements have no text".into()),
        }
    }

    /// Whether what follows `region` reads only `W[0]` until every lane stores `W[lane]` again,
    /// and uses no value the region computes.
    fn follows_safely(&self, body: &[&'m Statement], region: &Region) -> Result<(), String> {
        region
            .trees
            .iter()
            .try_for_each(|t| self.follows_safely_for(body, region, t.global))
    }

    /// Whether no value computed in top-level statements `first..=last` is used after them.
    fn values_stay_inside(&self, first: usize, last: usize) -> Result<(), String> {
        let a = self.a;
        let f = a.function;
        let ids = top_level_ids(a);
        let start_id = ids[first];
        let end_id = ids.get(last + 1).copied().unwrap_or(a.stmts.len());
        let in_region = |s: Option<usize>| s.is_some_and(|s| s >= start_id && s < end_id);
        let made: HashSet<Handle<Expression>> = f
            .expressions
            .iter()
            .map(|(h, _)| h)
            .filter(|&h| in_region(a.evaluated_at(h)))
            .collect();
        for (h, e) in f.expressions.iter() {
            if a.evaluated_at(h).is_some_and(|s| s >= end_id)
                && operands(e).iter().any(|o| made.contains(o))
            {
                return Err("a value computed in the region is used after it".into());
            }
        }
        for s in end_id..a.stmts.len() {
            let mut uses = false;
            ir::for_each_stmt_operand(a.stmts[s].stmt, &mut |o| uses |= made.contains(&o));
            if uses {
                return Err("a value computed in the region is used after it".into());
            }
        }
        Ok(())
    }

    fn follows_safely_for(
        &self,
        body: &[&'m Statement],
        region: &Region,
        global: Handle<GlobalVariable>,
    ) -> Result<(), String> {
        let a = self.a;
        let f = a.function;
        let name = global_name(a, global);
        let ids = top_level_ids(a);
        let end_id = ids.get(region.last + 1).copied().unwrap_or(a.stmts.len());
        self.values_stay_inside(region.first, region.last)?;
        // Every lane storing its own slot again at the top level ends what the tree left.
        let lane_frame = self.frame(f, true, Vec::new());
        let reset = (region.last + 1..body.len()).find_map(|k| match body[k] {
            Statement::Store { pointer, .. } => match f.expressions[*pointer] {
                Expression::Access { base, index }
                    if matches!(f.expressions[base], Expression::GlobalVariable(g) if g == global)
                        && self.eval(&mut lane_frame.clone(), index) == Sym::Lane(0) =>
                {
                    Some((k, *pointer))
                }
                _ => None,
            },
            _ => None,
        });
        let until = reset.map_or(body.len(), |(k, _)| k);
        // The top-level statements between the tree and the reset are contiguous in `stmts`.
        let lo = end_id;
        let hi = ids.get(until).copied().unwrap_or(a.stmts.len());
        for (h, e) in f.expressions.iter() {
            if !a.evaluated_at(h).is_some_and(|s| s >= lo && s < hi)
                || reset.is_some_and(|(_, p)| p == h)
            {
                continue;
            }
            let at_zero = match *e {
                Expression::Access { base, index } if matches!(f.expressions[base], Expression::GlobalVariable(g) if g == global) => {
                    Some(a.const_int(index) == Some(0))
                }
                Expression::AccessIndex { base, index } if matches!(f.expressions[base], Expression::GlobalVariable(g) if g == global) => {
                    Some(index == 0)
                }
                Expression::Load { pointer } if matches!(f.expressions[pointer], Expression::GlobalVariable(g) if g == global) => {
                    Some(false)
                }
                _ => None,
            };
            if at_zero == Some(false) {
                return Err(format!(
                    "`{name}` is read at an index other than 0 after the tree, whose other slots would hold different values"
                ));
            }
        }
        for s in lo..hi {
            if let Statement::Call { function, .. } = a.stmts[s].stmt
                && function_touches(a.module, *function, global, 0)
            {
                return Err(format!(
                    "a function called after the tree uses `{name}`, whose slots other than 0 would hold different values"
                ));
            }
        }
        Ok(())
    }
}

/// The error of a region that has no step at all (not worth reporting).
const NOT_STARTED: &str = "no step";

fn binary(op: BinaryOperator, l: Sym, r: Sym) -> Sym {
    use BinaryOperator as B;
    match (l, r) {
        (Sym::Int(a), Sym::Int(b)) => {
            let int = |v: Option<i64>| v.filter(|v| *v >= 0).map_or(Sym::Unknown, Sym::Int);
            match op {
                B::Add => int(a.checked_add(b)),
                B::Subtract => int(a.checked_sub(b)),
                B::Multiply => int(a.checked_mul(b)),
                B::Divide => int(a.checked_div(b)),
                B::Modulo => int(a.checked_rem(b)),
                B::ShiftLeft => int(u32::try_from(b).ok().and_then(|b| a.checked_shl(b))),
                B::ShiftRight => int(u32::try_from(b).ok().and_then(|b| a.checked_shr(b))),
                B::And => int(Some(a & b)),
                B::InclusiveOr => int(Some(a | b)),
                B::ExclusiveOr => int(Some(a ^ b)),
                B::Less => Sym::Bool(a < b),
                B::LessEqual => Sym::Bool(a <= b),
                B::Greater => Sym::Bool(a > b),
                B::GreaterEqual => Sym::Bool(a >= b),
                B::Equal => Sym::Bool(a == b),
                B::NotEqual => Sym::Bool(a != b),
                _ => Sym::Unknown,
            }
        }
        (Sym::Bool(a), Sym::Bool(b)) => match op {
            B::LogicalAnd => Sym::Bool(a && b),
            B::LogicalOr => Sym::Bool(a || b),
            B::Equal => Sym::Bool(a == b),
            B::NotEqual => Sym::Bool(a != b),
            _ => Sym::Unknown,
        },
        (Sym::Lane(k), Sym::Int(b)) => match op {
            B::Add => Sym::Lane(k + b),
            // Below the lane itself only where an `if` proves the lane large enough (the scan's
            // reads check that); trees never read there.
            B::Subtract => Sym::Lane(k - b),
            B::Less if k == 0 => Sym::LaneBelow(b),
            B::LessEqual if k == 0 => Sym::LaneBelow(b + 1),
            B::GreaterEqual if k == 0 => Sym::LaneAtLeast(b),
            B::Greater | B::NotEqual if k == 0 && (op == B::Greater || b == 0) => {
                Sym::LaneAtLeast(b + 1)
            }
            _ => Sym::Unknown,
        },
        (Sym::Int(b), Sym::Lane(k)) => match op {
            B::Add => Sym::Lane(k + b),
            B::Greater if k == 0 => Sym::LaneBelow(b),
            B::GreaterEqual if k == 0 => Sym::LaneBelow(b + 1),
            B::LessEqual if k == 0 => Sym::LaneAtLeast(b),
            B::Less | B::NotEqual if k == 0 && (op == B::Less || b == 0) => Sym::LaneAtLeast(b + 1),
            _ => Sym::Unknown,
        },
        // Two adjacent runs of lanes combine into one (the scan's step).
        (Sym::Prefix(a, b), Sym::Prefix(c, d)) if op == B::Add => {
            if d == a + 1 {
                Sym::Prefix(c, b)
            } else if b == c + 1 {
                Sym::Prefix(a, d)
            } else {
                Sym::Unknown
            }
        }
        _ => Sym::Unknown,
    }
}

/// The locals `stmt` may store to (through a store, an atomic or a pointer passed to a call),
/// nested statements included.
fn stores_to_locals(f: &Function, stmt: &Statement, out: &mut Vec<Handle<LocalVariable>>) {
    let mut visit = |s: &Statement| {
        let pointers: Vec<Handle<Expression>> = match s {
            Statement::Store { pointer, .. } | Statement::Atomic { pointer, .. } => vec![*pointer],
            Statement::Call { arguments, .. } => arguments.clone(),
            _ => Vec::new(),
        };
        for p in pointers {
            if let Expression::LocalVariable(v) = f.expressions[p] {
                out.push(v);
            }
        }
    };
    let mut block = Block::new();
    block.push(stmt.clone(), naga::Span::default());
    crate::analysis::loops::walk(&block, &mut |s, _| visit(s));
}

/// The analysis's statement id of each top-level statement of the entry point.
fn top_level_ids(a: &Analysis<'_>) -> Vec<usize> {
    let mut ids: Vec<(usize, usize)> = a
        .stmts
        .iter()
        .enumerate()
        .filter(|(_, s)| s.parent.is_none())
        .map(|(id, s)| (s.index_in_block, id))
        .collect();
    ids.sort_unstable();
    ids.into_iter().map(|(_, id)| id).collect()
}

/// Whether function `h` (or one it calls) names global `g`.
fn function_touches(
    module: &naga::Module,
    h: Handle<Function>,
    g: Handle<GlobalVariable>,
    depth: usize,
) -> bool {
    let f = &module.functions[h];
    if f.expressions
        .iter()
        .any(|(_, e)| matches!(e, Expression::GlobalVariable(x) if *x == g))
    {
        return true;
    }
    if depth > 8 {
        return true;
    }
    let mut calls = Vec::new();
    crate::analysis::loops::walk(&f.body, &mut |s, _| {
        if let Statement::Call { function, .. } = s {
            calls.push(*function);
        }
    });
    calls
        .into_iter()
        .any(|c| function_touches(module, c, g, depth + 1))
}

fn global_name(a: &Analysis<'_>, g: Handle<GlobalVariable>) -> String {
    a.module.global_variables[g]
        .name
        .clone()
        .unwrap_or_default()
}

/// Whether subgroup operations take `ty`: a scalar or vector of f32, i32 or u32.
fn foldable(a: &Analysis<'_>, ty: Handle<naga::Type>) -> bool {
    let scalar = match a.module.types[ty].inner {
        TypeInner::Scalar(s) | TypeInner::Vector { scalar: s, .. } => s,
        _ => return false,
    };
    scalar.width == 4
        && matches!(
            scalar.kind,
            naga::ScalarKind::Float | naga::ScalarKind::Sint | naga::ScalarKind::Uint
        )
}

fn is_float(a: &Analysis<'_>, ty: Handle<naga::Type>) -> bool {
    matches!(
        a.module.types[ty].inner,
        TypeInner::Scalar(naga::Scalar {
            kind: naga::ScalarKind::Float,
            ..
        }) | TypeInner::Vector {
            scalar: naga::Scalar {
                kind: naga::ScalarKind::Float,
                ..
            },
            ..
        }
    )
}

/// The builtin's name in the entry point, or a new parameter for it.
fn builtin_text(
    a: &Analysis<'_>,
    b: BuiltIn,
    wgsl: &str,
    fresh: &str,
    params: &mut String,
) -> String {
    if let Some(arg) = a.builtin(b) {
        return arg.name.clone();
    }
    params.push_str(&format!(", @builtin({wgsl}) {fresh}: u32"));
    fresh.to_owned()
}

/// The entry point's parameters with the builtins a subgroup rewrite reads (the lane, its
/// subgroup and its place in it, and with `count` the number of subgroups), each the entry
/// point's own parameter where it has one, else a new one named with `prefix`.
struct Lanes {
    params_range: ir::TextRange,
    params: String,
    lane: String,
    sg: String,
    sg_lane: String,
    n_sg: String,
}

fn lanes(a: &Analysis<'_>, prefix: &str, count: bool) -> Result<Lanes, Skip> {
    let sig = a
        .entry_signature()
        .ok_or_else(|| Skip("cannot find the entry point's text".into()))?;
    let old = a.text(&sig.params).trim_end();
    let mut params = old.strip_suffix(',').unwrap_or(old).to_owned();
    let lane = match (
        a.builtin(BuiltIn::LocalInvocationIndex),
        a.builtin(BuiltIn::LocalInvocationId),
    ) {
        (Some(arg), _) => arg.name.clone(),
        (None, Some(arg)) => format!("{}.x", arg.name),
        (None, None) => {
            params.push_str(&format!(
                ", @builtin(local_invocation_index) {prefix}_lane: u32"
            ));
            format!("{prefix}_lane")
        }
    };
    let sg = builtin_text(
        a,
        BuiltIn::SubgroupId,
        "subgroup_id",
        &format!("{prefix}_sg"),
        &mut params,
    );
    let sg_lane = builtin_text(
        a,
        BuiltIn::SubgroupInvocationId,
        "subgroup_invocation_id",
        &format!("{prefix}_sg_lane"),
        &mut params,
    );
    let n_sg = if count {
        builtin_text(
            a,
            BuiltIn::NumSubgroups,
            "num_subgroups",
            &format!("{prefix}_n_sg"),
            &mut params,
        )
    } else {
        String::new()
    };
    Ok(Lanes {
        params_range: sig.params.clone(),
        params,
        lane,
        sg,
        sg_lane,
        n_sg,
    })
}

fn render(a: &Analysis<'_>, regions: &[Region], slots: u64) -> Result<String, Skip> {
    let Lanes {
        params_range,
        params,
        lane,
        sg,
        sg_lane,
        n_sg,
    } = lanes(a, "kf_tree", true)?;
    let sim = Sim::for_text(a);
    let mut edits = vec![Edit::replace(params_range, params)];
    let mut helpers: Vec<(AccOp, String)> = Vec::new();
    let mut memories: Vec<String> = Vec::new();
    for r in regions {
        let (start, end) = sim.text_bounds(r.first, r.last).map_err(Skip)?;
        let indent = a.indent_at(start);
        let mut text = format!(
            "// KernelFoundry: the tree folded in subgroups; only slot 0 holds what it left.\n{indent}workgroupBarrier();\n{indent}{{"
        );
        let mut stores = String::new();
        for (n, t) in r.trees.iter().enumerate() {
            let ty = a.type_name(t.element);
            let tid = type_ident(&ty);
            let name = global_name(a, t.global);
            if n > 0 {
                // The folds share their subgroups' slots: every lane has read them first.
                text.push_str(&format!("\n{indent}    workgroupBarrier();"));
            }
            text.push_str(&format!(
                "\n{indent}    let kf_tree_{n} = kf_tree_{}_{tid}({name}[{lane}], {sg}, {sg_lane}, {n_sg});",
                op_name(t.op)
            ));
            stores.push_str(&format!("\n{indent}        {name}[0] = kf_tree_{n};"));
            if !helpers.contains(&(t.op, ty.clone())) {
                helpers.push((t.op, ty.clone()));
            }
            if !memories.contains(&ty) {
                memories.push(ty);
            }
        }
        text.push_str(&format!(
            "\n{indent}    if ({lane} == 0u) {{{stores}\n{indent}    }}\n{indent}}}"
        ));
        if r.trailing_barrier {
            text.push_str(&format!("\n{indent}workgroupBarrier();"));
        }
        for (v, value, declare) in &r.finals {
            let literal = int_literal(a, *v, *value);
            text.push_str(&restate_local(a, *v, &literal, *declare, indent)?);
        }
        edits.push(Edit::replace(start..end, text));
    }
    let mut text = ir::apply_edits(a.source, &edits)
        .ok_or_else(|| Skip("the rewrite's edits overlap".into()))?;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    for ty in &memories {
        text.push_str(&format!(
            "\n// KernelFoundry: one slot per subgroup for the folded trees ({slots}: the most invocations over the smallest subgroup).\nvar<workgroup> kf_tree_mem_{}: array<{ty}, {slots}>;\n",
            type_ident(ty)
        ));
    }
    for (op, ty) in &helpers {
        let tid = type_ident(ty);
        text.push_str(&format!(
            "\n// KernelFoundry: the workgroup's fold of `value`, on every lane: each subgroup's, then the subgroups' in order.\nfn kf_tree_{}_{tid}(value: {ty}, sg: u32, sg_lane: u32, n_sg: u32) -> {ty} {{\n    let partial = {}(value);\n    if (sg_lane == 0u) {{\n        kf_tree_mem_{tid}[sg] = partial;\n    }}\n    workgroupBarrier();\n    var total = kf_tree_mem_{tid}[0];\n    for (var i = 1u; i < n_sg; i++) {{\n        total = {};\n    }}\n    return total;\n}}\n",
            op_name(*op),
            subgroup_fn(*op),
            combine_expr(*op, "total", &format!("kf_tree_mem_{tid}[i]"))
        ));
    }
    Ok(text)
}

/// `value` written as a literal of local `v`'s integer type.
fn int_literal(a: &Analysis<'_>, v: Handle<LocalVariable>, value: i64) -> String {
    let suffix = match a.module.types[a.function.local_variables[v].ty].inner {
        TypeInner::Scalar(naga::Scalar {
            kind: naga::ScalarKind::Sint,
            ..
        }) => "i",
        _ => "u",
    };
    format!("{value}{suffix}")
}

/// The statement that gives local `v` the value `value` after a replaced region: declared again
/// where it was declared inside the region, assigned otherwise.
fn restate_local(
    a: &Analysis<'_>,
    v: Handle<LocalVariable>,
    value: &str,
    declare: bool,
    indent: &str,
) -> Result<String, Skip> {
    let local = &a.function.local_variables[v];
    let name = local
        .name
        .as_deref()
        .ok_or_else(|| Skip("a local the region changes has no name".into()))?;
    Ok(if declare {
        let ty = a.type_name(local.ty);
        format!("\n{indent}var {name}: {ty} = {value};")
    } else {
        format!("\n{indent}{name} = {value};")
    })
}

mod scan;
pub use scan::SubgroupScan;

#[cfg(test)]
mod tests;

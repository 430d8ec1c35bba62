//! A reduction one workgroup runs over a whole array, spread over the GPU (`grid-reduce`).
//!
//! The textbook WebGPU reduction of a whole array into one value launches a single workgroup:
//! each lane folds every `WG`-th element into its partial (`for (var i = lane; i < n; i += WG)
//! { acc = max(acc, x[i]); }`), the lanes combine their partials in workgroup memory or through
//! subgroups, and one lane stores the result. On a GPU of a hundred compute units that leaves all
//! but one idle: wgebra's `reduce` over a million `f32`s takes 0.86 ms on an H100, where reading
//! the 4 MB takes a few microseconds.
//!
//! The rewrite is a launch sequence over a workspace of `KFG_PARTS` partials per accumulator:
//! - `kfg_partial`, `KFG_PARTS` workgroups of 256 lanes, runs the user's loop over the whole
//!   grid (`for (var i = wg * 256 + lane; i < n; i += 256 * KFG_PARTS)`, each update re-emitted
//!   from the IR with the counter renamed), folds its lanes' partials by the accumulator's own
//!   operator in workgroup memory and stores the workgroup's partial;
//! - then the user's entry point, launched as before, with only its loop replaced: each lane now
//!   folds every `WG`-th partial from the workspace (`acc = max(acc, kfg_part[j])`) instead of
//!   every `WG`-th element, so everything after the loop (the workgroup's combining steps, the
//!   epilogue, the store) is the user's own code.
//!
//! Proven from the IR on the canonical form (where `W[lane] = W[lane] + x[i]` in a loop without
//! barriers is already a register): the launch is one workgroup, one-dimensional; a top-level
//! counted loop starts at the lane (the local or, in one workgroup, global invocation id, or the
//! local index), steps by the workgroup size and runs to a dispatch-uniform bound; it updates only
//! accumulators (`acc = acc ⊕ f(i)`, `⊕` one of `+`, `max`, `min`, on `f32`, `i32` or `u32`
//! scalars), each update a statement of the loop body itself, reads no invocation id, variable
//! or workgroup memory besides its counter and accumulators, and no buffer the entry point
//! writes; a sum starts from zero (a `max` or `min` from any dispatch-uniform value: folding the
//! start in once per partial changes nothing); and after the loop each accumulator is only
//! stored to workgroup memory at the lane's own element or folded across the subgroup by its own
//! operator (`subgroupAdd(acc)`). That the steps after the loop fold the
//! lanes' values by `⊕` is what the user's kernel claims; verification checks it on every shape.
//!
//! A `max` or `min` gives the same bits; an `f32` sum is reassociated and the step says so.

use super::reduce::{combine_expr, op_name};
use super::{Moves, Operator, Rewrite, Skip, Subject};
use crate::analysis::ir::{self, AccOp, Analysis, Edit, InitialValue, Var};
use crate::analysis::print::{Leaf, Leaves, Wgsl};
use crate::evolve::descriptor::Dim;
use kf_runtime::expr::{Op, SizeExpr};
use kf_runtime::{Dispatch, DispatchMode, Program, Stage, Workspace};
use naga::{
    AddressSpace, BuiltIn, CollectiveOperation, Expression, Handle, LocalVariable, ScalarKind,
    Statement, SubgroupOperation, TypeInner,
};
use std::borrow::Cow;

/// The operator.
#[derive(Clone, Copy, Debug, Default)]
pub struct GridReduce;

/// The override that counts the partial launch's workgroups.
pub const PARTS: &str = "KFG_PARTS";
/// The user's entry point, renamed: the second launch. The first launch, the partial, takes the
/// user's entry point's name (a variant's first launch is the kernel's entry point).
const COMBINE: &str = "kfg_combine";
/// Lanes of a partial workgroup.
const LANES: u32 = 256;

impl Operator for GridReduce {
    fn name(&self) -> &'static str {
        "grid-reduce"
    }

    fn moves(&self) -> Moves {
        &[(Dim::Parallelism, 1)]
    }

    fn apply(&self, subject: &Subject<'_>) -> Result<Vec<Rewrite>, Skip> {
        let program = subject.program;
        if program.is_sequence() {
            return Err(Skip("already a launch sequence".into()));
        }
        let wg = program.workgroup_size;
        if wg[1] != 1 || wg[2] != 1 {
            return Err(Skip(format!(
                "the workgroup is {}×{}×{}; the lanes of a whole-array reduction are one dimension",
                wg[0], wg[1], wg[2]
            )));
        }
        if !one_workgroup(program) {
            return Err(Skip(format!(
                "the launch ({}) is not one workgroup",
                program.launch_rule()
            )));
        }
        if u64::from(LANES)
            > subject
                .target
                .limit("max_compute_invocations_per_workgroup", 256)
        {
            return Err(Skip(format!(
                "the adapter runs fewer than {LANES} invocations per workgroup"
            )));
        }
        let group = super::workspace_group(subject)?;
        let parsed = ir::parse(&program.wgsl).map_err(|e| Skip(e.to_string()))?;
        let a = parsed
            .analyse(&program.entry)
            .map_err(|e| Skip(e.to_string()))?;
        let plan = Plan::find(&a, program)?;
        let text = plan.render(&a, group)?;
        let parts = default_parts(subject);
        let mut constants: Vec<(Cow<'static, str>, f64)> = program.constants.to_vec();
        constants.push((Cow::Borrowed(PARTS), f64::from(parts)));
        let name = |n: &str| SizeExpr::from_ops(vec![Op::Size(Cow::Owned(n.to_owned()))]);
        let one = || SizeExpr::from_ops(vec![Op::Lit(1)]);
        let mut words = vec![Op::Size(Cow::Borrowed(PARTS))];
        if plan.accs.len() > 1 {
            words.extend([Op::Lit(plan.accs.len() as u64), Op::Mul]);
        }
        let rewritten = Program {
            wgsl: Cow::Owned(text),
            entry: program.entry.clone(),
            constants: Cow::Owned(constants),
            workgroup_size: [LANES, 1, 1],
            workgroup_storage_bytes: 4 * LANES,
            dispatch: Dispatch {
                mode: DispatchMode::Workgroups,
                size: [name(PARTS), one(), one()],
            },
            workspace: vec![Workspace {
                group,
                binding: 0,
                words: SizeExpr::from_ops(words),
            }]
            .into(),
            then: vec![Stage {
                entry: Cow::Borrowed(COMBINE),
                workgroup_size: program.workgroup_size,
                workgroup_storage_bytes: program.workgroup_storage_bytes,
                dispatch: program.dispatch.clone(),
            }]
            .into(),
        };
        let ops: Vec<&str> = plan.accs.iter().map(|x| op_name(x.op)).collect();
        let float_sum = plan
            .accs
            .iter()
            .any(|x| x.op == AccOp::Add && x.kind == ScalarKind::Float);
        let max_parts = subject
            .target
            .limit("max_compute_workgroups_per_dimension", 65535);
        Ok(vec![Rewrite {
            program: rewritten,
            step: format!(
                "grid-reduce({}{})",
                ops.join(", "),
                if float_sum {
                    "; float sums reassociated"
                } else {
                    ""
                }
            ),
            params: vec![(
                PARTS.to_owned(),
                [64u32, 128, 256, 512, 1024, 2048]
                    .into_iter()
                    .filter(|&p| u64::from(p) <= max_parts)
                    .map(f64::from)
                    .collect(),
            )],
        }])
    }
}

/// Whether `program` launches exactly one workgroup.
fn one_workgroup(program: &Program) -> bool {
    (0..3).all(|d| {
        let size = program.dispatch.size[d].as_constant();
        match program.dispatch.mode {
            DispatchMode::Workgroups => size == Some(1),
            DispatchMode::Grid => {
                size.is_some_and(|s| s >= 1 && s <= u64::from(program.workgroup_size[d]))
            }
        }
    })
}

/// Partials by default: enough workgroups to fill a large GPU, fewer where the adapter allows
/// fewer.
fn default_parts(subject: &Subject<'_>) -> u32 {
    let max = subject
        .target
        .limit("max_compute_workgroups_per_dimension", 65535);
    if max >= 512 { 512 } else { 64 }
}

/// One accumulator of the loop.
#[derive(Clone, Debug)]
struct Acc {
    var: Handle<LocalVariable>,
    name: String,
    op: AccOp,
    kind: ScalarKind,
    ty: String,
    /// Its value before the loop (`None`: the type's zero).
    init: Option<Handle<Expression>>,
    /// The update statements, in order.
    updates: Vec<usize>,
}

/// The proven pattern.
struct Plan<'p> {
    program: &'p Program,
    /// The loop (index into `Analysis::loops`).
    id: usize,
    counter: Handle<LocalVariable>,
    counter_ty: String,
    bound: Handle<Expression>,
    cmp: ir::Cmp,
    accs: Vec<Acc>,
}

impl<'p> Plan<'p> {
    fn find(a: &Analysis<'_>, program: &'p Program) -> Result<Plan<'p>, Skip> {
        let wg = i64::from(program.workgroup_size[0]);
        let mut why = Vec::new();
        for (id, l) in a.loops.iter().enumerate() {
            if l.depth != 0 {
                continue;
            }
            match Self::at(a, program, id, wg) {
                Ok(plan) => return Ok(plan),
                Err(e) => why.push(format!("loop {}: {}", id + 1, e.0)),
            }
        }
        if why.is_empty() {
            return Err(Skip("the entry point has no loop".into()));
        }
        Err(Skip(why.join("; ")))
    }

    fn at(a: &Analysis<'_>, program: &'p Program, id: usize, wg: i64) -> Result<Plan<'p>, Skip> {
        let no = |s: &str| Err(Skip(s.to_owned()));
        let l = &a.loops[id];
        let Some(fl) = &l.for_loop else {
            return no("not a counted loop");
        };
        if fl.decreasing || a.const_int_with(fl.step, &program.constants) != Some(wg) {
            return no("it does not step up by the workgroup size");
        }
        let start = fl.init.ok_or_else(|| Skip("it starts at zero".into()))?;
        if !is_lane(a, start) {
            return no("it does not start at the lane");
        }
        if !fl.declared_in_header || fl.init_value_span.is_none() {
            return no("its counter is declared outside its header");
        }
        let [bound] = fl.bounds.as_slice() else {
            return no("its test is not one bound");
        };
        if bound.offset.is_some()
            || !matches!(bound.cmp, ir::Cmp::Lt | ir::Cmp::Le)
            || !a.is_dispatch_uniform(bound.bound)
        {
            return no("its bound is not `i < n` with `n` the same for every invocation");
        }
        let fx = a.loop_effects(id);
        if !fx.args.is_empty()
            || !fx.carried.is_empty()
            || !fx.global_writes.is_empty()
            || !fx.effectful_calls.is_empty()
            || !fx.other.is_empty()
            || !fx.private.is_empty()
        {
            return no("it does more than update accumulators");
        }
        if fx.accumulators.is_empty() {
            return no("it updates no accumulator");
        }
        for &r in &fx.global_reads {
            let g = a.accesses[r].global;
            if a.writes_global(g) {
                return Err(Skip(format!(
                    "it reads `{}`, which the entry point writes",
                    a.accesses[r].name
                )));
            }
        }
        let mut accs = Vec::new();
        for acc in &fx.accumulators {
            let TypeInner::Scalar(s) = a.module.types[acc.ty].inner else {
                return Err(Skip(format!("`{}` is not a scalar", acc.name)));
            };
            if s.width != 4 || !matches!(acc.op, AccOp::Add | AccOp::Max | AccOp::Min) {
                return Err(Skip(format!(
                    "`{}` is not a 32-bit sum, maximum or minimum",
                    acc.name
                )));
            }
            for &u in &acc.updates {
                if !in_body(a, u, l.stmt) {
                    return Err(Skip(format!("`{}` is updated under a test", acc.name)));
                }
            }
            let init = match a.value_before(l.stmt, acc.var) {
                Some(InitialValue::Zero) => None,
                Some(InitialValue::Expr(h)) if acc.op == AccOp::Add && a.is_zero_value(h) => None,
                Some(InitialValue::Expr(h)) if acc.op.idempotent() && a.is_dispatch_uniform(h) => {
                    Some(h)
                }
                _ => {
                    return Err(Skip(format!(
                        "`{}` does not start from {}",
                        acc.name,
                        if acc.op == AccOp::Add {
                            "zero"
                        } else {
                            "one value for every invocation"
                        }
                    )));
                }
            };
            accs.push(Acc {
                var: acc.var,
                name: acc.name.clone(),
                op: acc.op,
                kind: s.kind,
                ty: a.type_name(acc.ty),
                init,
                updates: acc.updates.clone(),
            });
        }
        for acc in &accs {
            lane_stores_only(a, id, acc)?;
        }
        Ok(Plan {
            program,
            id,
            counter: fl.var,
            counter_ty: a.type_name(fl.var_ty),
            bound: bound.bound,
            cmp: bound.cmp,
            accs,
        })
    }

    /// The program's text with the partial launch added and the loop reading the partials.
    fn render(&self, a: &Analysis<'_>, group: u32) -> Result<String, Skip> {
        let l = &a.loops[self.id];
        let fl = l.for_loop.as_ref().expect("a counted loop");
        let span = l
            .span
            .clone()
            .ok_or_else(|| Skip("the loop has no span".into()))?;
        let start = a.text(fl.init_value_span.as_ref().expect("checked"));
        let wg = self.program.workgroup_size[0];
        // The user's own step (a literal, a constant, or the override that sets the workgroup
        // size, which the parameter search may move): the lanes keep dealing the partials out
        // among themselves whatever the size.
        let step = self.printer(a).print(fl.step)?;
        let indent = a.indent_at(span.start);
        let n = self.accs.len();
        let slot = |i: usize, j: &str| {
            if n == 1 {
                format!("kfg_part[{j}]")
            } else {
                format!("kfg_part[{i}u * {PARTS} + {j}]")
            }
        };
        let mut combine = format!(
            "// KernelFoundry: each lane folds every {wg}th partial of the grid's workgroups\n\
             {indent}for (var kfg_j: u32 = u32({start}); kfg_j < {PARTS}; kfg_j = kfg_j + u32({step})) {{\n"
        );
        for (i, acc) in self.accs.iter().enumerate() {
            combine.push_str(&format!(
                "{indent}    {} = {};\n",
                acc.name,
                combine_expr(acc.op, &acc.name, &slot(i, "kfg_j"))
            ));
        }
        combine.push_str(&format!("{indent}}}"));
        let name = entry_name(a, &self.program.entry)?;
        let mut text = ir::apply_edits(
            a.source,
            &[
                Edit::replace(span, combine),
                Edit::replace(name, COMBINE.to_owned()),
            ],
        )
        .ok_or_else(|| Skip("the loop's edit does not apply".into()))?;
        text.push_str(&self.partial(a, group)?);
        Ok(text)
    }

    /// A printer of the loop's expressions for another function (see [`Body`]).
    fn printer<'s, 'a>(&'s self, a: &'s Analysis<'a>) -> Wgsl<'s, Body<'s, 'a>> {
        Wgsl {
            module: a.module,
            func: a.function,
            info: a.info,
            leaves: Body {
                a,
                counter: self.counter,
                accs: &self.accs,
            },
            max_depth: 64,
        }
    }

    /// The partial launch's declarations and entry point.
    fn partial(&self, a: &Analysis<'_>, group: u32) -> Result<String, Skip> {
        let w = self.printer(a);
        let elem = &self.accs[0].ty;
        if self.accs.iter().any(|x| &x.ty != elem) {
            return Err(Skip("the accumulators have different types".into()));
        }
        let ct = &self.counter_ty;
        let bound = w.print(self.bound)?;
        let mut o = format!(
            "\n// KernelFoundry grid-reduce: the loop of `{entry}` over the whole grid, one partial per workgroup and accumulator.\n\
             override {PARTS}: u32 = 512u;\n\
             @group({group}) @binding(0) var<storage, read_write> kfg_part: array<{elem}>;\n\
             var<workgroup> kfg_red: array<{elem}, {LANES}>;\n\n\
             @compute @workgroup_size({LANES})\n\
             fn {entry}(@builtin(local_invocation_id) kfg_lid: vec3<u32>, @builtin(workgroup_id) kfg_wid: vec3<u32>) {{\n",
            entry = self.program.entry
        );
        for acc in &self.accs {
            let init = match acc.init {
                Some(h) => w.print(h)?,
                None => format!("{}()", acc.ty),
            };
            o.push_str(&format!("    var {}: {} = {init};\n", local(acc), acc.ty));
        }
        o.push_str(&format!(
            "    for (var kfg_i: {ct} = {ct}(kfg_wid.x * {LANES}u + kfg_lid.x); kfg_i {} {bound}; kfg_i = kfg_i + {ct}({LANES}u * {PARTS})) {{\n",
            self.cmp.wgsl()
        ));
        // The updates in the loop body's order.
        let mut updates: Vec<(usize, &Acc)> = self
            .accs
            .iter()
            .flat_map(|x| x.updates.iter().map(move |&u| (u, x)))
            .collect();
        updates.sort_by_key(|(u, _)| *u);
        for (u, acc) in updates {
            let Statement::Store { value, .. } = *a.stmts[u].stmt else {
                return Err(Skip("an update is not a store".into()));
            };
            o.push_str(&format!("        {} = {};\n", local(acc), w.print(value)?));
        }
        o.push_str("    }\n");
        for (i, acc) in self.accs.iter().enumerate() {
            let r = "kfg_red[kfg_lid.x]";
            o.push_str(&format!(
                "    {r} = {};\n    workgroupBarrier();\n\
                 \x20   for (var kfg_s = {}u; kfg_s > 0u; kfg_s = kfg_s / 2u) {{\n\
                 \x20       if (kfg_lid.x < kfg_s) {{\n\
                 \x20           {r} = {};\n\
                 \x20       }}\n\
                 \x20       workgroupBarrier();\n\
                 \x20   }}\n\
                 \x20   if (kfg_lid.x == 0u) {{\n\
                 \x20       kfg_part[{}] = kfg_red[0];\n\
                 \x20   }}\n\
                 \x20   workgroupBarrier();\n",
                local(acc),
                LANES / 2,
                combine_expr(acc.op, r, "kfg_red[kfg_lid.x + kfg_s]"),
                if self.accs.len() == 1 {
                    "kfg_wid.x".to_owned()
                } else {
                    format!("{i}u * {PARTS} + kfg_wid.x")
                }
            ));
        }
        o.push_str("}\n");
        Ok(o)
    }
}

/// Where the entry point's name is written in its declaration (`fn main(`).
fn entry_name(a: &Analysis<'_>, entry: &str) -> Result<std::ops::Range<usize>, Skip> {
    let range = a.entry_range()?;
    let code = a.code();
    let text = &code[range.clone()];
    let mut from = 0;
    while let Some(p) = text[from..].find("fn") {
        let at = from + p;
        let rest = &text[at + 2..];
        let name_at = rest.len() - rest.trim_start().len();
        if name_at > 0 && rest[name_at..].starts_with(entry) {
            let after = rest[name_at + entry.len()..].trim_start();
            if after.starts_with('(') {
                let start = range.start + at + 2 + name_at;
                return Ok(start..start + entry.len());
            }
        }
        from = at + 2;
    }
    Err(Skip(
        "the entry point's name is not found in its declaration".into(),
    ))
}

/// Whether statement `s` is one of the loop statement `looped`'s body, in no `if` or inner loop
/// (`{ .. }` blocks, such as the one naga wraps a `for` body in, aside).
fn in_body(a: &Analysis<'_>, s: usize, looped: usize) -> bool {
    let mut at = s;
    loop {
        match (a.stmts[at].parent, a.stmts[at].part) {
            (Some(p), ir::Part::Block) => at = p,
            (Some(p), ir::Part::LoopBody) => return p == looped,
            _ => return false,
        }
    }
}

/// The partial launch's register for `acc`.
fn local(acc: &Acc) -> String {
    format!("kfg_{}", acc.name)
}

/// Refuses unless every read of `acc` outside loop `id` is stored, whole, into workgroup memory
/// at the lane's own element, or folded across the subgroup by its own operator
/// (`subgroupAdd(acc)` for a sum): what the combining steps after the loop start from.
fn lane_stores_only(a: &Analysis<'_>, id: usize, acc: &Acc) -> Result<(), Skip> {
    let loop_stmt = a.loops[id].stmt;
    let outside: Vec<Handle<Expression>> = a
        .loads_of(acc.var)
        .iter()
        .copied()
        .filter(|&l| !a.expr_in_loop(l, id))
        .collect();
    for &s in a.stores_to(acc.var) {
        if !a.in_loop(s, id) && s > loop_stmt {
            return Err(Skip(format!("`{}` is written after the loop", acc.name)));
        }
    }
    let same_op = |op: SubgroupOperation| {
        matches!(
            (op, acc.op),
            (SubgroupOperation::Add, AccOp::Add)
                | (SubgroupOperation::Max, AccOp::Max)
                | (SubgroupOperation::Min, AccOp::Min)
        )
    };
    for l in outside {
        let folded = a.stmts.iter().enumerate().any(|(s, st)| {
            s > loop_stmt
                && match *st.stmt {
                    Statement::Store { pointer, value } => {
                        value == l
                            && a.root_global(pointer).is_some_and(|g| {
                                a.module.global_variables[g].space == AddressSpace::WorkGroup
                            })
                            && lane_element(a, pointer)
                    }
                    Statement::SubgroupCollectiveOperation {
                        op,
                        collective_op: CollectiveOperation::Reduce,
                        argument,
                        ..
                    } => argument == l && same_op(op),
                    _ => false,
                }
        });
        if !folded {
            return Err(Skip(format!(
                "`{}` is read after the loop other than stored at the lane's element of workgroup memory or folded by its own operator across a subgroup",
                acc.name
            )));
        }
    }
    Ok(())
}

/// Whether `pointer` is `W[lane]`: a global array at the lane.
fn lane_element(a: &Analysis<'_>, pointer: Handle<Expression>) -> bool {
    let Expression::Access { base, index } = a.function.expressions[pointer] else {
        return false;
    };
    matches!(a.function.expressions[base], Expression::GlobalVariable(_)) && is_lane(a, index)
}

/// Whether `h` is the lane of the one workgroup: the local invocation id's (or, in one
/// workgroup, the global id's) `x`, or the local invocation index.
fn is_lane(a: &Analysis<'_>, h: Handle<Expression>) -> bool {
    a.index_form(h).is_some_and(|f| {
        f.offset.is_zero()
            && f.terms.len() == 1
            && f.terms[0].1.as_constant() == Some(1)
            && matches!(
                f.terms[0].0,
                Var::Builtin(BuiltIn::LocalInvocationId | BuiltIn::GlobalInvocationId, 0)
                    | Var::Builtin(BuiltIn::LocalInvocationIndex, _)
            )
    })
}

/// The leaves of the partial launch's loop: the counter and the accumulators renamed, values of
/// `let`s inlined, everything an invocation has of its own refused.
struct Body<'s, 'a> {
    a: &'s Analysis<'a>,
    counter: Handle<LocalVariable>,
    accs: &'s [Acc],
}

impl Leaves for Body<'_, '_> {
    fn leaf(&self, w: &Wgsl<'_, Self>, h: Handle<Expression>, depth: u32) -> Leaf {
        let a = self.a;
        let f = a.function;
        let refuse = |why: &str| Some(Err(Skip(why.to_owned())));
        match f.expressions[h] {
            Expression::Load { pointer } => match f.expressions[pointer] {
                Expression::LocalVariable(v) if v == self.counter => Some(Ok("kfg_i".into())),
                Expression::LocalVariable(v) => {
                    if let Some(acc) = self.accs.iter().find(|x| x.var == v) {
                        return Some(Ok(local(acc)));
                    }
                    match a.single_value(v) {
                        Some(value) => Some(w.at(value, depth + 1)),
                        None => refuse("the loop reads a variable"),
                    }
                }
                _ => match a.root_global(pointer) {
                    Some(g) if a.module.global_variables[g].space == AddressSpace::WorkGroup => {
                        refuse("the loop reads workgroup memory")
                    }
                    _ => None,
                },
            },
            Expression::FunctionArgument(_) => refuse("the loop reads an invocation id"),
            Expression::LocalVariable(_) => refuse("the loop takes a variable's pointer"),
            Expression::CallResult(_)
            | Expression::AtomicResult { .. }
            | Expression::SubgroupBallotResult
            | Expression::SubgroupOperationResult { .. }
            | Expression::WorkGroupUniformLoadResult { .. } => {
                refuse("the loop reads a call's or a collective's result")
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests;

//! What a kernel does, read from naga's IR: the facts the descriptor levels are decided from.
//!
//! One walk over the entry point (calls are followed into their callees, once per call site)
//! records, in program order:
//!
//! - every access to `storage` memory, with its element index as a polynomial over the
//!   invocation's coordinates and the iteration counters of the enclosing loops ([`Poly`]), so
//!   that "adjacent invocations touch adjacent elements" can be proved rather than guessed;
//! - every use of `var<workgroup>` memory, barriers and subgroup operations;
//! - per loop, the loads and stores of local variables, from which loop-carried variables,
//!   accumulators (loop-carried values fed by memory), induction variables and couplings between
//!   accumulators follow;
//! - how many storage writes one invocation performs (known loop trip counts multiply).
//!
//! Values flow through naga expressions, so names, comments and formatting cannot change a fact.
//! The analysis is sound in one direction only: a fact that is reported was proved from the IR
//! (within the stated definitions); a pattern written in a way the walk does not follow (e.g. an
//! index computed through a local array) is reported as absent.

use super::expr::{literal_int, operands};
use naga::{
    AddressSpace, ArraySize, Barrier, BinaryOperator, Binding, Block, BuiltIn, Expression,
    Function, GlobalVariable, Handle, LocalVariable, Module, Statement, TypeInner, UnaryOperator,
    valid::FunctionInfo, valid::ModuleInfo,
};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The facts about one entry point, each a yes/no question the descriptor rules ask.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Facts {
    /// A load or store of vector type from or to `storage` memory.
    pub vector_access: bool,
    /// An invocation accesses several elements of one storage buffer, each provably coalesced:
    /// the index has coefficient 1 on the invocation's x position, and the step between the
    /// elements (a loop's stride or the gap between two accesses) is a multiple of the workgroup's
    /// x size, or of the grid's x size (a grid-stride loop).
    pub coalesced_multi: bool,
    /// A `var<workgroup>` array is written and read, and a workgroup barrier orders them.
    pub workgroup_tiling: bool,
    /// A `var<workgroup>` array whose outer dimension is 2 (two tiles) is written and read.
    pub double_buffered: bool,
    /// A loop carries several independent accumulators (or one private array of them), each
    /// ending in its own storage write.
    pub register_blocking: bool,
    /// A loop stages storage data into workgroup memory, synchronizes, and feeds an accumulator it
    /// carries from that workgroup memory (a loop over tiles).
    pub tiled_loop: bool,
    /// A loop carries two or more accumulators where one's update reads another (online softmax's
    /// max and rescaled sum, Welford's mean and M2).
    pub streaming_loop: bool,
    /// Two loops, neither inside the other, load the same storage buffer.
    pub multi_pass: bool,
    /// A workgroup barrier or any use of workgroup memory.
    pub workgroup_cooperation: bool,
    /// A subgroup collective operation, ballot or gather (shuffle, broadcast).
    pub subgroup_ops: bool,
    /// Storage writes one invocation performs.
    pub outputs: Count,
}

/// A number of writes, or "unbounded" (a loop with an unknown trip count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Count {
    /// Exactly this many (at most).
    N(u64),
    /// More than `Count::CAP`, or a loop over outputs with an unknown trip count.
    Many,
}

impl Default for Count {
    fn default() -> Self {
        Count::N(0)
    }
}

impl Count {
    const CAP: u64 = 1 << 20;

    fn add(self, other: Count) -> Count {
        match (self, other) {
            (Count::N(a), Count::N(b)) => Count::n(a.saturating_add(b)),
            _ => Count::Many,
        }
    }

    fn max(self, other: Count) -> Count {
        match (self, other) {
            (Count::N(a), Count::N(b)) => Count::N(a.max(b)),
            _ => Count::Many,
        }
    }

    fn times(self, trip: Option<u64>) -> Count {
        match (self, trip) {
            (Count::N(0), _) => Count::N(0),
            (Count::N(a), Some(t)) => Count::n(a.saturating_mul(t)),
            _ => Count::Many,
        }
    }

    fn n(v: u64) -> Count {
        if v > Self::CAP {
            Count::Many
        } else {
            Count::N(v)
        }
    }
}

/// Analyzes entry point `entry_index` of a validated module whose overrides have been applied.
pub(crate) fn analyze(module: &Module, info: &ModuleInfo, entry_index: usize) -> Facts {
    let (walker, outputs) = walk(module, info, entry_index);
    walker.finish(outputs)
}

/// The storage buffers of a row-per-invocation attention kernel, by role: `out[row, c] =
/// Σ_j softmax_j(q[row] · k[j]) v[j, c]` (see `operators::attention`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AttentionRoles {
    /// Read at indices that depend on the invocation's row (and on a loop), and in the same
    /// innermost loop as `k`: one side of the dot products.
    pub q: Handle<GlobalVariable>,
    /// Read at indices that vary with loops only, in a loop that also reads `q`.
    pub k: Handle<GlobalVariable>,
    /// Read at indices that vary with loops only, in no loop that reads `q`.
    pub v: Handle<GlobalVariable>,
    /// The one buffer written, at indices that depend on the row.
    pub out: Handle<GlobalVariable>,
}

/// Which storage buffer plays which part in an attention kernel written one query row per
/// invocation, from the same walk as [`analyze`] (calls followed into their callees, so a score
/// computed in a helper function counts where it is called): exactly one buffer written and three
/// read; the written one and exactly one read one (`q`) are indexed by the invocation's x
/// position, the other two (`k`, `v`) by loop counters only; `k` is read in an innermost loop that
/// also reads `q` (the dot product), `v` in none; and the kernel takes an exponential. Says which
/// premise fails otherwise. A match is a proposal: the rewrite it leads to is verified like any
/// other candidate.
pub(crate) fn attention_roles(
    module: &Module,
    info: &ModuleInfo,
    entry_index: usize,
) -> Result<AttentionRoles, String> {
    let (walker, _) = walk(module, info, entry_index);
    let uses_exp = module
        .functions
        .iter()
        .map(|(_, f)| f)
        .chain(std::iter::once(&module.entry_points[entry_index].function))
        .any(|f| {
            f.expressions.iter().any(|(_, e)| {
                matches!(
                    e,
                    Expression::Math {
                        fun: naga::MathFunction::Exp | naga::MathFunction::Exp2,
                        ..
                    }
                )
            })
        });
    if !uses_exp {
        return Err("no exponential: not a softmax".into());
    }
    let row = |a: &StorageAccess| {
        let atoms = walker.base_atoms(&a.index);
        atoms.contains(&Atom::ThreadX) || atoms.contains(&Atom::GroupX)
    };
    let varies = |a: &StorageAccess| {
        walker
            .base_atoms(&a.index)
            .iter()
            .any(|x| matches!(x, Atom::Iter(_)))
    };
    let mut written: Vec<Handle<GlobalVariable>> = Vec::new();
    let mut read: Vec<Handle<GlobalVariable>> = Vec::new();
    for a in &walker.accesses {
        let list = if a.write { &mut written } else { &mut read };
        if !list.contains(&a.global) {
            list.push(a.global);
        }
    }
    read.retain(|g| !written.contains(g));
    let [out] = written[..] else {
        return Err(format!(
            "{} storage buffers written; attention writes one",
            written.len()
        ));
    };
    if read.len() != 3 {
        return Err(format!(
            "{} storage buffers only read; attention reads three (q, k, v)",
            read.len()
        ));
    }
    let of = |g: Handle<GlobalVariable>| walker.accesses.iter().filter(move |a| a.global == g);
    if !of(out).all(|a| row(a) && varies(a)) {
        return Err("the output is not written along the row at a loop's positions".into());
    }
    let (rowed, keyed): (Vec<Handle<GlobalVariable>>, Vec<Handle<GlobalVariable>>) =
        read.iter().partition(|&&g| of(g).all(row));
    let [q] = rowed[..] else {
        return Err(format!(
            "{} buffers read along the row; attention reads one (q)",
            rowed.len()
        ));
    };
    if !keyed.iter().all(|&g| of(g).all(|a| !row(a) && varies(a))) {
        return Err("k and v are not read at loop positions only".into());
    }
    let q_loops: BTreeSet<LoopId> = of(q).filter_map(|a| a.loops.last().copied()).collect();
    let (with_q, without_q): (Vec<Handle<GlobalVariable>>, Vec<Handle<GlobalVariable>>) =
        keyed.iter().partition(|&&g| {
            of(g)
                .filter_map(|a| a.loops.last())
                .any(|l| q_loops.contains(l))
        });
    match (&with_q[..], &without_q[..]) {
        (&[k], &[v]) => Ok(AttentionRoles { q, k, v, out }),
        _ => Err("no buffer is read beside q in the dot product's loop, or both are".into()),
    }
}

fn walk<'a>(module: &'a Module, info: &'a ModuleInfo, entry_index: usize) -> (Walker<'a>, Count) {
    let ep = &module.entry_points[entry_index];
    let mut walker = Walker {
        module,
        info,
        wg: ep.workgroup_size,
        opaque_deps: Vec::new(),
        frames: Vec::new(),
        frame_functions: Vec::new(),
        loops: Vec::new(),
        trips: Vec::new(),
        loop_stack: Vec::new(),
        known: BTreeMap::new(),
        accesses: Vec::new(),
        summaries: Vec::new(),
        var_deps: BTreeMap::new(),
        storage_stores: Vec::new(),
        wg_vars: BTreeMap::new(),
        wg_barrier: false,
        any_barrier: false,
        wg_access: false,
        subgroup: false,
    };
    let builtins = ep
        .function
        .arguments
        .iter()
        .map(|a| ArgBuiltins::of(module, a))
        .collect();
    walker.push_frame(
        &ep.function,
        info.get_entry_point(entry_index),
        FrameArgs::Entry(builtins),
    );
    let outputs = walker.block(&ep.function.body);
    walker.frames.pop();
    (walker, outputs)
}

// ---------------------------------------------------------------------------------------------
// Polynomials over invocation coordinates

type LoopId = usize;

/// A term of an index polynomial.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Atom {
    /// The invocation's x position within its workgroup (`local_invocation_id.x`).
    ThreadX,
    /// `workgroup_id.x`.
    GroupX,
    /// `num_workgroups.x`.
    NumGroupsX,
    /// Another coordinate (y/z components, subgroup ids), numbered by [`other_atom`].
    Other(u8),
    /// The iteration counter of a loop (0, 1, 2, ...).
    Iter(LoopId),
    /// A value the walk does not model; [`Walker::opaque_deps`] says which atoms it depends on.
    Opaque(u32),
}

/// A polynomial with integer coefficients; the key is the sorted list of atoms of a monomial
/// (empty for the constant term). Zero coefficients are never stored.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Poly(BTreeMap<Vec<Atom>, i64>);

const MAX_TERMS: usize = 64;

impl Poly {
    fn constant(c: i64) -> Poly {
        let mut p = Poly::default();
        if c != 0 {
            p.0.insert(Vec::new(), c);
        }
        p
    }

    fn atom(a: Atom) -> Poly {
        Poly(BTreeMap::from([(vec![a], 1)]))
    }

    fn as_const(&self) -> Option<i64> {
        match self.0.len() {
            0 => Some(0),
            1 => self.0.get(&Vec::new()).copied(),
            _ => None,
        }
    }

    fn add(&self, other: &Poly, sign: i64) -> Option<Poly> {
        let mut out = self.0.clone();
        for (m, c) in &other.0 {
            let e = out.entry(m.clone()).or_insert(0);
            *e = e.checked_add(c.checked_mul(sign)?)?;
            if *e == 0 {
                out.remove(m);
            }
        }
        (out.len() <= MAX_TERMS).then_some(Poly(out))
    }

    fn mul(&self, other: &Poly) -> Option<Poly> {
        let mut out: BTreeMap<Vec<Atom>, i64> = BTreeMap::new();
        for (ma, ca) in &self.0 {
            for (mb, cb) in &other.0 {
                let mut m = ma.clone();
                m.extend_from_slice(mb);
                m.sort();
                let e = out.entry(m.clone()).or_insert(0);
                *e = e.checked_add(ca.checked_mul(*cb)?)?;
                if *e == 0 {
                    out.remove(&m);
                }
                if out.len() > MAX_TERMS {
                    return None;
                }
            }
        }
        Some(Poly(out))
    }

    /// The polynomial that multiplies `atom` (monomials containing it once, with it removed).
    fn coefficient_of(&self, atom: Atom) -> Poly {
        let mut out = BTreeMap::new();
        for (m, c) in &self.0 {
            if m.iter().filter(|&&a| a == atom).count() == 1 {
                let rest: Vec<Atom> = m.iter().copied().filter(|&a| a != atom).collect();
                out.insert(rest, *c);
            }
        }
        Poly(out)
    }
}

/// Numbering of the coordinates that are not an x position.
fn other_atom(builtin: &BuiltIn, component: u32) -> Atom {
    let kind = match builtin {
        BuiltIn::GlobalInvocationId => 0,
        BuiltIn::LocalInvocationId => 1,
        BuiltIn::WorkGroupId => 2,
        BuiltIn::NumWorkGroups => 3,
        BuiltIn::SubgroupId => 4,
        BuiltIn::SubgroupInvocationId => 5,
        _ => 6,
    };
    Atom::Other(kind * 4 + component.min(3) as u8)
}

// ---------------------------------------------------------------------------------------------
// Values and data flow

/// A local variable of one inlined call (frame id, variable).
type Var = (usize, Handle<LocalVariable>);

/// Where a value's data comes from: local variables read, storage memory, workgroup variables.
/// Addresses (indices) are not data: `acc += x[i]` depends on `acc` and storage, not on `i`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Deps {
    locals: BTreeSet<Var>,
    storage: bool,
    workgroup: BTreeSet<Handle<GlobalVariable>>,
}

impl Deps {
    fn union(&mut self, other: &Deps) {
        self.locals.extend(other.locals.iter().copied());
        self.storage |= other.storage;
        self.workgroup.extend(other.workgroup.iter().copied());
    }

    fn reads_memory(&self) -> bool {
        self.storage || !self.workgroup.is_empty()
    }
}

/// What the walk knows about an expression: its value as a polynomial, and its data sources.
#[derive(Clone, Debug, Default)]
struct Value {
    poly: Poly,
    deps: Deps,
}

/// What a pointer points into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Root {
    Local(Var),
    Global(Handle<GlobalVariable>),
    Unknown,
}

/// A resolved pointer: its root, whether it is the whole root, the linear element index over the
/// array levels crossed, and whether the pointee is a vector.
struct Ptr {
    root: Root,
    whole: bool,
    index: Poly,
    vector: bool,
}

/// The builtin bindings of an entry point argument (itself, or each member of a struct).
#[derive(Clone, Debug)]
enum ArgBuiltins {
    Plain(Option<BuiltIn>),
    Members(Vec<Option<BuiltIn>>),
}

impl ArgBuiltins {
    fn of(module: &Module, arg: &naga::FunctionArgument) -> ArgBuiltins {
        match (&arg.binding, &module.types[arg.ty].inner) {
            (Some(Binding::BuiltIn(b)), _) => ArgBuiltins::Plain(Some(*b)),
            (None, TypeInner::Struct { members, .. }) => ArgBuiltins::Members(
                members
                    .iter()
                    .map(|m| match m.binding {
                        Some(Binding::BuiltIn(b)) => Some(b),
                        _ => None,
                    })
                    .collect(),
            ),
            _ => ArgBuiltins::Plain(None),
        }
    }
}

/// An argument of an inlined call: its value and, for pointers, what it points into.
#[derive(Clone, Debug)]
struct CallArg {
    value: Value,
    root: Root,
}

enum FrameArgs {
    Entry(Vec<ArgBuiltins>),
    Call(Vec<CallArg>),
}

struct Frame<'a> {
    id: usize,
    function: &'a Function,
    info: &'a FunctionInfo,
    args: FrameArgs,
    memo: HashMap<Handle<Expression>, Value>,
    ret: Option<Value>,
}

// ---------------------------------------------------------------------------------------------
// Loops

/// A memory event inside a loop, in program order.
#[derive(Clone, Debug)]
enum Event {
    Load(Var),
    Store(Var, Deps),
    WgStore(Handle<GlobalVariable>, Deps),
    WgLoad(Handle<GlobalVariable>),
    StorageLoad(Handle<GlobalVariable>),
    Barrier,
}

struct LoopFrame {
    id: LoopId,
    events: Vec<Event>,
    varying_store: bool,
}

/// What a loop turned out to be.
struct LoopSummary {
    id: LoopId,
    storage_loaded: BTreeSet<Handle<GlobalVariable>>,
    accumulators: Vec<Var>,
    /// For each accumulator, everything it depends on through the loop's variables.
    full: BTreeMap<Var, Deps>,
    coupled: bool,
    array_accumulator: bool,
    tiled: bool,
}

/// What a syntactic scan of a loop (own function only) finds before walking it.
#[derive(Default)]
struct Prescan {
    /// Variables stored in the loop, with whether their first access is a load.
    stored: BTreeMap<Handle<LocalVariable>, bool>,
    /// Induction variables: exactly one whole store `v = v ± e`, `e` loop-invariant, loaded
    /// first. Maps to (`e`, sign).
    induction: BTreeMap<Handle<LocalVariable>, (Handle<Expression>, i64)>,
}

// ---------------------------------------------------------------------------------------------
// The walker

struct Walker<'a> {
    module: &'a Module,
    info: &'a ModuleInfo,
    wg: [u32; 3],
    opaque_deps: Vec<BTreeSet<Atom>>,
    frames: Vec<Frame<'a>>,
    /// Every frame ever created, by id (for variable types).
    frame_functions: Vec<&'a Function>,
    /// Parent of each loop, by id.
    loops: Vec<Option<LoopId>>,
    /// Trip count of each loop, by id, where known.
    trips: Vec<Option<u64>>,
    loop_stack: Vec<LoopFrame>,
    /// The current polynomial value of each whole local variable.
    known: BTreeMap<Var, Poly>,
    accesses: Vec<StorageAccess>,
    summaries: Vec<LoopSummary>,
    /// Everything stored into each local variable anywhere.
    var_deps: BTreeMap<Var, Deps>,
    /// Data sources of the values written to storage.
    storage_stores: Vec<Deps>,
    wg_vars: BTreeMap<Handle<GlobalVariable>, WgUse>,
    wg_barrier: bool,
    any_barrier: bool,
    wg_access: bool,
    subgroup: bool,
}

/// One access to storage memory.
struct StorageAccess {
    global: Handle<GlobalVariable>,
    /// A store or an atomic rather than a load.
    write: bool,
    vector: bool,
    index: Poly,
    loops: Vec<LoopId>,
}

#[derive(Default)]
struct WgUse {
    stored: bool,
    loaded: bool,
}

const MAX_CALL_DEPTH: usize = 16;

impl<'a> Walker<'a> {
    fn frame(&self) -> &Frame<'a> {
        self.frames
            .last()
            .expect("a frame is active during the walk")
    }

    fn frame_mut(&mut self) -> &mut Frame<'a> {
        self.frames
            .last_mut()
            .expect("a frame is active during the walk")
    }

    fn push_frame(&mut self, function: &'a Function, info: &'a FunctionInfo, args: FrameArgs) {
        let id = self.frame_functions.len();
        self.frame_functions.push(function);
        self.frames.push(Frame {
            id,
            function,
            info,
            args,
            memo: HashMap::new(),
            ret: None,
        });
    }

    /// A fresh value the walk does not model, depending on the base atoms of `polys`.
    fn opaque<'p>(&mut self, polys: impl IntoIterator<Item = &'p Poly>) -> Poly {
        let mut deps = BTreeSet::new();
        for p in polys {
            deps.extend(self.base_atoms(p));
        }
        self.opaque_with(deps)
    }

    fn opaque_with(&mut self, deps: BTreeSet<Atom>) -> Poly {
        let id = self.opaque_deps.len() as u32;
        self.opaque_deps.push(deps);
        Poly::atom(Atom::Opaque(id))
    }

    /// The atoms a polynomial depends on, with opaque atoms replaced by their dependencies.
    fn base_atoms(&self, p: &Poly) -> BTreeSet<Atom> {
        let mut out = BTreeSet::new();
        for m in p.0.keys() {
            for a in m {
                match a {
                    Atom::Opaque(i) => out.extend(self.opaque_deps[*i as usize].iter().copied()),
                    other => {
                        out.insert(*other);
                    }
                }
            }
        }
        out
    }

    fn enclosing_iters(&self) -> BTreeSet<Atom> {
        self.loop_stack.iter().map(|l| Atom::Iter(l.id)).collect()
    }

    fn event(&mut self, e: Event) {
        for l in &mut self.loop_stack {
            l.events.push(e.clone());
        }
    }

    fn ty_inner(&self, expr: Handle<Expression>) -> &'a TypeInner {
        let info: &'a FunctionInfo = self.frame().info;
        info[expr].ty.inner_with(&self.module.types)
    }

    // ----- expressions -----

    /// The value of `expr`, memoized. Expressions that read memory are evaluated at their `Emit`
    /// (see [`Walker::emit`]); everything else is pure and may be evaluated on demand.
    fn eval(&mut self, expr: Handle<Expression>) -> Value {
        if let Some(v) = self.frame().memo.get(&expr) {
            return v.clone();
        }
        let v = self.compute(expr);
        self.frame_mut().memo.insert(expr, v.clone());
        v
    }

    fn compute(&mut self, expr: Handle<Expression>) -> Value {
        let function: &'a Function = self.frame().function;
        let e = &function.expressions[expr];
        match e {
            Expression::Literal(l) => Value {
                poly: match literal_int(l) {
                    Some(c) => Poly::constant(c),
                    None => self.opaque_with(BTreeSet::new()),
                },
                deps: Deps::default(),
            },
            Expression::Constant(h) => {
                let init = self.module.constants[*h].init;
                let poly = match self.global_int(init) {
                    Some(c) => Poly::constant(c),
                    None => self.opaque_with(BTreeSet::new()),
                };
                Value {
                    poly,
                    deps: Deps::default(),
                }
            }
            Expression::ZeroValue(_) => Value::default(),
            Expression::FunctionArgument(i) => self.argument(*i),
            Expression::AccessIndex { base, index } => {
                if let Some(b) = self.builtin_of(*base) {
                    let poly = self.builtin_component(&b, *index);
                    return Value {
                        poly,
                        deps: Deps::default(),
                    };
                }
                self.generic(expr)
            }
            Expression::Load { pointer } => self.load(*pointer),
            Expression::Unary {
                op: UnaryOperator::Negate,
                expr: inner,
            } => {
                let v = self.eval(*inner);
                let poly = match Poly::default().add(&v.poly, -1) {
                    Some(p) => p,
                    None => self.opaque([&v.poly]),
                };
                Value { poly, deps: v.deps }
            }
            Expression::Binary { op, left, right } => {
                let l = self.eval(*left);
                let r = self.eval(*right);
                let mut deps = l.deps.clone();
                deps.union(&r.deps);
                let poly = match binary(*op, &l.poly, &r.poly) {
                    Some(p) => p,
                    None => self.opaque([&l.poly, &r.poly]),
                };
                Value { poly, deps }
            }
            Expression::As { expr: inner, .. } => self.eval(*inner),
            Expression::CallResult(_)
            | Expression::AtomicResult { .. }
            | Expression::WorkGroupUniformLoadResult { .. }
            | Expression::SubgroupBallotResult
            | Expression::SubgroupOperationResult { .. } => {
                // Set by their statement; reaching here means the statement was not walked.
                let mut deps = BTreeSet::from([Atom::ThreadX]);
                deps.extend(self.enclosing_iters());
                Value {
                    poly: self.opaque_with(deps),
                    deps: Deps::default(),
                }
            }
            _ => self.generic(expr),
        }
    }

    /// An expression the walk does not model: opaque, depending on everything its operands do.
    fn generic(&mut self, expr: Handle<Expression>) -> Value {
        let function: &'a Function = self.frame().function;
        let mut polys = Vec::new();
        let mut deps = Deps::default();
        for op in operands(&function.expressions[expr]) {
            let v = self.eval(op);
            deps.union(&v.deps);
            polys.push(v.poly);
        }
        Value {
            poly: self.opaque(polys.iter()),
            deps,
        }
    }

    fn argument(&mut self, i: u32) -> Value {
        let builtin = match &self.frame().args {
            FrameArgs::Call(args) => {
                return args
                    .get(i as usize)
                    .map(|a| a.value.clone())
                    .unwrap_or_default();
            }
            FrameArgs::Entry(b) => b.get(i as usize).cloned(),
        };
        let poly = match builtin {
            Some(ArgBuiltins::Plain(Some(b))) => self.builtin_scalar(&b),
            _ => {
                let deps = BTreeSet::from([Atom::ThreadX]);
                self.opaque_with(deps)
            }
        };
        Value {
            poly,
            deps: Deps::default(),
        }
    }

    /// The builtin a (vector) expression is, when it is an entry point argument or a member of one.
    fn builtin_of(&self, expr: Handle<Expression>) -> Option<BuiltIn> {
        let FrameArgs::Entry(args) = &self.frame().args else {
            return None;
        };
        match &self.frame().function.expressions[expr] {
            Expression::FunctionArgument(i) => match args.get(*i as usize)? {
                ArgBuiltins::Plain(b) => *b,
                ArgBuiltins::Members(_) => None,
            },
            Expression::AccessIndex { base, index } => {
                match &self.frame().function.expressions[*base] {
                    Expression::FunctionArgument(i) => match args.get(*i as usize)? {
                        ArgBuiltins::Members(m) => m.get(*index as usize).copied().flatten(),
                        ArgBuiltins::Plain(_) => None,
                    },
                    _ => None,
                }
            }
            _ => None,
        }
    }

    fn builtin_component(&mut self, b: &BuiltIn, component: u32) -> Poly {
        let wg_x = i64::from(self.wg[0]);
        match (b, component) {
            (BuiltIn::GlobalInvocationId, 0) => {
                let mut p = Poly::atom(Atom::ThreadX);
                p.0.insert(vec![Atom::GroupX], wg_x);
                p
            }
            (BuiltIn::LocalInvocationId, 0) => Poly::atom(Atom::ThreadX),
            (BuiltIn::WorkGroupId, 0) => Poly::atom(Atom::GroupX),
            (BuiltIn::NumWorkGroups, 0) => Poly::atom(Atom::NumGroupsX),
            (
                BuiltIn::GlobalInvocationId
                | BuiltIn::LocalInvocationId
                | BuiltIn::WorkGroupId
                | BuiltIn::NumWorkGroups,
                c,
            ) => Poly::atom(other_atom(b, c)),
            // A scalar builtin accessed by index (not valid WGSL, but harmless).
            _ => self.builtin_scalar(b),
        }
    }

    fn builtin_scalar(&mut self, b: &BuiltIn) -> Poly {
        let [x, y, _] = self.wg.map(i64::from);
        match b {
            BuiltIn::LocalInvocationIndex => {
                let mut p = Poly::atom(Atom::ThreadX);
                p.0.insert(vec![other_atom(&BuiltIn::LocalInvocationId, 1)], x);
                p.0.insert(vec![other_atom(&BuiltIn::LocalInvocationId, 2)], x * y);
                p
            }
            BuiltIn::SubgroupInvocationId => self.opaque_with(BTreeSet::from([Atom::ThreadX])),
            BuiltIn::SubgroupId => Poly::atom(other_atom(b, 0)),
            BuiltIn::SubgroupSize | BuiltIn::NumSubgroups => self.opaque_with(BTreeSet::new()),
            // Vector builtins used whole: depend on all their components.
            BuiltIn::GlobalInvocationId
            | BuiltIn::LocalInvocationId
            | BuiltIn::WorkGroupId
            | BuiltIn::NumWorkGroups => {
                let mut deps = BTreeSet::new();
                for c in 0..3 {
                    let p = self.builtin_component(b, c);
                    deps.extend(self.base_atoms(&p));
                }
                self.opaque_with(deps)
            }
            _ => self.opaque_with(BTreeSet::from([Atom::ThreadX])),
        }
    }

    /// The integer value of a global (constant) expression.
    fn global_int(&self, expr: Handle<Expression>) -> Option<i64> {
        match &self.module.global_expressions[expr] {
            Expression::Literal(l) => literal_int(l),
            Expression::Constant(h) => self.global_int(self.module.constants[*h].init),
            Expression::ZeroValue(_) => Some(0),
            _ => None,
        }
    }

    fn pointer(&mut self, expr: Handle<Expression>) -> Ptr {
        let function: &'a Function = self.frame().function;
        let vector = matches!(
            self.ty_inner(expr),
            TypeInner::Pointer { base, .. }
                if matches!(self.module.types[*base].inner, TypeInner::Vector { .. })
        ) || matches!(
            self.ty_inner(expr),
            TypeInner::ValuePointer { size: Some(_), .. }
        );
        match &function.expressions[expr] {
            Expression::LocalVariable(h) => Ptr {
                root: Root::Local((self.frame().id, *h)),
                whole: true,
                index: Poly::default(),
                vector,
            },
            Expression::GlobalVariable(h) => Ptr {
                root: Root::Global(*h),
                whole: true,
                index: Poly::default(),
                vector,
            },
            Expression::FunctionArgument(i) => {
                let root = match &self.frame().args {
                    FrameArgs::Call(args) => {
                        args.get(*i as usize).map_or(Root::Unknown, |a| a.root)
                    }
                    FrameArgs::Entry(_) => Root::Unknown,
                };
                let index = self.opaque_with(BTreeSet::from([Atom::ThreadX]));
                Ptr {
                    root,
                    whole: false,
                    index,
                    vector,
                }
            }
            Expression::Access { base, index } => {
                let (base, index) = (*base, *index);
                let i = self.eval(index).poly;
                self.step_into(base, i, vector)
            }
            Expression::AccessIndex { base, index } => {
                let base = *base;
                let i = Poly::constant(i64::from(*index));
                self.step_into(base, i, vector)
            }
            _ => {
                let index = self.opaque_with(BTreeSet::from([Atom::ThreadX]));
                Ptr {
                    root: Root::Unknown,
                    whole: false,
                    index,
                    vector,
                }
            }
        }
    }

    /// One level of a pointer chain: array levels extend the linear index, other levels (struct
    /// members, vector components) keep it.
    fn step_into(&mut self, base: Handle<Expression>, i: Poly, vector: bool) -> Ptr {
        let mut p = self.pointer(base);
        p.whole = false;
        p.vector = vector;
        let pointee = match self.ty_inner(base) {
            TypeInner::Pointer { base, .. } => Some(&self.module.types[*base].inner),
            _ => None,
        };
        if let Some(TypeInner::Array { size, .. } | TypeInner::BindingArray { size, .. }) = pointee
        {
            let len = match size {
                ArraySize::Constant(n) => Some(i64::from(n.get())),
                _ => None,
            };
            let scaled = if p.index.0.is_empty() {
                Some(Poly::default())
            } else {
                len.and_then(|n| p.index.mul(&Poly::constant(n)))
            };
            p.index = match scaled.and_then(|s| s.add(&i, 1)) {
                Some(idx) => idx,
                None => self.opaque([&p.index, &i]),
            };
        }
        p
    }

    fn load(&mut self, pointer: Handle<Expression>) -> Value {
        let p = self.pointer(pointer);
        let mut deps = Deps::default();
        let poly = match p.root {
            Root::Local(v) => {
                deps.locals.insert(v);
                if p.whole {
                    match self.known.get(&v) {
                        Some(k) => k.clone(),
                        None => self.initial(v),
                    }
                } else {
                    let mut atoms = self.base_atoms(&p.index);
                    atoms.insert(Atom::ThreadX);
                    atoms.extend(self.enclosing_iters());
                    self.opaque_with(atoms)
                }
            }
            Root::Global(g) => {
                let atoms = self.base_atoms(&p.index);
                match self.module.global_variables[g].space {
                    AddressSpace::Storage { .. } => deps.storage = true,
                    AddressSpace::WorkGroup => {
                        deps.workgroup.insert(g);
                    }
                    AddressSpace::Uniform | AddressSpace::Immediate => {}
                    _ => {}
                }
                self.opaque_with(atoms)
            }
            Root::Unknown => {
                let mut atoms = BTreeSet::from([Atom::ThreadX]);
                atoms.extend(self.enclosing_iters());
                self.opaque_with(atoms)
            }
        };
        Value { poly, deps }
    }

    /// A whole local variable's value before any store: its initializer, or zero.
    fn initial(&mut self, v: Var) -> Poly {
        let function = self.frame_functions[v.0];
        match function.local_variables[v.1].init {
            Some(init) if v.0 == self.frame().id => self.eval(init).poly,
            Some(_) => self.opaque_with(BTreeSet::from([Atom::ThreadX])),
            None => Poly::default(),
        }
    }

    // ----- statements -----

    fn emit(&mut self, range: &naga::Range<Expression>) {
        let function: &'a Function = self.frame().function;
        for h in range.clone() {
            self.frame_mut().memo.remove(&h);
            self.eval(h);
            let Expression::Load { pointer } = function.expressions[h] else {
                continue;
            };
            let p = self.pointer(pointer);
            match p.root {
                Root::Local(var) => self.event(Event::Load(var)),
                Root::Global(g) => match self.module.global_variables[g].space {
                    AddressSpace::Storage { .. } => {
                        self.record_storage(g, false, p.vector, p.index);
                        self.event(Event::StorageLoad(g));
                    }
                    AddressSpace::WorkGroup => {
                        self.wg_access = true;
                        self.wg_vars.entry(g).or_default().loaded = true;
                        self.event(Event::WgLoad(g));
                    }
                    _ => {}
                },
                Root::Unknown => {}
            }
        }
    }

    fn record_storage(
        &mut self,
        global: Handle<GlobalVariable>,
        write: bool,
        vector: bool,
        index: Poly,
    ) {
        self.accesses.push(StorageAccess {
            global,
            write,
            vector,
            index,
            loops: self.loop_stack.iter().map(|l| l.id).collect(),
        });
    }

    /// A write to storage (store or atomic): one output; marks the loops it varies with.
    fn storage_write(&mut self, p: &Ptr) -> Count {
        let atoms = self.base_atoms(&p.index);
        for l in &mut self.loop_stack {
            if atoms.contains(&Atom::Iter(l.id)) {
                l.varying_store = true;
            }
        }
        Count::N(1)
    }

    fn block(&mut self, block: &'a Block) -> Count {
        let mut count = Count::N(0);
        for s in block.iter() {
            count = count.add(self.statement(s));
        }
        count
    }

    fn statement(&mut self, s: &'a Statement) -> Count {
        match s {
            Statement::Emit(range) => {
                self.emit(range);
                Count::N(0)
            }
            Statement::Block(b) => self.block(b),
            Statement::If {
                condition,
                accept,
                reject,
            } => {
                self.eval(*condition);
                let before = self.known.clone();
                let a = self.block(accept);
                let after_accept = std::mem::replace(&mut self.known, before);
                let r = self.block(reject);
                self.merge(after_accept);
                a.max(r)
            }
            Statement::Switch { selector, cases } => {
                self.eval(*selector);
                let before = self.known.clone();
                let mut count = Count::N(0);
                let mut outcomes = Vec::new();
                for case in cases {
                    self.known = before.clone();
                    count = count.max(self.block(&case.body));
                    outcomes.push(std::mem::take(&mut self.known));
                }
                self.known = before;
                for o in outcomes {
                    self.merge(o);
                }
                count
            }
            Statement::Loop {
                body,
                continuing,
                break_if,
            } => self.walk_loop(body, continuing, *break_if),
            Statement::Return { value: Some(v) } => {
                let v = self.eval(*v);
                let frame = self.frame_mut();
                match &mut frame.ret {
                    Some(r) => {
                        r.deps.union(&v.deps);
                        r.poly = Poly::default();
                    }
                    None => frame.ret = Some(v),
                }
                Count::N(0)
            }
            Statement::ControlBarrier(b) => {
                if b.intersects(Barrier::WORK_GROUP | Barrier::STORAGE) {
                    self.any_barrier = true;
                }
                if b.contains(Barrier::WORK_GROUP) {
                    self.wg_barrier = true;
                    self.event(Event::Barrier);
                }
                Count::N(0)
            }
            Statement::Store { pointer, value } => {
                let v = self.eval(*value);
                let p = self.pointer(*pointer);
                self.store(&p, v)
            }
            Statement::Atomic {
                pointer,
                value,
                result,
                ..
            } => {
                let v = self.eval(*value);
                let p = self.pointer(*pointer);
                let mut deps = v.deps.clone();
                let mut count = Count::N(0);
                if let Root::Global(g) = p.root {
                    match self.module.global_variables[g].space {
                        AddressSpace::Storage { .. } => {
                            deps.storage = true;
                            self.record_storage(g, true, false, p.index.clone());
                            self.storage_stores.push(v.deps.clone());
                            count = self.storage_write(&p);
                        }
                        AddressSpace::WorkGroup => {
                            deps.workgroup.insert(g);
                            self.wg_access = true;
                            let u = self.wg_vars.entry(g).or_default();
                            u.stored = true;
                            u.loaded = true;
                            self.event(Event::WgLoad(g));
                            self.event(Event::WgStore(g, v.deps.clone()));
                        }
                        _ => {}
                    }
                }
                if let Some(r) = result {
                    let mut atoms = self.base_atoms(&p.index);
                    atoms.insert(Atom::ThreadX);
                    let poly = self.opaque_with(atoms);
                    self.frame_mut().memo.insert(*r, Value { poly, deps });
                }
                count
            }
            Statement::WorkGroupUniformLoad { pointer, result } => {
                let p = self.pointer(*pointer);
                let mut deps = Deps::default();
                if let Root::Global(g) = p.root {
                    deps.workgroup.insert(g);
                    self.wg_access = true;
                    self.wg_vars.entry(g).or_default().loaded = true;
                    self.event(Event::WgLoad(g));
                }
                self.any_barrier = true;
                self.wg_barrier = true;
                self.event(Event::Barrier);
                let poly = self.opaque([&p.index]);
                self.frame_mut().memo.insert(*result, Value { poly, deps });
                Count::N(0)
            }
            Statement::Call {
                function,
                arguments,
                result,
            } => self.call(*function, arguments, *result),
            Statement::SubgroupBallot { result, predicate } => {
                self.subgroup = true;
                let v = predicate.map(|p| self.eval(p)).unwrap_or_default();
                let poly = self.opaque([&v.poly]);
                self.frame_mut()
                    .memo
                    .insert(*result, Value { poly, deps: v.deps });
                Count::N(0)
            }
            Statement::SubgroupGather {
                argument, result, ..
            } => {
                self.subgroup = true;
                let v = self.eval(*argument);
                let mut atoms = self.base_atoms(&v.poly);
                atoms.insert(Atom::ThreadX);
                let poly = self.opaque_with(atoms);
                self.frame_mut()
                    .memo
                    .insert(*result, Value { poly, deps: v.deps });
                Count::N(0)
            }
            Statement::SubgroupCollectiveOperation {
                argument, result, ..
            } => {
                self.subgroup = true;
                let v = self.eval(*argument);
                let poly = self.opaque([&v.poly]);
                self.frame_mut()
                    .memo
                    .insert(*result, Value { poly, deps: v.deps });
                Count::N(0)
            }
            Statement::ImageStore { .. } | Statement::ImageAtomic { .. } => Count::N(1),
            Statement::CooperativeStore { target, .. } => {
                let p = self.pointer(*target);
                match p.root {
                    Root::Global(g)
                        if matches!(
                            self.module.global_variables[g].space,
                            AddressSpace::Storage { .. }
                        ) =>
                    {
                        self.storage_write(&p)
                    }
                    _ => Count::N(0),
                }
            }
            Statement::Return { value: None }
            | Statement::Break
            | Statement::Continue
            | Statement::Kill
            | Statement::MemoryBarrier(_)
            | Statement::RayQuery { .. }
            | Statement::RayPipelineFunction(_) => Count::N(0),
        }
    }

    fn store(&mut self, p: &Ptr, v: Value) -> Count {
        match p.root {
            Root::Local(var) => {
                let poly = if p.whole {
                    v.poly.clone()
                } else {
                    let mut atoms = self.base_atoms(&v.poly);
                    atoms.extend(self.base_atoms(&p.index));
                    atoms.insert(Atom::ThreadX);
                    atoms.extend(self.enclosing_iters());
                    self.opaque_with(atoms)
                };
                self.known.insert(var, poly);
                self.var_deps.entry(var).or_default().union(&v.deps);
                self.event(Event::Store(var, v.deps));
                Count::N(0)
            }
            Root::Global(g) => match self.module.global_variables[g].space {
                AddressSpace::Storage { .. } => {
                    self.record_storage(g, true, p.vector, p.index.clone());
                    self.storage_stores.push(v.deps);
                    self.storage_write(p)
                }
                AddressSpace::WorkGroup => {
                    self.wg_access = true;
                    self.wg_vars.entry(g).or_default().stored = true;
                    self.event(Event::WgStore(g, v.deps));
                    Count::N(0)
                }
                _ => Count::N(0),
            },
            Root::Unknown => Count::N(0),
        }
    }

    /// Joins the variable values of two control-flow paths: equal values stay, others become
    /// opaque.
    fn merge(&mut self, other: BTreeMap<Var, Poly>) {
        let keys: BTreeSet<Var> = self.known.keys().chain(other.keys()).copied().collect();
        for k in keys {
            let a = self.known.get(&k).cloned();
            let b = other.get(&k).cloned();
            if a == b {
                continue;
            }
            let polys: Vec<Poly> = [a, b].into_iter().flatten().collect();
            let mut atoms = BTreeSet::new();
            for p in &polys {
                atoms.extend(self.base_atoms(p));
            }
            if polys.len() < 2 {
                // Assigned on one path only: the other path keeps the initial value.
                atoms.insert(Atom::ThreadX);
            }
            let poly = self.opaque_with(atoms);
            self.known.insert(k, poly);
        }
    }

    fn call(
        &mut self,
        function: Handle<Function>,
        arguments: &[Handle<Expression>],
        result: Option<Handle<Expression>>,
    ) -> Count {
        let mut args = Vec::new();
        let mut deps = Deps::default();
        let mut polys = Vec::new();
        for &a in arguments {
            let value = self.eval(a);
            let root = if matches!(
                self.ty_inner(a),
                TypeInner::Pointer { .. } | TypeInner::ValuePointer { .. }
            ) {
                let p = self.pointer(a);
                if let Root::Local(v) = p.root {
                    // The callee may read and write the variable through the pointer.
                    self.event(Event::Load(v));
                }
                p.root
            } else {
                Root::Unknown
            };
            deps.union(&value.deps);
            polys.push(value.poly.clone());
            args.push(CallArg { value, root });
        }
        let count = if self.frames.len() < MAX_CALL_DEPTH {
            let callee: &'a Function = &self.module.functions[function];
            let info: &'a FunctionInfo = &self.info[function];
            self.push_frame(callee, info, FrameArgs::Call(args));
            let count = self.block(&callee.body);
            let frame = self.frames.pop().expect("the callee's frame");
            if let Some(r) = frame.ret {
                deps.union(&r.deps);
                polys.push(r.poly);
            }
            count
        } else {
            Count::N(0)
        };
        if let Some(r) = result {
            let mut atoms = BTreeSet::new();
            for p in &polys {
                atoms.extend(self.base_atoms(p));
            }
            let poly = self.opaque_with(atoms);
            self.frame_mut().memo.insert(r, Value { poly, deps });
        }
        count
    }

    fn walk_loop(
        &mut self,
        body: &'a Block,
        continuing: &'a Block,
        break_if: Option<Handle<Expression>>,
    ) -> Count {
        let id = self.loops.len();
        let parent = self.loop_stack.last().map(|l| l.id);
        self.loops.push(parent);
        self.trips.push(None);
        let frame_id = self.frame().id;
        let function: &'a Function = self.frame().function;
        let pre = prescan(self.module, function, body, continuing);

        // Values at the loop head: inductions are `init + iteration · step`; every other variable
        // the loop stores is opaque and varies with the iteration.
        let mut entry = BTreeMap::new();
        let mut init_const = BTreeMap::new();
        let mut step_const = BTreeMap::new();
        for &h in pre.stored.keys() {
            let var = (frame_id, h);
            let init = match self.known.get(&var) {
                Some(p) => p.clone(),
                None => self.initial(var),
            };
            let head = match pre.induction.get(&h) {
                Some(&(step, sign)) => {
                    let step = self.eval(step).poly;
                    let signed = Poly::default().add(&step, sign);
                    if let (Some(c0), Some(s)) =
                        (init.as_const(), signed.as_ref().and_then(Poly::as_const))
                    {
                        init_const.insert(h, c0);
                        step_const.insert(h, s);
                    }
                    signed
                        .and_then(|s| s.mul(&Poly::atom(Atom::Iter(id))))
                        .and_then(|s| init.add(&s, 1))
                }
                None => None,
            };
            let head = match head {
                Some(p) => p,
                None => {
                    let mut atoms = self.base_atoms(&init);
                    atoms.insert(Atom::Iter(id));
                    self.opaque_with(atoms)
                }
            };
            entry.insert(var, init);
            self.known.insert(var, head);
        }

        self.loop_stack.push(LoopFrame {
            id,
            events: Vec::new(),
            varying_store: false,
        });
        let count = self.block(body).add(self.block(continuing));
        if let Some(b) = break_if {
            self.eval(b);
        }
        let frame = self.loop_stack.pop().expect("the loop's frame");

        let trip = self.trip_count(body, &pre, &init_const, &step_const);
        self.trips[id] = trip;
        let count = if frame.varying_store {
            count.times(trip)
        } else {
            count
        };

        // After the loop, what it stored is opaque (its value depends on the trip count).
        for (var, init) in entry {
            let end = self.known.get(&var).cloned().unwrap_or_default();
            let mut atoms = self.base_atoms(&init);
            atoms.extend(self.base_atoms(&end));
            atoms.remove(&Atom::Iter(id));
            let poly = self.opaque_with(atoms);
            self.known.insert(var, poly);
        }

        let summary = self.summarize(id, &frame.events);
        self.summaries.push(summary);
        count
    }

    /// The trip count of a loop whose body opens with `if !(v op bound) { break; }` (or the
    /// mirrored form), `v` an induction with constant start and step, `bound` constant.
    fn trip_count(
        &mut self,
        body: &Block,
        pre: &Prescan,
        init_const: &BTreeMap<Handle<LocalVariable>, i64>,
        step_const: &BTreeMap<Handle<LocalVariable>, i64>,
    ) -> Option<u64> {
        let function: &'a Function = self.frame().function;
        let first = body.iter().find(|s| !matches!(s, Statement::Emit(_)))?;
        let Statement::If {
            condition,
            accept,
            reject,
        } = first
        else {
            return None;
        };
        let is_break = |b: &Block| b.len() == 1 && matches!(b[0], Statement::Break);
        let break_when_true = if is_break(accept) && reject.is_empty() {
            true
        } else if accept.is_empty() && is_break(reject) {
            false
        } else {
            return None;
        };
        let Expression::Binary { op, left, right } = function.expressions[*condition] else {
            return None;
        };
        let as_var = |e: Handle<Expression>| match function.expressions[e] {
            Expression::Load { pointer } => match function.expressions[pointer] {
                Expression::LocalVariable(h) if pre.induction.contains_key(&h) => Some(h),
                _ => None,
            },
            _ => None,
        };
        let (var, bound, op) = match (as_var(left), as_var(right)) {
            (Some(v), _) => (v, right, op),
            (None, Some(v)) => (v, left, mirror(op)?),
            _ => return None,
        };
        let op = if break_when_true { negate(op)? } else { op };
        let bound = self.eval(bound).poly.as_const()?;
        let (c0, s) = (*init_const.get(&var)?, *step_const.get(&var)?);
        trips(c0, s, op, bound)
    }

    fn summarize(&self, id: LoopId, events: &[Event]) -> LoopSummary {
        let mut first_is_load: BTreeMap<Var, bool> = BTreeMap::new();
        let mut stores: BTreeMap<Var, Deps> = BTreeMap::new();
        let mut storage_loaded = BTreeSet::new();
        let mut wg_staged = BTreeSet::new();
        let mut wg_loaded = BTreeSet::new();
        let mut barrier = false;
        for e in events {
            match e {
                Event::Load(v) => {
                    first_is_load.entry(*v).or_insert(true);
                }
                Event::Store(v, d) => {
                    first_is_load.entry(*v).or_insert(false);
                    stores.entry(*v).or_default().union(d);
                }
                Event::WgStore(g, d) => {
                    if d.storage {
                        wg_staged.insert(*g);
                    }
                }
                Event::WgLoad(g) => {
                    wg_loaded.insert(*g);
                }
                Event::StorageLoad(g) => {
                    storage_loaded.insert(*g);
                }
                Event::Barrier => barrier = true,
            }
        }
        let carried: BTreeSet<Var> = stores
            .keys()
            .copied()
            .filter(|v| first_is_load.get(v) == Some(&true))
            .collect();
        let temps: BTreeSet<Var> = stores
            .keys()
            .copied()
            .filter(|v| !carried.contains(v))
            .collect();
        let all: BTreeSet<Var> = stores.keys().copied().collect();
        let closure = |v: Var, through: &BTreeSet<Var>| -> Deps {
            let mut out = stores.get(&v).cloned().unwrap_or_default();
            let mut todo: Vec<Var> = out.locals.iter().copied().collect();
            let mut seen = BTreeSet::from([v]);
            while let Some(u) = todo.pop() {
                if !seen.insert(u) || !through.contains(&u) {
                    continue;
                }
                if let Some(d) = stores.get(&u) {
                    for l in &d.locals {
                        if !out.locals.contains(l) {
                            todo.push(*l);
                        }
                    }
                    out.union(d);
                }
            }
            out
        };
        let mut full = BTreeMap::new();
        let mut accumulators = Vec::new();
        for &v in &carried {
            let f = closure(v, &all);
            if f.reads_memory() {
                accumulators.push(v);
                full.insert(v, f);
            }
        }
        let coupled = accumulators.iter().any(|&a| {
            let near = closure(a, &temps);
            accumulators
                .iter()
                .any(|&b| b != a && near.locals.contains(&b))
        });
        let array_accumulator = accumulators.iter().any(|v| {
            let ty = self.frame_functions[v.0].local_variables[v.1].ty;
            match &self.module.types[ty].inner {
                TypeInner::Array {
                    size: ArraySize::Constant(n),
                    ..
                } => n.get() >= 2,
                TypeInner::Matrix { .. } => true,
                _ => false,
            }
        });
        let tiled = barrier
            && wg_staged.iter().any(|w| {
                wg_loaded.contains(w) && full.values().any(|d: &Deps| d.workgroup.contains(w))
            });
        LoopSummary {
            id,
            storage_loaded,
            accumulators,
            full,
            coupled,
            array_accumulator,
            tiled,
        }
    }

    // ----- conclusions -----

    fn finish(self, outputs: Count) -> Facts {
        let wg_x = i64::from(self.wg[0].max(1));
        let coalesced_multi = self.coalesced_multi(wg_x);
        let register_blocking = self.summaries.iter().any(|l| self.blocks_registers(l));
        let mut workgroup_tiling = false;
        let mut double_buffered = false;
        for (g, u) in &self.wg_vars {
            if !(u.stored && u.loaded) {
                continue;
            }
            let ty = &self.module.types[self.module.global_variables[*g].ty].inner;
            if let TypeInner::Array { base, size, .. } = ty {
                workgroup_tiling |= self.wg_barrier;
                let two = matches!(size, ArraySize::Constant(n) if n.get() == 2);
                let nested = matches!(self.module.types[*base].inner, TypeInner::Array { .. });
                double_buffered |= self.wg_barrier && two && nested;
            }
        }
        let multi_pass = self.summaries.iter().enumerate().any(|(i, a)| {
            self.summaries[i + 1..].iter().any(|b| {
                !self.is_ancestor(a.id, b.id)
                    && !self.is_ancestor(b.id, a.id)
                    && a.storage_loaded
                        .intersection(&b.storage_loaded)
                        .next()
                        .is_some()
            })
        });
        Facts {
            vector_access: self.accesses.iter().any(|a| a.vector),
            coalesced_multi,
            workgroup_tiling,
            double_buffered,
            register_blocking,
            tiled_loop: self.summaries.iter().any(|l| l.tiled),
            streaming_loop: self.summaries.iter().any(|l| l.coupled),
            multi_pass,
            workgroup_cooperation: self.any_barrier || self.wg_access,
            subgroup_ops: self.subgroup,
            outputs,
        }
    }

    fn is_ancestor(&self, a: LoopId, mut b: LoopId) -> bool {
        while let Some(p) = self.loops[b] {
            if p == a {
                return true;
            }
            b = p;
        }
        false
    }

    /// Whether the index is "adjacent invocations, adjacent elements": coefficient exactly 1 on
    /// the x position and no other dependence on it.
    fn unit_in_x(&self, index: &Poly) -> bool {
        index.0.get(&vec![Atom::ThreadX]) == Some(&1)
            && index.0.keys().all(|m| {
                m.as_slice() == [Atom::ThreadX]
                    || m.iter().all(|a| match a {
                        Atom::ThreadX => false,
                        Atom::Opaque(i) => !self.opaque_deps[*i as usize].contains(&Atom::ThreadX),
                        _ => true,
                    })
            })
    }

    /// Whether a step between two elements skips exactly over whole workgroup-wide (or grid-wide)
    /// runs: `k · wg_x` or `k · wg_x · num_workgroups.x`, `k ≠ 0`.
    fn whole_runs(step: &Poly, wg_x: i64) -> bool {
        match step.0.len() {
            1 => {
                let (m, c) = step.0.iter().next().expect("one term");
                *c % wg_x == 0 && (m.is_empty() || m.as_slice() == [Atom::NumGroupsX])
            }
            _ => false,
        }
    }

    fn coalesced_multi(&self, wg_x: i64) -> bool {
        let coalesced: Vec<&StorageAccess> = self
            .accesses
            .iter()
            .filter(|a| self.unit_in_x(&a.index))
            .collect();
        // A loop that may run more than once walks over elements in whole runs.
        let looped = coalesced.iter().any(|a| {
            a.loops.iter().any(|&l| {
                self.trips[l].is_none_or(|t| t > 1)
                    && Self::whole_runs(&a.index.coefficient_of(Atom::Iter(l)), wg_x)
            })
        });
        // Or two accesses (copies of an unrolled loop) are whole runs apart.
        let unrolled = coalesced.iter().enumerate().any(|(i, a)| {
            coalesced[i + 1..].iter().any(|b| {
                a.global == b.global
                    && a.loops == b.loops
                    && a.index
                        .add(&b.index, -1)
                        .is_some_and(|d| Self::whole_runs(&d, wg_x))
            })
        });
        looped || unrolled
    }

    /// Register blocking in loop `l`: it carries a private array of accumulators, or at least two
    /// independent accumulators that each reach a storage write alone.
    fn blocks_registers(&self, l: &LoopSummary) -> bool {
        if l.array_accumulator {
            return true;
        }
        if l.accumulators.len() < 2 {
            return false;
        }
        let acc: BTreeSet<Var> = l.accumulators.iter().copied().collect();
        let mut alone = BTreeSet::new();
        for s in &self.storage_stores {
            // Everything the written value reads, through variables, stopping at accumulators.
            let mut reached = BTreeSet::new();
            let mut todo: Vec<Var> = s.locals.iter().copied().collect();
            let mut seen = BTreeSet::new();
            while let Some(v) = todo.pop() {
                if !seen.insert(v) {
                    continue;
                }
                if acc.contains(&v) {
                    reached.insert(v);
                    continue;
                }
                if let Some(d) = self.var_deps.get(&v) {
                    todo.extend(d.locals.iter().copied());
                }
            }
            if reached.len() == 1 {
                alone.extend(reached);
            }
        }
        let alone: Vec<Var> = alone.into_iter().collect();
        alone.iter().enumerate().any(|(i, a)| {
            alone[i + 1..]
                .iter()
                .any(|b| !l.full[a].locals.contains(b) && !l.full[b].locals.contains(a))
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers

fn binary(op: BinaryOperator, l: &Poly, r: &Poly) -> Option<Poly> {
    match op {
        BinaryOperator::Add => l.add(r, 1),
        BinaryOperator::Subtract => l.add(r, -1),
        BinaryOperator::Multiply => l.mul(r),
        BinaryOperator::ShiftLeft => {
            let k = r.as_const()?;
            (0..31)
                .contains(&k)
                .then(|| l.mul(&Poly::constant(1 << k)))
                .flatten()
        }
        _ => {
            let (a, b) = (l.as_const()?, r.as_const()?);
            let v = match op {
                BinaryOperator::Divide => a.checked_div(b)?,
                BinaryOperator::Modulo => a.checked_rem(b)?,
                BinaryOperator::ShiftRight => a.checked_shr(u32::try_from(b).ok()?)?,
                BinaryOperator::And => a & b,
                BinaryOperator::InclusiveOr => a | b,
                BinaryOperator::ExclusiveOr => a ^ b,
                _ => return None,
            };
            Some(Poly::constant(v))
        }
    }
}

/// `a op b` ⇔ `b mirror(op) a`.
fn mirror(op: BinaryOperator) -> Option<BinaryOperator> {
    use BinaryOperator as B;
    Some(match op {
        B::Less => B::Greater,
        B::LessEqual => B::GreaterEqual,
        B::Greater => B::Less,
        B::GreaterEqual => B::LessEqual,
        B::NotEqual => B::NotEqual,
        _ => return None,
    })
}

/// `!(a op b)` ⇔ `a negate(op) b`.
fn negate(op: BinaryOperator) -> Option<BinaryOperator> {
    use BinaryOperator as B;
    Some(match op {
        B::Less => B::GreaterEqual,
        B::LessEqual => B::Greater,
        B::Greater => B::LessEqual,
        B::GreaterEqual => B::Less,
        B::Equal => B::NotEqual,
        _ => return None,
    })
}

/// Iterations of `for (v = c0; v op bound; v += s)`.
fn trips(c0: i64, s: i64, op: BinaryOperator, bound: i64) -> Option<u64> {
    use BinaryOperator as B;
    let ceil_div = |n: i64, d: i64| -> i64 { if n <= 0 { 0 } else { (n + d - 1) / d } };
    let n = match op {
        B::Less if s > 0 => ceil_div(bound - c0, s),
        B::LessEqual if s > 0 => ceil_div(bound - c0 + 1, s),
        B::Greater if s < 0 => ceil_div(c0 - bound, -s),
        B::GreaterEqual if s < 0 => ceil_div(c0 - bound + 1, -s),
        B::NotEqual if s != 0 && (bound - c0) % s == 0 && (bound - c0) / s >= 0 => (bound - c0) / s,
        _ => return None,
    };
    u64::try_from(n).ok()
}

/// The local variable or global a pointer expression is rooted at.
fn pointer_root(function: &Function, mut e: Handle<Expression>) -> Option<Expression> {
    loop {
        match &function.expressions[e] {
            Expression::Access { base, .. } | Expression::AccessIndex { base, .. } => e = *base,
            root @ (Expression::LocalVariable(_) | Expression::GlobalVariable(_)) => {
                return Some(root.clone());
            }
            _ => return None,
        }
    }
}

/// A syntactic scan of a loop's own statements (calls are not followed): which local variables it
/// stores, which it reads before writing, and which are simple inductions.
fn prescan(module: &Module, function: &Function, body: &Block, continuing: &Block) -> Prescan {
    let mut order: BTreeMap<Handle<LocalVariable>, bool> = BTreeMap::new();
    let mut stores: BTreeMap<Handle<LocalVariable>, Vec<Option<Handle<Expression>>>> =
        BTreeMap::new();
    fn scan(
        function: &Function,
        block: &Block,
        order: &mut BTreeMap<Handle<LocalVariable>, bool>,
        stores: &mut BTreeMap<Handle<LocalVariable>, Vec<Option<Handle<Expression>>>>,
    ) {
        for s in block.iter() {
            match s {
                Statement::Emit(range) => {
                    for h in range.clone() {
                        if let Expression::Load { pointer } = function.expressions[h]
                            && let Some(Expression::LocalVariable(v)) =
                                pointer_root(function, pointer)
                        {
                            order.entry(v).or_insert(true);
                        }
                    }
                }
                Statement::Store { pointer, value } => {
                    if let Some(Expression::LocalVariable(v)) = pointer_root(function, *pointer) {
                        order.entry(v).or_insert(false);
                        let whole =
                            matches!(function.expressions[*pointer], Expression::LocalVariable(_));
                        stores.entry(v).or_default().push(whole.then_some(*value));
                    }
                }
                Statement::Call { arguments, .. } => {
                    for a in arguments {
                        if let Some(Expression::LocalVariable(v)) = pointer_root(function, *a) {
                            order.entry(v).or_insert(true);
                            stores.entry(v).or_default().push(None);
                        }
                    }
                }
                Statement::Block(b) => scan(function, b, order, stores),
                Statement::If { accept, reject, .. } => {
                    scan(function, accept, order, stores);
                    scan(function, reject, order, stores);
                }
                Statement::Switch { cases, .. } => {
                    for c in cases {
                        scan(function, &c.body, order, stores);
                    }
                }
                Statement::Loop {
                    body, continuing, ..
                } => {
                    scan(function, body, order, stores);
                    scan(function, continuing, order, stores);
                }
                _ => {}
            }
        }
    }
    scan(function, body, &mut order, &mut stores);
    scan(function, continuing, &mut order, &mut stores);

    let stored: BTreeSet<Handle<LocalVariable>> = stores.keys().copied().collect();
    let mut pre = Prescan::default();
    for (&v, values) in &stores {
        let loaded_first = order.get(&v) == Some(&true);
        pre.stored.insert(v, loaded_first);
        let [Some(value)] = values.as_slice() else {
            continue;
        };
        if !loaded_first {
            continue;
        }
        let Expression::Binary { op, left, right } = function.expressions[*value] else {
            continue;
        };
        let is_self = |e: Handle<Expression>| {
            matches!(function.expressions[e], Expression::Load { pointer }
                if matches!(function.expressions[pointer], Expression::LocalVariable(h) if h == v))
        };
        let step = match op {
            BinaryOperator::Add if is_self(left) => Some((right, 1)),
            BinaryOperator::Add if is_self(right) => Some((left, 1)),
            BinaryOperator::Subtract if is_self(left) => Some((right, -1)),
            _ => None,
        };
        if let Some((e, sign)) = step
            && invariant(module, function, e, &stored)
        {
            pre.induction.insert(v, (e, sign));
        }
    }
    pre
}

/// Whether an expression has the same value in every iteration of a loop that stores `stored`:
/// it reads no variable the loop stores, only uniform (or immediate) memory, and no call or
/// operation result.
fn invariant(
    module: &Module,
    function: &Function,
    e: Handle<Expression>,
    stored: &BTreeSet<Handle<LocalVariable>>,
) -> bool {
    match &function.expressions[e] {
        Expression::Load { pointer } => {
            let root_ok = match pointer_root(function, *pointer) {
                Some(Expression::LocalVariable(v)) => !stored.contains(&v),
                Some(Expression::GlobalVariable(g)) => matches!(
                    module.global_variables[g].space,
                    AddressSpace::Uniform | AddressSpace::Immediate
                ),
                _ => false,
            };
            root_ok && invariant(module, function, *pointer, stored)
        }
        Expression::CallResult(_)
        | Expression::AtomicResult { .. }
        | Expression::WorkGroupUniformLoadResult { .. }
        | Expression::SubgroupBallotResult
        | Expression::SubgroupOperationResult { .. }
        | Expression::RayQueryProceedResult => false,
        other => operands(other)
            .into_iter()
            .all(|o| invariant(module, function, o, stored)),
    }
}

//! Vector lanes as invocations: a kernel whose invocations each compute one `vec4<f32>` of
//! outputs, read as the kernel that computes one `f32` of them per invocation over `f32` views of
//! its vector buffers.
//!
//! Why. Matrix multiplies written for WebGPU often pack four columns into a `vec4<f32>` (tfjs's
//! and webgpu-blas's style): `let a4 = a[row * K4 + k4];` then `acc += a4.x * b[(4k4 + 0) * N4 +
//! col4]` and three more lines for `.y`, `.z`, `.w`. `tile` proves its pattern on one `f32` sum
//! per invocation stepped once per iteration; this module is how it reaches the vector spelling
//! without a second pattern. The result here is an intermediate program, valid and equal to the
//! parent, that `tile` then rewrites (`lanes(4, x) → tile(..)`): it is never a candidate itself.
//!
//! **What is proven from naga's IR** ([`split`]):
//! - the entry point reads only `global_invocation_id`; its body is straight-line code, bounds
//!   guards, one counted loop stepping by one and one store after it (`flow::walk_entry`, as for
//!   `tile`);
//! - the loop's body is its exit test, `let`s, and `n ≥ 1` updates `acc = acc + x * y` (either
//!   order, or `fma(x, y, acc)`) of one local `acc: vecW<f32>` (`W` 2 or 4; or `f32`, below) that
//!   starts at zero,
//!   then the step: every `x` and `y` is a load from a storage buffer of either a whole `vecW<f32>`
//!   (a *lane* factor: lane `j` of the update reads its component `j`), one fixed component of one
//!   (`a4.y`) or an `f32`;
//! - the store writes `acc` itself to an `array<vecW<f32>>` at an index affine in the ids whose
//!   coefficient on one id component `d` is the literal 1; every lane factor's index has that
//!   coefficient 1 too, and no other factor's index reads `gid.d`. Every index is affine
//!   (`ir::Analysis::index_form`) in the id components and the counter;
//! - re-rolled: the `n` updates of an iteration read, position by position, the same buffers at
//!   `f32`-view indices `F₀ + c·s` (`c = 0..n`), and `F₀` steps by `n·s` per iteration. Then the
//!   iteration's updates are those of `n` consecutive values `kf = n·k + c` of one counter, in
//!   the same order, each adding one product: exactly the sums of the parent, term for term;
//! - no function but the entry point names a viewed buffer, and the guards and the loop's
//!   bounds read none.
//!
//! **The program.** Invocation `gid'` with `gid'.d = W·gid.d + j` computes lane `j` of the
//! parent's invocation `gid`: its guards are the parent's with `gid.d` read as `gid'.d / W`, its
//! loop runs `kf` over `n·start .. n·bound` adding `x[F_x(kf)] * y[F_y(kf)]` to an `f32`, and it
//! stores element `W·I + j` of the output's `f32` view (`I` the parent's index), which is affine
//! in `gid'` since `I`'s coefficient on `gid.d` is 1. The vector bindings are declared
//! `array<f32>`: the same buffers, read through a finer view the runtime accepts
//! (`kf_runtime::views`). The launch has `W` times the invocations the parent launches along `d`
//! (its whole workgroups, so an invocation past its grid that no guard stops has its lanes too).
//!
//! **An `f32` sum of vector components** (`sum += dot(x[row * K4 + i], w[col * K4 + i])`, a
//! linear layer with both operands packed along `k`, or `acc += a4.x * b4.x` line by line) needs
//! no lanes: `dot(x, y)` is read as its `W` products in component order, the updates are
//! re-rolled over the `f32` views as above, and the launch is the parent's (`lanes(rolled ×4)`).
//! The order of a `dot`'s additions is the implementation's; the rolled sum adds in component
//! order, a reassociation `tile` makes anyway.
//!
//! **The epilogue.** The stored value may be any lane-wise function of the accumulator
//! ([`lanewise`]): arithmetic, `select` and component-wise math with values the same in every
//! lane and with whole vectors loaded at an index that steps by one element along `d` (a bias
//! `bias[col4]`, a residual `c[i]`), which become lanes of their buffers' `f32` views too.
//!
//! **Limits.** `mat4x4` operands, a vector read through a `var`, and an epilogue that calls a
//! function on the vector are not read.

use super::{Rewrite, Skip, Subject};
use crate::analysis::flow::{
    Entry, Exprs, LoopPattern, Printer, TopLevel, Value, element_index, flatten, is_break,
    one_unit_loop, statement_kind, sum_of_products, walk_entry,
};
use crate::analysis::ir::{self, Analysis, Cmp, Edit, IndexForm, Poly, Var};
use kf_runtime::expr::{Op, SizeExpr};
use kf_runtime::program::{Dispatch, DispatchMode};
use naga::{Expression, Handle, Statement, TypeInner};

/// Symbol numbers of the loop-carried values while the loop is walked.
const COUNTER: usize = 0;
const ACC: usize = 1;

/// How a factor reads its buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum At {
    /// The whole vector: lane `j` reads component `j`.
    Lane,
    /// One component of a vector.
    Comp(u32),
    /// An `f32` element.
    Scalar,
}

/// One factor of a product: a load from a storage buffer.
#[derive(Clone, Copy, Debug)]
struct Factor {
    global: Handle<naga::GlobalVariable>,
    index: Handle<Expression>,
    at: At,
    /// Scalars per element of the buffer (1 for `array<f32>`).
    vw: u32,
}

/// An affine `u32` index: coefficients of the three id components and of the counter, and the
/// uniform part.
#[derive(Clone, Debug, Default, PartialEq)]
struct Affine {
    gid: [Poly; 3],
    counter: Poly,
    offset: Poly,
}

impl Affine {
    fn of(f: &IndexForm, counter: Handle<naga::LocalVariable>) -> Option<Affine> {
        let mut out = Affine {
            offset: f.offset.clone(),
            ..Affine::default()
        };
        for (v, c) in &f.terms {
            match *v {
                Var::Builtin(naga::BuiltIn::GlobalInvocationId, k) if k < 3 => {
                    out.gid[k as usize] = c.clone()
                }
                Var::Loop(l) if l == counter => out.counter = c.clone(),
                _ => return None,
            }
        }
        Some(out)
    }

    fn scale(&self, k: i64) -> Affine {
        Affine {
            gid: self.gid.clone().map(|p| p.scale(k)),
            counter: self.counter.scale(k),
            offset: self.offset.scale(k),
        }
    }

    /// The index as `u32` WGSL over `kfl_gid` and the counter `kfl_k`.
    fn text(&self) -> String {
        let mut parts: Vec<(bool, String)> = Vec::new();
        let mut term = |p: &Poly, var: Option<&str>| {
            for m in &p.0 {
                let mut factors: Vec<String> =
                    m.atoms.iter().map(|a| format!("u32({a})")).collect();
                if let Some(v) = var {
                    factors.push(v.to_owned());
                }
                let k = m.k.unsigned_abs();
                if k != 1 || factors.is_empty() {
                    factors.insert(0, format!("{k}u"));
                }
                parts.push((m.k < 0, factors.join(" * ")));
            }
        };
        for (d, p) in self.gid.iter().enumerate() {
            term(p, Some(&format!("kfl_gid.{}", AXES[d])));
        }
        term(&self.counter, Some("kfl_k"));
        term(&self.offset, None);
        let mut out = String::new();
        for (_, t) in parts.iter().filter(|(n, _)| !n) {
            if !out.is_empty() {
                out.push_str(" + ");
            }
            out.push_str(t);
        }
        if out.is_empty() {
            out.push_str("0u");
        }
        for (_, t) in parts.iter().filter(|(n, _)| *n) {
            out.push_str(" - ");
            out.push_str(t);
        }
        out
    }
}

const AXES: [&str; 3] = ["x", "y", "z"];

/// Walks the entry point, proving the pattern.
struct Walk<'a> {
    e: &'a Entry<'a>,
    ir: &'a Analysis<'a>,
    top: TopLevel,
    looped: Option<LoopFacts>,
}

struct LoopFacts {
    counter: Handle<naga::LocalVariable>,
    start: Value,
    bound: Handle<Expression>,
    inclusive: bool,
    width: u32,
    terms: Vec<[Factor; 2]>,
}

impl LoopPattern for Walk<'_> {
    fn top(&mut self) -> &mut TopLevel {
        &mut self.top
    }

    fn on_loop(
        &mut self,
        body: &naga::Block,
        continuing: &naga::Block,
        break_if: Option<Handle<Expression>>,
    ) -> Result<(), Skip> {
        let (e, a) = (self.e, self.ir);
        if break_if.is_some() {
            return Err(Skip("the loop ends with `break if`".into()));
        }
        let fl = one_unit_loop(a)?;
        let counter = fl.var;
        let start = *self
            .top
            .locals
            .current
            .get(&counter)
            .ok_or_else(|| Skip("the loop's counter has no value before it".into()))?;
        let [bound] = fl.bounds.as_slice() else {
            return Err(Skip("the loop has more than one bound".into()));
        };
        self.top
            .locals
            .current
            .insert(counter, Value::Symbol(COUNTER));
        let mut list = Vec::new();
        flatten(body, &mut list);
        let mut cont = Vec::new();
        flatten(continuing, &mut cont);
        // The accumulator: the local the first store that is not the step writes.
        let (acc, width) = list
            .iter()
            .chain(&cont)
            .find_map(|s| match s {
                Statement::Store { pointer, .. } => e.as_local(*pointer).filter(|l| *l != counter),
                _ => None,
            })
            .and_then(|l| {
                match &e.module.types[e.func.local_variables[l].ty].inner {
                    TypeInner::Scalar(naga::Scalar::F32) => Some(1),
                    t => vector_width(t),
                }
                .map(|w| (l, w))
            })
            .ok_or_else(|| {
                Skip("the loop does not update an f32 or a vec2 or vec4 of f32".into())
            })?;
        if !self
            .top
            .locals
            .current
            .get(&acc)
            .is_none_or(|v| is_zero(e, *v))
        {
            return Err(Skip("the accumulator does not start at zero".into()));
        }
        self.top.locals.current.insert(acc, Value::Symbol(ACC));
        let mut exit_seen = false;
        let mut terms = Vec::new();
        for s in list.into_iter().chain(cont) {
            match s {
                Statement::Emit(r) => self.top.locals.emit(e, r)?,
                Statement::If { accept, reject, .. }
                    if !exit_seen
                        && terms.is_empty()
                        && ((accept.is_empty() && is_break(reject))
                            || (is_break(accept) && reject.is_empty())) =>
                {
                    exit_seen = true;
                }
                Statement::Store { pointer, .. }
                    if exit_seen && e.as_local(*pointer) == Some(counter) =>
                {
                    // The step (`ir` proved it is `+ 1`); nothing may read the counter after it.
                    self.top.locals.current.remove(&counter);
                }
                Statement::Store { pointer, value }
                    if exit_seen && e.as_local(*pointer) == Some(acc) =>
                {
                    let locals = &self.top.locals;
                    let is_acc = |h| locals.loads.get(&h) == Some(&Value::Symbol(ACC));
                    match sum_of_products(e, *value, is_acc) {
                        Some((x, y)) => {
                            terms.push([factor(e, a, x, width)?, factor(e, a, y, width)?])
                        }
                        None => terms.extend(
                            dot_terms(e, *value, is_acc, width).ok_or_else(|| {
                                Skip(
                                    "an update of the accumulator is not `acc + x * y` or `acc + dot(x, y)`"
                                        .into(),
                                )
                            })?,
                        ),
                    }
                    // The next update reads the running sum.
                    self.top.locals.current.insert(acc, Value::Symbol(ACC));
                }
                other => {
                    return Err(Skip(format!(
                        "the loop has {} besides its test, accumulation and step",
                        statement_kind(other)
                    )));
                }
            }
        }
        if terms.is_empty() {
            return Err(Skip("the loop does not update its accumulator".into()));
        }
        self.top.locals.current.remove(&counter);
        self.top.locals.current.insert(acc, Value::Symbol(ACC));
        self.looped = Some(LoopFacts {
            counter,
            start,
            bound: bound.bound,
            inclusive: bound.cmp == Cmp::Le,
            width,
            terms,
        });
        Ok(())
    }
}

/// The terms of `acc + dot(x, y)` (either order) with `x` and `y` whole vectors loaded from
/// storage buffers, one product of components per term in component order, into an `f32` sum.
fn dot_terms(
    e: &Entry<'_>,
    update: Handle<Expression>,
    is_acc: impl Fn(Handle<Expression>) -> bool,
    width: u32,
) -> Option<Vec<[Factor; 2]>> {
    if width != 1 {
        return None;
    }
    let Expression::Binary {
        op: naga::BinaryOperator::Add,
        left,
        right,
    } = e.func.expressions[update]
    else {
        return None;
    };
    let other = if is_acc(left) {
        right
    } else if is_acc(right) {
        left
    } else {
        return None;
    };
    let Expression::Math {
        fun: naga::MathFunction::Dot,
        arg,
        arg1: Some(arg1),
        ..
    } = e.func.expressions[other]
    else {
        return None;
    };
    let whole = |h: Handle<Expression>| {
        let Expression::Load { pointer } = e.func.expressions[h] else {
            return None;
        };
        let global = e.root_global(pointer)?;
        let vw = element_width(e, global)?;
        (vector_width(e.ty(h)) == Some(vw)).then_some((global, element_index(e, pointer)?, vw))
    };
    let (gx, ix, vw) = whole(arg)?;
    let (gy, iy, vy) = whole(arg1)?;
    (vw == vy).then(|| {
        (0..vw)
            .map(|c| {
                let f = |global, index| Factor {
                    global,
                    index,
                    at: At::Comp(c),
                    vw,
                };
                [f(gx, ix), f(gy, iy)]
            })
            .collect()
    })
}

/// The lane count of a `vec2<f32>` or `vec4<f32>`.
fn vector_width(t: &TypeInner) -> Option<u32> {
    match *t {
        TypeInner::Vector {
            size: size @ (naga::VectorSize::Bi | naga::VectorSize::Quad),
            scalar: naga::Scalar::F32,
        } => Some(size as u32),
        _ => None,
    }
}

/// The lane count of a storage buffer declared `array<vecW<f32>>`.
fn element_width(e: &Entry<'_>, g: Handle<naga::GlobalVariable>) -> Option<u32> {
    let var = &e.module.global_variables[g];
    if !matches!(var.space, naga::AddressSpace::Storage { .. }) {
        return None;
    }
    match e.module.types[var.ty].inner {
        TypeInner::Array { base, .. } => vector_width(&e.module.types[base].inner),
        _ => None,
    }
}

/// Whether a local's value is the zero vector (`vec4<f32>()`, `vec4<f32>(0.0)`, four zeros).
fn is_zero(e: &Entry<'_>, v: Value) -> bool {
    let Value::Expr(h) = v else {
        return false;
    };
    fn zero(e: &Entry<'_>, h: Handle<Expression>) -> bool {
        match &e.func.expressions[h] {
            Expression::ZeroValue(_) => true,
            Expression::Literal(l) => matches!(
                l,
                naga::Literal::F32(0.0) | naga::Literal::AbstractFloat(0.0)
            ),
            Expression::Splat { value, .. } => zero(e, *value),
            Expression::Compose { components, .. } => components.iter().all(|c| zero(e, *c)),
            _ => false,
        }
    }
    zero(e, h)
}

/// A factor of an update: a load of a whole vector, of one of its components, or of an `f32`.
fn factor(
    e: &Entry<'_>,
    a: &Analysis<'_>,
    h: Handle<Expression>,
    width: u32,
) -> Result<Factor, Skip> {
    let no = || Skip("a factor of an update is not a load from a storage buffer".into());
    let load =
        |h: Handle<Expression>| -> Option<(Handle<naga::GlobalVariable>, Handle<Expression>)> {
            let Expression::Load { pointer } = e.func.expressions[h] else {
                return None;
            };
            let g = e.root_global(pointer)?;
            if !matches!(
                e.module.global_variables[g].space,
                naga::AddressSpace::Storage { .. }
            ) {
                return None;
            }
            Some((g, element_index(e, pointer)?))
        };
    // A component read in place: `a[i].y`, `a[i][1]`.
    if let Expression::Load { pointer } = e.func.expressions[h] {
        let component = match e.func.expressions[pointer] {
            Expression::AccessIndex { base, index } => Some((base, Some(i64::from(index)))),
            Expression::Access { base, index } => Some((base, a.const_int(index))),
            _ => None,
        };
        if let Some((base, Some(c))) = component
            && let Some(global) = e.root_global(base)
            && let Some(index) = element_index(e, base)
            && let Some(vw) = element_width(e, global)
            && (0..i64::from(vw)).contains(&c)
        {
            return Ok(Factor {
                global,
                index,
                at: At::Comp(c as u32),
                vw,
            });
        }
    }
    if let Some((global, index)) = load(h) {
        return match e.ty(h) {
            TypeInner::Scalar(naga::Scalar::F32) => Ok(Factor {
                global,
                index,
                at: At::Scalar,
                vw: 1,
            }),
            t if width > 1 && vector_width(t) == Some(width) => Ok(Factor {
                global,
                index,
                at: At::Lane,
                vw: width,
            }),
            _ => Err(no()),
        };
    }
    if let Expression::AccessIndex { base, index: c } = e.func.expressions[h]
        && let Some((global, index)) = load(base)
        && let Some(vw) = vector_width(e.ty(base))
        && c < vw
    {
        return Ok(Factor {
            global,
            index,
            at: At::Comp(c),
            vw,
        });
    }
    Err(no())
}

/// `subject`'s program with each vector lane an invocation (see the module documentation), or
/// why its pattern does not hold.
pub fn split(subject: &Subject<'_>) -> Result<Rewrite, Skip> {
    let program = subject.program;
    if program.is_sequence() {
        return Err(Skip("a sequence of launches".into()));
    }
    let parsed = ir::parse(&program.wgsl).map_err(|e| Skip(e.to_string()))?;
    let a = parsed
        .analyse(&program.entry)
        .map_err(|e| Skip(e.to_string()))?;
    let e = Entry::new(&a)?;
    if e.gid_arg.is_none() {
        return Err(Skip(
            "the entry point does not read global_invocation_id".into(),
        ));
    }
    let mut walk = Walk {
        e: &e,
        ir: &a,
        top: TopLevel::new(e.func),
        looped: None,
    };
    walk_entry(&mut walk, &e, &e.func.body)?;
    let facts = walk.looped.ok_or_else(|| Skip("no loop".into()))?;
    let (store_pointer, store_value) = walk
        .top
        .store
        .ok_or_else(|| Skip("no store after the loop".into()))?;
    let locals = walk.top.locals;
    let guards = walk.top.guards;
    let w = facts.width;

    let x = Exprs {
        e: &e,
        locals: &locals,
    };
    // The stored value, lane by lane: the whole vectors it loads besides the accumulator (a
    // bias, a residual) are lanes of their buffers too.
    let acc_symbol = [None, (w == 1).then(|| "kfl_acc".to_owned())];
    let first_pass = Printer {
        x: &x,
        gid: "kfl_gid",
        symbols: &acc_symbol,
    };
    let mut epilogue_loads = Vec::new();
    lanewise(
        &first_pass,
        w,
        store_value,
        &mut |g, i| {
            epilogue_loads.push((g, i));
            Ok(String::new())
        },
        &mut Vec::new(),
    )?;

    // The store: into a vector buffer.
    let out = e
        .root_global(store_pointer)
        .filter(|g| e.is_writable_storage(*g))
        .ok_or_else(|| Skip("the result is not stored to a storage buffer".into()))?;
    let out_index = element_index(&e, store_pointer)
        .ok_or_else(|| Skip("the result is not stored to an array element".into()))?;
    let affine = |h| {
        a.index_form(h)
            .and_then(|f| Affine::of(&f, facts.counter))
            .ok_or_else(|| {
                Skip("an index is not affine in the invocation id and the loop counter".into())
            })
    };
    let out_form = affine(out_index)?;
    if !out_form.counter.is_zero() {
        return Err(Skip("the output index steps with the loop counter".into()));
    }

    // The lane axis: unit in the output and in every lane factor, absent from the others. An
    // `f32` sum of vector components has none: its updates are only re-rolled.
    let one = Poly::constant(1);
    if w == 1 && facts.terms.iter().flatten().all(|f| f.at == At::Scalar) {
        return Err(Skip("no vector operand".into()));
    }
    let d = (0..3)
        .filter(|_| w > 1)
        .find(|&d| {
            out_form.gid[d] == one
                && facts.terms.iter().flatten().all(|f| {
                    let Ok(form) = affine(f.index) else {
                        return false;
                    };
                    match f.at {
                        At::Lane => form.gid[d] == one,
                        _ => form.gid[d].is_zero(),
                    }
                })
                && epilogue_loads.iter().all(|(_, i)| {
                    affine(*i).is_ok_and(|form| form.gid[d] == one && form.counter.is_zero())
                })
        })
        .map(Some)
        .or_else(|| (w == 1).then_some(None))
        .ok_or_else(|| {
            Skip("no id component steps the output and the vector operands by one element".into())
        })?;

    // Each factor's f32-view index; lanes take `gid.d` into `gid'.d`.
    let view = |f: &Factor| -> Result<Affine, Skip> {
        let form = affine(f.index)?;
        Ok(match f.at {
            At::Scalar => form,
            At::Comp(c) => {
                let mut v = form.scale(i64::from(f.vw));
                v.offset = v.offset.add(&Poly::constant(i64::from(c)));
                v
            }
            At::Lane => {
                let mut v = form.scale(i64::from(f.vw));
                v.gid[d.expect("lane factors have a lane axis")] = one.clone();
                v
            }
        })
    };
    let mut out_view = out_form.scale(i64::from(w));
    if let Some(d) = d {
        out_view.gid[d] = one.clone();
    }

    // Re-roll: position by position, the n updates read F₀ + c·s, and F₀ steps by n·s.
    let n = facts.terms.len() as i64;
    let first = facts.terms[0];
    let mut rolled = Vec::new();
    for p in 0..2 {
        let mut views = Vec::new();
        for t in &facts.terms {
            let f = if t[0].global == first[0].global && t[1].global == first[1].global {
                t[p]
            } else if t[1].global == first[0].global && t[0].global == first[1].global {
                t[1 - p]
            } else {
                return Err(Skip(
                    "the updates of an iteration read different buffers".into(),
                ));
            };
            views.push(view(&f)?);
        }
        let f0 = views[0].clone();
        let step = if n == 1 {
            f0.counter.clone()
        } else {
            views[1].offset.add(&f0.offset.scale(-1))
        };
        for (c, v) in views.iter().enumerate() {
            let mut want = f0.clone();
            want.offset = want.offset.add(&step.scale(c as i64));
            if *v != want {
                return Err(Skip(
                    "the updates of an iteration are not consecutive steps of one sum".into(),
                ));
            }
        }
        if f0.counter != step.scale(n) {
            return Err(Skip(
                "the updates of an iteration are not consecutive steps of one sum".into(),
            ));
        }
        let mut r = f0;
        r.counter = step;
        rolled.push((first[p].global, r));
    }

    // The buffers read as scalars: declared `array<vecW<f32>>`, named by the entry point alone.
    let mut viewed: Vec<Handle<naga::GlobalVariable>> = if w > 1 { vec![out] } else { Vec::new() };
    for t in facts.terms.iter().flatten() {
        if t.at != At::Scalar && !viewed.contains(&t.global) {
            viewed.push(t.global);
        }
    }
    for &(g, _) in &epilogue_loads {
        if !viewed.contains(&g) {
            viewed.push(g);
        }
    }
    let code = a.code();
    let mut edits = Vec::new();
    let mut names = Vec::new();
    for &g in &viewed {
        let var = &a.module.global_variables[g];
        let name = var
            .name
            .clone()
            .ok_or_else(|| Skip("a vector buffer has no name".into()))?;
        if named_elsewhere(a.module, &program.entry, g) {
            return Err(Skip(format!("`{name}` is named outside the entry point")));
        }
        let decl = crate::analysis::text::range(a.module.global_variables.get_span(g))
            .ok_or_else(|| Skip(format!("`{name}`'s declaration has no span")))?;
        let (range, written) = crate::analysis::text::declared_type(code, decl)
            .ok_or_else(|| Skip(format!("`{name}`'s declared type is not found")))?;
        let vec = if element_width(&e, g) == Some(4) {
            "vec4"
        } else {
            "vec2"
        };
        if written != format!("array<{vec}<f32>>") && written != format!("array<{vec}f>") {
            return Err(Skip(format!(
                "`{name}`'s declared type is not written `array<{vec}<f32>>`"
            )));
        }
        edits.push(Edit::replace(range, "array<f32>"));
        names.push(name);
    }
    // A scalar factor of a viewed buffer would read it at the wrong index.
    if facts
        .terms
        .iter()
        .flatten()
        .any(|t| t.at == At::Scalar && viewed.contains(&t.global))
    {
        return Err(Skip("a vector buffer is also read as scalars".into()));
    }

    // The text: guards with gid.d read as gid'.d / W, the rolled loop, the store.
    // Components the parent never reads print as `0u`: the same values, and no dependency on
    // an axis the tiling operators would take for a batch.
    let read = a
        .builtin(naga::BuiltIn::GlobalInvocationId)
        .map(|b| (b.components, b.whole))
        .expect("checked above");
    let mut old: [String; 3] = std::array::from_fn(|c| {
        if read.0[c] || read.1 {
            format!("kfl_gid.{}", AXES[c])
        } else {
            "0u".to_owned()
        }
    });
    if let Some(d) = d {
        old[d] = format!("(kfl_gid.{} / {w}u)", AXES[d]);
    }
    let gid = format!("vec3<u32>({})", old.join(", "));
    let symbols = [None, None];
    let printer = Printer {
        x: &x,
        gid: &gid,
        symbols: &symbols,
    };
    let mut foreign = Vec::new();
    let mut guard_text = Vec::new();
    for g in &guards {
        let c = printer.expr(g.cond)?;
        guard_text.push(if g.active_when {
            format!("!({c})")
        } else {
            c.clone()
        });
        foreign.push(c);
    }
    let start = format!("u32({})", printer.value(facts.start)?);
    let mut bound = format!("u32({})", printer.expr(facts.bound)?);
    if facts.inclusive {
        bound = format!("({bound} + 1u)");
    }
    foreign.push(start.clone());
    foreign.push(bound.clone());
    let texts: Vec<String> = rolled
        .iter()
        .map(|(_, r)| r.text())
        .chain([out_view.text()])
        .collect();
    foreign.extend(texts.iter().cloned());
    let epilogue_printer = Printer {
        x: &x,
        gid: &gid,
        symbols: &acc_symbol,
    };
    let stored = lanewise(
        &epilogue_printer,
        w,
        store_value,
        &mut |g, i| {
            let mut v = affine(i)?.scale(i64::from(w));
            if let Some(d) = d {
                v.gid[d] = one.clone();
            }
            let name = a.module.global_variables[g]
                .name
                .clone()
                .ok_or_else(|| Skip("an operand has no name".into()))?;
            Ok(format!("{name}[{}]", v.text()))
        },
        &mut foreign,
    )?;
    if let Some(name) = names
        .iter()
        .find(|name| foreign.iter().any(|t| names_identifier(t, name)))
    {
        return Err(Skip(format!(
            "a guard, a bound or an index reads the vector buffer `{name}`"
        )));
    }
    let name = |g: Handle<naga::GlobalVariable>| {
        a.module.global_variables[g]
            .name
            .clone()
            .ok_or_else(|| Skip("an operand has no name".into()))
    };
    let [wx, wy, wz] = program.workgroup_size;
    let mut f = String::new();
    f.push_str(&format!(
        "@compute @workgroup_size({wx}, {wy}, {wz})\nfn {}(@builtin(global_invocation_id) kfl_gid: vec3<u32>) {{\n",
        program.entry
    ));
    for g in &guard_text {
        f.push_str(&format!("    if ({g}) {{\n        return;\n    }}\n"));
    }
    f.push_str("    var kfl_acc: f32 = 0.0;\n");
    f.push_str(&format!(
        "    for (var kfl_k: u32 = {n}u * {start}; kfl_k < {n}u * {bound}; kfl_k = kfl_k + 1u) {{\n"
    ));
    f.push_str(&format!(
        "        kfl_acc = kfl_acc + {}[{}] * {}[{}];\n    }}\n",
        name(rolled[0].0)?,
        texts[0],
        name(rolled[1].0)?,
        texts[1]
    ));
    f.push_str(&format!("    {}[{}] = {stored};\n}}", name(out)?, texts[2]));
    edits.push(Edit::replace(a.entry_range()?, f));
    let text = ir::apply_edits(&program.wgsl, &edits)
        .ok_or_else(|| Skip("the lanes' edits overlap".into()))?;
    let Some(d) = d else {
        // The same invocations: only the updates were re-rolled.
        let step = format!("lanes(rolled ×{n})");
        return super::finish(subject, text, &[], step, Vec::new());
    };
    let step = format!("lanes({w}, {})", AXES[d]);
    let mut r = super::finish(subject, text, &[], step, Vec::new())?;
    // `W` invocations for each one the parent launches along `d` (whole workgroups of it: an
    // invocation past its grid that no guard stops computes outputs too), the parent's elsewhere.
    r.program.dispatch = Dispatch {
        mode: DispatchMode::Grid,
        size: [0, 1, 2].map(|i| {
            let mut ops = super::grid_extent(program, i);
            if i == d {
                if program.dispatch.mode == DispatchMode::Grid {
                    let size = u64::from(program.workgroup_size[d]);
                    ops.extend([Op::Lit(size), Op::CeilDiv, Op::Lit(size), Op::Mul]);
                }
                ops.extend([Op::Lit(u64::from(w)), Op::Mul]);
            }
            SizeExpr::from_ops(ops)
        }),
    };
    Ok(r)
}

/// Lane `j`'s part of the stored value `h`, a `vecW<f32>` computed component by component from
/// the accumulator (`kfl_acc` here), whole vectors loaded from storage buffers (printed by `load`
/// from the buffer and the element index) and values the same in every lane (printed by `p`,
/// and added to `scalars`): the lanes of `acc + bias[col4]`, `max(acc * alpha, vec4(0.0))` or
/// `select(..)` are those operations on the lanes. Anything that mixes lanes (`acc.x`, `dot`, a
/// swizzle, a vector of different components, a call) is refused. With `w == 1` the value is an
/// `f32` and is printed whole by `p`, whose symbols name the accumulator.
fn lanewise(
    p: &Printer<'_>,
    w: u32,
    h: Handle<Expression>,
    load: &mut dyn FnMut(Handle<naga::GlobalVariable>, Handle<Expression>) -> Result<String, Skip>,
    scalars: &mut Vec<String>,
) -> Result<String, Skip> {
    use Expression as E;
    let e = p.x.e;
    let mixed =
        || Skip("the stored value is not computed lane by lane from the accumulator".into());
    let lane_vector = |h: Handle<Expression>| {
        matches!(*e.ty(h), TypeInner::Vector { size, .. } if size as u32 == w) && w > 1
    };
    if !lane_vector(h) {
        // The same in every lane; it may not read the accumulator, whose symbol has no text.
        let t = p.expr(h).map_err(|_| mixed())?;
        scalars.push(t.clone());
        return Ok(t);
    }
    let mut go = |h: Handle<Expression>| lanewise(p, w, h, load, scalars);
    Ok(match &e.func.expressions[h] {
        E::Load { pointer } => match e.func.expressions[*pointer] {
            E::LocalVariable(_) => match p.x.locals.loads.get(&h).copied() {
                Some(Value::Symbol(ACC)) => "kfl_acc".to_owned(),
                Some(Value::Expr(v)) => go(v)?,
                Some(Value::Select {
                    cond,
                    accept,
                    reject,
                }) => format!("select({}, {}, {})", go(reject)?, go(accept)?, go(cond)?),
                _ => return Err(mixed()),
            },
            _ => {
                let g = e.root_global(*pointer).ok_or_else(mixed)?;
                let index = element_index(e, *pointer).ok_or_else(mixed)?;
                if element_width(e, g) != Some(w) {
                    return Err(mixed());
                }
                load(g, index)?
            }
        },
        E::Splat { value, .. } => go(*value)?,
        E::ZeroValue(_) if matches!(*e.ty(h), TypeInner::Vector { scalar, .. } if scalar == naga::Scalar::F32) => {
            "0.0".to_owned()
        }
        E::Compose { components, .. } => {
            let texts = components
                .iter()
                .map(|c| {
                    if lane_vector(*c) {
                        Err(mixed())
                    } else {
                        go(*c)
                    }
                })
                .collect::<Result<Vec<_>, _>>()?;
            if texts.iter().any(|t| *t != texts[0]) {
                return Err(mixed());
            }
            texts[0].clone()
        }
        E::Unary {
            op: naga::UnaryOperator::Negate,
            expr,
        } => format!("(-{})", go(*expr)?),
        E::Binary { op, left, right } => format!(
            "({} {} {})",
            go(*left)?,
            crate::analysis::expr::binary_op_wgsl(*op),
            go(*right)?
        ),
        E::Select {
            condition,
            accept,
            reject,
        } => format!(
            "select({}, {}, {})",
            go(*reject)?,
            go(*accept)?,
            go(*condition)?
        ),
        E::Math {
            fun,
            arg,
            arg1,
            arg2,
            arg3,
        } if componentwise(*fun) => {
            use naga::common::wgsl::TryToWgsl;
            let name = fun.try_to_wgsl().ok_or_else(mixed)?;
            let args = [Some(*arg), *arg1, *arg2, *arg3]
                .into_iter()
                .flatten()
                .map(&mut go)
                .collect::<Result<Vec<_>, _>>()?;
            format!("{name}({})", args.join(", "))
        }
        _ => return Err(mixed()),
    })
}

/// Whether a math function computes each component of its result from the same component of
/// its arguments alone, the same way in every component.
fn componentwise(fun: naga::MathFunction) -> bool {
    use naga::MathFunction as M;
    matches!(
        fun,
        M::Abs
            | M::Min
            | M::Max
            | M::Clamp
            | M::Saturate
            | M::Cos
            | M::Cosh
            | M::Sin
            | M::Sinh
            | M::Tan
            | M::Tanh
            | M::Acos
            | M::Asin
            | M::Atan
            | M::Atan2
            | M::Asinh
            | M::Acosh
            | M::Atanh
            | M::Ceil
            | M::Floor
            | M::Round
            | M::Fract
            | M::Trunc
            | M::Exp
            | M::Exp2
            | M::Log
            | M::Log2
            | M::Pow
            | M::Sqrt
            | M::InverseSqrt
            | M::Sign
            | M::Fma
            | M::Mix
            | M::Step
            | M::SmoothStep
    )
}

/// Whether a function other than `entry`, or another entry point, names global `g`.
fn named_elsewhere(module: &naga::Module, entry: &str, g: Handle<naga::GlobalVariable>) -> bool {
    let names = |f: &naga::Function| {
        f.expressions
            .iter()
            .any(|(_, x)| matches!(x, Expression::GlobalVariable(v) if *v == g))
    };
    module.functions.iter().any(|(_, f)| names(f))
        || module
            .entry_points
            .iter()
            .any(|ep| ep.name != entry && names(&ep.function))
}

/// Whether `text` names the identifier `name` (a whole token, not a member after `.`).
fn names_identifier(text: &str, name: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(name).any(|(i, _)| {
        !text[..i]
            .chars()
            .next_back()
            .is_some_and(|c| ident(c) || c == '.')
            && !text[i + name.len()..].chars().next().is_some_and(ident)
    })
}

#[cfg(test)]
mod tests;

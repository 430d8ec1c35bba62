//! 16-byte accesses: an elementwise kernel over `array<f32>` reads and writes `vec4<f32>`s.
//!
//! Why. A scalar kernel moves 4 bytes per load and store. On an H200 such a kernel stops near 55 %
//! of the copy bandwidth, coarsened or not (the loads of one invocation are still 4-byte loads,
//! each with its own bounds check), while 16-byte accesses reach the ~87 % torch's elementwise
//! kernels reach. WGSL reads a buffer only as its binding declares it, so the variant declares the
//! binding as `array<vec4<f32>>` — a view of the same buffer that the baseline's bind groups bind
//! unchanged, allowed only when the spec guarantees the length is a multiple of 4
//! (`kf_runtime::views`); when that constraint is all that is missing, the skip says which to add.
//!
//! The rewrite. Each invocation runs the work of 4 consecutive invocations of the original along
//! the contiguous dimension (as `coarsen(4, contiguous)` does): the user's entry point becomes a
//! plain function `kf_wide_<entry>(gid, kf_c, ..)` called for `kf_c = 0..3`, with every access to
//! a viewed binding replaced by component `kf_c` of a vector the new entry point holds:
//!
//! - a binding the kernel only reads is loaded once, 16 bytes, before the calls;
//! - a binding it writes is collected in a local vector (loaded first only if the kernel also reads
//!   it), with a mask of the components the calls wrote: a full mask is one 16-byte store, any
//!   other writes exactly the components written. So the original's guards, early returns and
//!   conditional stores keep their meaning: an element is written if and only if the original
//!   wrote it, and the invocations past the end write nothing.
//!
//! What it proves, from the IR (beside `coarsen`'s checks: a `grid` launch, or a `workgroups`
//! launch read as the grid of its invocations, only `global_invocation_id` read, no workgroup
//! memory, barriers or subgroups, and the coarsened component bounds-checked or launched over a
//! constant extent):
//! - every access to a viewed binding, in the entry point only (no helper function and no other
//!   entry point names it), has the element index `gid.<d> + Q` with one `Q` per binding, `Q` a sum
//!   of other id components with coefficients that are multiples of 4 (literals, or uniforms the
//!   spec fills with sizes its constraints make multiples of 4) and such a constant — or, for a
//!   gather (`table[ids[t] * dim + d]`), `Q` any expression with one value for the 4 ids (it reads
//!   other id components, uniforms and buffers the kernel never writes) that is a multiple of 4:
//!   so the 4 calls of one invocation touch exactly the 4 elements of one vector;
//! - the binding's element is a 4-byte scalar (`f32`, `i32`, `u32`) and its declared type is
//!   written `array<T>` (or `array<T, N>` with `N` a multiple of 4) in its declaration;
//! - the spec's size constraints make its length a multiple of 4 on every shape.
//!
//! `arrayLength(&x)` of a viewed binding becomes `arrayLength(&x) * 4u` in the function.
//!
//! A launch by workgroup count (`workgroups = (cdiv(n, 256))`, as burn, TVM and most hand-written
//! hosts launch) is read as `coarsen` reads it: `W` workgroups of `S` invocations are the grid of
//! `W·S` invocations (the runtime launches `⌈W·S / S⌉ = W` workgroups of it), so the rewrite's rule
//! is a `grid` of `⌈W·S / 4⌉` along the widened dimension (`W·(S / 4)` when 4 divides `S`) and of
//! `W·S` along the others. Every id below `W·S` the parent ran is one of the 4 ids of exactly one
//! invocation; those past it fail the kernel's bounds test, or the literal extent over a constant
//! count.

use super::coarsen;
use super::{Moves, Operator, Rewrite, Skip, Subject};
use crate::analysis::ir::{self, Analysis, Edit, Var};
use crate::evolve::descriptor::Dim;
use kf_runtime::expr::SizeExpr;
use naga::{BuiltIn, Expression, Handle, Scalar, ScalarKind, TypeInner};

/// Elements per vector.
const WIDTH: u32 = 4;

/// How a skip for want of a size constraint begins (see [`constraint_hint`]).
const NEEDS_CONSTRAINT: &str =
    "16-byte accesses need lengths the spec guarantees to be multiples of 4";

/// When nothing but a size constraint keeps 16-byte accesses out of `kernel`, a note for the user
/// saying which constraint to declare (`tune` prints it with the kernel's result).
pub fn constraint_hint(kernel: &kf_runtime::resolve::ResolvedKernel) -> Option<String> {
    let why = super::skip_reason(&Widen, kernel)?;
    let at = why.find(NEEDS_CONSTRAINT)?;
    Some(format!(
        "{} (the runtime then refuses dispatches that break it)",
        &why[at..]
    ))
}

/// The 16-byte-access operator (see the module documentation).
#[derive(Clone, Copy, Debug, Default)]
pub struct Widen;

impl Operator for Widen {
    fn name(&self) -> &'static str {
        "widen"
    }

    fn moves(&self) -> Moves {
        &[(Dim::Memory, 1), (Dim::Work, 1)]
    }

    fn apply(&self, subject: &Subject<'_>) -> Result<Vec<Rewrite>, Skip> {
        if !subject.program.then.is_empty() {
            return Err(Skip("the kernel is a launch sequence".into()));
        }
        let parsed = ir::parse(&subject.program.wgsl).map_err(|e| Skip(e.to_string()))?;
        let a = parsed
            .analyse(&subject.program.entry)
            .map_err(|e| Skip(e.to_string()))?;
        if a.code().contains("kf_wide") {
            return Err(Skip("the kernel already reads vectors".into()));
        }
        let coarsen::Plan { dim, extent } = coarsen::plan(&a, subject)?;
        if !extent.multiple_of(u64::from(WIDTH)) {
            return Err(Skip(format!(
                "the launch's extent along {} is not a multiple of {WIDTH}",
                ["x", "y", "z"][dim]
            )));
        }
        let views = views(&a, subject, dim)?;
        let text = render(&a, dim, &extent, &views)?;
        let reflected = kf_runtime::resolve::reflect(&text, Some(&subject.program.entry), "widen")
            .map_err(|e| Skip(format!("the widened kernel is not valid WGSL: {e}")))?;
        let mismatches = subject.kernel.mismatches(&reflected.interface);
        if !mismatches.is_empty() {
            return Err(Skip(format!(
                "widening changed the interface: {}",
                mismatches.join("; ")
            )));
        }
        let mut names: Vec<&str> = views.iter().map(|v| v.name.as_str()).collect();
        names.dedup();
        Ok(vec![Rewrite {
            program: coarsen::coarsened_program(subject, text, dim, WIDTH, &extent),
            step: format!(
                "widen({} as vec{WIDTH}, along {})",
                names.join(", "),
                ["x", "y", "z"][dim]
            ),
            params: Vec::new(),
        }])
    }
}

/// A binding read and written as vectors.
/// One vector of a binding: a binding read at several indices (`gate_up[r + j]` and
/// `gate_up[r + inter + j]`) has one per index.
struct View {
    global: Handle<naga::GlobalVariable>,
    name: String,
    /// The name of this vector's locals: the binding's name, with `_1`, `_2`, .. for the vectors
    /// after the first.
    slot: String,
    /// The accesses (positions in `Analysis::accesses`) this vector serves.
    accesses: Vec<usize>,
    /// The scalar type's WGSL name (`f32`).
    scalar: &'static str,
    /// Written through this vector (collected in a local vector with a mask).
    written: bool,
    /// Read through this vector.
    read: bool,
    /// The vector index for invocation `kf_gid`, as WGSL.
    vector_index: String,
    /// The index reads the user's invocation id by name (a gather's row), so the new entry point
    /// defines it.
    gather: bool,
    /// The declaration's type text and its replacement.
    decl_type: (ir::TextRange, String),
}

/// The bindings that can be viewed, or why none can.
fn views(a: &Analysis<'_>, subject: &Subject<'_>, dim: usize) -> Result<Vec<View>, Skip> {
    let mut out = Vec::new();
    let mut why: Vec<String> = Vec::new();
    let mut constraint_hints: Vec<String> = Vec::new();
    for (g, var) in a.module.global_variables.iter() {
        let naga::AddressSpace::Storage { .. } = var.space else {
            continue;
        };
        let name = var.name.clone().unwrap_or_default();
        match view(a, subject, dim, g, &name) {
            Ok(v) => out.extend(v),
            Err(ViewSkip::Constraint(hint)) => constraint_hints.push(format!("`{name}`: {hint}")),
            Err(ViewSkip::Other(reason)) => why.push(format!("`{name}`: {reason}")),
        }
    }
    if out.is_empty() {
        if !constraint_hints.is_empty() {
            return Err(Skip(format!(
                "{NEEDS_CONSTRAINT}: {}",
                constraint_hints.join("; ")
            )));
        }
        return Err(Skip(format!(
            "no buffer can be read as vectors: {}",
            why.join("; ")
        )));
    }
    Ok(out)
}

enum ViewSkip {
    /// Only the spec's constraint is missing (the hint names it).
    Constraint(String),
    Other(String),
}

fn view(
    a: &Analysis<'_>,
    subject: &Subject<'_>,
    dim: usize,
    g: Handle<naga::GlobalVariable>,
    name: &str,
) -> Result<Vec<View>, ViewSkip> {
    let other = |s: &str| Err(ViewSkip::Other(s.to_owned()));
    let module = a.module;
    let (base, count) = match module.types[module.global_variables[g].ty].inner {
        TypeInner::Array { base, size, .. } => (base, size),
        _ => return other("not an array"),
    };
    let scalar = match module.types[base].inner {
        TypeInner::Scalar(Scalar {
            kind: ScalarKind::Float,
            width: 4,
        }) => "f32",
        TypeInner::Scalar(Scalar {
            kind: ScalarKind::Uint,
            width: 4,
        }) => "u32",
        TypeInner::Scalar(Scalar {
            kind: ScalarKind::Sint,
            width: 4,
        }) => "i32",
        _ => return other("its elements are not 4-byte scalars"),
    };
    let fixed = match count {
        naga::ArraySize::Constant(n) => {
            if !n.get().is_multiple_of(WIDTH) {
                return other("its fixed length is not a multiple of 4");
            }
            Some(n.get())
        }
        naga::ArraySize::Dynamic => None,
        naga::ArraySize::Pending(_) => return other("its length is an override"),
    };
    // Named only by the entry point being rewritten.
    let names_global = |f: &naga::Function| {
        f.expressions
            .iter()
            .any(|(_, e)| matches!(e, Expression::GlobalVariable(x) if *x == g))
    };
    if module.functions.iter().any(|(_, f)| names_global(f)) {
        return other("a helper function uses it");
    }
    if module
        .entry_points
        .iter()
        .any(|e| e.name != a.entry.name && names_global(&e.function))
    {
        return other("another entry point uses it");
    }
    let accesses: Vec<(usize, &ir::Access)> = a
        .accesses
        .iter()
        .enumerate()
        .filter(|(_, x)| x.global == g)
        .collect();
    if accesses.is_empty() {
        return other("the kernel does not access it");
    }
    let divisors = kf_runtime::views::size_divisors(&subject.kernel.size_constraints());
    // Every access's index, as the vector index of invocation `kf_gid`; one vector per index.
    let mut slots: Vec<(String, bool, Vec<usize>)> = Vec::new();
    for &(at, x) in &accesses {
        let Some(index) = x.index else {
            return other("an access is not of one whole element");
        };
        if x.component.is_some() {
            return other("an access is not of one whole element");
        }
        let this = match &x.form {
            Some(form) => affine_vector_index(a, subject, &divisors, form, dim)
                .map_err(|why| ViewSkip::Other(why.to_owned()))?,
            // `gid.x + table_row * width`: a gather whose row does not move with the id.
            None => match gather_rest(a, subject, &divisors, index, dim as u32) {
                Some(rest) => {
                    format!("kf_gid.{} + u32({rest}) / {WIDTH}u", ["x", "y", "z"][dim])
                }
                None => {
                    return other(
                        "an index is neither affine in the invocation id nor the id plus a row that does not move with it",
                    );
                }
            },
        };
        let gather = x.form.is_none();
        match slots.iter_mut().find(|(index, _, _)| *index == this) {
            Some(slot) => slot.2.push(at),
            None => slots.push((this, gather, vec![at])),
        }
        let Some(span) = &x.span else {
            return other("an access has no span");
        };
        let text = a.text(span).trim();
        if !text.starts_with(name) || !text.ends_with(']') {
            return other("an access is not written `name[index]`");
        }
    }
    // The declaration's type, as written.
    let decl = crate::analysis::text::range(module.global_variables.get_span(g))
        .ok_or(ViewSkip::Other("its declaration has no span".into()))?;
    let decl_type = declared_type(a, decl, scalar, fixed).ok_or(ViewSkip::Other(format!(
        "its declared type is not written `array<{scalar}>`"
    )))?;
    // The spec's promise.
    if fixed.is_none() {
        let binding = module.global_variables[g]
            .binding
            .as_ref()
            .ok_or(ViewSkip::Other("it has no binding".into()))?;
        let iface = subject
            .kernel
            .interface
            .binding(binding.group, binding.binding)
            .ok_or(ViewSkip::Other(
                "it is not a binding of the baseline".into(),
            ))?;
        subject
            .kernel
            .view_allowed(iface, WIDTH)
            .map_err(ViewSkip::Constraint)?;
    }
    Ok(slots
        .into_iter()
        .enumerate()
        .map(|(j, (vector_index, gather, at))| View {
            global: g,
            name: name.to_owned(),
            slot: if j == 0 {
                name.to_owned()
            } else {
                format!("{name}_{j}")
            },
            written: at.iter().any(|&i| a.accesses[i].write),
            read: at.iter().any(|&i| !a.accesses[i].write),
            accesses: at,
            scalar,
            vector_index,
            gather,
            decl_type: decl_type.clone(),
        })
        .collect())
}

/// The vector index of an affine element index `gid.d + Q`: `kf_gid.d + Q / 4`, with `Q` a sum of
/// other id components and a constant, each provably a multiple of 4.
fn affine_vector_index(
    a: &Analysis<'_>,
    subject: &Subject<'_>,
    divisors: &std::collections::BTreeMap<String, u64>,
    form: &ir::IndexForm,
    dim: usize,
) -> Result<String, &'static str> {
    let gid = BuiltIn::GlobalInvocationId;
    if form.coeff(Var::Builtin(gid, dim as u32)).as_constant() != Some(1) {
        return Err("an index does not step by one with the id's contiguous component");
    }
    let mut parts: Vec<String> = vec![format!("kf_gid.{}", ["x", "y", "z"][dim])];
    for (v, c) in &form.terms {
        if *v == Var::Builtin(gid, dim as u32) {
            continue;
        }
        let Var::Builtin(BuiltIn::GlobalInvocationId, d) = v else {
            return Err("an index depends on a loop or another builtin");
        };
        let Some(q) = quarter(a, subject, divisors, c) else {
            return Err("an index's other terms are not provably multiples of 4");
        };
        parts.push(format!("{q} * kf_gid.{}", ["x", "y", "z"][*d as usize]));
    }
    if !form.offset.is_zero() {
        let Some(q) = quarter(a, subject, divisors, &form.offset) else {
            return Err("an index's offset is not provably a multiple of 4");
        };
        parts.push(q);
    }
    Ok(parts.join(" + "))
}

/// For an index that is not affine in the id, `gid.d + R` (either order, through `let`s and
/// variables assigned once) where `R` does not move with `gid.d` (it reads other id components,
/// uniforms, literals and buffers the kernel never writes) and is provably a multiple of 4: `R`'s
/// text, down to globals, literals and the id.
fn gather_rest(
    a: &Analysis<'_>,
    subject: &Subject<'_>,
    divisors: &std::collections::BTreeMap<String, u64>,
    index: Handle<Expression>,
    d: u32,
) -> Option<String> {
    let h = value_of(a, index)?;
    let Expression::Binary {
        op: naga::BinaryOperator::Add,
        left,
        right,
    } = a.function.expressions[h]
    else {
        return None;
    };
    let rest = if coarsen::is_id(a, left, d) {
        right
    } else if coarsen::is_id(a, right, d) {
        left
    } else {
        return None;
    };
    (still_along(a, rest, d, 0) && multiple_of_4(a, subject, divisors, rest, 0))
        .then(|| a.expr_wgsl(rest, ir::Naming::Inline))
        .flatten()
}

/// `h`, or the value of the variable it loads when that variable is assigned once.
fn value_of(a: &Analysis<'_>, h: Handle<Expression>) -> Option<Handle<Expression>> {
    match a.function.expressions[h] {
        Expression::Load { pointer } => match a.function.expressions[pointer] {
            Expression::LocalVariable(v) if !a.is_loop_var(v) => value_of(a, a.single_value(v)?),
            Expression::LocalVariable(_) => None,
            _ => Some(h),
        },
        _ => Some(h),
    }
}

/// Whether `h` has one value for the 4 ids `4g .. 4g + 3` along `d`.
fn still_along(a: &Analysis<'_>, h: Handle<Expression>, d: u32, depth: u32) -> bool {
    if depth > 64 {
        return false;
    }
    if let Some(form) = a.index_form(h) {
        return form
            .terms
            .iter()
            .all(|(v, _)| matches!(v, Var::Builtin(BuiltIn::GlobalInvocationId, c) if *c != d));
    }
    let go = |x: Handle<Expression>| still_along(a, x, d, depth + 1);
    match a.function.expressions[h] {
        Expression::Literal(_)
        | Expression::Constant(_)
        | Expression::Override(_)
        | Expression::ZeroValue(_)
        | Expression::GlobalVariable(_) => true,
        Expression::Load { pointer } => match a.function.expressions[pointer] {
            Expression::LocalVariable(v) => !a.is_loop_var(v) && a.single_value(v).is_some_and(go),
            // A buffer the kernel writes could change between the calls.
            _ => a.root_global(pointer).is_some_and(|g| !a.writes_global(g)) && go(pointer),
        },
        Expression::Access { base, index } => go(base) && go(index),
        Expression::AccessIndex { base, .. } => a.builtin_of(base).is_none() && go(base),
        Expression::Binary { left, right, .. } => go(left) && go(right),
        Expression::Unary { expr, .. } | Expression::As { expr, .. } => go(expr),
        _ => false,
    }
}

/// Whether `h` is a multiple of 4 on every shape the spec allows: a literal one, a uniform the
/// spec fills with such a size, a sum of such, or a product with one such factor.
fn multiple_of_4(
    a: &Analysis<'_>,
    subject: &Subject<'_>,
    divisors: &std::collections::BTreeMap<String, u64>,
    h: Handle<Expression>,
    depth: u32,
) -> bool {
    if depth > 64 {
        return false;
    }
    if let Some(k) = a.const_int(h) {
        return k >= 0 && (k as u64).is_multiple_of(u64::from(WIDTH));
    }
    if let Some(size) = uniform_size_at(a, subject, h) {
        return kf_runtime::views::known_divisor(&size, divisors).is_multiple_of(u64::from(WIDTH));
    }
    let go = |x| multiple_of_4(a, subject, divisors, x, depth + 1);
    match a.function.expressions[h] {
        Expression::Binary {
            op: naga::BinaryOperator::Multiply,
            left,
            right,
        } => go(left) || go(right),
        Expression::Binary {
            op: naga::BinaryOperator::Add,
            left,
            right,
        } => go(left) && go(right),
        Expression::As {
            expr,
            convert: Some(_),
            kind: ScalarKind::Uint | ScalarKind::Sint,
        } => go(expr),
        Expression::Load { .. } => value_of(a, h).is_some_and(|v| v != h && go(v)),
        _ => false,
    }
}

/// `p / 4` as WGSL, when `p` is provably a multiple of 4 for every shape the spec allows: each
/// monomial's literal factor, or one of its uniform factors, holds the factor 4 (a uniform the spec
/// fills with a size its constraints make a multiple of 4).
fn quarter(
    a: &Analysis<'_>,
    subject: &Subject<'_>,
    divisors: &std::collections::BTreeMap<String, u64>,
    p: &ir::Poly,
) -> Option<String> {
    let mut monos = Vec::new();
    for m in &p.0 {
        let k = u64::try_from(m.k).ok().filter(|k| *k > 0)?;
        let g = crate::analysis::ir::gcd(k, u64::from(WIDTH));
        let need = u64::from(WIDTH) / g;
        let mut factors: Vec<String> = Vec::new();
        let mut found = need == 1;
        for atom in &m.atoms {
            let wgsl = format!("u32({atom})");
            if !found
                && let Some(size) = uniform_size(a, subject, atom)
                && kf_runtime::views::known_divisor(&size, divisors).is_multiple_of(need)
            {
                found = true;
                factors.push(format!("({wgsl} / {need}u)"));
            } else {
                factors.push(wgsl);
            }
        }
        if !found {
            return None;
        }
        // k·Πatoms / 4 = (k / 4)·Πatoms, or (k / g)·(atom / need)·Πothers with g·need = 4.
        let lit = if need == 1 {
            k / u64::from(WIDTH)
        } else {
            k / g
        };
        if lit != 1 || factors.is_empty() {
            factors.insert(0, format!("{lit}u"));
        }
        monos.push(factors.join(" * "));
    }
    match monos.len() {
        0 => None,
        1 => monos.pop(),
        _ => Some(format!("({})", monos.join(" + "))),
    }
}

/// The size the spec fills the uniform value `atom` (its canonical WGSL text) with.
fn uniform_size(a: &Analysis<'_>, subject: &Subject<'_>, atom: &str) -> Option<SizeExpr> {
    let h = uniform_value(a, atom)?;
    uniform_size_at(a, subject, h)
}

/// The value expression (a load, or a component of a loaded vector) that prints as `atom`.
fn uniform_value(a: &Analysis<'_>, atom: &str) -> Option<Handle<Expression>> {
    // A value (a load, or a component of a loaded vector), not the pointer of the same text.
    a.function.expressions.iter().find_map(|(h, e)| {
        let value = match e {
            Expression::Load { .. } => true,
            Expression::AccessIndex { base, .. } => {
                matches!(a.function.expressions[*base], Expression::Load { .. })
            }
            _ => false,
        };
        (value
            && a.is_dispatch_uniform(h)
            && a.expr_wgsl(h, ir::Naming::Inline).as_deref() == Some(atom))
        .then_some(h)
    })
}

/// The size the spec fills the uniform value `h` with (`dims.cols` → `cols`).
fn uniform_size_at(
    a: &Analysis<'_>,
    subject: &Subject<'_>,
    h: Handle<Expression>,
) -> Option<SizeExpr> {
    crate::analysis::uniforms::value_size(
        a.module,
        a.function,
        &|x| a.type_of(x),
        subject.kernel,
        None,
        h,
    )
}

/// Where the declaration `var<..> name: array<T>` writes its type, and the vector type to write
/// instead; `None` for any other spelling (an alias).
fn declared_type(
    a: &Analysis<'_>,
    decl: ir::TextRange,
    scalar: &str,
    fixed: Option<u32>,
) -> Option<(ir::TextRange, String)> {
    let (range, written) = crate::analysis::text::declared_type(a.code(), decl)?;
    let wanted = match fixed {
        None => format!("array<{scalar}>"),
        Some(n) => format!("array<{scalar},{n}>"),
    };
    let alt = fixed.map(|n| format!("array<{scalar},{n}u>"));
    if written != wanted && Some(&written) != alt.as_ref() {
        return None;
    }
    let replacement = match fixed {
        None => format!("array<vec{WIDTH}<{scalar}>>"),
        Some(n) => format!("array<vec{WIDTH}<{scalar}>, {}>", n / WIDTH),
    };
    Some((range, replacement))
}

fn render(
    a: &Analysis<'_>,
    dim: usize,
    extent: &coarsen::Extent,
    views: &[View],
) -> Result<String, Skip> {
    let sig = a
        .entry_signature()
        .ok_or_else(|| Skip("the entry point's signature was not found in the text".into()))?;
    let gid = a
        .builtin(BuiltIn::GlobalInvocationId)
        .expect("checked in plan");
    let entry = &a.entry.name;
    let body_fn = format!("kf_wide_{entry}");
    let wg_args = a.text(&sig.workgroup_size).trim().to_owned();
    let mut params = vec![format!("{}: vec3<u32>", gid.name), "kf_c: u32".to_owned()];
    let mut edits = vec![
        Edit::replace(sig.attributes.clone(), ""),
        Edit::replace(sig.name.clone(), body_fn.clone()),
    ];
    let mut declared: Vec<Handle<naga::GlobalVariable>> = Vec::new();
    for v in views {
        let vec_ty = format!("vec{WIDTH}<{}>", v.scalar);
        let n = &v.slot;
        let element = if v.written {
            params.push(format!("kf_out_{n}: ptr<function, {vec_ty}>"));
            params.push(format!("kf_mask_{n}: ptr<function, u32>"));
            format!("(*kf_out_{n})[kf_c]")
        } else {
            params.push(format!("kf_in_{n}: {vec_ty}"));
            format!("kf_in_{n}[kf_c]")
        };
        let mut done: Vec<ir::TextRange> = Vec::new();
        for x in v.accesses.iter().map(|&i| &a.accesses[i]) {
            let span = x.span.clone().expect("checked in view");
            if !done.contains(&span) {
                edits.push(Edit::replace(span.clone(), element.clone()));
                done.push(span.clone());
            }
            if x.write {
                let end = a
                    .statement_end(span.end)
                    .ok_or_else(|| Skip("a store's statement has no end".into()))?;
                let indent = a.indent_at(span.start);
                edits.push(Edit::insert(
                    end,
                    format!("\n{indent}*kf_mask_{n} = *kf_mask_{n} | (1u << kf_c);"),
                ));
            }
        }
        // Once per binding: its declaration, and `arrayLength(&x)`, which counts vectors now.
        if declared.contains(&v.global) {
            continue;
        }
        declared.push(v.global);
        edits.push(Edit::replace(v.decl_type.0.clone(), v.decl_type.1.clone()));
        for (h, e) in a.function.expressions.iter() {
            let Expression::ArrayLength(p) = e else {
                continue;
            };
            if a.root_global(*p) != Some(v.global) {
                continue;
            }
            let r = a
                .expr_range(h)
                .ok_or_else(|| Skip("an `arrayLength` has no span".into()))?;
            edits.push(Edit::replace(
                r.clone(),
                format!("({} * {WIDTH}u)", a.text(&r).trim()),
            ));
        }
    }
    edits.push(Edit::replace(sig.params.clone(), params.join(", ")));
    let mut text = ir::apply_edits(a.source, &edits)
        .ok_or_else(|| Skip("the rewrite's edits overlap".into()))?;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    let c = ["x", "y", "z"][dim];
    let mut body = String::new();
    if let Some((x, what)) = extent.bound() {
        let vectors = match extent.literal() {
            Some(n) => format!("{}u", n / u64::from(WIDTH)),
            None => format!("({x}) / {WIDTH}u"),
        };
        body.push_str(&format!(
            "    // The original launch ran exactly the ids below {what} along {c}.\n    if (kf_gid.{c} >= {vectors}) {{\n        return;\n    }}\n"
        ));
    }
    if views.iter().any(|v| v.gather) {
        // A gather's row is written in terms of the user's id: the first of the four.
        let mut ids = ["kf_gid.x", "kf_gid.y", "kf_gid.z"].map(str::to_owned);
        ids[dim] = format!("kf_gid.{c} * {WIDTH}u");
        body.push_str(&format!(
            "    let {} = vec3<u32>({}, {}, {});\n",
            gid.name, ids[0], ids[1], ids[2]
        ));
    }
    let mut args = String::new();
    for v in views {
        let vec_ty = format!("vec{WIDTH}<{}>", v.scalar);
        let (n, b) = (&v.slot, &v.name);
        body.push_str(&format!("    let kf_at_{n} = {};\n", v.vector_index));
        if v.written {
            if v.read {
                body.push_str(&format!("    var kf_out_{n} = {b}[kf_at_{n}];\n"));
            } else {
                body.push_str(&format!("    var kf_out_{n} = {vec_ty}();\n"));
            }
            body.push_str(&format!("    var kf_mask_{n} = 0u;\n"));
            args.push_str(&format!(", &kf_out_{n}, &kf_mask_{n}"));
        } else {
            body.push_str(&format!("    let kf_in_{n} = {b}[kf_at_{n}];\n"));
            args.push_str(&format!(", kf_in_{n}"));
        }
    }
    for k in 0..WIDTH {
        let mut ids = ["kf_gid.x", "kf_gid.y", "kf_gid.z"].map(str::to_owned);
        ids[dim] = format!("kf_gid.{c} * {WIDTH}u + {k}u");
        body.push_str(&format!(
            "    {body_fn}(vec3<u32>({}, {}, {}), {k}u{args});\n",
            ids[0], ids[1], ids[2]
        ));
    }
    let full = (1u32 << WIDTH) - 1;
    for v in views.iter().filter(|v| v.written) {
        let (n, b) = (&v.slot, &v.name);
        body.push_str(&format!(
            "    if (kf_mask_{n} == {full}u) {{\n        {b}[kf_at_{n}] = kf_out_{n};\n    }} else {{\n"
        ));
        for k in 0..WIDTH {
            body.push_str(&format!(
                "        if ((kf_mask_{n} & {}u) != 0u) {{\n            {b}[kf_at_{n}][{k}] = kf_out_{n}[{k}];\n        }}\n",
                1u32 << k
            ));
        }
        body.push_str("    }\n");
    }
    let mut names: Vec<String> = views.iter().map(|v| format!("`{}`", v.name)).collect();
    names.dedup();
    text.push_str(&format!(
        "\n// KernelFoundry: 16-byte accesses: each invocation runs {WIDTH} consecutive invocations of the original along {c}, reading and writing {} {WIDTH} elements at a time.\n@compute @workgroup_size({wg_args})\nfn {entry}(@builtin(global_invocation_id) kf_gid: vec3<u32>) {{\n{body}}}\n",
        names.join(", ")
    ));
    Ok(text)
}

#[cfg(test)]
mod tests;

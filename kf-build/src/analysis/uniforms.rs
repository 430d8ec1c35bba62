//! Which size of the spec a uniform value holds.
//!
//! Operators prove facts about index arithmetic (`row * dims.cols + col` steps by whole rows; the
//! stride is a multiple of 4) that depend on what the app writes into a uniform. The spec says it:
//! `dims = uniform(rows, cols)` fills the uniform's scalars, in address order, with those sizes.
//! This reads the byte offset of a uniform load from naga's access chain and looks the value up
//! in the kernel's buffer plan, once, for every operator that needs it (`tile`'s extents,
//! `widen`'s strides).

use kf_runtime::expr::SizeExpr;
use kf_runtime::resolve::ResolvedKernel;
use naga::{Expression, Handle, TypeInner};

/// The size the spec fills the uniform scalar at `pointer` (plus `extra` bytes) with, when
/// `pointer` is an access chain into a `var<uniform>` through struct members and vector
/// components, and the spec gives that scalar as a size expression. `ty` resolves an expression's
/// type in `func`.
pub fn uniform_size<'t>(
    module: &'t naga::Module,
    func: &naga::Function,
    ty: &dyn Fn(Handle<Expression>) -> &'t TypeInner,
    kernel: &ResolvedKernel,
    pointer: Handle<Expression>,
    extra: u32,
) -> Option<SizeExpr> {
    let mut offset = extra;
    let mut at = pointer;
    let g = loop {
        match func.expressions[at] {
            Expression::GlobalVariable(g) => break g,
            Expression::AccessIndex { base, index } => {
                let t = match ty(base) {
                    TypeInner::Pointer { base: b, .. } => &module.types[*b].inner,
                    other => other,
                };
                offset += match t {
                    TypeInner::Struct { members, .. } => members.get(index as usize)?.offset,
                    TypeInner::Vector { scalar, .. } => index * u32::from(scalar.width),
                    _ => return None,
                };
                at = base;
            }
            _ => return None,
        }
    };
    let var = &module.global_variables[g];
    if var.space != naga::AddressSpace::Uniform {
        return None;
    }
    let rb = var.binding.as_ref()?;
    let plan = kernel
        .buffers
        .iter()
        .find(|b| b.binding.group == rb.group && b.binding.binding == rb.binding)?;
    let slot = plan
        .binding
        .layout
        .scalars(0)
        .position(|(o, _)| o == u64::from(offset))?;
    match plan.values.get(slot)? {
        kf_runtime::spec::Value::Size(s) => Some(s.clone()),
        kf_runtime::spec::Value::Float(_) => None,
    }
}

/// WGSL text that reads a uniform scalar the spec fills with exactly size `name` (`dims.m`,
/// `shape.y`, `n`), whether or not the function reads it: the uniform's name and the path of
/// struct members and vector components to the scalar's byte offset. `None` when no uniform
/// holds that size, or the path crosses an array.
pub fn size_in_uniform(
    module: &naga::Module,
    kernel: &ResolvedKernel,
    name: &str,
) -> Option<String> {
    let want = [kf_runtime::expr::Op::Size(name.to_owned().into())];
    for (_, var) in module.global_variables.iter() {
        if var.space != naga::AddressSpace::Uniform {
            continue;
        }
        let Some(rb) = var.binding.as_ref() else {
            continue;
        };
        let Some(plan) = kernel
            .buffers
            .iter()
            .find(|b| b.binding.group == rb.group && b.binding.binding == rb.binding)
        else {
            continue;
        };
        let Some(offset) = plan
            .binding
            .layout
            .scalars(0)
            .zip(&plan.values)
            .find(|(_, v)| matches!(v, kf_runtime::spec::Value::Size(s) if s.ops() == want))
            .map(|((o, _), _)| o)
        else {
            continue;
        };
        let mut text = var.name.clone()?;
        let (mut ty, mut at) = (var.ty, offset);
        loop {
            match &module.types[ty].inner {
                TypeInner::Scalar(_) if at == 0 => return Some(text),
                TypeInner::Vector { scalar, .. } => {
                    let i = at / u64::from(scalar.width);
                    text.push('.');
                    text.push_str(["x", "y", "z", "w"].get(usize::try_from(i).ok()?)?);
                    return Some(text);
                }
                TypeInner::Struct { members, .. } => {
                    let m = members.iter().rev().find(|m| u64::from(m.offset) <= at)?;
                    text.push('.');
                    text.push_str(m.name.as_deref()?);
                    at -= u64::from(m.offset);
                    ty = m.ty;
                }
                _ => return None,
            }
        }
    }
    None
}

/// The size the spec gives the dispatch-uniform integer value `h`: a literal (`literal`, the
/// caller's constant evaluation of `h`), or a loaded uniform scalar (a member, or a component of
/// a loaded vector: `u.v.y`) whose `uniform(..)` value is a size.
pub fn value_size<'t>(
    module: &'t naga::Module,
    func: &naga::Function,
    ty: &dyn Fn(Handle<Expression>) -> &'t TypeInner,
    kernel: &ResolvedKernel,
    literal: Option<i64>,
    h: Handle<Expression>,
) -> Option<SizeExpr> {
    if let Some(k) = literal {
        return u64::try_from(k).ok().map(SizeExpr::lit);
    }
    let (pointer, extra) = match func.expressions[h] {
        Expression::Load { pointer } => (pointer, 0),
        Expression::AccessIndex { base, index } => match func.expressions[base] {
            Expression::Load { pointer } => (pointer, index * 4),
            _ => return None,
        },
        _ => return None,
    };
    uniform_size(module, func, ty, kernel, pointer, extra)
}

impl crate::analysis::ir::Analysis<'_> {
    /// The size the spec gives the dispatch-uniform integer `h` ([`value_size`], with `h`'s
    /// constant value as the literal).
    pub fn spec_size(&self, kernel: &ResolvedKernel, h: Handle<Expression>) -> Option<SizeExpr> {
        value_size(
            self.module,
            self.function,
            &|x| self.type_of(x),
            kernel,
            self.const_int(h),
            h,
        )
    }
}

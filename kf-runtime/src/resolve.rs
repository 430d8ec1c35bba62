//! WGSL reflection with naga, and resolution of a [`Spec`] against it.
//!
//! Reflection turns WGSL into an [`Interface`] (entry point, workgroup size, bindings with their
//! layouts, overrides). Resolution checks the user's spec against that interface and fills in what
//! the user left out, producing a [`ResolvedKernel`]: everything the harness needs to create and
//! fill buffers, launch the baseline and compare outputs, as plain data.
//!
//! The macro runs this at compile time (errors become spanned compile errors); `cargo
//! kernelfoundry` runs the same code on the same attribute, so what compiles is what gets tuned.
//!
//! Invariant: reflection never panics on user input; every problem is a [`ReflectError`] or a
//! [`SpecError`] that names the offending spec location.

use crate::distribution::{Needs, Pattern};
use crate::expr::SizeExpr;
use crate::hash::content_hash;
use crate::interface::{
    ArrayLayout, BindingInterface, BindingKind, BufferLayout, Field, Interface, OverrideInterface,
    Scalar, TexelFormat,
};
use crate::program::{Dispatch, DispatchMode, Program};
use crate::spec::{BindingRef, Init, Loc, ReferenceSpec, Role, Shape, Spec, Value};
use naga::common::wgsl::TypeContext;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Why WGSL could not be reflected. The variants follow the fitness ladder: parse (0),
/// validation (1), interface (3).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ReflectError {
    /// The text is not WGSL.
    #[error("{}", without_severity(.rendered))]
    Parse {
        /// naga's message.
        message: String,
        /// naga's rendered diagnostic (file, line, caret).
        rendered: String,
        /// 1-based line, when known.
        line: Option<u32>,
    },
    /// The WGSL parses but is not valid.
    #[error("{}", without_severity(.rendered))]
    Validation {
        /// naga's message.
        message: String,
        /// naga's rendered diagnostic (file, line, caret).
        rendered: String,
        /// 1-based line, when known.
        line: Option<u32>,
    },
    /// No suitable compute entry point.
    #[error("{0}")]
    Entry(String),
    /// The module uses something reflection cannot describe (e.g. a texture binding).
    #[error("{0}")]
    Unsupported(String),
}

/// naga's rendered diagnostic without its leading `error: `: whoever reports the error prints its
/// own prefix once, and the diagnostic's span and labels follow as naga rendered them.
fn without_severity(rendered: &str) -> &str {
    rendered.strip_prefix("error: ").unwrap_or(rendered)
}

/// A reflected WGSL module.
pub struct Reflected {
    /// naga's IR.
    pub module: naga::Module,
    /// naga's validation results.
    pub info: naga::valid::ModuleInfo,
    /// The interface of the chosen entry point.
    pub interface: Interface,
}

/// Parses, validates and reflects `wgsl`. `path` is only used in diagnostics.
pub fn reflect(wgsl: &str, entry: Option<&str>, path: &str) -> Result<Reflected, ReflectError> {
    let module = naga::front::wgsl::parse_str(wgsl).map_err(|e| ReflectError::Parse {
        message: e.message().to_owned(),
        rendered: e.emit_to_string_with_path(wgsl, path),
        line: e.location(wgsl).map(|l| l.line_number),
    })?;
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .map_err(|e| ReflectError::Validation {
        message: e.as_inner().to_string(),
        rendered: e.emit_to_string_with_path(wgsl, path),
        line: e.location(wgsl).map(|l| l.line_number),
    })?;
    let interface = interface_of(&module, wgsl, entry)?;
    Ok(Reflected {
        module,
        info,
        interface,
    })
}

fn interface_of(
    module: &naga::Module,
    wgsl: &str,
    entry: Option<&str>,
) -> Result<Interface, ReflectError> {
    let computes: Vec<&naga::EntryPoint> = module
        .entry_points
        .iter()
        .filter(|e| e.stage == naga::ShaderStage::Compute)
        .collect();
    let names = || {
        computes
            .iter()
            .map(|e| format!("`{}`", e.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let ep = match entry {
        Some(name) => *computes.iter().find(|e| e.name == name).ok_or_else(|| {
            ReflectError::Entry(if computes.is_empty() {
                format!("entry point `{name}` not found: the module has no `@compute` entry point")
            } else {
                format!(
                    "entry point `{name}` not found; the module's compute entry points are {}",
                    names()
                )
            })
        })?,
        None => match computes.as_slice() {
            [one] => *one,
            [] => {
                return Err(ReflectError::Entry(
                    "the module has no `@compute` entry point".into(),
                ));
            }
            _ => {
                return Err(ReflectError::Entry(format!(
                    "the module has several compute entry points ({}); choose one with `entry = \"..\"`",
                    names()
                )));
            }
        },
    };

    let mut layouter = naga::proc::Layouter::default();
    layouter
        .update(module.to_ctx())
        .map_err(|e| ReflectError::Unsupported(format!("cannot lay out types: {e}")))?;

    let overrides: Vec<OverrideInterface> = module
        .overrides
        .iter()
        .map(|(_, o)| OverrideInterface {
            name: o.name.clone().unwrap_or_default(),
            id: o.id,
            ty: module.to_ctx().type_to_string(o.ty),
            default: o.init.and_then(|e| literal_value(module, e)),
            required: o.init.is_none(),
        })
        .collect();

    let mut workgroup_size = ep.workgroup_size;
    let mut workgroup_size_overrides: [Option<String>; 3] = [None, None, None];
    if let Some(exprs) = &ep.workgroup_size_overrides {
        for (dim, expr) in exprs.iter().enumerate() {
            let Some(expr) = expr else { continue };
            match &module.global_expressions[*expr] {
                naga::Expression::Override(h) => {
                    let o = &module.overrides[*h];
                    let name = o.name.clone().unwrap_or_default();
                    let default = o.init.and_then(|e| literal_value(module, e));
                    // Without a literal default the size is unknown until the spec's candidates
                    // give the override a value (0 here; `resolve` fills it in).
                    workgroup_size[dim] = match default {
                        Some(v) if v >= 1.0 => v as u32,
                        _ => 0,
                    };
                    workgroup_size_overrides[dim] = Some(name);
                }
                other => match literal_expr(other) {
                    Some(v) => workgroup_size[dim] = v as u32,
                    None => {
                        return Err(ReflectError::Unsupported(
                            "the workgroup size is an override expression; use a literal or a single override (`@workgroup_size(WG)`)".into(),
                        ));
                    }
                },
            }
        }
    }

    let mut bindings = Vec::new();
    let mut workgroup_bytes: Option<u32> = Some(0);
    for (_, var) in module.global_variables.iter() {
        match var.space {
            naga::AddressSpace::WorkGroup => {
                let size = match &module.types[var.ty].inner {
                    naga::TypeInner::Array {
                        size: naga::ArraySize::Pending(_),
                        ..
                    } => None,
                    _ => Some(layouter[var.ty].size),
                };
                workgroup_bytes = workgroup_bytes.zip(size).map(|(a, b)| a + b);
            }
            naga::AddressSpace::Uniform | naga::AddressSpace::Storage { .. } => {
                let Some(binding) = &var.binding else {
                    continue;
                };
                let kind = match var.space {
                    naga::AddressSpace::Uniform => BindingKind::Uniform,
                    naga::AddressSpace::Storage { access }
                        if access.contains(naga::StorageAccess::STORE) =>
                    {
                        BindingKind::StorageReadWrite
                    }
                    _ => BindingKind::StorageRead,
                };
                let name = var.name.clone().unwrap_or_default();
                let layout = buffer_layout(module, &layouter, var.ty)
                    .map_err(|why| ReflectError::Unsupported(format!("binding `{name}`: {why}")))?;
                bindings.push(BindingInterface {
                    group: binding.group,
                    binding: binding.binding,
                    name,
                    kind,
                    ty: module.to_ctx().type_to_string(var.ty),
                    layout,
                });
            }
            naga::AddressSpace::Handle => {
                let Some(binding) = &var.binding else {
                    continue;
                };
                let name = var.name.clone().unwrap_or_default();
                let kind = textures::handle_kind(&module.types[var.ty].inner)
                    .map_err(|why| ReflectError::Unsupported(format!("binding `{name}`: {why}")))?;
                bindings.push(BindingInterface {
                    group: binding.group,
                    binding: binding.binding,
                    name,
                    kind,
                    ty: module.to_ctx().type_to_string(var.ty),
                    layout: BufferLayout {
                        header: Vec::new(),
                        header_size: 0,
                        array: None,
                    },
                });
            }
            _ => {}
        }
    }
    bindings.sort_by_key(|b| (b.group, b.binding));

    Ok(Interface {
        entry: ep.name.clone(),
        workgroup_size,
        workgroup_size_overrides,
        bindings,
        overrides,
        workgroup_storage_bytes: workgroup_bytes,
        enables: enables(wgsl),
    })
}

/// `enable` directives, read from the text (naga does not keep them in the IR).
fn enables(wgsl: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in wgsl.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("enable ") {
            for ext in rest.trim_end_matches(';').split(',') {
                let ext = ext.trim();
                if !ext.is_empty() {
                    out.push(ext.to_owned());
                }
            }
        }
    }
    out
}

fn literal_expr(expr: &naga::Expression) -> Option<f64> {
    match expr {
        naga::Expression::Literal(lit) => Some(match *lit {
            naga::Literal::F64(v) => v,
            naga::Literal::F32(v) => f64::from(v),
            naga::Literal::F16(v) => f64::from(f32::from(v)),
            naga::Literal::U32(v) => f64::from(v),
            naga::Literal::I32(v) => f64::from(v),
            naga::Literal::U16(v) => f64::from(v),
            naga::Literal::I16(v) => f64::from(v),
            naga::Literal::U64(v) => v as f64,
            naga::Literal::I64(v) => v as f64,
            naga::Literal::Bool(v) => f64::from(u8::from(v)),
            naga::Literal::AbstractInt(v) => v as f64,
            naga::Literal::AbstractFloat(v) => v,
        }),
        _ => None,
    }
}

fn literal_value(module: &naga::Module, expr: naga::Handle<naga::Expression>) -> Option<f64> {
    match &module.global_expressions[expr] {
        naga::Expression::Constant(c) => literal_value(module, module.constants[*c].init),
        other => literal_expr(other),
    }
}

fn scalar_of(s: naga::Scalar) -> Result<Scalar, String> {
    match (s.kind, s.width) {
        (naga::ScalarKind::Float, 4) => Ok(Scalar::F32),
        (naga::ScalarKind::Float, 2) => Ok(Scalar::F16),
        (naga::ScalarKind::Uint, 4) => Ok(Scalar::U32),
        (naga::ScalarKind::Sint, 4) => Ok(Scalar::I32),
        (kind, width) => Err(format!(
            "{kind:?} scalars of {width} bytes are not supported in buffers yet"
        )),
    }
}

/// Appends the scalars of `ty` placed at `base` to `out`.
fn flatten(
    module: &naga::Module,
    ty: naga::Handle<naga::Type>,
    base: u32,
    out: &mut Vec<Field>,
) -> Result<(), String> {
    match &module.types[ty].inner {
        naga::TypeInner::Scalar(s) | naga::TypeInner::Atomic(s) => out.push(Field {
            offset: base,
            scalar: scalar_of(*s)?,
        }),
        naga::TypeInner::Vector { size, scalar } => {
            let sc = scalar_of(*scalar)?;
            for i in 0..*size as u32 {
                out.push(Field {
                    offset: base + i * sc.size(),
                    scalar: sc,
                });
            }
        }
        naga::TypeInner::Matrix {
            columns,
            rows,
            scalar,
        } => {
            let sc = scalar_of(*scalar)?;
            // Column stride is the alignment of a vector of `rows` scalars.
            let rows_n = *rows as u32;
            let col_stride = if rows_n == 2 { 2 } else { 4 } * sc.size();
            for c in 0..*columns as u32 {
                for r in 0..rows_n {
                    out.push(Field {
                        offset: base + c * col_stride + r * sc.size(),
                        scalar: sc,
                    });
                }
            }
        }
        naga::TypeInner::Array {
            base: elem,
            size: naga::ArraySize::Constant(n),
            stride,
        } => {
            for i in 0..n.get() {
                flatten(module, *elem, base + i * stride, out)?;
            }
        }
        naga::TypeInner::Array { .. } => {
            return Err(
                "runtime-sized and override-sized arrays may only be the buffer's outermost array"
                    .into(),
            );
        }
        naga::TypeInner::Struct { members, .. } => {
            for m in members {
                flatten(module, m.ty, base + m.offset, out)?;
            }
        }
        other => return Err(format!("type {other:?} cannot live in a buffer")),
    }
    Ok(())
}

fn buffer_layout(
    module: &naga::Module,
    layouter: &naga::proc::Layouter,
    ty: naga::Handle<naga::Type>,
) -> Result<BufferLayout, String> {
    let array_part = |elem: naga::Handle<naga::Type>,
                      stride: u32,
                      count: Option<u32>|
     -> Result<ArrayLayout, String> {
        let mut fields = Vec::new();
        flatten(module, elem, 0, &mut fields)?;
        Ok(ArrayLayout {
            stride,
            fields,
            count,
        })
    };
    match &module.types[ty].inner {
        naga::TypeInner::Array { base, size, stride } => {
            let count = match size {
                naga::ArraySize::Constant(n) => Some(n.get()),
                naga::ArraySize::Dynamic => None,
                naga::ArraySize::Pending(_) => {
                    return Err("a buffer array sized by an override is not supported".into());
                }
            };
            Ok(BufferLayout {
                header: Vec::new(),
                header_size: 0,
                array: Some(array_part(*base, *stride, count)?),
            })
        }
        naga::TypeInner::Struct { members, span } => {
            let mut header = Vec::new();
            let mut array = None;
            let mut header_size = *span;
            for (i, m) in members.iter().enumerate() {
                let last = i + 1 == members.len();
                match &module.types[m.ty].inner {
                    naga::TypeInner::Array {
                        base,
                        size: naga::ArraySize::Dynamic,
                        stride,
                    } if last => {
                        header_size = m.offset;
                        array = Some(array_part(*base, *stride, None)?);
                    }
                    _ => flatten(module, m.ty, m.offset, &mut header)?,
                }
            }
            Ok(BufferLayout {
                header,
                header_size,
                array,
            })
        }
        _ => {
            let mut header = Vec::new();
            flatten(module, ty, 0, &mut header)?;
            Ok(BufferLayout {
                header,
                header_size: layouter[ty].size,
                array: None,
            })
        }
    }
}

/// One binding with its spec merged in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BufferPlan {
    /// The reflected binding.
    #[serde(flatten)]
    pub binding: BindingInterface,
    /// What it is for.
    pub role: Role,
    /// Element count of the runtime-sized array, if any.
    pub len: Option<SizeExpr>,
    /// How inputs are filled; `None` uses the default for the scalar type.
    pub init: Option<Init>,
    /// Uniform values, one per scalar of the layout.
    pub values: Vec<Value>,
    /// A texture's extents: width, then height, then depth or layers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extent: Vec<SizeExpr>,
    /// A texture's texel format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<TexelFormat>,
}

impl BufferPlan {
    /// Element count on `shape`: texels of a texture, array elements of a runtime-sized buffer,
    /// 0 for fixed-size layouts and samplers.
    pub fn len_on(&self, shape: &Shape) -> Result<u64, crate::expr::ExprError> {
        if self.is_texture() {
            return self.extent_on(shape).map(|e| e.iter().product());
        }
        match &self.len {
            Some(e) => e.eval(|n| shape.get(n).copied()),
            None => Ok(0),
        }
    }

    /// A texture's width, height and depth or layers on `shape` (1 where the texture has fewer
    /// dimensions).
    pub fn extent_on(&self, shape: &Shape) -> Result<[u64; 3], crate::expr::ExprError> {
        let mut out = [1u64; 3];
        for (o, e) in out.iter_mut().zip(&self.extent) {
            *o = e.eval(|n| shape.get(n).copied())?;
        }
        Ok(out)
    }

    /// Whether this binding is a texture.
    pub fn is_texture(&self) -> bool {
        self.binding.kind.is_texture()
    }

    /// The layout the harness fills and compares: the buffer's own, or for a texture its texels
    /// tightly packed (see [`TexelFormat::texel_layout`]); empty for a sampler.
    pub fn layout(&self) -> Cow<'_, BufferLayout> {
        match (self.is_texture(), self.format) {
            (true, Some(f)) => Cow::Owned(f.texel_layout()),
            _ => Cow::Borrowed(&self.binding.layout),
        }
    }

    /// Byte size on `shape`, rounded up to 4 and at least 4 (wgpu rejects empty bindings); for a
    /// texture, its tightly packed texels.
    pub fn byte_size(&self, shape: &Shape) -> Result<u64, crate::expr::ExprError> {
        let bytes = self.layout().byte_size(self.len_on(shape)?);
        Ok(bytes.div_ceil(4).max(1) * 4)
    }

    /// Whether the harness compares this buffer after a run.
    pub fn is_compared(&self) -> bool {
        matches!(self.role, Role::Output | Role::Inout)
    }
}

/// A spec resolved against its WGSL: all the harness and the macro need.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResolvedKernel {
    /// The static's name.
    pub name: String,
    /// See [`crate::hash::content_hash`].
    pub content_hash: String,
    /// Where the WGSL came from (a path relative to the crate, or `<inline>`).
    pub source_label: String,
    /// The baseline program (the user's WGSL, no constants).
    pub baseline: Program,
    /// The reflected interface of the baseline.
    pub interface: Interface,
    /// Every binding, in (group, binding) order.
    pub buffers: Vec<BufferPlan>,
    /// Named sizes with their defaults, in declaration order.
    pub sizes: Vec<(String, u64)>,
    /// Shapes to tune on.
    pub tune_shapes: Vec<Shape>,
    /// Shapes to verify on (never tuned on).
    pub verify_shapes: Vec<Shape>,
    /// Candidate values for overrides given in the spec.
    pub params: Vec<(String, Vec<f64>)>,
    /// Overrides whose value follows from others, in order.
    #[serde(default)]
    pub derived: Vec<(String, crate::params::ParamExpr)>,
    /// Conditions every searched point must meet on every tune and verify shape.
    #[serde(default)]
    pub constraints: Vec<crate::params::ParamExpr>,
    /// Relative tolerance for float outputs.
    pub tolerance: f64,
    /// Floating-point operations per launch, if the spec gives them.
    pub flops: Option<SizeExpr>,
    /// The hand-written reference of `reference(..)`, once [`resolve_reference`] has checked it.
    /// Reports run it beside the tuned variant; it is never tuned, embedded or hashed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<Program>,
}

/// One problem with a spec, located in the attribute.
#[derive(Debug, Clone, PartialEq)]
pub struct SpecError {
    /// Where in the attribute.
    pub loc: Loc,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub hint: Option<String>,
    /// The size name at fault, when the error is about one name inside an expression.
    pub culprit: Option<String>,
}

impl SpecError {
    fn new(loc: Loc, message: impl Into<String>) -> Self {
        SpecError {
            loc,
            message: message.into(),
            hint: None,
            culprit: None,
        }
    }

    fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

/// Why a spec could not be resolved.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// The WGSL itself is broken or has no suitable entry point.
    #[error(transparent)]
    Wgsl(#[from] ReflectError),
    /// The spec does not fit the WGSL.
    #[error("{}", .0.iter().map(|e| e.message.clone()).collect::<Vec<_>>().join("; "))]
    Spec(Vec<SpecError>),
}

/// The default relative tolerance for float outputs.
pub const DEFAULT_TOLERANCE: f64 = 1e-4;

/// Resolves `spec` (for the static `name`) against `wgsl`, whose origin is `source_label`.
pub fn resolve(
    name: &str,
    spec: &Spec,
    wgsl: &str,
    source_label: &str,
) -> Result<ResolvedKernel, ResolveError> {
    // A launch sequence's first stage is the entry point the interface is reflected for.
    let first_entry = spec
        .entry
        .as_deref()
        .or(spec.stages.first().map(|s| s.entry.as_str()));
    let reflected = reflect(wgsl, first_entry, source_label).map_err(|e| match e {
        ReflectError::Entry(m) if !spec.stages.is_empty() => ResolveError::Spec(vec![
            SpecError::new(Loc::Stage(0), m)
                .hint("each stage's `entry` must name a `@compute` function of the WGSL"),
        ]),
        ReflectError::Entry(m) if spec.entry.is_some() => ResolveError::Spec(vec![
            SpecError::new(Loc::Entry, m)
                .hint("`entry` must name a `@compute` function of the WGSL"),
        ]),
        ReflectError::Entry(m) => ResolveError::Spec(vec![SpecError::new(Loc::Source, m)]),
        other => ResolveError::Wgsl(other),
    })?;
    let mut interface = reflected.interface;
    let mut errors = Vec::new();

    // Sizes and shapes.
    let declared: Vec<&str> = spec.sizes.iter().map(|(n, _)| n.as_str()).collect();
    let declare_hint = |n: &str| {
        format!(
            "declare it with a default value: `sizes({}{n} = 1024)`",
            declared
                .iter()
                .map(|d| format!("{d} = .., "))
                .collect::<String>()
        )
    };
    // Parameters: overrides with candidates or a derived value. Only a launch rule may use them.
    let param_names: Vec<&str> = spec
        .params
        .iter()
        .map(|(n, _)| n.as_str())
        .chain(spec.derived.iter().map(|(n, _)| n.as_str()))
        .collect();
    let check_names = |names: Vec<&str>, loc: Loc, errors: &mut Vec<SpecError>| {
        for n in names {
            if !declared.contains(&n) && param_names.contains(&n) {
                let mut e = SpecError::new(
                    loc,
                    format!("`{n}` is a parameter; only the launch rule may use parameters"),
                )
                .hint(
                    "every variant runs on the same buffers and shapes, so lengths, values and shapes use sizes declared in `sizes(..)`; a launch rule (`grid = (..)`, `workgroups = (..)`) may use `params(..)` too",
                );
                e.culprit = Some(n.to_owned());
                errors.push(e);
            } else if !declared.contains(&n) {
                let hint = match nearest(n, declared.iter().copied()) {
                    Some(near) => format!("did you mean `{near}`? or {}", declare_hint(n)),
                    None => declare_hint(n),
                };
                let mut e =
                    SpecError::new(loc, format!("size `{n}` is not declared in `sizes(..)`"))
                        .hint(hint);
                e.culprit = Some(n.to_owned());
                errors.push(e);
            }
        }
    };
    let full_shape = |partial: &[(String, u64)]| -> Shape {
        let mut shape: Shape = spec.sizes.iter().cloned().collect();
        shape.extend(partial.iter().cloned());
        shape
    };
    for (i, shape) in spec.tune_shapes.iter().enumerate() {
        check_names(
            shape.iter().map(|(n, _)| n.as_str()).collect(),
            Loc::TuneShape(i),
            &mut errors,
        );
    }
    for (i, shape) in spec.verify_shapes.iter().enumerate() {
        check_names(
            shape.iter().map(|(n, _)| n.as_str()).collect(),
            Loc::VerifyShape(i),
            &mut errors,
        );
    }
    let tune_shapes: Vec<Shape> = if spec.tune_shapes.is_empty() {
        vec![full_shape(&[])]
    } else {
        spec.tune_shapes.iter().map(|s| full_shape(s)).collect()
    };
    let verify_shapes: Vec<Shape> = if spec.verify_shapes.is_empty() {
        let sizes: Vec<&str> = spec.sizes.iter().map(|(n, _)| n.as_str()).collect();
        let constraints = crate::views::size_only(&spec.constraints, &sizes);
        tune_shapes
            .iter()
            .map(|s| derive_verify_shape(s, &constraints))
            .collect()
    } else {
        spec.verify_shapes.iter().map(|s| full_shape(s)).collect()
    };

    // Bindings: match each spec entry to a reflected binding.
    let mut plans: Vec<Option<BufferPlan>> = vec![None; interface.bindings.len()];
    // Bindings the spec names, even with errors, so they are not reported as left out too.
    let mut described = vec![false; interface.bindings.len()];
    // Bindings suggested for a misspelled name: the one meant, so not reported as left out.
    let mut suggested = vec![false; interface.bindings.len()];
    let available = || {
        interface
            .bindings
            .iter()
            .map(|b| {
                format!(
                    "`{}` (@group({}) @binding({}), var<{}>)",
                    b.name, b.group, b.binding, b.kind
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    for (i, b) in spec.bindings.iter().enumerate() {
        let found = interface.bindings.iter().position(|r| match &b.target {
            BindingRef::Name(n) => r.name == *n,
            BindingRef::Slot { group, binding } => r.group == *group && r.binding == *binding,
        });
        let Some(idx) = found else {
            let nearest = match &b.target {
                BindingRef::Name(n) => nearest(n, interface.bindings.iter().map(|r| &r.name[..])),
                BindingRef::Slot { .. } => None,
            };
            // The suggested binding is the one meant: do not also report it as left out.
            if let Some(n) = nearest
                && let Some(meant) = interface.bindings.iter().position(|r| r.name == n)
            {
                suggested[meant] = true;
            }
            errors.push(
                SpecError::new(
                    Loc::Binding(i),
                    format!("the WGSL has no binding `{}`", b.target),
                )
                .hint(match (interface.bindings.is_empty(), nearest) {
                    (true, _) => "the entry point's module declares no buffer bindings".to_string(),
                    (false, Some(n)) => {
                        format!("did you mean `{n}`? the WGSL declares {}", available())
                    }
                    (false, None) => format!("the WGSL declares {}", available()),
                }),
            );
            continue;
        };
        let r = &interface.bindings[idx];
        if described[idx] {
            errors.push(SpecError::new(
                Loc::Binding(i),
                format!("binding `{}` is described twice", r.name),
            ));
            continue;
        }
        described[idx] = true;
        if r.kind.is_texture()
            || matches!(r.kind, BindingKind::Sampler { .. })
            || b.texture.is_some()
        {
            if let Some(plan) = textures::resolve_texture(i, b, r, &check_names, &mut errors) {
                plans[idx] = Some(plan);
            }
            continue;
        }
        let role_ok = matches!(
            (r.kind, b.role),
            (BindingKind::Uniform, Role::Uniform)
                | (BindingKind::StorageRead, Role::Input)
                | (
                    BindingKind::StorageReadWrite,
                    Role::Input | Role::Output | Role::Inout | Role::Scratch
                )
        );
        if !role_ok {
            let hint = match r.kind {
                BindingKind::Uniform => "a uniform binding is described with `uniform(values..)`",
                BindingKind::StorageRead => "a read-only buffer can only be an `input(len)`",
                BindingKind::StorageReadWrite => {
                    "a read_write buffer is `output(len)`, `inout(len)`, `scratch(len)` or `input(len)`"
                }
                _ => unreachable!("textures and samplers are resolved above"),
            };
            errors.push(
                SpecError::new(
                    Loc::BindingRole(i),
                    format!(
                        "binding `{}` is var<{}>; it cannot be `{}`",
                        r.name, r.kind, b.role
                    ),
                )
                .hint(hint),
            );
            continue;
        }
        if let Some(len) = &b.len {
            check_names(len.names().collect(), Loc::BindingLen(i), &mut errors);
            if !r.layout.is_runtime_sized() {
                errors.push(
                    SpecError::new(
                        Loc::BindingLen(i),
                        format!("binding `{}` has the fixed-size type `{}`; a length applies only to runtime-sized arrays", r.name, r.ty),
                    )
                    .hint(format!("remove the length: `{} = {}`", r.name, b.role)),
                );
                continue;
            }
        } else if r.layout.is_runtime_sized() {
            errors.push(
                SpecError::new(
                    Loc::BindingRole(i),
                    format!(
                        "binding `{}` is a runtime-sized `{}`; give its element count",
                        r.name, r.ty
                    ),
                )
                .hint(format!(
                    "e.g. `{} = {}(n)` with `n` declared in `sizes(..)`",
                    r.name, b.role
                )),
            );
            continue;
        }
        if let Some(init) = &b.init {
            let values: Vec<&Value> = match init {
                Init::Range(lo, hi) => vec![lo, hi],
                Init::Constant(v) => vec![v],
                Init::Values(values) => values.iter().collect(),
                Init::CausalMask(..) | Init::Probabilities(_) | Init::Bits => Vec::new(),
            };
            match init {
                Init::CausalMask(rows, cols) => {
                    let names = rows.names().chain(cols.names()).collect();
                    check_names(names, Loc::BindingRole(i), &mut errors);
                }
                Init::Probabilities(cols) => {
                    check_names(cols.names().collect(), Loc::BindingRole(i), &mut errors);
                }
                _ => {}
            }
            if let Some(needs) = Needs::of(init) {
                let fields = r.layout.array.iter().flat_map(|a| &a.fields);
                if let Some(f) = r
                    .layout
                    .header
                    .iter()
                    .chain(fields)
                    .find(|f| !needs.accepts(f.scalar))
                {
                    errors.push(
                        SpecError::new(
                            Loc::BindingRole(i),
                            format!(
                                "`{init}` fills {needs} scalars; binding `{}` is `{}` and holds `{}`",
                                r.name,
                                r.ty,
                                format!("{:?}", f.scalar).to_lowercase()
                            ),
                        )
                        .hint(match needs {
                            Needs::Floats => "a mask holds `-inf` and probabilities are fractions: declare the buffer `array<f32>` (or `f16`); integers take `range(lo, hi)` or `bits()`",
                            Needs::Integers => "`bits()` fills integers (`array<u32>`, `array<i32>`); floats take `range(lo, hi)`",
                        }),
                    );
                    continue;
                }
            }
            if let Init::Values(values) = init {
                let scalars = r.layout.scalars(0).count();
                if r.layout.is_runtime_sized() || scalars != values.len() {
                    errors.push(
                        SpecError::new(
                            Loc::BindingRole(i),
                            if r.layout.is_runtime_sized() {
                                format!(
                                    "binding `{}` is a runtime-sized `{}`; `values(..)` gives the scalars of a fixed-size buffer",
                                    r.name, r.ty
                                )
                            } else {
                                format!(
                                    "binding `{}` (`{}`) holds {scalars} scalar(s); {} value(s) given",
                                    r.name,
                                    r.ty,
                                    values.len()
                                )
                            },
                        )
                        .hint("give one value per scalar, in address order, e.g. `dims = input(values(rows, cols))`; for a runtime-sized array use `range(lo, hi)` or `constant(v)`"),
                    );
                    continue;
                }
            }
            for v in values {
                if let Value::Size(e) = v {
                    check_names(e.names().collect(), Loc::BindingRole(i), &mut errors);
                }
            }
        }
        if b.role == Role::Uniform {
            let scalars: Vec<_> = r.layout.scalars(0).collect();
            if scalars.len() != b.values.len() {
                errors.push(
                    SpecError::new(
                        Loc::BindingRole(i),
                        format!(
                            "uniform `{}` (`{}`) holds {} scalar(s); {} value(s) given",
                            r.name,
                            r.ty,
                            scalars.len(),
                            b.values.len()
                        ),
                    )
                    .hint("give one value per scalar member, in declaration order: sizes like `n` or float literals like `0.5`"),
                );
                continue;
            }
            for v in &b.values {
                if let Value::Size(e) = v {
                    check_names(e.names().collect(), Loc::BindingRole(i), &mut errors);
                }
            }
        }
        plans[idx] = Some(BufferPlan {
            binding: r.clone(),
            role: b.role,
            len: b.len.clone(),
            init: b.init.clone(),
            values: b.values.clone(),
            extent: Vec::new(),
            format: None,
        });
    }
    // Bindings the spec left out: defaults where possible.
    for (idx, r) in interface.bindings.iter().enumerate() {
        if described[idx] || suggested[idx] {
            continue;
        }
        if !spec.stages.is_empty() && !matches!(r.kind, BindingKind::Sampler { .. }) {
            // In a sequence no default role is safe: what a stage writes may be an
            // intermediate (`scratch`, never compared) or a result (`output`).
            if let Some(i) = stages::first_user(&reflected.module, &reflected.info, spec, r) {
                errors.push(
                    SpecError::new(
                        Loc::Stage(i),
                        format!(
                            "stage {} (`{}`) uses binding `{}` (`{}`), which `bind(..)` does not describe",
                            i + 1,
                            spec.stages[i].entry,
                            r.name,
                            r.ty
                        ),
                    )
                    .hint(format!(
                        "describe every binding of a launch sequence, e.g. `bind({} = scratch(len))` for an intermediate only the stages see, or `output(len)` for a result",
                        r.name
                    )),
                );
                continue;
            }
        }
        let role = match r.kind {
            BindingKind::Uniform => Role::Uniform,
            BindingKind::StorageRead => Role::Input,
            BindingKind::StorageReadWrite => Role::Output,
            BindingKind::Sampler { .. } => {
                plans[idx] = Some(BufferPlan {
                    binding: r.clone(),
                    role: Role::Sampler,
                    len: None,
                    init: None,
                    values: Vec::new(),
                    extent: Vec::new(),
                    format: None,
                });
                continue;
            }
            BindingKind::SampledTexture { .. } | BindingKind::StorageTexture { .. } => {
                let example = if matches!(r.kind, BindingKind::StorageTexture { .. }) {
                    format!("bind({} = storage_texture(width, height))", r.name)
                } else {
                    format!("bind({} = texture(width, height))", r.name)
                };
                errors.push(
                    SpecError::new(
                        Loc::Attr,
                        format!("texture `{}` (`{}`) is not described", r.name, r.ty),
                    )
                    .hint(format!("give its extents, e.g. `{example}`")),
                );
                continue;
            }
        };
        let needs = (r.layout.is_runtime_sized() && role != Role::Uniform)
            || (role == Role::Uniform && r.layout.scalars(0).next().is_some());
        if needs {
            let example = if role == Role::Uniform {
                format!("bind({} = uniform(..values..))", r.name)
            } else {
                format!("bind({} = {}(n))", r.name, role)
            };
            errors.push(
                SpecError::new(
                    Loc::Attr,
                    format!("binding `{}` (`{}`) is not described", r.name, r.ty),
                )
                .hint(format!("add it to the spec, e.g. `{example}`")),
            );
            continue;
        }
        plans[idx] = Some(BufferPlan {
            binding: r.clone(),
            role,
            len: None,
            init: None,
            values: Vec::new(),
            extent: Vec::new(),
            format: None,
        });
    }
    textures::settle_filtering(&mut plans);
    for (idx, plan) in plans.iter().enumerate() {
        if let Some(plan) = plan {
            interface.bindings[idx].kind = plan.binding.kind;
        }
    }
    let buffers: Vec<BufferPlan> = plans.into_iter().flatten().collect();
    if errors.is_empty() && !buffers.iter().any(BufferPlan::is_compared) {
        errors.push(
            SpecError::new(
                Loc::Attr,
                "nothing to verify: no binding is an `output` or `inout`",
            )
            .hint("mark the buffer the kernel writes, e.g. `bind(y = output(n))`"),
        );
    }

    // Dispatch (of the first stage, for a sequence).
    let first_dispatch = spec
        .dispatch
        .as_ref()
        .or(spec.stages.first().map(|s| &s.dispatch));
    for (i, stage) in spec.stages.iter().enumerate() {
        for n in stage.dispatch.size.iter().flat_map(SizeExpr::names) {
            if let Some(mut e) = check_launch_name(&interface, &declared, &param_names, n) {
                e.loc = Loc::StageDispatch(i);
                errors.push(e);
            }
        }
    }
    let dispatch = match first_dispatch {
        Some(d) if !spec.stages.is_empty() => Some(stages::dispatch(d)),
        Some(d) => {
            for n in d.size.iter().flat_map(SizeExpr::names) {
                if let Some(e) = check_launch_name(&interface, &declared, &param_names, n) {
                    errors.push(e);
                }
            }
            let mut size = d.size.clone();
            while size.len() < 3 {
                size.push(SizeExpr::lit(1));
            }
            Some(Dispatch {
                mode: d.mode,
                size: [size[0].clone(), size[1].clone(), size[2].clone()],
            })
        }
        None => {
            let outputs: Vec<&BufferPlan> = buffers.iter().filter(|b| b.is_compared()).collect();
            match (outputs.as_slice(), interface.workgroup_size) {
                ([one], [_, 1, 1]) if one.len.is_some() => Some(Dispatch {
                    mode: DispatchMode::Grid,
                    size: [
                        one.len.clone().expect("checked"),
                        SizeExpr::lit(1),
                        SizeExpr::lit(1),
                    ],
                }),
                _ => {
                    if errors.is_empty() {
                        errors.push(
                            SpecError::new(Loc::Attr, "the launch rule cannot be inferred")
                                .hint("add `grid = (..)` (invocations per dimension, e.g. `grid = (cols, rows)`) or `workgroups = (..)` (workgroup counts, e.g. one per row: `workgroups = (rows)`)"),
                        );
                    }
                    None
                }
            }
        }
    };

    // Parameters: candidates, derived values, constraints, the baseline's configuration.
    let shapes: Vec<&Shape> = tune_shapes.iter().chain(&verify_shapes).collect();
    // Parameters the launch rule reads get a baseline constant even where the WGSL gives a
    // default, so the rule finds its value among the program's constants.
    let launch_params: Vec<&str> = dispatch
        .iter()
        .flat_map(|d| d.size.iter().flat_map(SizeExpr::names))
        .chain(
            spec.stages
                .iter()
                .flat_map(|s| s.dispatch.size.iter().flat_map(SizeExpr::names)),
        )
        .filter(|n| !declared.contains(n) && param_names.contains(n))
        .collect();
    let params = params::resolve_params(spec, &interface, &shapes, &launch_params, &mut errors);
    interface.workgroup_size = params.workgroup_size;
    let baseline = Program {
        wgsl: Cow::Owned(wgsl.to_owned()),
        entry: Cow::Owned(interface.entry.clone()),
        constants: Cow::Owned(
            params
                .constants
                .iter()
                .map(|(k, v)| (Cow::Owned(k.clone()), *v))
                .collect(),
        ),
        workgroup_size: interface.workgroup_size,
        workgroup_storage_bytes: interface.workgroup_storage_bytes.unwrap_or(0),
        dispatch: dispatch.clone().unwrap_or_else(|| Dispatch {
            mode: DispatchMode::Grid,
            size: [SizeExpr::lit(1), SizeExpr::lit(1), SizeExpr::lit(1)],
        }),
        workspace: Cow::Borrowed(&[]),
        then: Cow::Owned(stages::later(
            &reflected.module,
            &reflected.info,
            spec,
            &params.constants,
            &mut errors,
        )),
    };

    if let Some(f) = &spec.flops {
        check_names(f.names().collect(), Loc::Flops, &mut errors);
    }

    // Every size expression must evaluate on every shape.
    if errors.is_empty() {
        for shape in tune_shapes.iter().chain(&verify_shapes) {
            for b in &buffers {
                match b.len_on(shape) {
                    Ok(0) if b.len.is_some() || b.is_texture() => errors.push(SpecError::new(
                        spec_binding_loc(spec, &b.binding),
                        format!(
                            "binding `{}` has length 0 on shape {}",
                            b.binding.name,
                            shape_text(shape)
                        ),
                    )),
                    Err(e) => errors.push(SpecError::new(
                        spec_binding_loc(spec, &b.binding),
                        format!("{e} on shape {}", shape_text(shape)),
                    )),
                    Ok(_) => {}
                }
            }
            for b in &buffers {
                let Some(init) = &b.init else { continue };
                let checked = Pattern::of(init, shape)
                    .map_err(|e| e.to_string())
                    .and_then(|p| match (p, b.len_on(shape)) {
                        (Some(p), Ok(len)) => p.check(&b.layout(), len),
                        _ => Ok(()),
                    });
                if let Err(e) = checked {
                    errors.push(
                        SpecError::new(
                            spec_binding_loc_role(spec, &b.binding),
                            format!(
                                "binding `{}` on shape {}: {e}",
                                b.binding.name,
                                shape_text(shape)
                            ),
                        )
                        .hint(match init {
                            Init::CausalMask(rows, cols) => format!(
                                "give the buffer a whole number of {rows} x {cols} masks, e.g. `input(heads * {rows} * {cols}, {init})`"
                            ),
                            Init::Probabilities(cols) => format!(
                                "give the buffer a whole number of rows of {cols}, e.g. `input(rows * {cols}, {init})`"
                            ),
                            _ => "every size of the distribution must be positive".to_owned(),
                        }),
                    );
                }
            }
            for (i, launch) in baseline.launches().iter().enumerate() {
                if let Err(e) = launch.workgroups(|n| shape.get(n).copied(), u32::MAX) {
                    errors.push(SpecError::new(
                        if spec.stages.is_empty() {
                            Loc::Dispatch
                        } else {
                            Loc::StageDispatch(i)
                        },
                        format!("{e} on shape {}", shape_text(shape)),
                    ));
                }
            }
        }
    }

    if !errors.is_empty() {
        return Err(ResolveError::Spec(errors));
    }
    let tolerance = spec.tolerance.unwrap_or(DEFAULT_TOLERANCE);
    let given_verify_shapes = (!spec.verify_shapes.is_empty()).then_some(&verify_shapes[..]);
    let hash = content_hash(
        wgsl,
        &interface.entry,
        &baseline.launch_rule(),
        &contract(&buffers, &params.constants, tolerance, given_verify_shapes),
    );
    Ok(ResolvedKernel {
        name: name.to_owned(),
        content_hash: hash,
        source_label: source_label.to_owned(),
        baseline,
        interface,
        buffers,
        sizes: spec.sizes.clone(),
        tune_shapes,
        verify_shapes,
        params: spec.params.clone(),
        derived: spec.derived.clone(),
        constraints: spec.constraints.clone(),
        tolerance,
        flops: spec.flops.clone(),
        reference: None,
    })
}

/// Checks the hand-written reference `wgsl` (from `source_label`) of `reference(..)` against the
/// resolved `kernel` and returns it as a program: it must be valid WGSL binding the kernel's
/// buffers with the same types and access modes (it may leave some out, as a variant may), and its
/// launch rule must use declared sizes and evaluate on every tune and verify shape.
///
/// Every error is located at the reference, never at the kernel's own WGSL.
pub fn resolve_reference(
    kernel: &ResolvedKernel,
    reference: &ReferenceSpec,
    wgsl: &str,
    source_label: &str,
) -> Result<Program, ResolveError> {
    let error = |loc, message: String| ResolveError::Spec(vec![SpecError::new(loc, message)]);
    let reflected = reflect(wgsl, reference.entry.as_deref(), source_label).map_err(|e| {
        let what = match &e {
            ReflectError::Parse { .. } | ReflectError::Validation { .. } => {
                format!(
                    "invalid WGSL in reference {source_label}: {}",
                    e.to_string().trim_end()
                )
            }
            other => format!("reference {source_label}: {other}"),
        };
        error(Loc::Reference, what)
    })?;
    let mut interface = reflected.interface;
    // The reference may name its entry point as it likes; only its bindings must fit.
    let entry = std::mem::replace(&mut interface.entry, kernel.interface.entry.clone());
    let mismatches = kernel.interface.mismatches(&interface);
    if !mismatches.is_empty() {
        return Err(ResolveError::Spec(vec![
            SpecError::new(
                Loc::Reference,
                format!(
                    "the reference {source_label} does not fit the kernel's bindings: {}",
                    mismatches.join("; ")
                ),
            )
            .hint("a reference binds the kernel's buffers with the same groups, bindings, types and access modes, so it runs on the same bind groups"),
        ]));
    }
    let declared: Vec<&str> = kernel.sizes.iter().map(|(n, _)| n.as_str()).collect();
    let mut errors = Vec::new();
    for name in reference.dispatch.size.iter().flat_map(SizeExpr::names) {
        if !declared.contains(&name) {
            let mut e = SpecError::new(
                Loc::ReferenceDispatch,
                format!("size `{name}` is not declared in `sizes(..)`"),
            )
            .hint("the reference's launch rule uses the kernel's named sizes");
            e.culprit = Some(name.to_owned());
            errors.push(e);
        }
    }
    let mut size = reference.dispatch.size.clone();
    while size.len() < 3 {
        size.push(SizeExpr::lit(1));
    }
    let dispatch = Dispatch {
        mode: reference.dispatch.mode,
        size: [size[0].clone(), size[1].clone(), size[2].clone()],
    };
    if errors.is_empty() {
        for shape in kernel.tune_shapes.iter().chain(&kernel.verify_shapes) {
            if let Err(e) = dispatch.workgroups(
                interface.workgroup_size,
                |n| shape.get(n).copied(),
                u32::MAX,
            ) {
                errors.push(SpecError::new(
                    Loc::ReferenceDispatch,
                    format!("{e} on shape {}", shape_text(shape)),
                ));
            }
        }
    }
    if !errors.is_empty() {
        return Err(ResolveError::Spec(errors));
    }
    Ok(Program {
        wgsl: Cow::Owned(wgsl.to_owned()),
        entry: Cow::Owned(entry),
        constants: Cow::Owned(Vec::new()),
        workgroup_size: interface.workgroup_size,
        workgroup_storage_bytes: interface.workgroup_storage_bytes.unwrap_or(0),
        dispatch,
        workspace: Cow::Borrowed(&[]),
        then: Cow::Borrowed(&[]),
    })
}

/// The canonical text of the spec parts that decide whether a variant is correct, hashed into the
/// content hash beside the WGSL, entry point and dispatch rule: each binding's role, length, input
/// distribution and uniform values, a texture's extent and format (defaults filled in, so writing
/// a default out changes nothing), the constants the baseline itself runs with (the first
/// candidate of an override without a default: the reference every variant is checked against),
/// the tolerance, and the verify shapes when the spec gives them. Verify shapes derived from the
/// tune shapes are left out: they follow the tune shapes, which decide speed only.
fn contract(
    buffers: &[BufferPlan],
    baseline_constants: &[(String, f64)],
    tolerance: f64,
    verify_shapes: Option<&[Shape]>,
) -> String {
    #[derive(Serialize)]
    struct Buffer<'a> {
        group: u32,
        binding: u32,
        role: Role,
        len: &'a Option<SizeExpr>,
        init: &'a Option<Init>,
        values: &'a [Value],
        #[serde(skip_serializing_if = "<[_]>::is_empty")]
        extent: &'a [SizeExpr],
        #[serde(skip_serializing_if = "Option::is_none")]
        format: &'a Option<TexelFormat>,
    }
    #[derive(Serialize)]
    struct Contract<'a> {
        buffers: Vec<Buffer<'a>>,
        #[serde(skip_serializing_if = "<[_]>::is_empty")]
        baseline_constants: &'a [(String, f64)],
        tolerance: f64,
        verify_shapes: Option<&'a [Shape]>,
    }
    let contract = Contract {
        buffers: buffers
            .iter()
            .map(|b| Buffer {
                group: b.binding.group,
                binding: b.binding.binding,
                role: b.role,
                len: &b.len,
                init: &b.init,
                values: &b.values,
                extent: &b.extent,
                format: &b.format,
            })
            .collect(),
        baseline_constants,
        tolerance,
        verify_shapes,
    };
    serde_json::to_string(&contract).expect("the contract serializes")
}

impl ResolvedKernel {
    /// The `constraints(..)` that name only sizes: promises about the shapes an app dispatches
    /// with, which variants may rely on and the runtime checks at every dispatch.
    pub fn size_constraints(&self) -> Vec<&crate::params::ParamExpr> {
        let sizes: Vec<&str> = self.sizes.iter().map(|(n, _)| n.as_str()).collect();
        crate::views::size_only(&self.constraints, &sizes)
    }

    /// Differences between the baseline's interface and a variant's (see
    /// [`Interface::mismatches`]); a buffer viewed `w` elements at a time is no difference when
    /// the spec guarantees its length is a multiple of `w` (see [`crate::views`]).
    pub fn mismatches(&self, variant: &Interface) -> Vec<String> {
        self.interface
            .mismatches_with(variant, &|b, w| self.view_allowed(b, w))
    }

    /// Whether the binding `b` may be viewed `w` elements at a time: its length is a multiple of
    /// `w` on every shape the spec's size constraints allow. The error names the constraint that
    /// would allow it.
    pub fn view_allowed(&self, b: &BindingInterface, w: u32) -> Result<(), String> {
        let Some(plan) = self
            .buffers
            .iter()
            .find(|p| p.binding.group == b.group && p.binding.binding == b.binding)
        else {
            return Err(format!("`{}` has no buffer in the spec", b.name));
        };
        if !plan.binding.layout.is_runtime_sized() {
            // A fixed-size array: `regrouping` already checked its count.
            return Ok(());
        }
        let Some(len) = &plan.len else {
            return Err(format!("`{}` has no length in the spec", b.name));
        };
        let divisors = crate::views::size_divisors(&self.size_constraints());
        if crate::views::multiple_of(len, &divisors, u64::from(w)) {
            return Ok(());
        }
        Err(match crate::views::suggested_constraint(len, w) {
            Some(c) => format!(
                "nothing in the spec says its length `{len}` is a multiple of {w}: a size constraint such as `constraints({c})` would"
            ),
            None => format!("its length {len} is not a multiple of {w}"),
        })
    }

    /// What the search is asked to explore for this kernel: compared with an entry's record to
    /// tell when the entry is stale.
    pub fn tuning(&self) -> crate::cache::TuningRecord {
        crate::cache::TuningRecord {
            tune_shapes: self.tune_shapes.clone(),
            params: self.params.clone(),
            derived: self
                .derived
                .iter()
                .map(|(n, e)| (n.clone(), e.to_string()))
                .collect(),
            constraints: self.constraints.iter().map(|c| c.to_string()).collect(),
            shapes_given: false,
        }
    }
}

/// Why `name` cannot appear in the launch rule, if it cannot: a launch rule may use the sizes
/// declared in `sizes(..)` and the integer parameters of `params(..)` (candidates or derived),
/// each variant launched with its own values; a name that is both would be ambiguous.
fn check_launch_name(
    interface: &Interface,
    declared: &[&str],
    param_names: &[&str],
    name: &str,
) -> Option<SpecError> {
    let culprit = |mut e: SpecError| {
        e.culprit = Some(name.to_owned());
        e
    };
    let is_size = declared.contains(&name);
    let is_param = param_names.contains(&name);
    if is_size && is_param {
        return Some(culprit(
            SpecError::new(
                Loc::Dispatch,
                format!("`{name}` is both a size and a parameter"),
            )
            .hint(
                "rename the size or the `override`, so the launch rule says which it counts with",
            ),
        ));
    }
    if is_size {
        return None;
    }
    if is_param {
        // An unknown override is reported at `params(..)`; here only its type matters.
        return match interface.overrides.iter().find(|o| o.name == name) {
            Some(o) if !matches!(o.ty.as_str(), "u32" | "i32") => Some(culprit(
                SpecError::new(
                    Loc::Dispatch,
                    format!(
                        "`override {name}` is `{}`; a launch rule counts with integers",
                        o.ty
                    ),
                )
                .hint("a launch rule may use `u32` and `i32` overrides of `params(..)`"),
            )),
            _ => None,
        };
    }
    let known = declared.iter().chain(param_names).copied();
    let example_size = format!(
        "declare it as a size with a default value: `sizes({}{name} = 1024)`",
        declared
            .iter()
            .map(|d| format!("{d} = .., "))
            .collect::<String>()
    );
    let example_param = if interface.overrides.iter().any(|o| o.name == name) {
        format!(", or tune the override: `params({name} = [..])`")
    } else {
        format!(
            ", or make it a parameter: an `override {name}: u32;` in the WGSL with `params({name} = [..])`"
        )
    };
    let hint = match nearest(name, known) {
        Some(near) => format!("did you mean `{near}`? or {example_size}{example_param}"),
        None => format!("{example_size}{example_param}"),
    };
    Some(culprit(
        SpecError::new(
            Loc::Dispatch,
            format!(
                "`{name}` is neither a size declared in `sizes(..)` nor a parameter in `params(..)`"
            ),
        )
        .hint(hint),
    ))
}

/// The declared name closest to a misspelled `name`, when one is close enough to be a likely typo
/// (Jaro-Winkler similarity of at least 0.8, the threshold cargo and clap suggest with).
fn nearest<'a>(name: &str, declared: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    declared
        .filter(|d| !d.is_empty() && *d != name)
        .map(|d| (strsim::jaro_winkler(name, d), d))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, d)| d)
}

/// The spec location of the length of binding `b`, or the whole attribute if the spec omits it.
fn spec_binding_loc(spec: &Spec, b: &BindingInterface) -> Loc {
    spec_binding_index(spec, b).map_or(Loc::Attr, Loc::BindingLen)
}

/// The role (with its distribution) of the spec entry that describes `b`.
fn spec_binding_loc_role(spec: &Spec, b: &BindingInterface) -> Loc {
    spec_binding_index(spec, b).map_or(Loc::Attr, Loc::BindingRole)
}

fn spec_binding_index(spec: &Spec, b: &BindingInterface) -> Option<usize> {
    spec.bindings.iter().position(|s| match &s.target {
        BindingRef::Name(n) => *n == b.name,
        BindingRef::Slot { group, binding } => *group == b.group && *binding == b.binding,
    })
}

/// `(rows = 4096, cols = 4096)`.
pub fn shape_text(shape: &Shape) -> String {
    let inner: Vec<String> = shape.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    format!("({})", inner.join(", "))
}

/// A verification shape derived from a tune shape: every size moved to a nearby odd value, so it is
/// a multiple of no workgroup size and was never seen by the search — or, where the spec's size
/// constraints forbid that (`n % 4 == 0`), to the nearest value below it that keeps every one of
/// them (then as few factors of two as they allow).
pub fn derive_verify_shape(shape: &Shape, constraints: &[&crate::params::ParamExpr]) -> Shape {
    let mut out = shape.clone();
    let holds = |s: &Shape| {
        constraints.iter().all(|c| {
            let names = c.names();
            // Only the constraints over this shape's sizes apply.
            !names.iter().all(|n| s.contains_key(*n))
                || matches!(c.eval(&|n| s.get(n).map(|v| *v as i64)), Ok(v) if v != 0)
        })
    };
    for (k, &v) in shape {
        let w = if v <= 2 { v } else { (v - v / 8 - 1) | 1 }.max(1);
        // The odd neighbour, else the closest value below it that breaks no constraint.
        let found = (0..4096u64)
            .map_while(|d| w.checked_sub(d).filter(|x| *x >= 1))
            .find(|&x| {
                let mut t = out.clone();
                t.insert(k.clone(), x);
                holds(&t)
            });
        out.insert(k.clone(), found.unwrap_or(v));
    }
    out
}

pub mod naga_panics;
mod params;
mod stages;
#[cfg(test)]
mod tests;
mod textures;

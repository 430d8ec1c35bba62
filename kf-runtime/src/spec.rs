//! The user input layer: what problem a kernel solves, as written in `#[kernelfoundry(..)]`.
//!
//! A [`Spec`] holds only what cannot be inferred from the WGSL — named sizes, the shapes to tune and
//! verify on, buffer lengths, input distributions, uniform values and the launch rule. Everything
//! else (binding types, access modes, layouts, workgroup size) comes from naga reflection when the
//! spec is resolved against its WGSL (see `resolve`, behind the `spec` feature).
//!
//! Invariant: a spec is plain data. The attribute parser (`syntax`) keeps token spans in a side
//! table keyed by [`Loc`], so errors found later still point at the offending token.

use crate::expr::SizeExpr;
use crate::program::DispatchMode;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// A full assignment of named sizes, e.g. `{rows: 4096, cols: 4096}`.
pub type Shape = BTreeMap<String, u64>;

/// Where the WGSL comes from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceRef {
    /// `path = "..."`, relative to the crate root (the directory of its Cargo.toml).
    Path(String),
    /// `source = r#"..."#`, inline WGSL.
    Inline(String),
}

/// Names a binding: by WGSL variable name or by number.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum BindingRef {
    /// The `var` name in WGSL, e.g. `x`.
    Name(String),
    /// `@group(g) @binding(b)`; written `3` for group 0 or `"1.3"` for another group.
    Slot {
        /// The group.
        group: u32,
        /// The binding.
        binding: u32,
    },
}

impl fmt::Display for BindingRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BindingRef::Name(n) => f.write_str(n),
            BindingRef::Slot { group, binding } => write!(f, "@group({group}) @binding({binding})"),
        }
    }
}

/// What a buffer is for, which decides how the harness fills and checks it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Read by the kernel; filled with random values, not compared.
    Input,
    /// Written by the kernel; poisoned before each run, compared after.
    Output,
    /// Read and written; filled with random values, compared after.
    Inout,
    /// Temporary storage; poisoned, not compared.
    Scratch,
    /// A uniform buffer; filled with the spec's values.
    Uniform,
    /// A sampler; needs no description (the harness binds a clamp-to-edge sampler).
    Sampler,
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::Input => "input",
            Role::Output => "output",
            Role::Inout => "inout",
            Role::Scratch => "scratch",
            Role::Uniform => "uniform",
            Role::Sampler => "sampler",
        })
    }
}

/// A number in a spec: a size expression (integers) or a float literal.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Value {
    /// An integer expression over named sizes.
    Size(SizeExpr),
    /// A float literal.
    Float(f64),
}

impl Value {
    /// Evaluates to a float on `shape`.
    pub fn eval(&self, shape: &Shape) -> Result<f64, crate::expr::ExprError> {
        match self {
            Value::Size(e) => e.eval(|n| shape.get(n).copied()).map(|v| v as f64),
            Value::Float(f) => Ok(*f),
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Size(e) => e.fmt(f),
            Value::Float(v) => write!(f, "{v:?}"),
        }
    }
}

/// How an input buffer is filled.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Init {
    /// Uniformly random in `[lo, hi)`: floats for float scalars, integers otherwise.
    Range(Value, Value),
    /// Every scalar set to one value.
    Constant(Value),
    /// One value per scalar, in address order, for a fixed-size buffer (e.g. a `vec2<u32>`
    /// holding two different sizes): `input(values(rows, cols))`.
    Values(Vec<Value>),
    /// An attention mask: row-major `rows × cols` blocks, repeated over the buffer (one per batch
    /// or head), `0.0` on and below the diagonal and `-inf` above:
    /// `mask = input(heads * rows * cols, causal_mask(rows, cols))`.
    #[serde(rename = "causal_mask")]
    CausalMask(SizeExpr, SizeExpr),
    /// Consecutive rows of `cols` non-negative values summing to 1: `input(rows * cols,
    /// probabilities(cols))`.
    Probabilities(SizeExpr),
    /// Integers uniform over the whole range of their type, every bit random (packed weights):
    /// `input(n, bits())`.
    Bits,
}

impl fmt::Display for Init {
    /// As the attribute spells it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Init::Range(lo, hi) => write!(f, "range({lo}, {hi})"),
            Init::Constant(v) => write!(f, "constant({v})"),
            Init::Values(values) => {
                let v: Vec<String> = values.iter().map(ToString::to_string).collect();
                write!(f, "values({})", v.join(", "))
            }
            Init::CausalMask(rows, cols) => write!(f, "causal_mask({rows}, {cols})"),
            Init::Probabilities(cols) => write!(f, "probabilities({cols})"),
            Init::Bits => f.write_str("bits()"),
        }
    }
}

/// One `bind(..)` entry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BindingSpec {
    /// Which binding.
    pub target: BindingRef,
    /// What it is for.
    pub role: Role,
    /// Number of array elements, for runtime-sized arrays.
    pub len: Option<SizeExpr>,
    /// How inputs are filled (defaults depend on the scalar type).
    pub init: Option<Init>,
    /// Uniform member values, in declaration order.
    pub values: Vec<Value>,
    /// For `texture(..)` and `storage_texture(..)`: the texture's extents and format.
    #[serde(default)]
    pub texture: Option<TextureSpec>,
}

/// `img = texture(w, h)` or `out = storage_texture(w, h)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TextureSpec {
    /// `storage_texture(..)` rather than `texture(..)`.
    pub storage: bool,
    /// Width, then height, then depth or layers, as the texture's dimensionality needs.
    pub extent: Vec<SizeExpr>,
    /// The texel format (`format = rgba16float`); a sampled texture's default depends on what
    /// it holds, a storage texture's format is the one its WGSL names.
    pub format: Option<crate::interface::TexelFormat>,
}

/// `grid = (..)` or `workgroups = (..)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DispatchSpec {
    /// Invocations or workgroups.
    pub mode: DispatchMode,
    /// One to three expressions; missing dimensions are 1.
    pub size: Vec<SizeExpr>,
}

/// One launch of `stages = [(entry = "partial", workgroups = (cdiv(n, 256))), ..]`: an entry
/// point of the kernel's module and its launch rule. The stages run in order over the kernel's
/// bindings; what one stage leaves for the next lives in `scratch(..)` bindings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StageSpec {
    /// The entry point.
    pub entry: String,
    /// Its launch rule.
    pub dispatch: DispatchSpec,
}

/// `reference(path = "..", workgroups = (..))`: a hand-written version of the kernel that reports
/// show beside the tuned result. It is checked against the kernel's interface but never tuned,
/// never embedded and not part of the content hash: it is a yardstick, not a variant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReferenceSpec {
    /// The reference's WGSL.
    pub source: SourceRef,
    /// Its entry point; optional when its module has exactly one compute entry point.
    pub entry: Option<String>,
    /// Its own launch rule (a hand-written kernel rarely launches like the baseline).
    pub dispatch: DispatchSpec,
}

/// The parsed `#[kernelfoundry(..)]` attribute.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Spec {
    /// The WGSL.
    pub source: SourceRef,
    /// The entry point; optional when the module has exactly one compute entry point.
    pub entry: Option<String>,
    /// Named sizes and their default values, in declaration order.
    pub sizes: Vec<(String, u64)>,
    /// Shapes to tune on (each may set a subset of the sizes); empty means `[sizes]`.
    pub tune_shapes: Vec<Vec<(String, u64)>>,
    /// Shapes to verify on and never tune on; empty means derived from the tune shapes.
    pub verify_shapes: Vec<Vec<(String, u64)>>,
    /// Bindings.
    pub bindings: Vec<BindingSpec>,
    /// Launch rule of the baseline; optional when there is exactly one output and a 1-D workgroup.
    pub dispatch: Option<DispatchSpec>,
    /// A launch sequence (`stages = [..]`) instead of `entry` and one launch rule; empty for a
    /// kernel of one launch.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<StageSpec>,
    /// Candidate values for `override` constants.
    pub params: Vec<(String, Vec<f64>)>,
    /// `override`s whose value follows from others (`params(THREADS = X * Y)`), in order.
    #[serde(default)]
    pub derived: Vec<(String, crate::params::ParamExpr)>,
    /// Conditions every searched point must meet, over overrides and sizes
    /// (`constraints(pow2(TILE), n % TILE == 0)`).
    #[serde(default)]
    pub constraints: Vec<crate::params::ParamExpr>,
    /// Relative tolerance for float outputs (default 1e-4, scaled to the output's magnitude).
    pub tolerance: Option<f64>,
    /// Floating-point operations one launch performs, for GFLOP/s reports (e.g. `2 * m * n * k`).
    pub flops: Option<SizeExpr>,
    /// A hand-written reference version, for reports only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<ReferenceSpec>,
}

/// A place in the attribute, for pointing errors at the right token.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Loc {
    /// The whole attribute.
    Attr,
    /// `path = ..` or `source = ..`.
    Source,
    /// `entry = ..`.
    Entry,
    /// The `i`-th named size.
    Size(usize),
    /// The `i`-th tune shape.
    TuneShape(usize),
    /// The `i`-th verify shape.
    VerifyShape(usize),
    /// The target (left-hand side) of the `i`-th binding.
    Binding(usize),
    /// The length expression of the `i`-th binding.
    BindingLen(usize),
    /// The role/values of the `i`-th binding.
    BindingRole(usize),
    /// `grid = ..` / `workgroups = ..`.
    Dispatch,
    /// The `i`-th entry of `stages = [..]` (its entry point).
    Stage(usize),
    /// The launch rule of the `i`-th stage.
    StageDispatch(usize),
    /// The `i`-th `params(..)` entry with candidate values.
    Param(usize),
    /// The `i`-th derived `params(..)` entry (`NAME = expression`).
    Derived(usize),
    /// The `i`-th `constraints(..)` entry.
    Constraint(usize),
    /// `flops = ..`.
    Flops,
    /// The WGSL of `reference(..)`.
    Reference,
    /// The launch rule inside `reference(..)`.
    ReferenceDispatch,
    /// The static item the attribute is on.
    Item,
}

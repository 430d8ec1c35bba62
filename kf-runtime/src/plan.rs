//! What the runtime needs to run a kernel on inputs of its own: the [`MeasurePlan`].
//!
//! Selecting by measurement (for a GPU nobody tuned on, see `Kernel::load_with`) times the
//! embedded variants against the baseline and checks the fastest one's outputs against the
//! baseline's. That needs buffers of the right sizes filled the way the spec says (roles, lengths,
//! input distributions, uniform values), a shape to time on, a small shape to check on, and the
//! tolerance: the parts of the resolved spec this module keeps. The macro serializes the plan into
//! the `Kernel` static as JSON; the runtime parses it only when it measures, so loading the usual
//! way costs nothing.
//!
//! Shapes: the timing shape is the smallest tune shape (tune shapes are what the developer said
//! matters for speed), the check shape the smallest verify shape (so, for a derived verify shape,
//! odd sizes no workgroup size divides); "smallest" counts the bytes of every buffer.
//!
//! Invariant: a plan is plain data derived from the spec; it decides nothing about correctness
//! that the content hash does not already cover.

use crate::expr::SizeExpr;
use crate::interface::BufferLayout;
use crate::spec::{Init, Role, Shape, Value};
use serde::{Deserialize, Serialize};

/// One binding as the runtime fills and compares it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanBuffer {
    /// `@group(..)`.
    pub group: u32,
    /// `@binding(..)`.
    pub binding: u32,
    /// The WGSL variable name (also seeds its random stream).
    pub name: String,
    /// What it is for.
    pub role: Role,
    /// Where each scalar lives.
    pub layout: BufferLayout,
    /// Element count of a runtime-sized array.
    pub len: Option<SizeExpr>,
    /// How an input is filled; `None` is the default for its scalar type.
    pub init: Option<Init>,
    /// Uniform values, one per scalar of the layout.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<Value>,
    /// Whether it is a uniform buffer (otherwise a storage buffer).
    pub uniform: bool,
    /// A texture or a sampler: measurement does not create those, so a kernel with one is not
    /// measured.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub not_a_buffer: bool,
}

impl PlanBuffer {
    /// Array elements on `shape` (0 for fixed-size layouts).
    pub fn len_on(&self, shape: &Shape) -> Result<u64, crate::expr::ExprError> {
        match &self.len {
            Some(e) => e.eval(|n| shape.get(n).copied()),
            None => Ok(0),
        }
    }

    /// Byte size on `shape`, rounded up to 4 and at least 4 (as the tuner's harness sizes it).
    pub fn byte_size(&self, shape: &Shape) -> Result<u64, crate::expr::ExprError> {
        let bytes = self.layout.byte_size(self.len_on(shape)?);
        Ok(bytes.div_ceil(4).max(1) * 4)
    }

    /// Whether the check compares this buffer.
    pub fn is_compared(&self) -> bool {
        matches!(self.role, Role::Output | Role::Inout)
    }
}

/// Everything measurement needs to know about a kernel (see the module docs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MeasurePlan {
    /// Relative tolerance for float outputs.
    pub tolerance: f64,
    /// The shape variants are timed on.
    pub time_shape: Shape,
    /// The small shape the fastest variant is checked against the baseline on.
    pub check_shape: Shape,
    /// Every binding, in (group, binding) order.
    pub buffers: Vec<PlanBuffer>,
}

/// Why a plan cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// The kernel was built without a plan (a placeholder, or a macro older than the runtime).
    #[error("the kernel embeds no measurement plan")]
    Missing,
    /// The embedded JSON does not parse.
    #[error("the embedded measurement plan does not parse: {0}")]
    Corrupt(String),
    /// The kernel binds a texture or a sampler.
    #[error("binding `{0}` is a texture or sampler, which measurement does not create yet")]
    NotABuffer(String),
}

impl MeasurePlan {
    /// The plan of a resolved kernel.
    #[cfg(feature = "spec")]
    pub fn of(kernel: &crate::resolve::ResolvedKernel) -> MeasurePlan {
        let buffers: Vec<PlanBuffer> = kernel
            .buffers
            .iter()
            .map(|b| PlanBuffer {
                group: b.binding.group,
                binding: b.binding.binding,
                name: b.binding.name.clone(),
                role: b.role,
                layout: b.binding.layout.clone(),
                len: b.len.clone(),
                init: b.init.clone(),
                values: b.values.clone(),
                uniform: b.binding.kind == crate::interface::BindingKind::Uniform,
                not_a_buffer: b.is_texture() || b.role == Role::Sampler,
            })
            .collect();
        let bytes = |shape: &Shape| -> u64 {
            buffers
                .iter()
                .map(|b| b.byte_size(shape).unwrap_or(u64::MAX / 64))
                .fold(0u64, u64::saturating_add)
        };
        let smallest = |shapes: &[Shape]| shapes.iter().min_by_key(|s| bytes(s)).cloned();
        let time_shape = smallest(&kernel.tune_shapes).unwrap_or_default();
        let check_shape = smallest(&kernel.verify_shapes).unwrap_or_else(|| time_shape.clone());
        MeasurePlan {
            tolerance: kernel.tolerance,
            time_shape,
            check_shape,
            buffers,
        }
    }

    /// The JSON the macro embeds.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("measurement plans serialize")
    }

    /// Parses an embedded plan and checks that measurement can use it.
    pub fn parse(text: &str) -> Result<MeasurePlan, PlanError> {
        if text.trim().is_empty() {
            return Err(PlanError::Missing);
        }
        let plan: MeasurePlan =
            serde_json::from_str(text).map_err(|e| PlanError::Corrupt(e.to_string()))?;
        if let Some(b) = plan.buffers.iter().find(|b| b.not_a_buffer) {
            return Err(PlanError::NotABuffer(b.name.clone()));
        }
        Ok(plan)
    }

    /// Bytes of every buffer on `shape`.
    pub fn total_bytes(&self, shape: &Shape) -> Result<u64, crate::expr::ExprError> {
        self.buffers
            .iter()
            .try_fold(0u64, |sum, b| Ok(sum.saturating_add(b.byte_size(shape)?)))
    }
}

#[cfg(all(test, feature = "spec"))]
mod tests {
    use super::*;

    const WGSL: &str = r#"
struct P { n: u32, a: f32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> p: P;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < p.n) { y[g.x] = p.a * x[g.x] + y[g.x]; }
}
"#;

    fn kernel(attr: &str) -> crate::resolve::ResolvedKernel {
        let (spec, _) = crate::syntax::parse_spec(attr.parse().unwrap()).unwrap();
        crate::resolve::resolve("K", &spec, WGSL, "k.wgsl").unwrap()
    }

    #[test]
    fn the_plan_times_on_the_smallest_tune_shape_and_checks_on_the_smallest_verify_shape() {
        let k = kernel(
            r#"source = "", sizes(n = 1024), tune_shapes = [(n = 4096), (n = 2048)],
               verify_shapes = [(n = 999), (n = 77)],
               bind(x = input(n, range(0.0, 2.0)), y = inout(n), p = uniform(n, 2.5)), grid = (n)"#,
        );
        let plan = MeasurePlan::of(&k);
        assert_eq!(plan.time_shape["n"], 2048);
        assert_eq!(plan.check_shape["n"], 77);
        assert_eq!(plan.tolerance, k.tolerance);
        let roles: Vec<Role> = plan.buffers.iter().map(|b| b.role).collect();
        assert_eq!(roles, vec![Role::Input, Role::Inout, Role::Uniform]);
        assert!(plan.buffers[2].uniform && !plan.buffers[0].uniform);
        assert_eq!(
            plan.buffers[0].byte_size(&plan.check_shape).unwrap(),
            77 * 4
        );
        assert_eq!(plan.total_bytes(&plan.check_shape).unwrap(), 2 * 77 * 4 + 8);
        // It survives the trip through the embedded JSON.
        assert_eq!(MeasurePlan::parse(&plan.to_json()).unwrap(), plan);
    }

    #[test]
    fn structured_distributions_survive_the_embedded_json() {
        for init in ["causal_mask(rows, n / rows)", "probabilities(n / 2)"] {
            let plan = MeasurePlan::of(&kernel(&format!(
                r#"source = "", sizes(n = 64, rows = 8), verify_shapes = [(n = 64)],
                   bind(x = input(n, {init}), y = inout(n), p = uniform(n, 1.0)), grid = (n)"#
            )));
            assert_eq!(plan.buffers[0].init.as_ref().unwrap().to_string(), init);
            assert_eq!(MeasurePlan::parse(&plan.to_json()).unwrap(), plan, "{init}");
        }
    }

    #[test]
    fn unusable_plans_say_why() {
        assert_eq!(MeasurePlan::parse(""), Err(PlanError::Missing));
        assert!(matches!(
            MeasurePlan::parse("{"),
            Err(PlanError::Corrupt(_))
        ));
        let mut plan = MeasurePlan::of(&kernel(
            r#"source = "", sizes(n = 8), bind(x = input(n), y = inout(n), p = uniform(n, 1.0)), grid = (n)"#,
        ));
        plan.buffers[0].not_a_buffer = true;
        assert_eq!(
            MeasurePlan::parse(&plan.to_json()),
            Err(PlanError::NotABuffer("x".into()))
        );
    }
}

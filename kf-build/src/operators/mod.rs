//! Offline rewrite operators: functions from a kernel's current program to new candidate programs.
//!
//! An operator is how the search changes a kernel's *code* without an LLM. Each one recognises the
//! pattern it claims from naga's IR (never from the source text), rewrites the WGSL text at the
//! spans naga reports (naga's writer is not a faithful round trip), and returns zero or more
//! [`Rewrite`]s, each with its own launch rule and constants. Each operator declares which
//! behaviour dimensions it moves ([`Moves`]) so the search's gradients can steer operator choice,
//! and says cheaply when it does not apply ([`Skip`]).
//!
//! Operators see programs in canonical spelling: the search rewrites each parent once with
//! [`canon::canonicalise`] and applies operators to the result ([`apply_canonical`]), so an operator
//! matches one spelling of each pattern and a new spelling is taught once, in [`canon`].
//!
//! Invariant: an operator never decides correctness. Its output is a candidate like any other: the
//! evaluator verifies it against the baseline, and a rewrite that is wrong only costs an evaluation.

pub mod canon;
pub mod coarsen;
pub mod hoist;
pub mod ir;
pub mod lift;
pub mod loops_ir;
pub mod params;
pub mod reduce;
pub mod reshape;
pub mod respell;
#[cfg(test)]
mod testing;
#[cfg(test)]
mod testkit;
pub mod text;
pub mod tile;
pub mod tile_ir;
pub mod unroll;
pub mod vectorize;

use crate::evolve::descriptor::Dim;
use kf_runtime::Program;
use kf_runtime::resolve::ResolvedKernel;
use std::collections::BTreeMap;

/// What the adapter offers, as far as rewrites care.
#[derive(Clone, Debug, Default)]
pub struct Target {
    /// Compute limits by wgpu field name (see `gpu::limits_map`), plus `subgroup_min_size` and
    /// `subgroup_max_size`.
    pub limits: BTreeMap<String, u64>,
    /// Feature names as wgpu prints them (e.g. `SUBGROUP`, `SHADER_F16`).
    pub features: Vec<String>,
}

impl Target {
    /// A limit by name, or `default` when the adapter did not report it.
    pub fn limit(&self, name: &str, default: u64) -> u64 {
        self.limits.get(name).copied().unwrap_or(default)
    }

    /// Whether the adapter has subgroup operations in compute shaders.
    pub fn has_subgroups(&self) -> bool {
        self.features.iter().any(|f| f == "SUBGROUP")
    }
}

/// The input of an operator: the kernel (its spec and baseline) and the program to rewrite, which is
/// the baseline or a variant an earlier operator produced.
#[derive(Clone, Copy, Debug)]
pub struct Subject<'a> {
    /// The kernel: buffers with roles and lengths, named sizes, tune shapes, baseline program.
    pub kernel: &'a ResolvedKernel,
    /// The parent program: WGSL, entry point, constants, workgroup size, launch rule.
    pub program: &'a Program,
    /// The adapter.
    pub target: &'a Target,
}

/// One rewritten program.
#[derive(Clone, Debug, PartialEq)]
pub struct Rewrite {
    /// The new program. Its constants give a value for every `override` the rewrite introduced.
    pub program: Program,
    /// What was done, for the variant's origin chain, e.g. `coarsen(4, contiguous)`.
    pub step: String,
    /// Candidate values for overrides this rewrite introduced (e.g. a tile size), for the
    /// parameter operator to search later.
    pub params: Vec<(String, Vec<f64>)>,
}

/// Why an operator does not apply to a subject, in a few words (`no loop with a known trip count`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Skip(pub String);

/// How an operator moves a kernel through the behaviour space: `+1` raises a dimension's level.
pub type Moves = &'static [(Dim, i8)];

/// Every offline operator, in a fixed order (the order is part of what makes a seeded run
/// reproducible).
pub fn all() -> Vec<Box<dyn Operator>> {
    vec![
        Box::new(params::Params::default()),
        Box::new(unroll::Unroll),
        Box::new(hoist::Hoist),
        Box::new(reshape::Reshape),
        Box::new(lift::LiftWorkgroupSize),
        Box::new(tile::Tile::shared()),
        Box::new(tile::Tile::blocked()),
        Box::new(reduce::ParallelReduction),
        Box::new(coarsen::Coarsen),
        Box::new(vectorize::VectorizedAccess),
    ]
}

/// A rewrite operator.
pub trait Operator: Send + Sync {
    /// A short stable name, e.g. `coarsen`.
    fn name(&self) -> &'static str;
    /// The descriptor dimensions this operator moves, and in which direction.
    fn moves(&self) -> Moves;
    /// Rewrites `subject`, or says why it does not apply.
    fn apply(&self, subject: &Subject<'_>) -> Result<Vec<Rewrite>, Skip>;
    /// Whether its rewrites map work to invocations for exactly the workgroup size they declare
    /// (e.g. a tiled matmul whose thread layout is the tile's), so the parameter operator must not
    /// change that size on their descendants.
    fn fixes_workgroup(&self) -> bool {
        false
    }
}

/// `op` applied to `canon`, the canonical form of `subject`'s program from
/// [`canon::canonicalise`] (`None` when the program already is canonical), with the
/// canonicalisation's step in front of each rewrite's step (`canon(max) → reduce(subgroup)`).
pub fn apply_canonical(
    op: &dyn Operator,
    subject: &Subject<'_>,
    canon: Option<&Rewrite>,
) -> Result<Vec<Rewrite>, Skip> {
    let Some(canon) = canon else {
        return op.apply(subject);
    };
    let canonical = Subject {
        program: &canon.program,
        ..*subject
    };
    let rewrites = op.apply(&canonical)?;
    Ok(rewrites
        .into_iter()
        .map(|mut r| {
            r.step = format!("{} → {}", canon.step, r.step);
            r
        })
        .collect())
}

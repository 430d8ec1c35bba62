//! Behaviour descriptors: where a kernel sits in the archive, computed from naga's IR.
//!
//! The paper classifies kernels with regexes over source text; here every level comes from the IR
//! (uses of `var<workgroup>`, barriers, subgroup builtins, vector loads, loop structure), so
//! comments, names and formatting cannot move a kernel between cells.

use serde::{Deserialize, Serialize};

/// One behaviour dimension, each with four levels (0–3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Dim {
    /// 0 plain global access, 1 vectorized or coalesced, 2 workgroup-memory tiling with barriers,
    /// 3 register blocking / double buffering.
    Memory,
    /// 0 multi-pass, 1 fused, 2 single-pass streaming (online softmax, Welford), 3 tiled/blocked.
    Compute,
    /// 0 per-invocation, 1 workgroup barriers, 2 subgroup operations, 3 both hierarchically.
    Parallelism,
    /// Work per invocation: 0 one output, 1 a few (2–4), 2 many (5–16), 3 more (or a grid-stride loop).
    Work,
}

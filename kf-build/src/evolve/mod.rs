//! The evolution engine: behaviour descriptors from naga's IR, the MAP-Elites archive with islands,
//! and gradient-informed steering (the paper's quality-diversity search).
//!
//! The engine is pure: no GPU, no clock, no I/O. It decides *where* a kernel sits
//! ([`describe`]), *which* candidates to keep and build on ([`Archive`]) and *which way* to push
//! them ([`GradientTracker`]); operators make the code and the harness measures it. Every state
//! type is `Serialize + Deserialize` so a run can be checkpointed after each evaluation, and no
//! state holds a random generator: each step's randomness comes from [`step_rng`], a pure function
//! of the run's seed and the step number, so a resumed run makes the same choices as an
//! uninterrupted one.

pub mod archive;
pub mod descriptor;
pub mod gradient;

pub use archive::{
    Archive, ArchiveConfig, CandidateId, Individual, Migration, Mode, Placement, Selected, Stats,
    targeted_dim,
};
pub use descriptor::{DescribeError, Descriptor, Dim, describe, describe_program};
pub use gradient::{Gradient, GradientConfig, GradientTracker, Hint, Outcome, Transition};

use rand::SeedableRng;
use rand::rngs::StdRng;

/// The random generator for step `step` of a run seeded with `seed`: the same pair always gives
/// the same stream (for one version of `rand`), and different steps give independent streams.
pub fn step_rng(seed: u64, step: u64) -> StdRng {
    StdRng::seed_from_u64(seed ^ step.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

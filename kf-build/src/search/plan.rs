//! Evaluation plans: what an evaluation runs (trials, seeds, timed shapes, samples).
//!
//! Search evaluations verify on the tune shapes with one seed and time there; the final check of
//! a winner verifies with seeds and shapes the search never used, times with more samples and
//! re-verifies after timing. Keeping the seeds of the two apart is what makes "the search never
//! saw these inputs" true.

use crate::evaluate::{EvalPlan, Screen, Trial};
use kf_runtime::resolve::ResolvedKernel;

/// Seeds used while searching; verification uses others.
const SEARCH_SEED: u64 = 101;
/// Seeds of the final verification on tune shapes.
const FINAL_SEEDS: [u64; 3] = [1001, 1002, 1003];
/// Seeds of the final verification on verification shapes.
const VERIFY_SEEDS: [u64; 2] = [2001, 2002];
/// Seed of the re-verification after timing.
const REVERIFY_SEED: u64 = 3001;
/// Timed samples of a screened candidate's cheap first timing (see [`Screen`]); the plan's own
/// samples (10 by default) go only to candidates that could matter.
pub const SCREEN_SAMPLES: u32 = 4;

/// Every seed the final verification uses, for the record.
pub fn verification_seeds() -> Vec<u64> {
    FINAL_SEEDS
        .iter()
        .chain(&VERIFY_SEEDS)
        .copied()
        .chain([REVERIFY_SEED])
        .collect()
}

/// The plan for one search evaluation: the tune shapes, one seed, `samples` timed runs.
pub fn search_plan(kernel: &ResolvedKernel, samples: u32, seed: u64) -> EvalPlan {
    EvalPlan {
        verify: kernel
            .tune_shapes
            .iter()
            .map(|s| Trial {
                shape: s.clone(),
                seed: SEARCH_SEED,
            })
            .collect(),
        time_shapes: kernel.tune_shapes.clone(),
        warmup: 1,
        samples,
        reverify: None,
        order_seed: seed,
        screen: None,
    }
}

/// [`search_plan`], screened against `below` (see [`Screen`]) when the strategy gives a bar.
pub fn screened_plan(
    kernel: &ResolvedKernel,
    samples: u32,
    seed: u64,
    below: Option<f64>,
) -> EvalPlan {
    EvalPlan {
        screen: below.map(|below| Screen {
            samples: SCREEN_SAMPLES,
            below,
        }),
        ..search_plan(kernel, samples, seed)
    }
}

/// The plan for the final check of a winner: more seeds, the unseen shapes, re-verification.
pub fn final_plan(kernel: &ResolvedKernel, samples: u32, seed: u64) -> EvalPlan {
    let mut verify: Vec<Trial> = Vec::new();
    for s in &kernel.tune_shapes {
        for seed in FINAL_SEEDS {
            verify.push(Trial {
                shape: s.clone(),
                seed,
            });
        }
    }
    for s in &kernel.verify_shapes {
        for seed in VERIFY_SEEDS {
            verify.push(Trial {
                shape: s.clone(),
                seed,
            });
        }
    }
    EvalPlan {
        verify,
        time_shapes: kernel.tune_shapes.clone(),
        warmup: 2,
        samples,
        reverify: kernel.tune_shapes.first().map(|s| Trial {
            shape: s.clone(),
            seed: REVERIFY_SEED,
        }),
        order_seed: seed,
        screen: None,
    }
}

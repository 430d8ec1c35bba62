//! The search: from a resolved kernel to a verified, timed decision — a tuned variant or "the
//! baseline is best".
//!
//! The space is the kernel's template parameters: every `override` the spec gives candidate values
//! for, and the workgroup size (an override the kernel already has, or a literal lifted into
//! overrides by [`rewrite`]). Small spaces are searched exhaustively; large ones by successive
//! halving (random subset, then keep the faster half with twice the samples each round). The
//! winner is verified again with seeds and shapes the search never used, timed against the
//! baseline with more samples, and accepted only if it beats the baseline by more than the noise
//! measured in the same run.
//!
//! Invariant: the search reaches the GPU only through an [`Evaluator`]; it never sees a buffer.

pub mod rewrite;

use crate::harness::{Candidate, Ceilings, EvalPlan, EvalReport, EvalRequest, Evaluator, Trial};
use kf_runtime::Program;
use kf_runtime::resolve::ResolvedKernel;
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// Smallest speedup margin that counts, whatever the measured noise.
pub const MIN_MARGIN: f64 = 0.02;

/// Seeds used while searching; verification uses others.
const SEARCH_SEED: u64 = 101;
/// Seeds of the final verification on tune shapes.
const FINAL_SEEDS: [u64; 3] = [1001, 1002, 1003];
/// Seeds of the final verification on verification shapes.
const VERIFY_SEEDS: [u64; 2] = [2001, 2002];
/// Seed of the re-verification after timing.
const REVERIFY_SEED: u64 = 3001;

/// Every seed the final verification uses, for the record.
pub fn verification_seeds() -> Vec<u64> {
    FINAL_SEEDS
        .iter()
        .chain(&VERIFY_SEEDS)
        .copied()
        .chain([REVERIFY_SEED])
        .collect()
}

/// One point of the parameter space: values for the pipeline constants.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// Constant values, by override name.
    pub constants: Vec<(String, f64)>,
}

impl Point {
    /// `KF_WG_X=256 TILE=16`.
    pub fn label(&self) -> String {
        self.constants
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The parameter space of a kernel.
#[derive(Clone, Debug)]
pub struct Space {
    /// The WGSL the points apply to (the user's, or with the workgroup size lifted).
    pub wgsl: String,
    /// Whether the workgroup size was lifted from a literal.
    pub lifted: bool,
    /// Points to search, the baseline's own configuration excluded.
    pub points: Vec<Point>,
}

fn limit(limits: &BTreeMap<String, u64>, name: &str, default: u64) -> u64 {
    limits.get(name).copied().unwrap_or(default)
}

/// Workgroup shapes worth trying for `dims` overridable dimensions within the limits.
fn workgroup_shapes(dims: usize, limits: &BTreeMap<String, u64>) -> Vec<[u32; 3]> {
    let max_inv = limit(limits, "max_compute_invocations_per_workgroup", 256);
    let max = [
        limit(limits, "max_compute_workgroup_size_x", 256),
        limit(limits, "max_compute_workgroup_size_y", 256),
        limit(limits, "max_compute_workgroup_size_z", 64),
    ];
    let mut out = Vec::new();
    if dims == 1 {
        for x in [16u64, 32, 64, 128, 256, 512, 1024] {
            if x <= max[0] && x <= max_inv {
                out.push([x as u32, 1, 1]);
            }
        }
    } else {
        for x in [4u64, 8, 16, 32, 64, 128, 256] {
            for y in [1u64, 2, 4, 8, 16, 32] {
                let n = x * y;
                if (32..=max_inv).contains(&n) && x <= max[0] && y <= max[1] {
                    out.push([x as u32, y as u32, 1]);
                }
            }
        }
    }
    out
}

/// Values worth trying for an override the spec gives no candidates for: powers of two around an
/// integer default, both values of a bool. Floats are left alone (their value is usually part of
/// what the kernel computes); list candidates with `params(..)` to search them.
fn default_candidates(ty: &str, default: Option<f64>) -> Vec<f64> {
    match (ty, default) {
        ("bool", _) => vec![0.0, 1.0],
        ("u32" | "i32", Some(d)) if d >= 1.0 && d.fract() == 0.0 => {
            let mut v: Vec<f64> = [d / 4.0, d / 2.0, d, d * 2.0, d * 4.0]
                .into_iter()
                .filter(|x| *x >= 1.0 && x.fract() == 0.0 && *x <= 4096.0)
                .collect();
            v.dedup();
            v
        }
        _ => Vec::new(),
    }
}

/// Builds the parameter space of `kernel` on an adapter with `limits`.
pub fn space(kernel: &ResolvedKernel, limits: &BTreeMap<String, u64>) -> Space {
    let iface = &kernel.interface;
    let params: BTreeMap<&str, &Vec<f64>> =
        kernel.params.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let mut wgsl = kernel.baseline.wgsl.to_string();
    let mut lifted = false;
    // Which override drives each workgroup dimension.
    let mut wg_names: [Option<String>; 3] = iface.workgroup_size_overrides.clone();
    if wg_names.iter().all(Option::is_none) {
        let dims = if iface.workgroup_size[1] > 1 || iface.workgroup_size[2] > 1 {
            2
        } else {
            1
        };
        if let Some(text) =
            rewrite::lift_workgroup_size(&wgsl, &iface.entry, iface.workgroup_size, dims)
        {
            let ok = kf_runtime::resolve::reflect(&text, Some(&iface.entry), "lifted")
                .map(|r| r.interface.workgroup_size == iface.workgroup_size)
                .unwrap_or(false);
            if ok {
                wgsl = text;
                lifted = true;
                for (d, name) in wg_names.iter_mut().enumerate().take(dims) {
                    *name = Some(rewrite::LIFTED[d].to_owned());
                }
            }
        }
    }
    // Workgroup axis: user values for those overrides if given, else the default shapes.
    let wg_dims: Vec<usize> = (0..3).filter(|&d| wg_names[d].is_some()).collect();
    let user_wg = wg_dims
        .iter()
        .any(|&d| params.contains_key(wg_names[d].as_deref().unwrap_or("")));
    let mut wg_axis: Vec<Vec<(String, f64)>> = Vec::new();
    if !wg_dims.is_empty() && !user_wg {
        for shape in workgroup_shapes(wg_dims.len().min(2), limits) {
            let values = wg_dims
                .iter()
                .enumerate()
                .filter(|(i, _)| *i < 2)
                .map(|(i, &d)| (wg_names[d].clone().expect("checked"), f64::from(shape[i])))
                .collect();
            wg_axis.push(values);
        }
    }
    // Every other override: the values `params(..)` gives, else neighbours of its default.
    let mut axes: Vec<Vec<Vec<(String, f64)>>> = Vec::new();
    if !wg_axis.is_empty() {
        axes.push(wg_axis);
    }
    for o in &iface.overrides {
        let drives_wg = wg_names.iter().flatten().any(|n| *n == o.name);
        let values: Vec<f64> = match params.get(o.name.as_str()) {
            Some(values) => values.to_vec(),
            None if drives_wg => continue,
            None => default_candidates(&o.ty, o.default),
        };
        if values.len() > 1 || params.contains_key(o.name.as_str()) {
            axes.push(values.iter().map(|v| vec![(o.name.clone(), *v)]).collect());
        }
    }
    let mut points = vec![Point {
        constants: Vec::new(),
    }];
    for axis in &axes {
        let mut next = Vec::with_capacity(points.len() * axis.len());
        for p in &points {
            for choice in axis {
                let mut c = p.constants.clone();
                c.extend(choice.iter().cloned());
                next.push(Point { constants: c });
            }
        }
        points = next;
    }
    // Drop points over the limits and the baseline's own configuration.
    let max_inv = limit(limits, "max_compute_invocations_per_workgroup", 256);
    let defaults: BTreeMap<String, f64> = iface
        .overrides
        .iter()
        .filter_map(|o| o.default.map(|d| (o.name.clone(), d)))
        .chain((0..3).filter_map(|d| {
            lifted
                .then(|| {
                    wg_names[d]
                        .clone()
                        .map(|n| (n, f64::from(iface.workgroup_size[d])))
                })
                .flatten()
        }))
        .collect();
    points.retain(|p| {
        let wg = workgroup_of(p, &wg_names, iface.workgroup_size);
        let inv: u64 = wg.iter().map(|&d| u64::from(d)).product();
        let is_baseline = p.constants.iter().all(|(k, v)| defaults.get(k) == Some(v));
        inv <= max_inv && !is_baseline && !p.constants.is_empty()
    });
    Space {
        wgsl,
        lifted,
        points,
    }
}

fn workgroup_of(p: &Point, names: &[Option<String>; 3], default: [u32; 3]) -> [u32; 3] {
    let mut wg = default;
    for d in 0..3 {
        if let Some(n) = &names[d]
            && let Some((_, v)) = p.constants.iter().find(|(k, _)| k == n)
        {
            wg[d] = *v as u32;
        }
    }
    wg
}

/// The candidate for `point`.
pub fn candidate(kernel: &ResolvedKernel, space: &Space, point: &Point) -> Candidate {
    let constants: Vec<(&str, f64)> = point
        .constants
        .iter()
        .map(|(k, v)| (k.as_str(), *v))
        .collect();
    let dispatch = kernel.baseline.dispatch.clone();
    let id = kf_runtime::hash::variant_id(&space.wgsl, &constants, &dispatch.to_string());
    Candidate {
        id,
        origin: format!(
            "{}param {}",
            if space.lifted {
                "lifted-workgroup-size, "
            } else {
                ""
            },
            point.label()
        ),
        program: Program {
            wgsl: Cow::Owned(space.wgsl.clone()),
            entry: kernel.baseline.entry.clone(),
            constants: Cow::Owned(
                point
                    .constants
                    .iter()
                    .map(|(k, v)| (Cow::Owned(k.clone()), *v))
                    .collect(),
            ),
            workgroup_size: kernel.baseline.workgroup_size,
            workgroup_storage_bytes: 0,
            dispatch,
        },
    }
}

/// The baseline as a candidate (for measuring it against itself).
pub fn baseline_candidate(kernel: &ResolvedKernel) -> Candidate {
    Candidate {
        id: "baseline".into(),
        origin: "baseline".into(),
        program: kernel.baseline.clone(),
    }
}

/// How thoroughly to search.
#[derive(Clone, Debug)]
pub struct Config {
    /// Candidate evaluations allowed for the search (the final checks are extra).
    pub budget: u64,
    /// Timed samples per candidate in the first round.
    pub samples: u32,
    /// Timed samples in the final comparison.
    pub final_samples: u32,
    /// Seed for sampling and ordering.
    pub seed: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            budget: 32,
            samples: 10,
            final_samples: 20,
            seed: 42,
        }
    }
}

/// Progress reported while searching.
#[derive(Debug)]
pub enum Event<'a> {
    /// The search is about to evaluate `total` candidates in this round.
    Round {
        /// 0-based round.
        round: u32,
        /// Candidates in it.
        total: usize,
    },
    /// One candidate was evaluated.
    Evaluated(&'a EvalReport),
}

/// What the search concluded.
#[derive(Debug)]
pub struct Outcome {
    /// The baseline measured against itself (timing and noise).
    pub baseline: EvalReport,
    /// The winner and its final report, if one beat the baseline by more than the noise.
    pub tuned: Option<(Candidate, EvalReport)>,
    /// The best correct candidate's final report, even if it did not win.
    pub best: Option<(Candidate, EvalReport)>,
    /// `exhaustive` or `successive-halving`.
    pub strategy: &'static str,
    /// Points in the space.
    pub space_size: u64,
    /// Candidate evaluations spent.
    pub evaluations: u64,
    /// Candidate evaluations allowed.
    pub budget: u64,
    /// The noise threshold a speedup had to clear.
    pub noise: f64,
    /// Every report, in order.
    pub history: Vec<EvalReport>,
}

/// Why a kernel could not be searched at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SearchError {
    /// The baseline fails on this adapter, so nothing can be compared with it.
    #[error("the baseline kernel cannot be evaluated on this adapter ({reason}): {log}")]
    Baseline {
        /// The reason.
        reason: String,
        /// The distilled log.
        log: String,
    },
}

/// The plan for one search evaluation.
fn search_plan(kernel: &ResolvedKernel, samples: u32, seed: u64) -> EvalPlan {
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
    }
}

/// Searches `kernel`'s space on `evaluator`.
pub fn search(
    kernel: &ResolvedKernel,
    evaluator: &mut dyn Evaluator,
    ceilings: Option<&Ceilings>,
    config: &Config,
    mut progress: impl FnMut(Event<'_>),
) -> Result<Outcome, SearchError> {
    let request = |candidate: Candidate, plan: EvalPlan| EvalRequest {
        kernel: kernel.clone(),
        candidate,
        plan,
        ceilings: ceilings.cloned(),
    };
    // The baseline against itself: it must be deterministic and judgeable, and this measures noise.
    let baseline = evaluator.evaluate(&request(
        baseline_candidate(kernel),
        final_plan(kernel, config.samples, config.seed),
    ));
    if !baseline.is_correct() {
        let failure = baseline
            .failure
            .clone()
            .expect("a failed report has a failure");
        return Err(SearchError::Baseline {
            reason: failure.reason.to_string(),
            log: failure.log,
        });
    }
    let space = space(kernel, &evaluator.adapter().limits);
    let space_size = space.points.len() as u64;
    let mut history = Vec::new();
    let mut evaluations = 0u64;
    let mut rng = StdRng::seed_from_u64(config.seed);
    let budget = config.budget.max(1);
    let (strategy, mut pool): (&'static str, Vec<Point>) = if space_size <= budget {
        ("exhaustive", space.points.clone())
    } else {
        let mut all = space.points.clone();
        all.shuffle(&mut rng);
        all.truncate((budget / 2).max(2) as usize);
        ("successive-halving", all)
    };
    let mut samples = config.samples;
    let mut ranked: Vec<(Candidate, EvalReport)> = Vec::new();
    let mut round = 0;
    while !pool.is_empty() && evaluations < budget {
        progress(Event::Round {
            round,
            total: pool.len(),
        });
        let mut results = Vec::new();
        for point in &pool {
            if evaluations >= budget {
                break;
            }
            let c = candidate(kernel, &space, point);
            let report = evaluator.evaluate(&request(
                c.clone(),
                search_plan(kernel, samples, config.seed + evaluations),
            ));
            evaluations += 1;
            progress(Event::Evaluated(&report));
            history.push(report.clone());
            results.push((point.clone(), c, report));
        }
        results.retain(|(_, _, r)| r.is_correct());
        results.sort_by(|a, b| b.2.fitness.score.total_cmp(&a.2.fitness.score));
        ranked = results
            .iter()
            .map(|(_, c, r)| (c.clone(), r.clone()))
            .collect();
        if strategy == "exhaustive" || results.len() <= 1 {
            break;
        }
        let keep = results.len().div_ceil(2);
        pool = results.into_iter().take(keep).map(|(p, _, _)| p).collect();
        samples = samples.saturating_mul(2);
        round += 1;
        if pool.len() <= 1 || evaluations + pool.len() as u64 > budget {
            break;
        }
    }

    // Final check of the best few, in order, until one passes.
    let baseline_noise = baseline.noise.unwrap_or(0.0);
    let mut best = None;
    for (c, _) in ranked.iter().take(3) {
        let report = evaluator.evaluate(&request(
            c.clone(),
            final_plan(kernel, config.final_samples, config.seed ^ 0xF1A1),
        ));
        history.push(report.clone());
        progress(Event::Evaluated(&report));
        if report.is_correct() {
            best = Some((c.clone(), report));
            break;
        }
    }
    let noise = best
        .as_ref()
        .and_then(|(_, r)| r.noise)
        .unwrap_or(0.0)
        .max(baseline_noise)
        .max(MIN_MARGIN);
    let tuned = best
        .as_ref()
        .filter(|(_, r)| r.fitness.speedup.is_some_and(|s| s > 1.0 + noise))
        .cloned();
    Ok(Outcome {
        baseline,
        tuned,
        best,
        strategy,
        space_size,
        evaluations,
        budget,
        noise,
        history,
    })
}

#[cfg(test)]
mod tests;

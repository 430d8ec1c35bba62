//! Gradient-informed steering: which way through descriptor space has paid off.
//!
//! Every evaluated child is a transition parent cell → child cell with a fitness change. Over the
//! transitions that leave a cell `c`, three statistics per dimension `d` say where to go next
//! (the paper's public code; there it is implemented but never called, here it is wired):
//!
//! - fitness: `∂F/∂d = Σ sign(Δd)·Δfitness·w / Σ w` over the transitions from `c` that changed `d`,
//!   with `w = 0.95^age` and the age counted in generations;
//! - improvement rate: `∂R/∂d = Σ_v sign(v_d)·rate_v` over the move vectors `v` taken from `c` at
//!   least 3 times, `rate_v` the share that improved (a new cell, a replaced elite, or a score
//!   gain above 0.01); rescaled into [−1, 1] when its largest component exceeds 1;
//! - exploration: `∂E/∂d = Σ_empty sign(e_d − c_d)/‖e−c‖₁ + Σ_below-median sign(q_d − c_d)·
//!   (max_score − score_q)/‖q−c‖₁`, L2-normalized, `max_score = max(1, best score)`. All empty
//!   and below-median cells count (the reference samples 20; the exact sum over at most 256 cells
//!   is as cheap and needs no randomness).
//!
//! They combine as `g = 0.4·∂F + 0.4·∂R + 0.2·∂E`, trusted with `confidence = min(1, departures/20)`.
//!
//! The gradient is used three ways:
//!
//! - hints ([`Gradient::hints`]): dimensions with `|g_d| ≥ 0.2` whose move stays in 0–3, strongest
//!   first, at most three (for prompts and targeted mutation);
//! - parent sampling ([`GradientTracker::sampling_weight`]): a cell is a promising parent when
//!   moves from it have worked and the gradient points somewhere reachable:
//!   `w_grad(c) = 0.5·ρ(c) + 0.5·min(1, Σ_d |g_d|·open_d(c))`, with
//!   `ρ(c) = (successes + 1)/(departures + 2)` (Laplace-smoothed, 0.5 for an untried cell) and
//!   `open_d(c) = 1` when `g_d ≠ 0` and moving one level along `sign(g_d)` stays in 0–3. The archive
//!   normalizes these over the candidate parents and blends them as
//!   `(1−α)·softmax(fitness) + α·w_grad`;
//! - operator choice ([`Gradient::operator_weight`]): an operator declares its move vector; from
//!   the parent's cell, the moves that stay in range give `s = (v·g)/max(1, ‖v‖₁)` clamped to
//!   [−1, 1], and the weight is `exp(2·confidence·s)`: between e⁻² and e² at full confidence,
//!   exactly 1 for an operator that moves nothing or when nothing is known.
//!
//! Everything is switchable off: the archive and [`super::archive::targeted_dim`] take an
//! `Option` of the tracker or gradient, and `None` is the paper's unsteered search.
//! The tracker holds only data (no RNG, no clock): the same transitions give the same gradient.

use super::archive::{Individual, Placement, score_of};
use super::descriptor::{Descriptor, Dim};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};

/// The constants of the method (defaults from the paper's reference code).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GradientConfig {
    /// Time decay per generation of age in `∂F` (0.95).
    pub decay: f64,
    /// Weights of `∂F`, `∂R`, `∂E` in `g` (0.4, 0.4, 0.2).
    pub weights: [f64; 3],
    /// Samples a move vector needs before it counts in `∂R` (3).
    pub min_move_samples: usize,
    /// Departures from a cell at which the gradient is fully trusted (20).
    pub full_confidence_departures: usize,
    /// `|g_d|` from which a dimension becomes a hint (0.2).
    pub hint_threshold: f64,
    /// At most this many hints (3).
    pub max_hints: usize,
    /// Transitions kept, oldest dropped first (10 000).
    pub history: usize,
    /// A score gain above this is an improvement, a loss below its negative a regression (0.01).
    pub improvement_epsilon: f64,
    /// How hard operator weights follow the gradient: `exp(steering·confidence·s)` (2).
    pub operator_steering: f64,
}

impl Default for GradientConfig {
    fn default() -> Self {
        GradientConfig {
            decay: 0.95,
            weights: [0.4, 0.4, 0.2],
            min_move_samples: 3,
            full_confidence_departures: 20,
            hint_threshold: 0.2,
            max_hints: 3,
            history: 10_000,
            improvement_epsilon: 0.01,
            operator_steering: 2.0,
        }
    }
}

/// What a child did for the search.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// It filled an empty cell.
    CellDiscovery,
    /// It replaced a cell's elite.
    EliteReplacement,
    /// It scored better than its parent.
    Improvement,
    /// It scored worse than its parent.
    Regression,
    /// Neither.
    Neutral,
}

impl Outcome {
    /// Classifies a child from where the archive put it and its score change over the parent.
    pub fn classify(placement: Placement, delta: f64, epsilon: f64) -> Outcome {
        match placement {
            Placement::NewCell => Outcome::CellDiscovery,
            Placement::Replaced { .. } => Outcome::EliteReplacement,
            _ if delta > epsilon => Outcome::Improvement,
            _ if delta < -epsilon => Outcome::Regression,
            _ => Outcome::Neutral,
        }
    }

    /// Whether this counts as a success in the improvement rate.
    pub fn is_success(self) -> bool {
        matches!(
            self,
            Outcome::CellDiscovery | Outcome::EliteReplacement | Outcome::Improvement
        )
    }
}

/// One parent → child step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Transition {
    /// The parent's cell.
    pub parent: Descriptor,
    /// The child's cell.
    pub child: Descriptor,
    /// Child score minus parent score.
    pub delta: f64,
    /// What the child did.
    pub outcome: Outcome,
    /// The generation the child was evaluated in.
    pub generation: u32,
}

/// The transition history and the statistics over it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GradientTracker {
    config: GradientConfig,
    history: VecDeque<Transition>,
}

/// One mutation hint: move `dim` by `direction` (±1).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hint {
    /// The dimension.
    pub dim: Dim,
    /// +1 raise, −1 lower.
    pub direction: i8,
    /// `|g_d|`.
    pub strength: f64,
}

/// The gradient at one cell, with its parts (each in [`Dim::ALL`] order).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Gradient {
    /// The cell.
    pub at: Descriptor,
    /// `∂F`.
    pub fitness: [f64; 4],
    /// `∂R`.
    pub rate: [f64; 4],
    /// `∂E`.
    pub explore: [f64; 4],
    /// `g`.
    pub combined: [f64; 4],
    /// `min(1, departures / 20)`.
    pub confidence: f64,
    /// Transitions recorded from this cell.
    pub departures: usize,
    /// Of those, how many succeeded.
    pub successes: usize,
    hint_threshold: f64,
    max_hints: usize,
    steering: f64,
}

impl GradientTracker {
    /// An empty tracker.
    pub fn new(config: GradientConfig) -> Self {
        GradientTracker {
            config,
            history: VecDeque::new(),
        }
    }

    /// The constants in use.
    pub fn config(&self) -> &GradientConfig {
        &self.config
    }

    /// Records a transition, dropping the oldest beyond the history bound.
    pub fn record(&mut self, t: Transition) {
        self.history.push_back(t);
        while self.history.len() > self.config.history {
            self.history.pop_front();
        }
    }

    /// Records `child` (made from `parent`, placed by the archive as `placement`) and says what it
    /// did. Nothing is recorded when either has no descriptor (e.g. the child did not parse).
    pub fn record_child<P>(
        &mut self,
        parent: &Individual<P>,
        child: &Individual<P>,
        placement: Placement,
    ) -> Option<Outcome> {
        let (from, to) = (parent.descriptor?, child.descriptor?);
        let delta = score_of(&child.fitness) - score_of(&parent.fitness);
        let outcome = Outcome::classify(placement, delta, self.config.improvement_epsilon);
        self.record(Transition {
            parent: from,
            child: to,
            delta,
            outcome,
            generation: child.generation,
        });
        Some(outcome)
    }

    /// The recorded transitions, oldest first.
    pub fn transitions(&self) -> impl Iterator<Item = &Transition> {
        self.history.iter()
    }

    /// Transitions recorded from `at`.
    pub fn departures(&self, at: Descriptor) -> usize {
        self.history.iter().filter(|t| t.parent == at).count()
    }

    /// The gradient at `at`. `cells` maps each filled cell to its best elite score (see
    /// `Archive::cell_scores`); `now` is the current generation.
    pub fn gradient(
        &self,
        at: Descriptor,
        cells: &BTreeMap<Descriptor, f64>,
        now: u32,
    ) -> Gradient {
        let from: Vec<&Transition> = self.history.iter().filter(|t| t.parent == at).collect();
        let departures = from.len();
        let successes = from.iter().filter(|t| t.outcome.is_success()).count();

        let mut fitness = [0.0; 4];
        for d in Dim::ALL {
            let (mut num, mut den) = (0.0, 0.0);
            for t in &from {
                let step = i16::from(t.child.level(d)) - i16::from(t.parent.level(d));
                if step == 0 {
                    continue;
                }
                let age = now.saturating_sub(t.generation);
                let w = self.config.decay.powf(f64::from(age));
                num += f64::from(step.signum()) * t.delta * w;
                den += w;
            }
            if den > 0.0 {
                fitness[d.index()] = num / den;
            }
        }

        let mut moves: BTreeMap<[i8; 4], (usize, usize)> = BTreeMap::new();
        for t in &from {
            let v = move_vector(t.parent, t.child);
            let e = moves.entry(v).or_default();
            e.0 += 1;
            e.1 += usize::from(t.outcome.is_success());
        }
        let mut rate = [0.0; 4];
        for (v, (total, ok)) in &moves {
            if *total < self.config.min_move_samples {
                continue;
            }
            let r = *ok as f64 / *total as f64;
            for d in 0..4 {
                rate[d] += f64::from(v[d].signum()) * r;
            }
        }
        let largest = rate.iter().fold(0.0f64, |m, r| m.max(r.abs()));
        if largest > 1.0 {
            rate = rate.map(|r| r / largest);
        }

        let explore = exploration(at, cells);
        let [wf, wr, we] = self.config.weights;
        let mut combined = [0.0; 4];
        for d in 0..4 {
            combined[d] = wf * fitness[d] + wr * rate[d] + we * explore[d];
        }
        let confidence = if self.config.full_confidence_departures == 0 {
            1.0
        } else {
            (departures as f64 / self.config.full_confidence_departures as f64).min(1.0)
        };
        Gradient {
            at,
            fitness,
            rate,
            explore,
            combined,
            confidence,
            departures,
            successes,
            hint_threshold: self.config.hint_threshold,
            max_hints: self.config.max_hints,
            steering: self.config.operator_steering,
        }
    }

    /// `w_grad` of a candidate parent in cell `at` (see the module docs); not normalized.
    pub fn sampling_weight(
        &self,
        at: Descriptor,
        cells: &BTreeMap<Descriptor, f64>,
        now: u32,
    ) -> f64 {
        let g = self.gradient(at, cells, now);
        let rho = (g.successes as f64 + 1.0) / (g.departures as f64 + 2.0);
        0.5 * rho + 0.5 * g.openness().min(1.0)
    }
}

impl Gradient {
    /// `g_d`.
    pub fn get(&self, dim: Dim) -> f64 {
        self.combined[dim.index()]
    }

    /// `Σ_d |g_d|·open_d`: how much of the gradient points at a reachable cell.
    pub fn openness(&self) -> f64 {
        Dim::ALL
            .iter()
            .map(|&d| {
                let g = self.get(d);
                let dir = if g > 0.0 { 1 } else { -1 };
                if g != 0.0 && self.at.moved(d, dir).is_some() {
                    g.abs()
                } else {
                    0.0
                }
            })
            .sum()
    }

    /// Dimensions with `|g_d|` at or above the threshold whose move stays in 0–3, strongest
    /// first (ties in [`Dim::ALL`] order), at most the configured number.
    pub fn hints(&self) -> Vec<Hint> {
        let mut hints: Vec<Hint> = Dim::ALL
            .iter()
            .filter_map(|&dim| {
                let g = self.get(dim);
                let direction = if g > 0.0 { 1 } else { -1 };
                (g.abs() >= self.hint_threshold && self.at.moved(dim, direction).is_some())
                    .then_some(Hint {
                        dim,
                        direction,
                        strength: g.abs(),
                    })
            })
            .collect();
        hints.sort_by(|a, b| b.strength.total_cmp(&a.strength));
        hints.truncate(self.max_hints);
        hints
    }

    /// The weight of an operator that moves a kernel by `moves` (e.g. `[(Dim::Work, 1)]`) from this
    /// cell: `exp(steering·confidence·s)`, `s` the normalized agreement of the move with `g`.
    pub fn operator_weight(&self, moves: &[(Dim, i8)]) -> f64 {
        let mut v = [0i16; 4];
        for &(d, m) in moves {
            v[d.index()] += i16::from(m.signum());
        }
        let (mut dot, mut norm) = (0.0, 0.0);
        for d in Dim::ALL {
            let m = v[d.index()].clamp(-1, 1) as i8;
            if m == 0 || self.at.moved(d, m).is_none() {
                continue;
            }
            dot += f64::from(m) * self.get(d);
            norm += 1.0;
        }
        let s = (dot / f64::max(1.0, norm)).clamp(-1.0, 1.0);
        (self.steering * self.confidence * s).exp()
    }
}

/// `child − parent`, per dimension.
fn move_vector(parent: Descriptor, child: Descriptor) -> [i8; 4] {
    Dim::ALL.map(|d| child.level(d) as i8 - parent.level(d) as i8)
}

/// `∂E` at `at`: the pull toward empty and below-median cells, L2-normalized.
fn exploration(at: Descriptor, cells: &BTreeMap<Descriptor, f64>) -> [f64; 4] {
    let mut scores: Vec<f64> = cells.values().copied().collect();
    scores.sort_by(f64::total_cmp);
    let median = match scores.len() {
        0 => None,
        n if n % 2 == 1 => Some(scores[n / 2]),
        n => Some((scores[n / 2 - 1] + scores[n / 2]) / 2.0),
    };
    let max_score = scores.last().copied().unwrap_or(0.0).max(1.0);
    let mut e = [0.0; 4];
    for cell in Descriptor::all() {
        if cell == at {
            continue;
        }
        let weight = match cells.get(&cell) {
            None => 1.0,
            Some(&s) if median.is_some_and(|m| s < m) => max_score - s,
            Some(_) => continue,
        };
        let dist = f64::from(cell.distance(&at));
        for d in Dim::ALL {
            let sign = f64::from((i16::from(cell.level(d)) - i16::from(at.level(d))).signum());
            e[d.index()] += sign * weight / dist;
        }
    }
    let norm = e.iter().map(|x| x * x).sum::<f64>().sqrt();
    if norm > 0.0 {
        e = e.map(|x| x / norm);
    }
    e
}

#[cfg(test)]
mod tests;

//! The MAP-Elites archive: islands of cells keyed by [`Descriptor`], each holding its best
//! candidate, plus the rest of the population (failed candidates included) up to a bound.
//!
//! Quality-diversity search keeps one elite per behaviour cell instead of one best kernel, so a
//! tiled variant that is slower today is not thrown away for a faster naive one; islands evolve
//! apart and exchange their best by ring migration. The rules (the paper's reference code):
//!
//! - a candidate competes for the cell of its descriptor on its island; it replaces the elite only
//!   with a strictly higher score. Every candidate stays a member of its island (repair happens
//!   when a failed one is picked as a parent); beyond `max_non_elites` the worst non-elite goes
//!   (lowest score, then oldest), never an elite;
//! - 4 islands; every 10 generations each island copies its best `max(1, ⌊0.1·elites⌋)` elites to
//!   the next island in the ring, where they compete like any candidate (copies keep their id);
//! - parents: with probability 0.2 explore (a uniform member of the island; an empty island falls
//!   back to a below-median cell), 0.7 exploit (softmax over the island's elite scores, blended as
//!   `(1−α)·softmax + α·w_grad` with α = 0.3 when gradients are on), 0.1 uniform over everything;
//! - inspirations: 2 elites of other cells, ranked by `score + 0.1·max(0, Σlevels − Σlevels(parent))`
//!   so more-optimized cells come first: the first half by rank, the rest sampled by a softmax of
//!   it;
//! - targeted mutation ([`targeted_dim`]): a dimension of the parent's cell to raise by one level.
//!
//! The archive holds no RNG: every random choice takes one from the caller (see
//! [`super::step_rng`]), so a checkpointed archive resumes exactly. It is generic over a payload
//! (`P`, e.g. the candidate's program) that travels with each individual.

use super::descriptor::{Descriptor, Dim};
use super::gradient::{Gradient, GradientTracker};
use crate::evaluate::Fitness;
use rand::Rng;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// A candidate's id, unique in a run; a migrated copy keeps it.
pub type CandidateId = u64;

/// The constants of the archive (defaults from the paper's reference code).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArchiveConfig {
    /// Number of islands (4).
    pub islands: usize,
    /// Generations between migrations (10).
    pub migration_interval: u32,
    /// Share of an island's elites copied to the next island (0.1, at least one).
    pub migration_rate: f64,
    /// Probability of an explore pick (0.2).
    pub explore: f64,
    /// Probability of an exploit pick (0.7); the rest (0.1) is uniform.
    pub exploit: f64,
    /// Softmax temperature over scores (1).
    pub temperature: f64,
    /// Inspirations per parent (2).
    pub inspirations: usize,
    /// Non-elite members kept per island (64).
    pub max_non_elites: usize,
    /// Weight α of the gradient weights in exploit picks (0.3).
    pub gradient_alpha: f64,
}

impl Default for ArchiveConfig {
    fn default() -> Self {
        ArchiveConfig {
            islands: 4,
            migration_interval: 10,
            migration_rate: 0.1,
            explore: 0.2,
            exploit: 0.7,
            temperature: 1.0,
            inspirations: 2,
            max_non_elites: 64,
            gradient_alpha: 0.3,
        }
    }
}

/// One evaluated candidate on one island.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Individual<P = ()> {
    /// Its id.
    pub id: CandidateId,
    /// The candidate it was made from (`None` for the baseline).
    pub parent: Option<CandidateId>,
    /// The island it lives on.
    pub island: usize,
    /// Its cell; `None` when the program could not be described (it did not parse).
    pub descriptor: Option<Descriptor>,
    /// Ladder level, speedup and score.
    pub fitness: Fitness,
    /// The operator steps that made it from the baseline, e.g. `["coarsen(4)", "vec4"]`.
    pub origin: Vec<String>,
    /// The generation it was evaluated in.
    pub generation: u32,
    /// What the caller keeps with it (e.g. its program).
    pub payload: P,
}

impl<P> Individual<P> {
    /// Its score, with a non-finite score read as its ladder level.
    pub fn score(&self) -> f64 {
        score_of(&self.fitness)
    }

    /// The origin chain for humans: `coarsen(4) → vec4 → param(WG=256)`, or `baseline`.
    pub fn origin_text(&self) -> String {
        if self.origin.is_empty() {
            "baseline".to_owned()
        } else {
            self.origin.join(" → ")
        }
    }
}

/// A fitness's score, with a non-finite score read as its ladder level.
pub fn score_of(fitness: &Fitness) -> f64 {
    if fitness.score.is_finite() {
        fitness.score
    } else {
        f64::from(fitness.level)
    }
}

/// What [`Archive::insert`] did with a candidate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// It is the first elite of its cell.
    NewCell,
    /// It replaced the cell's elite (which stays a member).
    Replaced {
        /// The former elite.
        previous: CandidateId,
    },
    /// Its cell's elite scores at least as high; it is a member only.
    NotBetter {
        /// The cell's elite.
        elite: CandidateId,
    },
    /// It has no descriptor; it is a member only.
    NoCell,
    /// The island already has a candidate with this id; nothing changed.
    Duplicate,
}

/// How a parent was picked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Uniform from the island (or a below-median cell).
    Explore,
    /// Softmax over elite scores (blended with gradient weights).
    Exploit,
    /// Uniform over the whole population.
    Random,
}

/// A picked parent.
#[derive(Clone, Copy, Debug)]
pub struct Selected<'a, P> {
    /// The parent.
    pub individual: &'a Individual<P>,
    /// How it was picked (the rule that found it, after fallbacks).
    pub mode: Mode,
}

/// One migrated copy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Migration {
    /// Source island.
    pub from: usize,
    /// Target island.
    pub to: usize,
    /// The candidate.
    pub id: CandidateId,
    /// What the target island did with it.
    pub placement: Placement,
}

/// Per-island statistics.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IslandStats {
    /// Cells with an elite.
    pub cells_filled: usize,
    /// Members, elites included.
    pub members: usize,
    /// The best elite.
    pub best: Option<CandidateId>,
    /// Its score.
    pub best_score: Option<f64>,
}

/// Archive statistics.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Completed generations.
    pub generation: u32,
    /// Distinct cells with an elite on some island.
    pub cells_filled: usize,
    /// Distinct cells whose best elite is correct (level 5).
    pub cells_correct: usize,
    /// Members over all islands.
    pub members: usize,
    /// Per island.
    pub islands: Vec<IslandStats>,
    /// The best candidate overall.
    pub best: Option<CandidateId>,
    /// Its score.
    pub best_score: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(bound(serialize = "P: Serialize", deserialize = "P: Deserialize<'de>"))]
struct Island<P> {
    members: BTreeMap<CandidateId, Individual<P>>,
    elites: BTreeMap<Descriptor, CandidateId>,
}

impl<P> Default for Island<P> {
    fn default() -> Self {
        Island {
            members: BTreeMap::new(),
            elites: BTreeMap::new(),
        }
    }
}

impl<P> Island<P> {
    fn elites(&self) -> impl Iterator<Item = &Individual<P>> {
        self.elites.values().map(|id| &self.members[id])
    }
}

/// The MAP-Elites archive with islands.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(bound(serialize = "P: Serialize", deserialize = "P: Deserialize<'de>"))]
pub struct Archive<P = ()> {
    config: ArchiveConfig,
    islands: Vec<Island<P>>,
    generation: u32,
}

impl<P: Clone> Archive<P> {
    /// An empty archive (at least one island).
    pub fn new(config: ArchiveConfig) -> Self {
        let n = config.islands.max(1);
        Archive {
            config,
            islands: (0..n).map(|_| Island::default()).collect(),
            generation: 0,
        }
    }

    /// The constants in use.
    pub fn config(&self) -> &ArchiveConfig {
        &self.config
    }

    /// Number of islands.
    pub fn island_count(&self) -> usize {
        self.islands.len()
    }

    /// Completed generations.
    pub fn generation(&self) -> u32 {
        self.generation
    }

    /// Adds a candidate to its island (`individual.island`, which must be below
    /// [`Archive::island_count`]).
    pub fn insert(&mut self, individual: Individual<P>) -> Placement {
        assert!(
            individual.island < self.islands.len(),
            "island {} of an archive with {} islands",
            individual.island,
            self.islands.len()
        );
        let island = &mut self.islands[individual.island];
        if island.members.contains_key(&individual.id) {
            return Placement::Duplicate;
        }
        let id = individual.id;
        let placement = match individual.descriptor {
            None => Placement::NoCell,
            Some(cell) => match island.elites.get(&cell) {
                None => Placement::NewCell,
                Some(&elite) if individual.score() > island.members[&elite].score() => {
                    Placement::Replaced { previous: elite }
                }
                Some(&elite) => Placement::NotBetter { elite },
            },
        };
        if let (Placement::NewCell | Placement::Replaced { .. }, Some(cell)) =
            (placement, individual.descriptor)
        {
            island.elites.insert(cell, id);
        }
        island.members.insert(id, individual);
        Self::evict(island, self.config.max_non_elites);
        placement
    }

    /// Adds a copy of `individual` to every island (the baseline starts everywhere).
    pub fn seed(&mut self, individual: Individual<P>) -> Vec<Placement> {
        (0..self.islands.len())
            .map(|i| {
                let mut copy = individual.clone();
                copy.island = i;
                self.insert(copy)
            })
            .collect()
    }

    fn evict(island: &mut Island<P>, bound: usize) {
        let elite_ids: BTreeSet<CandidateId> = island.elites.values().copied().collect();
        while island.members.len() - elite_ids.len() > bound {
            let worst = island
                .members
                .values()
                .filter(|m| !elite_ids.contains(&m.id))
                .min_by(|a, b| {
                    a.score()
                        .total_cmp(&b.score())
                        .then(a.generation.cmp(&b.generation))
                        .then(a.id.cmp(&b.id))
                })
                .map(|m| m.id);
            match worst {
                Some(id) => {
                    island.members.remove(&id);
                }
                None => break,
            }
        }
    }

    /// Closes a generation; every `migration_interval` generations, migrates along the ring.
    pub fn end_generation(&mut self) -> Vec<Migration> {
        self.generation += 1;
        let n = self.islands.len();
        if n < 2
            || self.config.migration_interval == 0
            || !self
                .generation
                .is_multiple_of(self.config.migration_interval)
        {
            return Vec::new();
        }
        // Choose every island's migrants first, so a copy does not travel twice in one round.
        let mut outgoing = Vec::new();
        for (from, island) in self.islands.iter().enumerate() {
            let mut elites: Vec<&Individual<P>> = island.elites().collect();
            if elites.is_empty() {
                continue;
            }
            elites.sort_by(|a, b| b.score().total_cmp(&a.score()).then(a.id.cmp(&b.id)));
            let k = ((elites.len() as f64 * self.config.migration_rate).floor() as usize).max(1);
            for e in elites.into_iter().take(k) {
                let mut copy = e.clone();
                copy.island = (from + 1) % n;
                outgoing.push((from, copy));
            }
        }
        outgoing
            .into_iter()
            .map(|(from, copy)| {
                let (to, id) = (copy.island, copy.id);
                let placement = self.insert(copy);
                Migration {
                    from,
                    to,
                    id,
                    placement,
                }
            })
            .collect()
    }

    /// Picks a parent for a child on `island`; `gradients` blends gradient weights into exploit
    /// picks (`None` turns steering off). `None` only when the archive is empty.
    pub fn select_parent(
        &self,
        island: usize,
        gradients: Option<&GradientTracker>,
        rng: &mut impl Rng,
    ) -> Option<Selected<'_, P>> {
        let island = island.min(self.islands.len() - 1);
        let r: f64 = rng.random();
        let first = if r < self.config.explore {
            Mode::Explore
        } else if r < self.config.explore + self.config.exploit {
            Mode::Exploit
        } else {
            Mode::Random
        };
        let explore = |rng: &mut _| {
            let members: Vec<&Individual<P>> = self.islands[island].members.values().collect();
            pick_uniform(&members, rng).or_else(|| {
                let below = self.below_median_elites();
                pick_uniform(&below, rng)
            })
        };
        let pick = match first {
            Mode::Explore => explore(rng).map(|i| (i, Mode::Explore)),
            Mode::Exploit => self
                .exploit(island, gradients, rng)
                .map(|i| (i, Mode::Exploit)),
            Mode::Random => None,
        };
        let (individual, mode) = match pick {
            Some(p) => p,
            None => (pick_uniform(&self.all_members(), rng)?, Mode::Random),
        };
        Some(Selected { individual, mode })
    }

    fn exploit(
        &self,
        island: usize,
        gradients: Option<&GradientTracker>,
        rng: &mut impl Rng,
    ) -> Option<&Individual<P>> {
        let mut elites: Vec<&Individual<P>> = self.islands[island].elites().collect();
        if elites.is_empty() {
            elites = self.all_elites();
        }
        if elites.is_empty() {
            return None;
        }
        let mut p = softmax(
            &elites.iter().map(|e| e.score()).collect::<Vec<_>>(),
            self.config.temperature,
        );
        if let Some(tracker) = gradients {
            let cells = self.cell_scores();
            let w: Vec<f64> = elites
                .iter()
                .map(|e| {
                    let cell = e.descriptor.expect("elites have a cell");
                    tracker.sampling_weight(cell, &cells, self.generation)
                })
                .collect();
            let total: f64 = w.iter().sum();
            let alpha = self.config.gradient_alpha;
            for (pi, wi) in p.iter_mut().zip(&w) {
                let wn = if total > 0.0 {
                    wi / total
                } else {
                    1.0 / w.len() as f64
                };
                *pi = (1.0 - alpha) * *pi + alpha * wn;
            }
        }
        Some(elites[sample(&p, rng)])
    }

    /// Inspirations for a child of `parent`: elites of other cells, more-optimized cells first.
    pub fn inspirations(&self, parent: &Individual<P>, rng: &mut impl Rng) -> Vec<&Individual<P>> {
        let base = parent.descriptor.map_or(0, |d| d.level_sum());
        let mut seen = BTreeSet::new();
        let mut pool: Vec<(f64, &Individual<P>)> = self
            .all_elites()
            .into_iter()
            .filter(|e| e.id != parent.id && e.descriptor != parent.descriptor)
            .filter(|e| seen.insert(e.id))
            .map(|e| {
                let sum = e.descriptor.map_or(0, |d| d.level_sum());
                let bonus = 0.1 * f64::from(sum.saturating_sub(base));
                (e.score() + bonus, e)
            })
            .collect();
        pool.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.id.cmp(&b.1.id)));
        let n = self.config.inspirations;
        let top = n.div_ceil(2).min(pool.len());
        let mut chosen: Vec<&Individual<P>> = pool.drain(..top).map(|(_, e)| e).collect();
        while chosen.len() < n && !pool.is_empty() {
            let keys: Vec<f64> = pool.iter().map(|(k, _)| *k).collect();
            let i = sample(&softmax(&keys, self.config.temperature), rng);
            chosen.push(pool.remove(i).1);
        }
        chosen
    }

    /// A member of `island` by id.
    pub fn get(&self, island: usize, id: CandidateId) -> Option<&Individual<P>> {
        self.islands.get(island)?.members.get(&id)
    }

    /// The elite of `cell` on `island`.
    pub fn elite(&self, island: usize, cell: Descriptor) -> Option<&Individual<P>> {
        let isl = self.islands.get(island)?;
        isl.elites.get(&cell).map(|id| &isl.members[id])
    }

    /// The elites of `island`, in cell order.
    pub fn elites(&self, island: usize) -> impl Iterator<Item = &Individual<P>> {
        self.islands
            .get(island)
            .into_iter()
            .flat_map(Island::elites)
    }

    /// The members of `island` (elites included), in id order.
    pub fn members(&self, island: usize) -> impl Iterator<Item = &Individual<P>> {
        self.islands
            .get(island)
            .into_iter()
            .flat_map(|i| i.members.values())
    }

    /// The best candidate overall (highest score; the lower id on ties).
    pub fn best(&self) -> Option<&Individual<P>> {
        best_of(self.all_elites())
    }

    /// Every member over all islands (elites included), once each, best first (highest score;
    /// the lower id on ties), as [`Self::best`] orders the elites.
    pub fn ranked(&self) -> Vec<&Individual<P>> {
        let mut members = self.all_members();
        members.sort_by(|a, b| b.score().total_cmp(&a.score()).then(a.id.cmp(&b.id)));
        members.dedup_by(|a, b| a.id == b.id);
        members
    }

    /// Each filled cell's best elite score over all islands (the gradients' view of the map).
    pub fn cell_scores(&self) -> BTreeMap<Descriptor, f64> {
        let mut cells: BTreeMap<Descriptor, f64> = BTreeMap::new();
        for e in self.all_elites() {
            let cell = e.descriptor.expect("elites have a cell");
            let s = cells.entry(cell).or_insert(f64::NEG_INFINITY);
            *s = s.max(e.score());
        }
        cells
    }

    /// Statistics.
    pub fn stats(&self) -> Stats {
        let islands: Vec<IslandStats> = self
            .islands
            .iter()
            .map(|i| {
                let best = best_of(i.elites().collect());
                IslandStats {
                    cells_filled: i.elites.len(),
                    members: i.members.len(),
                    best: best.map(|b| b.id),
                    best_score: best.map(|b| b.score()),
                }
            })
            .collect();
        let mut correct: BTreeSet<Descriptor> = BTreeSet::new();
        for e in self.all_elites() {
            if e.fitness.level >= 5 {
                correct.insert(e.descriptor.expect("elites have a cell"));
            }
        }
        let best = self.best();
        Stats {
            generation: self.generation,
            cells_filled: self.cell_scores().len(),
            cells_correct: correct.len(),
            members: islands.iter().map(|i| i.members).sum(),
            islands,
            best: best.map(|b| b.id),
            best_score: best.map(|b| b.score()),
        }
    }

    fn all_elites(&self) -> Vec<&Individual<P>> {
        self.islands.iter().flat_map(Island::elites).collect()
    }

    fn all_members(&self) -> Vec<&Individual<P>> {
        self.islands
            .iter()
            .flat_map(|i| i.members.values())
            .collect()
    }

    /// Elites whose score is below the median elite score (over all islands).
    fn below_median_elites(&self) -> Vec<&Individual<P>> {
        let elites = self.all_elites();
        let mut scores: Vec<f64> = elites.iter().map(|e| e.score()).collect();
        scores.sort_by(f64::total_cmp);
        let Some(median) = median(&scores) else {
            return Vec::new();
        };
        elites.into_iter().filter(|e| e.score() < median).collect()
    }
}

/// Picks a dimension of `cell` to raise by one level, or `None` when every dimension is at 3.
///
/// Unsteered (`gradient` is `None`) the choice is uniform over the dimensions below 3. Steered,
/// with probability `confidence` it follows the gradient: among dimensions below 3 with
/// `g_d` at or above the hint threshold, chosen in proportion to `g_d`; otherwise (or when no
/// dimension qualifies) it is uniform.
pub fn targeted_dim(
    cell: Descriptor,
    gradient: Option<&Gradient>,
    rng: &mut impl Rng,
) -> Option<Dim> {
    let open: Vec<Dim> = Dim::ALL
        .into_iter()
        .filter(|&d| cell.moved(d, 1).is_some())
        .collect();
    if open.is_empty() {
        return None;
    }
    if let Some(g) = gradient {
        let hinted: Vec<(Dim, f64)> = g
            .hints()
            .into_iter()
            .filter(|h| h.direction > 0)
            .map(|h| (h.dim, h.strength))
            .collect();
        let follow: f64 = rng.random();
        if !hinted.is_empty() && follow < g.confidence {
            let w: Vec<f64> = hinted.iter().map(|h| h.1).collect();
            return Some(hinted[sample(&w, rng)].0);
        }
    }
    Some(open[rng.random_range(0..open.len())])
}

fn best_of<P>(candidates: Vec<&Individual<P>>) -> Option<&Individual<P>> {
    candidates
        .into_iter()
        .max_by(|a, b| a.score().total_cmp(&b.score()).then(b.id.cmp(&a.id)))
}

fn median(sorted: &[f64]) -> Option<f64> {
    match sorted.len() {
        0 => None,
        n if n % 2 == 1 => Some(sorted[n / 2]),
        n => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

fn pick_uniform<'a, T>(items: &[&'a T], rng: &mut impl Rng) -> Option<&'a T> {
    (!items.is_empty()).then(|| items[rng.random_range(0..items.len())])
}

/// `exp((s − max)/T)`, normalized.
fn softmax(scores: &[f64], temperature: f64) -> Vec<f64> {
    let t = if temperature > 0.0 { temperature } else { 1.0 };
    let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = scores.iter().map(|s| ((s - max) / t).exp()).collect();
    let total: f64 = e.iter().sum();
    e.iter().map(|x| x / total).collect()
}

/// An index drawn in proportion to non-negative weights (uniform when they are all zero).
fn sample(weights: &[f64], rng: &mut impl Rng) -> usize {
    let total: f64 = weights.iter().filter(|w| w.is_finite() && **w > 0.0).sum();
    if total <= 0.0 {
        return rng.random_range(0..weights.len());
    }
    let mut r = rng.random::<f64>() * total;
    let mut last = 0;
    for (i, w) in weights.iter().enumerate() {
        if w.is_finite() && *w > 0.0 {
            if r < *w {
                return i;
            }
            r -= w;
            last = i;
        }
    }
    last
}

#[cfg(test)]
mod tests;

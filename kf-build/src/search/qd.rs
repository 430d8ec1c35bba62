//! The evolution strategies: quality-diversity search over code rewrites (the paper's MAP-Elites
//! with islands and gradient steering), and the two baselines it is measured against (greedy and
//! random).
//!
//! Each generation proposes one child per island (`Config::width` children per island when several
//! workers evaluate a batch in parallel): a parent from the archive (explore / exploit /
//! random, blended with gradient weights), an operator (half the time a targeted mutation that
//! raises one behaviour dimension of the parent's cell, otherwise weighted by how well the
//! operator's declared move agrees with the gradient), and one of the operator's rewrites that was
//! never evaluated. Children are described from naga's IR and compete for their cell; their
//! transitions feed the gradient. Greedy builds on the best candidate that still has a rewrite never
//! evaluated (best first: once every rewrite of the best has been tried it goes on from the
//! runner-up, so a search limited by time does not end early), random on a uniformly chosen
//! correct one, both with uniformly chosen operators and no archive steering.
//!
//! Operators are drawn in an order weighted by the gradient, the targeted mutation and the known-good
//! chains ([`chain_next`]: a structural rewrite, then unrolling, then parameters).
//!
//! The paper's constants assume long searches: migration every 10 generations and gradients
//! trusted after 20 departures are out of reach of a 32-evaluation search (8 generations of 4
//! islands). A search limited by evaluations scales both to its budget ([`scaled_archive`],
//! [`scaled_gradient`]); one limited by time keeps them.
//!
//! A [`Proposer`] (the LLM, see `crate::llm`) can add children beside the offline operators: each
//! generation it hands over children for some islands (answers to requests it made one generation
//! earlier) and the offline operators fill the other islands. Its children enter the archive,
//! the gradients and the operator statistics exactly like a rewrite's.
//!
//! Invariant: every choice draws from [`step_rng`] of the run's seed and a step counter, and the
//! state changes only through observed reports, so the same reports give the same proposals: a
//! resumed run replays its journal into exactly the state of the killed one. A proposer must keep
//! the same promise (the LLM's does, through its response cache and a fixed pipeline order).

use super::strategy::{Proposal, Strategy, rank};
use super::{Config, StrategyKind};
use crate::evaluate::{Candidate, EvalReport};
use crate::evolve::{
    Archive, ArchiveConfig, CandidateId, Descriptor, Dim, GradientConfig, GradientTracker,
    Individual, describe_program, step_rng, targeted_dim,
};
use crate::operators::{self, Operator, Rewrite, Skip, Subject, Target};
use kf_runtime::resolve::ResolvedKernel;
use rand::Rng;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};

/// What the archive keeps with each individual.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Payload {
    /// The candidate (its program).
    pub candidate: Candidate,
    /// Candidate values of overrides the rewrites on its chain introduced.
    pub params: Vec<(String, Vec<f64>)>,
    /// A rewrite on its chain fixed the workgroup size (see `Operator::fixes_workgroup`).
    #[serde(default)]
    pub fixed_workgroup: bool,
}

/// What each operator achieved in a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OperatorStats {
    /// Candidates it produced that were evaluated.
    pub proposed: u64,
    /// Of those, correct ones.
    pub correct: u64,
    /// Of those, ones that filled a new cell or replaced an elite.
    pub improved: u64,
    /// Of the incorrect ones, those the adapter could not launch (workgroup counts or sizes past
    /// its limits on the shape evaluated): not wrong rewrites, only ones this shape or adapter
    /// has no room for.
    #[serde(default, skip_serializing_if = "crate::is_zero")]
    pub unlaunchable: u64,
}

struct Pending {
    id: CandidateId,
    parent: CandidateId,
    island: usize,
    origin: Vec<String>,
    operator: String,
    params: Vec<(String, Vec<f64>)>,
    fixed_workgroup: bool,
    tag: Option<u64>,
}

/// What a [`Proposer`] sees of the search when it makes a generation's children.
pub struct View<'a> {
    /// The kernel.
    pub kernel: &'a ResolvedKernel,
    /// The adapter, as far as rewrites care.
    pub target: &'a Target,
    /// The archive.
    pub archive: &'a Archive<Payload>,
    /// The gradient tracker, when steering is on.
    pub tracker: Option<&'a GradientTracker>,
    /// The run's seed.
    pub seed: u64,
    /// Candidate evaluations left in the budget, this generation's included.
    pub remaining: u64,
}

/// A child from outside the offline operators.
#[derive(Clone, Debug)]
pub struct External {
    /// The proposer's own tag, handed back with the child's report.
    pub tag: u64,
    /// The parent it was made from.
    pub parent: CandidateId,
    /// The island it competes on.
    pub island: usize,
    /// The program.
    pub program: kf_runtime::Program,
    /// The step for the origin chain, e.g. `llm(model=m, prompt=p3, optimize)`.
    pub step: String,
    /// The name its statistics are kept under (`llm`, `param`).
    pub operator: String,
    /// Candidate values of overrides it introduced, for the parameter operator.
    pub params: Vec<(String, Vec<f64>)>,
    /// A failure found without running it (no code in an answer): reason and log.
    pub judged: Option<(crate::evaluate::Reason, String)>,
}

/// A source of children beside the offline operators, called once per generation.
pub trait Proposer {
    /// This generation's children (at most `view.remaining`); the proposer may also prepare the
    /// next generation's. Must be deterministic given the reports observed so far.
    fn generation(&mut self, view: &View<'_>) -> Vec<External>;
    /// Whether children are still being prepared (asked for again when a generation would
    /// otherwise be empty).
    fn busy(&self) -> bool {
        false
    }
    /// Every report of the search, with the tag of the proposer's child it belongs to.
    fn observe(&mut self, tag: Option<u64>, candidate: &Candidate, report: &EvalReport);
    /// The proposer's state, for the strategy's checkpoint.
    fn checkpoint(&self) -> Option<serde_json::Value> {
        None
    }
}

/// Attempts to find a new candidate for one island before giving up on it this generation.
const ATTEMPTS: usize = 16;
/// Probability of a targeted mutation (raise one dimension of the parent's cell).
const TARGETED: f64 = 0.5;

/// The quality-diversity, greedy and random strategies.
pub struct Evolution {
    kind: StrategyKind,
    kernel: ResolvedKernel,
    target: Target,
    operators: Vec<Box<dyn Operator>>,
    seed: u64,
    samples: u32,
    gradients: bool,
    width: usize,
    archive: Archive<Payload>,
    tracker: GradientTracker,
    step: u64,
    next_id: CandidateId,
    seen: HashSet<String>,
    pending: HashMap<String, Pending>,
    history: Vec<(Candidate, EvalReport)>,
    applied: HashMap<(String, &'static str), Result<Vec<Rewrite>, Skip>>,
    /// Each parent's canonical form (`None`: already canonical), computed once per candidate id.
    canonical: HashMap<String, Option<Rewrite>>,
    stats: BTreeMap<String, OperatorStats>,
    proposer: Option<Box<dyn Proposer>>,
    /// The user's kernel as an individual, and how many of each operator's rewrites of it were
    /// proposed (see `propose_for`: every operator gets `root_variants` tries on the seed, one
    /// round of every operator at a time, before the search builds on children).
    root: Option<Individual<Payload>>,
    root_tried: HashMap<usize, usize>,
    root_variants: usize,
}

impl Evolution {
    /// A strategy of `config.strategy` (`qd`, `greedy` or `random`) for `kernel` on `target`,
    /// with every offline operator.
    pub fn new(kernel: &ResolvedKernel, target: Target, config: &Config) -> Self {
        let mut operators = operators::all();
        if let Some(only) = &config.operators {
            operators.retain(|op| only.iter().any(|n| n == op.name()));
        }
        Evolution {
            kind: config.strategy,
            kernel: kernel.clone(),
            target,
            operators,
            seed: config.seed,
            samples: config.samples,
            gradients: config.gradients && config.strategy == StrategyKind::Qd,
            width: config.width.max(1),
            archive: Archive::new(scaled_archive(config)),
            tracker: GradientTracker::new(scaled_gradient(config)),
            step: 0,
            next_id: 1,
            seen: HashSet::new(),
            pending: HashMap::new(),
            history: Vec::new(),
            applied: HashMap::new(),
            canonical: HashMap::new(),
            stats: BTreeMap::new(),
            root: None,
            root_tried: HashMap::new(),
            root_variants: root_variants(config),
            proposer: None,
        }
    }

    /// Adds a source of children beside the offline operators.
    pub fn with_proposer(mut self, proposer: Box<dyn Proposer>) -> Self {
        self.proposer = Some(proposer);
        self
    }

    /// The proposer's children of this generation, adopted as proposals.
    fn external(&mut self, remaining: u64) -> Vec<(usize, Proposal)> {
        let Some(mut proposer) = self.proposer.take() else {
            return Vec::new();
        };
        let view = View {
            kernel: &self.kernel,
            target: &self.target,
            archive: &self.archive,
            tracker: self.gradients.then_some(&self.tracker),
            seed: self.seed,
            remaining,
        };
        let mut out = Vec::new();
        for e in proposer.generation(&view) {
            if out.len() as u64 >= remaining {
                break;
            }
            if let Some(p) = self.adopt(e, proposer.as_mut()) {
                out.push(p);
            }
        }
        self.proposer = Some(proposer);
        out
    }

    fn adopt(&mut self, e: External, proposer: &mut dyn Proposer) -> Option<(usize, Proposal)> {
        let parent = (0..self.archive.island_count())
            .find_map(|i| self.archive.get(i, e.parent))
            .cloned();
        let mut origin = parent
            .as_ref()
            .map(|p| p.origin.clone())
            .unwrap_or_default();
        origin.push(e.step.clone());
        let candidate = Candidate::new(e.program, origin.join(" → "));
        if !self.seen.insert(candidate.id.clone()) {
            // Already evaluated (or about to be): its report is the answer's report too.
            if let Some((c, r)) = self
                .history
                .iter()
                .rev()
                .find(|(c, _)| c.id == candidate.id)
            {
                proposer.observe(Some(e.tag), c, r);
            }
            log::debug!("{} proposed {} again", e.operator, candidate.id);
            return None;
        }
        // An answer writes its own workgroup size; a sweep of one keeps what its parent fixed.
        let fixed_workgroup =
            e.operator != "llm" && parent.as_ref().is_some_and(|p| p.payload.fixed_workgroup);
        let mut params = parent.map(|p| p.payload.params).unwrap_or_default();
        params.extend(e.params);
        let id = self.next_id;
        self.next_id += 1;
        let judged = e
            .judged
            .map(|(reason, log)| EvalReport::failed(&candidate.id, reason, log));
        self.pending.insert(
            candidate.id.clone(),
            Pending {
                id,
                parent: e.parent,
                island: e.island.min(self.archive.island_count().saturating_sub(1)),
                origin,
                operator: e.operator,
                params,
                fixed_workgroup,
                tag: Some(e.tag),
            },
        );
        Some((
            e.island,
            Proposal {
                candidate,
                samples: self.samples,
                judged,
                screen_below: None,
            },
        ))
    }

    /// What each operator achieved so far.
    pub fn operator_stats(&self) -> &BTreeMap<String, OperatorStats> {
        &self.stats
    }

    fn pick_parent(&self, island: usize, rng: &mut impl Rng) -> Option<Individual<Payload>> {
        let tracker = self.gradients.then_some(&self.tracker);
        match self.kind {
            StrategyKind::Random => {
                let correct: Vec<&Individual<Payload>> = (0..self.archive.island_count())
                    .flat_map(|i| self.archive.members(i))
                    .filter(|m| m.fitness.level == 5)
                    .collect();
                (!correct.is_empty()).then(|| correct[rng.random_range(0..correct.len())].clone())
            }
            _ => self
                .archive
                .select_parent(island, tracker, rng)
                .map(|s| s.individual.clone()),
        }
    }

    /// Operator indices to try for `parent`, in the order to try them.
    fn operator_order(&self, parent: &Individual<Payload>, rng: &mut impl Rng) -> Vec<usize> {
        let n = self.operators.len();
        let mut weights: Vec<f64> = vec![1.0; n];
        if self.kind == StrategyKind::Qd
            && let Some(cell) = parent.descriptor
        {
            let gradient = self.gradients.then(|| {
                self.tracker
                    .gradient(cell, &self.archive.cell_scores(), self.archive.generation())
            });
            if let Some(g) = &gradient {
                for (w, op) in weights.iter_mut().zip(&self.operators) {
                    *w *= g.operator_weight(op.moves());
                }
            }
            // Targeted mutation: raise one dimension; operators that do so come first.
            if rng.random::<f64>() < TARGETED
                && let Some(dim) = targeted_dim(cell, gradient.as_ref(), rng)
            {
                for (w, op) in weights.iter_mut().zip(&self.operators) {
                    if raises(op.moves(), dim) {
                        *w *= 8.0;
                    }
                }
            }
        }
        // Known-good chains: after a structural rewrite, unrolling; after unrolling, parameters.
        if let Some(next) = chain_next(&parent.origin) {
            for (w, op) in weights.iter_mut().zip(&self.operators) {
                if op.name() == next {
                    *w *= CHAIN_PRIOR;
                }
            }
        }
        // Weighted order without replacement.
        let mut order = Vec::with_capacity(n);
        let mut left: Vec<usize> = (0..n).collect();
        while !left.is_empty() {
            let total: f64 = left.iter().map(|&i| weights[i]).sum();
            let mut r = rng.random::<f64>() * total;
            let mut pick = left.len() - 1;
            for (k, &i) in left.iter().enumerate() {
                if r < weights[i] {
                    pick = k;
                    break;
                }
                r -= weights[i];
            }
            order.push(left.remove(pick));
        }
        order
    }

    fn rewrites(&mut self, parent: &Individual<Payload>, op: usize) -> Vec<Rewrite> {
        let name = self.operators[op].name();
        let key = (parent.payload.candidate.id.clone(), name);
        if !self.applied.contains_key(&key) {
            let subject = Subject {
                kernel: &self.kernel,
                program: &parent.payload.candidate.program,
                target: &self.target,
            };
            let canon = self
                .canonical
                .entry(parent.payload.candidate.id.clone())
                .or_insert_with(|| operators::canonicalise(&subject))
                .as_ref();
            let params = operators::Params {
                extra: parent.payload.params.clone(),
                fixed_workgroup: parent.payload.fixed_workgroup,
            };
            let operator: &dyn Operator = if name == "param" {
                &params
            } else {
                &*self.operators[op]
            };
            let result = operators::apply_canonical(operator, &subject, canon);
            if let Err(skip) = &result {
                log::debug!(
                    "{name} does not apply to {}: {skip}",
                    parent.payload.candidate.id
                );
            }
            self.applied.insert(key.clone(), result);
        }
        self.applied[&key].clone().unwrap_or_default()
    }

    /// One child for `island`.
    ///
    /// Until every operator has had its tries on the user's kernel, the child is the next
    /// operator's rewrite of it (in the strategy's own operator order), in rounds: every operator's
    /// first rewrite, then every operator's second, up to [`root_variants`]. The seed's
    /// neighbourhood is covered first, as MAP-Elites fills its archive from initial programs.
    /// Without this, a structural rewrite that applies only to the user's kernel (a parallel
    /// reduction of a row loop, which unrolling the loop first rules out) could go untried for a
    /// whole budget once the islands hold children it no longer applies to: measured on an H200,
    /// 40 evaluations of a row-wise softmax drew unrolling, coarsening and parameters and never
    /// the reduction. Several tries per operator matter where an operator's forms differ by far
    /// on one kernel and not on another (`reduce`'s one workgroup per row against lane groups of
    /// a subgroup, tile sizes): one random form per operator would decide by chance. Losing
    /// forms cost little: a child is screened against its cell's elite with a few samples.
    fn propose_for(&mut self, island: usize) -> Option<Proposal> {
        let mut rng = step_rng(self.seed, self.step);
        self.step += 1;
        if let Some(root) = self.root.clone() {
            let order = self.operator_order(&root, &mut rng);
            for round in 0..self.root_variants {
                for &op in &order {
                    let tried = self.root_tried.entry(op).or_default();
                    if *tried != round {
                        continue;
                    }
                    *tried += 1;
                    if let Some(p) = self.child(&root, op, island, &mut rng) {
                        return Some(p);
                    }
                    // No fresh rewrite left: this operator is done with the seed.
                    self.root_tried.insert(op, self.root_variants);
                }
            }
            self.root = None;
        }
        if self.kind == StrategyKind::Greedy {
            return self.best_first(island, &mut rng);
        }
        for _ in 0..ATTEMPTS {
            let parent = self.pick_parent(island, &mut rng)?;
            for op in self.operator_order(&parent, &mut rng) {
                if let Some(p) = self.child(&parent, op, island, &mut rng) {
                    return Some(p);
                }
            }
        }
        None
    }

    /// Greedy's child: a fresh rewrite of the best correct member that still has one, trying
    /// the members in rank order (see [`Archive::ranked`]).
    fn best_first(&mut self, island: usize, rng: &mut impl Rng) -> Option<Proposal> {
        let ranked: Vec<Individual<Payload>> = self
            .archive
            .ranked()
            .into_iter()
            .filter(|m| m.fitness.level == 5)
            .cloned()
            .collect();
        for parent in &ranked {
            for op in self.operator_order(parent, rng) {
                if let Some(p) = self.child(parent, op, island, rng) {
                    return Some(p);
                }
            }
        }
        None
    }

    /// A fresh rewrite of `parent` by operator `op`, registered as pending, if there is one.
    fn child(
        &mut self,
        parent: &Individual<Payload>,
        op: usize,
        island: usize,
        rng: &mut impl Rng,
    ) -> Option<Proposal> {
        let fresh: Vec<Rewrite> = self
            .rewrites(parent, op)
            .into_iter()
            .filter(|r| {
                let id = Candidate::new(r.program.clone(), "").id;
                !self.seen.contains(&id)
            })
            .collect();
        if fresh.is_empty() {
            return None;
        }
        let rewrite = fresh[rng.random_range(0..fresh.len())].clone();
        let mut origin = parent.origin.clone();
        origin.push(rewrite.step.clone());
        let candidate = Candidate::new(rewrite.program, origin.join(" → "));
        // A child lands in its descriptor's cell on its island: it matters only if it beats that
        // cell's elite (the best is at least as fast), so it is screened against it.
        let screen_below = describe_program(&candidate.program)
            .ok()
            .and_then(|cell| self.archive.elite(island, cell))
            .and_then(|elite| elite.fitness.speedup);
        let mut params = parent.payload.params.clone();
        params.extend(rewrite.params);
        let fixed_workgroup =
            parent.payload.fixed_workgroup || self.operators[op].fixes_workgroup();
        self.seen.insert(candidate.id.clone());
        let id = self.next_id;
        self.next_id += 1;
        self.pending.insert(
            candidate.id.clone(),
            Pending {
                id,
                parent: parent.id,
                island,
                origin,
                operator: self.operators[op].name().to_owned(),
                params,
                fixed_workgroup,
                tag: None,
            },
        );
        Some(Proposal {
            candidate,
            samples: self.samples,
            judged: None,
            screen_below,
        })
    }
}

/// How much more likely the next operator of a known-good chain is drawn (see [`chain_next`]).
const CHAIN_PRIOR: f64 = 4.0;

/// The operator that a known-good chain applies after the last step of `origin`, if any.
///
/// The winners on an H200 were chains in one order: a structural rewrite (a parallel reduction,
/// tiling, coarsening), then unrolling the loops it left, then the parameters it introduced
/// (`reduce(subgroup, unroll 4) → unroll(i@54, x4) → param(KF_REDUCE_WG=64)`). Drawing the next
/// link of such a chain first composes them within a small budget; the gradient and the targeted
/// mutation still weigh in, and every other operator stays possible.
pub(crate) fn chain_next(origin: &[String]) -> Option<&'static str> {
    let last = origin.last()?;
    let op = last.split('(').next().unwrap_or(last).trim();
    match op {
        "reduce" | "tile" | "tile-blocked" | "coarsen" | "reshape" => Some("unroll"),
        "unroll" => Some("param"),
        _ => None,
    }
}

/// Rewrites of the user's kernel each operator gets before the search builds on children: one
/// per 16 evaluations of the budget, between 1 and 8; for a search limited by time, as many as
/// the most forms an operator has (`ROOT_FORMS`: `tile-blocked` has ten block shapes, `reduce`
/// six forms on a row reduction), so that none is left to chance when the time allows.
/// The most forms one operator offers on one kernel (tile-blocked's block shapes).
const ROOT_FORMS: usize = 10;

pub(crate) fn root_variants(config: &Config) -> usize {
    if config.time_s.is_some() {
        ROOT_FORMS
    } else {
        (config.budget / 16).clamp(1, 8) as usize
    }
}

/// Generations a search of `config` can expect: its budget over the children of one generation.
/// A search limited by time is assumed long (its budget is a cap): `None`.
fn expected_generations(config: &Config, islands: usize) -> Option<u64> {
    (config.time_s.is_none()).then(|| config.budget / (islands * config.width.max(1)) as u64)
}

/// The archive's constants, with the migration interval scaled to the budget.
///
/// The paper migrates every 10 generations, which a search of 32 evaluations over 4 islands
/// (8 generations) never reaches: its islands never exchange their best. Here a search migrates
/// about four times over its expected generations, at most every 10 and at least every 2.
pub(crate) fn scaled_archive(config: &Config) -> ArchiveConfig {
    let mut a = ArchiveConfig::default();
    if let Some(g) = expected_generations(config, a.islands) {
        a.migration_interval = (g / 4).clamp(2, u64::from(a.migration_interval)) as u32;
    }
    a
}

/// The gradient's constants, with the departures at which it is fully trusted scaled to the
/// budget: the paper's 20 are most of a 32-evaluation search, so its steering would barely
/// start; here a quarter of the budget, between 4 and 20.
pub(crate) fn scaled_gradient(config: &Config) -> GradientConfig {
    let mut g = GradientConfig::default();
    if config.time_s.is_none() {
        g.full_confidence_departures =
            (config.budget / 4).clamp(4, g.full_confidence_departures as u64) as usize;
    }
    g
}

fn raises(moves: &[(Dim, i8)], dim: Dim) -> bool {
    moves.iter().any(|&(d, m)| d == dim && m > 0)
}

impl Strategy for Evolution {
    fn name(&self) -> &str {
        self.kind.as_str()
    }

    fn space_size(&self) -> Option<u64> {
        None
    }

    fn start(&mut self, baseline: &EvalReport) {
        let candidate = Candidate::baseline(&self.kernel);
        self.seen
            .insert(Candidate::new(self.kernel.baseline.clone(), "").id);
        self.seen.insert(candidate.id.clone());
        let individual = Individual {
            id: 0,
            parent: None,
            island: 0,
            descriptor: describe_program(&candidate.program).ok(),
            fitness: baseline.fitness,
            origin: Vec::new(),
            generation: 0,
            payload: Payload {
                candidate,
                params: self.kernel.params.clone(),
                fixed_workgroup: false,
            },
        };
        if let Some(p) = &mut self.proposer {
            p.observe(None, &individual.payload.candidate, baseline);
        }
        self.root = Some(individual.clone());
        self.archive.seed(individual);
    }

    fn propose(&mut self, remaining: u64) -> Vec<Proposal> {
        let islands = self.archive.island_count();
        let external = self.external(remaining);
        let covered: HashSet<usize> = external.iter().map(|(i, _)| *i).collect();
        let mut out: Vec<Proposal> = external.into_iter().map(|(_, p)| p).collect();
        // A generation is `width` children per island (one unless several workers evaluate in
        // parallel); with width 1 this is exactly one child per island.
        'islands: for island in 0..islands {
            if covered.contains(&island) {
                continue;
            }
            for _ in 0..self.width {
                if out.len() as u64 >= remaining {
                    break 'islands;
                }
                if let Some(p) = self.propose_for(island) {
                    out.push(p);
                }
            }
        }
        // Nothing from anyone while answers are on their way: this generation waits for them.
        if out.is_empty() && self.proposer.as_ref().is_some_and(|p| p.busy()) {
            out = self
                .external(remaining)
                .into_iter()
                .map(|(_, p)| p)
                .collect();
        }
        out
    }

    fn observe(&mut self, candidate: &Candidate, report: &EvalReport) {
        self.history.push((candidate.clone(), report.clone()));
        let Some(p) = self.pending.remove(&candidate.id) else {
            if let Some(proposer) = &mut self.proposer {
                proposer.observe(None, candidate, report);
            }
            return;
        };
        let tag = p.tag;
        let child = Individual {
            id: p.id,
            parent: Some(p.parent),
            island: p.island,
            descriptor: describe_program(&candidate.program).ok(),
            fitness: report.fitness,
            origin: p.origin,
            generation: self.archive.generation(),
            payload: Payload {
                candidate: candidate.clone(),
                params: p.params,
                fixed_workgroup: p.fixed_workgroup,
            },
        };
        let parent = self.archive.get(p.island, p.parent).cloned().or_else(|| {
            (0..self.archive.island_count()).find_map(|i| self.archive.get(i, p.parent).cloned())
        });
        let placement = self.archive.insert(child.clone());
        let improved = matches!(
            placement,
            crate::evolve::Placement::NewCell | crate::evolve::Placement::Replaced { .. }
        );
        if let Some(parent) = parent {
            self.tracker.record_child(&parent, &child, placement);
        }
        let s = self.stats.entry(p.operator).or_default();
        s.proposed += 1;
        s.correct += u64::from(report.is_correct());
        s.improved += u64::from(improved && report.is_correct());
        s.unlaunchable += u64::from(report.failure.as_ref().is_some_and(|f| {
            matches!(
                f.reason,
                crate::evaluate::Reason::Dispatch | crate::evaluate::Reason::LimitsExceeded
            )
        }));
        if let Some(proposer) = &mut self.proposer {
            proposer.observe(tag, candidate, report);
        }
        if self.pending.is_empty() {
            self.archive.end_generation();
        }
    }

    fn ranking(&self) -> Vec<Candidate> {
        rank(&self.history)
    }

    fn cells_filled(&self) -> Option<usize> {
        Some(self.archive.stats().cells_filled)
    }

    fn checkpoint(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({
            "strategy": self.kind.as_str(),
            "seed": self.seed,
            "gradients": self.gradients,
            "stats": self.archive.stats(),
            "operators": self.stats,
            "archive": self.archive,
            "transitions": self.tracker.transitions().collect::<Vec<_>>(),
            "proposer": self.proposer.as_ref().and_then(|p| p.checkpoint()),
        }))
    }
}

/// Descriptors of every correct candidate of a finished search, for reports.
pub fn descriptor_of(candidate: &Candidate) -> Option<Descriptor> {
    describe_program(&candidate.program).ok()
}

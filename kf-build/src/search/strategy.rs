//! Search strategies: what to evaluate next, given what has been measured.
//!
//! A [`Strategy`] proposes batches of candidates and observes their reports; it never evaluates
//! anything itself and never decides what is accepted (that is [`super::accept`], shared by every
//! strategy). Exhaustive search and successive halving over the parameter space live here; the
//! quality-diversity strategy over code rewrites is another implementation of the same trait.
//!
//! Invariant: given the same reports in the same order, a strategy proposes the same candidates.
//! That is what lets an interrupted run be resumed by replaying its journal.

use super::space::{self, Point, Space};
use crate::evaluate::{Candidate, EvalReport};
use kf_runtime::resolve::ResolvedKernel;
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;

/// One candidate to evaluate, and how many timed samples to take of it.
#[derive(Clone, Debug)]
pub struct Proposal {
    /// The candidate.
    pub candidate: Candidate,
    /// Timed samples of baseline and candidate.
    pub samples: u32,
    /// A verdict reached without running the candidate (e.g. an LLM answer with no code in it):
    /// the search records this report instead of asking the evaluator.
    pub judged: Option<EvalReport>,
    /// The speedup the candidate must be able to reach to matter to the strategy (to enter the
    /// archive, hence to beat the best): it is screened first (see [`crate::evaluate::Screen`]).
    /// `None`: the full timing straight away.
    pub screen_below: Option<f64>,
}

/// A search strategy.
pub trait Strategy {
    /// `exhaustive`, `successive-halving`, `qd`, ….
    fn name(&self) -> &str;
    /// Candidates in the space the strategy searches, when it is finite.
    fn space_size(&self) -> Option<u64>;
    /// The next batch, at most `remaining` candidates; empty when the strategy has nothing more.
    fn propose(&mut self, remaining: u64) -> Vec<Proposal>;
    /// The report of a proposed candidate.
    fn observe(&mut self, candidate: &Candidate, report: &EvalReport);
    /// Correct candidates, best first: the order of the final verification.
    fn ranking(&self) -> Vec<Candidate>;
    /// Called once with the baseline's report (measured against itself) before any proposal.
    fn start(&mut self, _baseline: &EvalReport) {}
    /// Cells of the archive with an elite, for strategies that keep one.
    fn cells_filled(&self) -> Option<usize> {
        None
    }
    /// The strategy's state, to checkpoint after an evaluation (for inspection and reports; a
    /// resumed run rebuilds it by replaying the journal).
    fn checkpoint(&self) -> Option<serde_json::Value> {
        None
    }
}

/// Correct candidates of `history`, best score first (ties keep the earlier one first).
pub fn rank(history: &[(Candidate, EvalReport)]) -> Vec<Candidate> {
    let mut correct: Vec<&(Candidate, EvalReport)> =
        history.iter().filter(|(_, r)| r.is_correct()).collect();
    correct.sort_by(|a, b| b.1.fitness.score.total_cmp(&a.1.fitness.score));
    let mut seen = std::collections::HashSet::new();
    correct
        .into_iter()
        .filter(|(c, _)| seen.insert(c.id.clone()))
        .map(|(c, _)| c.clone())
        .collect()
}

/// Every point of the space, in one batch.
pub struct Exhaustive {
    pending: Vec<Candidate>,
    size: u64,
    samples: u32,
    history: Vec<(Candidate, EvalReport)>,
}

impl Exhaustive {
    /// Over `space`.
    pub fn new(kernel: &ResolvedKernel, space: &Space, samples: u32) -> Self {
        Exhaustive {
            pending: space
                .points
                .iter()
                .map(|p| space::candidate(kernel, space, p))
                .collect(),
            size: space.points.len() as u64,
            samples,
            history: Vec::new(),
        }
    }
}

impl Strategy for Exhaustive {
    fn name(&self) -> &str {
        "exhaustive"
    }

    fn space_size(&self) -> Option<u64> {
        Some(self.size)
    }

    fn propose(&mut self, remaining: u64) -> Vec<Proposal> {
        let n = (remaining as usize).min(self.pending.len());
        self.pending
            .drain(..n)
            .map(|candidate| Proposal {
                candidate,
                samples: self.samples,
                judged: None,
                screen_below: None,
            })
            .collect()
    }

    fn observe(&mut self, candidate: &Candidate, report: &EvalReport) {
        self.history.push((candidate.clone(), report.clone()));
    }

    fn ranking(&self) -> Vec<Candidate> {
        rank(&self.history)
    }
}

/// Successive halving: a random subset of half the budget, then the faster half of the correct
/// ones again with twice the samples, until one is left or the budget is spent.
pub struct SuccessiveHalving {
    round: Vec<Point>,
    candidates: Vec<(Point, Candidate)>,
    kernel_space: (ResolvedKernel, Space),
    size: u64,
    samples: u32,
    observed: Vec<(Point, Candidate, EvalReport)>,
    waiting: usize,
    last_round: Vec<(Candidate, EvalReport)>,
}

impl SuccessiveHalving {
    /// Over `space`, with a first round of `budget / 2` points chosen with `seed`.
    pub fn new(
        kernel: &ResolvedKernel,
        space: &Space,
        samples: u32,
        budget: u64,
        seed: u64,
    ) -> Self {
        let mut all = space.points.clone();
        all.shuffle(&mut StdRng::seed_from_u64(seed));
        all.truncate((budget / 2).max(2) as usize);
        SuccessiveHalving {
            round: all,
            candidates: Vec::new(),
            kernel_space: (kernel.clone(), space.clone()),
            size: space.points.len() as u64,
            samples,
            observed: Vec::new(),
            waiting: 0,
            last_round: Vec::new(),
        }
    }
}

impl Strategy for SuccessiveHalving {
    fn name(&self) -> &str {
        "successive-halving"
    }

    fn space_size(&self) -> Option<u64> {
        Some(self.size)
    }

    fn propose(&mut self, remaining: u64) -> Vec<Proposal> {
        if self.waiting > 0 || self.round.is_empty() {
            return Vec::new();
        }
        // A later round must fit the budget whole, or it cannot compare its members fairly.
        if !self.observed.is_empty() && (self.round.len() as u64) > remaining {
            self.round.clear();
            return Vec::new();
        }
        let (kernel, space) = &self.kernel_space;
        let n = (remaining as usize).min(self.round.len());
        self.candidates = self
            .round
            .drain(..)
            .take(n)
            .map(|p| {
                let c = space::candidate(kernel, space, &p);
                (p, c)
            })
            .collect();
        self.waiting = self.candidates.len();
        self.observed.clear();
        self.candidates
            .iter()
            .map(|(_, c)| Proposal {
                candidate: c.clone(),
                samples: self.samples,
                judged: None,
                screen_below: None,
            })
            .collect()
    }

    fn observe(&mut self, candidate: &Candidate, report: &EvalReport) {
        let Some(pos) = self
            .candidates
            .iter()
            .position(|(_, c)| c.id == candidate.id)
        else {
            return;
        };
        let (point, c) = self.candidates.remove(pos);
        self.observed.push((point, c, report.clone()));
        self.waiting = self.waiting.saturating_sub(1);
        if self.waiting > 0 {
            return;
        }
        // The round is complete: keep the faster half of the correct ones for the next round.
        let mut correct: Vec<&(Point, Candidate, EvalReport)> = self
            .observed
            .iter()
            .filter(|(_, _, r)| r.is_correct())
            .collect();
        correct.sort_by(|a, b| b.2.fitness.score.total_cmp(&a.2.fitness.score));
        self.last_round = correct
            .iter()
            .map(|(_, c, r)| (c.clone(), r.clone()))
            .collect();
        if correct.len() > 2 {
            let keep = correct.len().div_ceil(2);
            self.round = correct
                .iter()
                .take(keep)
                .map(|(p, _, _)| p.clone())
                .collect();
            self.samples = self.samples.saturating_mul(2);
        }
    }

    fn ranking(&self) -> Vec<Candidate> {
        rank(&self.last_round)
    }
}

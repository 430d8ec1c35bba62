//! Acceptance, shared by every strategy: the baseline measured against itself, the final
//! verification of the best candidates, and the noise-aware decision.
//!
//! A search evaluation is a screening (one seed, the tune shapes, few samples); what enters the
//! cache must pass the full final plan (new seeds, unseen shapes, re-verification after timing)
//! and beat the baseline by more than the timing noise measured in the same run. When the best
//! candidate of the search is not accepted, the [`Verdict`] says why, so the user is never left
//! with "best 1.32x" on the progress bar and "baseline-best" in the result and no explanation.

use super::plan::final_plan;
use super::{Job, SearchError};
use crate::evaluate::{
    Candidate, EvalPlan, EvalReport, EvalRequest, Evaluator, Reason, ToleranceMiss,
};
use kf_runtime::verdict;
use serde::Serialize;

pub use kf_runtime::verdict::MIN_MARGIN;

/// How many of the best candidates get a final verification before giving up.
pub const FINALISTS: usize = 3;

/// Why the search ended where it did.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Verdict {
    /// A finalist passed the final verification and beat the baseline by more than the noise.
    Tuned {
        /// Its final speedup.
        speedup: f64,
        /// The margin it had to clear.
        margin: f64,
    },
    /// No candidate of the search was correct.
    NoCorrectCandidate,
    /// Correct candidates existed, but every finalist failed the final verification.
    FinalVerificationFailed {
        /// `(candidate id, reason: log)` of each finalist.
        failures: Vec<(String, String)>,
    },
    /// The best finalist passed the final verification but did not beat the baseline by more
    /// than the noise measured alongside.
    WithinNoise {
        /// Its final speedup.
        speedup: f64,
        /// The margin it had to clear.
        margin: f64,
        /// Its speedup during the search, for comparison.
        search_speedup: Option<f64>,
    },
}

impl Verdict {
    /// One readable sentence.
    pub fn describe(&self) -> String {
        match self {
            Verdict::Tuned { speedup, margin } => format!(
                "{speedup:.2}x after the final verification, above the {:.1} % noise margin",
                margin * 100.0
            ),
            Verdict::NoCorrectCandidate => {
                "no candidate computed what the baseline computes".into()
            }
            Verdict::FinalVerificationFailed { failures } => format!(
                "the best candidates failed the final verification (new seeds, unseen shapes, re-verification after timing): {}",
                failures
                    .iter()
                    .map(|(id, why)| format!("{id}: {}", why.lines().next().unwrap_or("")))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
            Verdict::WithinNoise {
                speedup,
                margin,
                search_speedup,
            } => format!(
                "the best candidate measured {speedup:.2}x in the final timing{}, not above the {:.1} % noise margin, so the baseline stays",
                search_speedup
                    .map(|s| format!(" ({s:.2}x while searching)"))
                    .unwrap_or_default(),
                margin * 100.0
            ),
        }
    }
}

/// Candidates faster than the baseline that were rejected only because their outputs missed the
/// kernel's tolerance by a hair (see [`ToleranceMiss::is_near`]): every finalist, or, when no
/// finalist was reached, every candidate that beat the baseline. The tolerance is the user's:
/// the tool says which one would have accepted them and never changes it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NearMiss {
    /// The candidates, with their measured speedups over the baseline.
    pub candidates: Vec<NearCandidate>,
    /// The kernel's tolerance.
    pub tolerance: f64,
    /// The smallest tolerance at which every comparison that ran would have agreed.
    pub needed: f64,
    /// [`NearMiss::needed`] rounded up to a clean value: the `tolerance = ..` to suggest.
    pub suggested: f64,
    /// The figures of the candidate that missed by the most.
    pub worst: ToleranceMiss,
}

/// One candidate of a [`NearMiss`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NearCandidate {
    /// Its id.
    pub id: String,
    /// How it was made.
    pub origin: String,
    /// Its speedup over the baseline where it was timed.
    pub speedup: f64,
}

impl NearMiss {
    /// Which candidates, how fast, the worst miss and the tolerance that would have accepted
    /// them, with whose choice that is.
    pub fn describe(&self) -> String {
        let n = self.candidates.len();
        let speeds: Vec<String> = self
            .candidates
            .iter()
            .map(|c| format!("{:.2}x", c.speedup))
            .collect();
        format!(
            "{n} candidate{} faster than the baseline ({}) failed only by the tolerance: {}; `tolerance = {:e}` in the kernel's attribute would have accepted {} on the checks that ran (the kernel's is {:e}). The tolerance is yours to set; KernelFoundry never changes it",
            if n == 1 { "" } else { "s" },
            speeds.join(", "),
            self.worst.figures(),
            self.suggested,
            if n == 1 { "it" } else { "them" },
            self.tolerance,
        )
    }

    /// The near miss among `finals` (every one of which must have missed by a hair) or, when
    /// there are none, among the search's `history`: the candidates faster than the baseline by
    /// more than `noise`; `None` when any finalist failed otherwise or none was faster.
    pub fn find(
        finals: &[(Candidate, EvalReport)],
        history: &[(Candidate, EvalReport)],
        noise: f64,
    ) -> Option<NearMiss> {
        let pool = if finals.is_empty() { history } else { finals };
        if !finals.is_empty() && !finals.iter().all(|(_, r)| r.near_miss().is_some()) {
            return None;
        }
        let searched = |id: &str| {
            history
                .iter()
                .filter(|(c, _)| c.id == id)
                .filter_map(|(_, r)| r.timed_speedup())
                .reduce(f64::max)
        };
        let mut candidates: Vec<NearCandidate> = Vec::new();
        let mut worst: Option<&ToleranceMiss> = None;
        let mut needed: f64 = 0.0;
        for (c, r) in pool {
            let Some(miss) = r.near_miss() else { continue };
            let Some(speedup) = r.timed_speedup().or_else(|| searched(&c.id)) else {
                continue;
            };
            if !verdict::beats(speedup, noise) || candidates.iter().any(|k| k.id == c.id) {
                continue;
            }
            candidates.push(NearCandidate {
                id: c.id.clone(),
                origin: c.origin.clone(),
                speedup,
            });
            needed = needed.max(miss.needed);
            if worst.is_none_or(|w| miss.needed > w.needed) {
                worst = Some(miss);
            }
        }
        let worst = worst?.clone();
        candidates.sort_by(|a, b| b.speedup.total_cmp(&a.speedup));
        Some(NearMiss {
            candidates,
            tolerance: worst.tolerance,
            needed,
            suggested: crate::evaluate::clean_tolerance(needed),
            worst,
        })
    }
}

/// The outcome of acceptance.
#[derive(Debug)]
pub struct Decision {
    /// The accepted candidate and its final report.
    pub tuned: Option<(Candidate, EvalReport)>,
    /// The best candidate that passed the final verification, accepted or not.
    pub best: Option<(Candidate, EvalReport)>,
    /// The margin a speedup had to clear.
    pub noise: f64,
    /// Why.
    pub verdict: Verdict,
    /// The final evaluations, in order.
    pub finals: Vec<(Candidate, EvalReport)>,
    /// Candidates faster than the baseline rejected only by the tolerance, when no candidate was
    /// accepted.
    pub near_miss: Option<NearMiss>,
}

/// A request for `candidate` with `plan`.
pub(crate) fn request(
    job: &Job<'_>,
    candidate: Candidate,
    plan: EvalPlan,
    deadline_s: Option<f64>,
) -> EvalRequest {
    EvalRequest {
        kernel: job.kernel.clone(),
        candidate,
        plan,
        ceilings: job.ceilings.cloned(),
        deadline_s,
    }
}

/// Measures the baseline against itself with the final plan: it must be deterministic and
/// judgeable here, and this measures the timing noise.
pub fn measure_baseline(
    job: &Job<'_>,
    evaluator: &mut dyn Evaluator,
) -> Result<EvalReport, SearchError> {
    let deadline = job.config.timeout.map_or(600.0, |t| t.max(60.0));
    let report = evaluator.evaluate(&request(
        job,
        Candidate::baseline(job.kernel),
        final_plan(job.kernel, job.config.samples, job.config.seed),
        Some(deadline),
    ));
    if let Some(fault) = evaluator.fault() {
        return Err(SearchError::Evaluator(fault));
    }
    if !report.is_correct() {
        let failure = report
            .failure
            .clone()
            .expect("a failed report has a failure");
        let diagnosis = match failure.reason {
            Reason::Crash => naga_panic_diagnosis(&job.kernel.baseline.wgsl),
            _ => None,
        };
        return Err(SearchError::Baseline {
            reason: failure.reason.to_string(),
            log: failure.log,
            diagnosis,
        });
    }
    Ok(report)
}

/// Why a baseline that crashed its worker did so, when it is valid WGSL that naga's
/// pipeline-creation passes panic on ([`kf_runtime::resolve::naga_panics`]): the construct, the
/// app's fate, the workaround and the upstream reference. The tool never rewrites the baseline.
fn naga_panic_diagnosis(wgsl: &str) -> Option<String> {
    let module = naga::front::wgsl::parse_str(wgsl).ok()?;
    let found = kf_runtime::resolve::naga_panics::pipeline_creation_panics(&module, wgsl);
    let first = found.first()?;
    let constructs: Vec<&str> = found.iter().map(|p| p.construct.as_str()).collect();
    Some(format!(
        "naga panics on valid WGSL here: {} makes its pipeline-constant pass reach `unreachable!()` \
         when the pipeline is created, so your app would crash the same way when it creates this \
         kernel's pipeline with wgpu (any backend but the browser's); workaround: {} (see {}); \
         KernelFoundry does not rewrite your kernel",
        constructs.join(" and "),
        first.workaround,
        first.upstream
    ))
}

/// Verifies the best of `ranking` (with their search reports in `history`) with the final plan,
/// in order, until one passes; accepts it if it beats the baseline by more than the noise.
pub fn accept(
    job: &Job<'_>,
    evaluator: &mut dyn Evaluator,
    baseline: &EvalReport,
    ranking: &[Candidate],
    history: &[(Candidate, EvalReport)],
    mut on_report: impl FnMut(&Candidate, &EvalReport),
) -> Decision {
    let config = job.config;
    let deadline = config.candidate_deadline(baseline);
    let mut finals = Vec::new();
    let mut best = None;
    for c in ranking.iter().take(FINALISTS) {
        if evaluator.fault().is_some() {
            break;
        }
        let report = evaluator.evaluate(&request(
            job,
            c.clone(),
            final_plan(job.kernel, config.final_samples, config.seed ^ 0xF1A1),
            Some(deadline),
        ));
        on_report(c, &report);
        finals.push((c.clone(), report.clone()));
        if report.is_correct() {
            best = Some((c.clone(), report));
            break;
        }
    }
    let noise = verdict::margin(
        best.as_ref()
            .and_then(|(_, r)| r.noise)
            .into_iter()
            .chain(baseline.noise),
    );
    let verdict = match &best {
        None if ranking.is_empty() => Verdict::NoCorrectCandidate,
        None => Verdict::FinalVerificationFailed {
            failures: finals
                .iter()
                .map(|(c, r)| {
                    let f = r.failure.as_ref();
                    (
                        c.id.clone(),
                        f.map(|f| format!("{}: {}", f.reason, f.log))
                            .unwrap_or_default(),
                    )
                })
                .collect(),
        },
        Some((c, r)) => {
            let speedup = r.fitness.speedup.unwrap_or(1.0);
            if verdict::beats(speedup, noise) {
                Verdict::Tuned {
                    speedup,
                    margin: noise,
                }
            } else {
                Verdict::WithinNoise {
                    speedup,
                    margin: noise,
                    search_speedup: history
                        .iter()
                        .filter(|(h, _)| h.id == c.id)
                        .filter_map(|(_, r)| r.fitness.speedup)
                        .reduce(f64::max),
                }
            }
        }
    };
    let tuned = matches!(verdict, Verdict::Tuned { .. })
        .then(|| best.clone())
        .flatten();
    let near_miss = match &verdict {
        Verdict::Tuned { .. } => None,
        Verdict::FinalVerificationFailed { .. } => NearMiss::find(&finals, history, noise),
        Verdict::NoCorrectCandidate | Verdict::WithinNoise { .. } => {
            NearMiss::find(&[], history, noise)
        }
    };
    Decision {
        tuned,
        best,
        noise,
        verdict,
        finals,
        near_miss,
    }
}

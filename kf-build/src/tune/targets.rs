//! A whole tune, as `cargo kernelfoundry tune` asks for it: one *target* per adapter the session
//! opened (a local worker, a `--worker-cmd` worker, or each adapter key behind a broker), each with
//! its ceilings, run directory and results, tuned one after another or, with several adapter keys,
//! in parallel threads (each target's workers are busy with its own batches).
//!
//! The command line parses arguments into a [`Request`] and prints the [`Outcome`]; the only
//! output here is the progress bars on stderr (hidden with `quiet`) and the notices passed to
//! `say`.
//!
//! Invariant: a run stopped by a fault of its evaluator stays unfinished, so `--resume` continues
//! it; every other run is marked finished.

use super::{KernelResult, Options, tune_kernel, with_tune_shapes};
use crate::cache::run::{Run, RunOptions};
use crate::discover::{Found, Workspace};
use crate::evaluate::{AdapterReport, Ceilings};
use crate::gpu::AdapterSelector;
use crate::search::{Config, Event, StrategyKind};
use crate::session::{Backend, FleetOptions, SessionError};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// What to tune, and where.
pub struct Request {
    /// The search settings and the tune's own options (`llm` is opened here from `llm`).
    pub options: Options,
    /// The kernel names `--kernel` selected (empty: all), recorded in the run.
    pub kernels: Vec<String>,
    /// The LLM configuration, when the tune asks an LLM too.
    pub llm: Option<crate::llm::LlmConfig>,
    /// LLM answers only from the response cache.
    pub llm_replay_only: bool,
    /// Show the first LLM prompt and tune nothing.
    pub dry_run: bool,
    /// Where evaluations run.
    pub fleet: FleetOptions,
    /// The local adapter.
    pub adapter: AdapterSelector,
    /// The run to continue (`--resume`).
    pub resumed: Option<Run>,
    /// No progress and no notices (`--json`).
    pub quiet: bool,
}

/// Why a tune cannot start.
#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    /// `--operators` names something that is not an operator.
    #[error("--operators names `{name}`, which is not an operator; they are {}", .known.join(", "))]
    UnknownOperator {
        /// The name.
        name: String,
        /// The operators.
        known: Vec<String>,
    },
    /// `--dry-run` without an LLM.
    #[error("--dry-run shows the first LLM prompt; it needs --llm")]
    DryRunWithoutLlm,
    /// The LLM with a strategy that only searches parameters.
    #[error(
        "--llm needs an evolution strategy (--strategy qd, greedy or random); `{}` only searches template parameters",
        .0.as_str()
    )]
    LlmWithoutEvolution(StrategyKind),
    /// The backends could not be opened.
    #[error("cannot start tuning")]
    Session(#[from] SessionError),
    /// No kernel resolves, so there is no prompt to show.
    #[error("no kernel of the selection resolves, so there is no prompt to show")]
    NothingToShow,
    /// `--tune-shape` does not fit the kernel whose prompt is shown.
    #[error("{0}")]
    Shapes(String),
    /// The LLM session could not be opened.
    #[error("{0}")]
    Llm(String),
    /// A run directory could not be created.
    #[error("cannot create a run directory under {}", .dir.display())]
    RunDir {
        /// The target directory.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl Request {
    /// Checks the options that do not need a GPU: the operator names and the LLM's strategy.
    pub fn check(&self) -> Result<(), TuneError> {
        if let Some(names) = &self.options.search.operators {
            let known: Vec<String> = crate::operators::all()
                .iter()
                .map(|o| o.name().to_owned())
                .collect();
            if let Some(bad) = names.iter().find(|n| !known.contains(n)) {
                return Err(TuneError::UnknownOperator {
                    name: bad.clone(),
                    known,
                });
            }
        }
        if self.dry_run && self.llm.is_none() {
            return Err(TuneError::DryRunWithoutLlm);
        }
        let strategy = self.options.search.strategy;
        if self.llm.is_some() && matches!(strategy, StrategyKind::Exhaustive | StrategyKind::Auto) {
            return Err(TuneError::LlmWithoutEvolution(strategy));
        }
        Ok(())
    }
}

/// What a tune came to.
pub enum Outcome {
    /// No worker serves an adapter key asked of the broker (the message names it).
    Unserved(String),
    /// `--dry-run`: the first LLM request, as it would be sent.
    DryRun(String),
    /// Every target with its results.
    Tuned(Tuned),
}

/// A tune that ran: every target with its results.
pub struct Tuned {
    /// The targets.
    pub targets: Vec<Target>,
    /// The LLM session, when one was used.
    pub llm: Option<Arc<crate::llm::Session>>,
}

/// One adapter to tune for, and what came of it.
pub struct Target {
    /// Where its evaluations run.
    pub backend: Backend,
    /// The adapter.
    pub adapter: AdapterReport,
    /// Its ceilings, stored or measured.
    pub ceilings: Option<Ceilings>,
    /// Children per island and generation.
    pub width: usize,
    /// Its run directory.
    pub run: Option<Run>,
    /// One result per kernel tuned.
    pub results: Vec<KernelResult>,
    /// Why its evaluator stopped, when it did.
    pub fault: Option<String>,
}

/// Mesa's CPU driver stops counting an invocation's loop iterations at 65 535, for all its loops
/// together, and then leaves them (measured with Mesa 22.3's lavapipe: one loop of 70 000
/// iterations ran 65 535; a loop of 60 000 left 5 535 to the next). What loops longer computes
/// wrong values there, the kernel as written included, so the user hears it before a tune whose
/// baseline may be wrong.
const LLVMPIPE_LOOPS: &str = "note: llvmpipe stops the loops of one invocation after 65 535 \
     iterations in all; a kernel that loops longer per invocation computes wrong values on this \
     adapter, as written too (keep tune shapes small here)";

/// Runs a tune: opens the backends, the targets, the LLM session and the run directories, and
/// tunes every kernel of `found` on every target.
pub fn tune(
    ws: &Workspace,
    found: &[Found],
    mut request: Request,
    mut say: impl FnMut(String),
) -> Result<Outcome, TuneError> {
    request.check()?;
    let timeout = request
        .options
        .search
        .timeout
        .map_or(Duration::from_secs(600), Duration::from_secs_f64);
    let backends = match crate::session::open(&request.fleet, request.adapter.clone(), timeout)? {
        Ok(b) => b,
        Err(unserved) => return Ok(Outcome::Unserved(unserved)),
    };
    let islands = crate::evolve::ArchiveConfig::default().islands.max(1);
    let mut targets = Vec::new();
    for mut backend in backends {
        let adapter = backend.evaluator().adapter().clone();
        let workers = backend.evaluator().parallelism();
        say(format!(
            "tuning on [{}] {} (key {}){}",
            adapter.index,
            adapter.identity.describe(),
            adapter.key,
            backend.describe()
        ));
        if adapter.identity.name.contains("llvmpipe") {
            say(LLVMPIPE_LOOPS.to_owned());
        }
        let ceilings = super::ceilings(backend.evaluator(), Some(&ws.root), |name| {
            say(format!("measuring copy bandwidth and FMA rate of {name} …"));
        });
        let width = match &request.resumed {
            Some(run) => run.record.options.search.width,
            None => workers.div_ceil(islands).clamp(1, 8),
        };
        targets.push(Target {
            backend,
            adapter,
            ceilings,
            width,
            run: None,
            results: Vec::new(),
            fault: None,
        });
    }
    if let Some(config) = &request.llm
        && request.dry_run
    {
        let target = &targets[0];
        let kernel = found
            .iter()
            .find_map(|f| f.resolved.as_ref().ok())
            .ok_or(TuneError::NothingToShow)?;
        let kernel =
            with_tune_shapes(kernel, &request.options.tune_shapes).map_err(TuneError::Shapes)?;
        return Ok(Outcome::DryRun(super::llm::dry_run(
            config,
            &kernel,
            &target.adapter,
            target.ceilings.as_ref(),
        )));
    }
    let llm = match request.llm.take() {
        Some(config) => {
            let (session, note) = super::llm::open(config, ws).map_err(TuneError::Llm)?;
            say(note);
            Some(Arc::new(session))
        }
        None => None,
    };
    let options = Options {
        llm: llm.clone(),
        ..request.options.clone()
    };
    // Run directories are created one after another: their names come from the clock.
    for target in &mut targets {
        let run = match request.resumed.take() {
            Some(r) => r,
            None => Run::create(
                &ws.target_dir,
                &target.adapter.key.to_string(),
                RunOptions {
                    search: Config {
                        width: target.width,
                        ..options.search.clone()
                    },
                    tune_shapes: options.tune_shapes.clone(),
                    force: options.force,
                    kernels: request.kernels.clone(),
                    llm: options.llm.is_some(),
                    llm_replay_only: request.llm_replay_only,
                },
            )
            .map_err(|source| TuneError::RunDir {
                dir: ws.target_dir.clone(),
                source,
            })?,
        };
        target.run = Some(run);
    }
    let bars = MultiProgress::with_draw_target(if request.quiet {
        ProgressDrawTarget::hidden()
    } else {
        ProgressDrawTarget::stderr()
    });
    let view = TargetView {
        found,
        options: &options,
        bars: &bars,
        several: targets.len() > 1,
        root: &ws.root,
    };
    if view.several {
        // One archive per adapter key, searched at the same time: each target's workers are
        // busy with its own batches.
        std::thread::scope(|scope| {
            for target in &mut targets {
                let view = &view;
                scope.spawn(move || tune_target(target, view));
            }
        });
    } else {
        for target in &mut targets {
            tune_target(target, &view);
        }
    }
    Ok(Outcome::Tuned(Tuned { targets, llm }))
}

/// What every target's tune shares.
struct TargetView<'a> {
    found: &'a [Found],
    options: &'a Options,
    bars: &'a MultiProgress,
    several: bool,
    root: &'a Path,
}

/// Tunes every kernel for one target; stops at the first kernel whose evaluator reports a fault.
fn tune_target(target: &mut Target, view: &TargetView<'_>) {
    let options = Options {
        search: Config {
            width: target.width,
            ..view.options.search.clone()
        },
        ..view.options.clone()
    };
    let run = target.run.as_mut().expect("every target has a run");
    for f in view.found {
        let label = if view.several {
            format!("{}@{}", f.name, &target.adapter.key.as_str()[..6])
        } else {
            f.name.clone()
        };
        let bar = view
            .bars
            .add(progress_bar(&label, view.options.search.budget));
        let mut best = 0.0f64;
        let mut cells = 0usize;
        let started = std::time::Instant::now();
        let mut done = 0u64;
        let result = tune_kernel(
            f,
            target.backend.evaluator(),
            target.ceilings.as_ref(),
            &options,
            Some(run),
            |event| match event {
                Event::Baseline(_) => bar.set_message("searching"),
                Event::Evaluated(_, report) => {
                    bar.inc(1);
                    done += 1;
                    if let Some(s) = report.fitness.speedup {
                        best = best.max(s);
                    }
                    let elapsed = started.elapsed().as_secs_f64();
                    let rate = done as f64 / elapsed.max(1e-3);
                    let clock = view
                        .options
                        .search
                        .time_s
                        .map(|t| format!(", {elapsed:.0}/{t:.0} s"))
                        .unwrap_or_default();
                    bar.set_message(format!(
                        "best {best:.2}x, {cells} cells, {rate:.1} eval/s{clock}"
                    ));
                }
                Event::Checkpoint(state) => {
                    if let Some(n) = state
                        .pointer("/stats/cells_filled")
                        .and_then(serde_json::Value::as_u64)
                    {
                        cells = n as usize;
                    }
                }
                Event::Final(_, _) => {
                    bar.set_length(bar.position());
                    bar.set_message(format!("best {best:.2}x, final verification"));
                }
            },
        );
        bar.finish_and_clear();
        view.bars.remove(&bar);
        target.results.push(result);
        if let Some(fault) = target.backend.evaluator().fault() {
            target.fault = Some(fault);
            break;
        }
    }
    crate::cache::store::remember_ceilings(view.root, target.backend.measured());
    // A run stopped by a fault stays unfinished, so `--resume` continues it.
    if target.fault.is_none()
        && let Err(e) = run.finish()
    {
        log::warn!("could not mark the run {} finished: {e}", run.dir.display());
    }
}

fn progress_bar(name: &str, budget: u64) -> ProgressBar {
    let bar = ProgressBar::new(budget);
    bar.set_style(
        ProgressStyle::with_template("{prefix:>12} [{bar:24}] {pos}/{len} {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_prefix(name.to_owned());
    bar.set_message("measuring the baseline");
    bar
}

/// The adapter of a `tune --json` report.
#[derive(Serialize)]
pub struct AdapterOut {
    name: String,
    backend: String,
    key: String,
}

/// A kernel of a `tune --json` report, with its candidates when verbose.
#[derive(Serialize)]
pub struct KernelOut<'a> {
    #[serde(flatten)]
    result: &'a KernelResult,
    #[serde(skip_serializing_if = "Option::is_none")]
    candidates: Option<&'a [super::CandidateLine]>,
}

/// One target's `tune --json` report.
#[derive(Serialize)]
pub struct Report<'a> {
    adapter: AdapterOut,
    kernels: Vec<KernelOut<'a>>,
}

/// The `tune --json` report: one target's, or with several adapter keys `{"targets": [..]}`.
#[derive(Serialize)]
#[serde(untagged)]
pub enum Json<'a> {
    /// One target.
    One(Report<'a>),
    /// Several.
    Several {
        /// One report per target.
        targets: Vec<Report<'a>>,
    },
}

impl Tuned {
    /// The `--json` report; `verbose` lists every candidate. `None` when nothing was tuned.
    pub fn json(&self, verbose: bool) -> Option<Json<'_>> {
        let mut reports: Vec<Report<'_>> = self
            .targets
            .iter()
            .map(|t| Report {
                adapter: AdapterOut {
                    name: t.adapter.identity.name.clone(),
                    backend: t.adapter.identity.backend.clone(),
                    key: t.adapter.key.to_string(),
                },
                kernels: t
                    .results
                    .iter()
                    .map(|r| KernelOut {
                        result: r,
                        candidates: verbose.then_some(r.candidates.as_slice()),
                    })
                    .collect(),
            })
            .collect();
        match reports.len() {
            0 => None,
            1 => reports.pop().map(Json::One),
            _ => Some(Json::Several { targets: reports }),
        }
    }

    /// What `tune` prints without `--json`: each target's kernels (under the adapter's name when
    /// there are several).
    pub fn text(&self, verbose: bool) -> String {
        let mut out = String::new();
        for t in &self.targets {
            if self.targets.len() > 1 {
                outln!(
                    out,
                    "{} (key {}):",
                    t.adapter.identity.describe(),
                    t.adapter.key
                );
            }
            for k in &t.results {
                out.push_str(&k.text(verbose));
            }
        }
        out
    }

    /// What the user should hear afterwards: each backend's notes and an LLM switched off.
    pub fn notes(&self) -> Vec<String> {
        let mut notes: Vec<String> = self
            .targets
            .iter()
            .flat_map(|t| t.backend.notes())
            .collect();
        if let Some(why) = self.llm.as_ref().and_then(|s| s.disabled()) {
            notes.push(format!("the LLM was switched off during the run: {why}"));
        }
        notes
    }

    /// Why evaluators stopped: a target whose workers went away ends the tune with exit code 3.
    pub fn faults(&self) -> Vec<&str> {
        self.targets
            .iter()
            .filter_map(|t| t.fault.as_deref())
            .collect()
    }

    /// Whether a kernel failed to tune.
    pub fn failed(&self) -> bool {
        self.targets
            .iter()
            .flat_map(|t| &t.results)
            .any(|k| k.status == super::Status::Failed)
    }
}

//! The tune pipeline: for each discovered kernel, the cache check, the search, the cache entry and
//! its write, returned as typed results.
//!
//! The command line only parses arguments and prints what this returns; `bench`, `report`, the
//! evolution engine and remote evaluation call the same functions. Nothing here prints: progress
//! goes through a callback, results come back as [`KernelResult`]s.
//!
//! Invariant: an entry is written only for a search that ran to its decision on this adapter;
//! a kernel that cannot be searched is a [`Status::Failed`] result, never a panic or a partial file.

use crate::cache::run::Run;
use crate::discover::Found;
use crate::evaluate::{Ceilings, EvalReport, Evaluator, Roofline};
use crate::search::journal::Journal;
use crate::search::{self, Config, Event, Outcome, StrategyKind, Verdict};
use kf_runtime::cache::{
    AdapterRecord, CacheEntry, FORMAT_VERSION, KernelRecord, Outcome as CacheOutcome, SearchRecord,
    ShapeTiming, VariantRecord, VerificationRecord,
};
use kf_runtime::resolve::ResolvedKernel;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

pub mod llm;
pub mod targets;
#[cfg(test)]
mod tests;
mod text;

/// What the user asked of a tune.
#[derive(Clone, Debug)]
pub struct Options {
    /// The search settings of every kernel (budget, strategy, seed, time, gradients, timeout,
    /// operators, width): the one object the run records and `--resume` reads back.
    pub search: Config,
    /// Retune kernels that already have a cache entry for this adapter.
    pub force: bool,
    /// Tune shapes replacing the attribute's for this run (`rows=4096,cols=4096`), each for every
    /// kernel, or for one kernel when qualified (`GEMM:m=512,n=512,k=512`); see
    /// [`with_tune_shapes`]. The command line checks qualifiers with [`check_shape_kernels`]; a
    /// qualifier naming no kernel is ignored here.
    pub tune_shapes: Vec<String>,
    /// The LLM session, when the evolution strategies should ask an LLM for children too.
    pub llm: Option<std::sync::Arc<crate::llm::Session>>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            search: Config {
                strategy: StrategyKind::Qd,
                ..Config::default()
            },
            force: false,
            tune_shapes: Vec::new(),
            llm: None,
        }
    }
}

/// One `--tune-shape` value, `[KERNEL:]name=value,…`, split into its kernel qualifier and sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShapeArg<'a> {
    /// The static's name before the `:`, when the shape is for one kernel only.
    pub kernel: Option<&'a str>,
    /// The `name=value,…` list (may be empty: every size at its default).
    pub sizes: &'a str,
}

impl<'a> ShapeArg<'a> {
    /// Splits `text` at its first `:`; what precedes it must be a kernel name (an identifier).
    pub fn parse(text: &'a str) -> Result<Self, String> {
        let Some((head, sizes)) = text.split_once(':') else {
            return Ok(ShapeArg {
                kernel: None,
                sizes: text,
            });
        };
        let head = head.trim();
        let identifier = head
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && head.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !identifier {
            return Err(format!(
                "`{text}` in --tune-shape: `{head}` before `:` is not a kernel name (use `KERNEL:name=value,…` or `name=value,…`)"
            ));
        }
        Ok(ShapeArg {
            kernel: Some(head),
            sizes,
        })
    }
}

/// The shapes of `shapes` (each `[KERNEL:]name=value,…`) that apply to kernel `name`, in order:
/// every unqualified one and every one qualified with `name`. Empty: the kernel keeps the
/// attribute's tune shapes.
pub fn shapes_for<'a>(shapes: &'a [String], name: &str) -> Result<Vec<&'a str>, String> {
    let mut out = Vec::new();
    for text in shapes {
        let arg = ShapeArg::parse(text)?;
        if arg.kernel.is_none_or(|k| k == name) {
            out.push(arg.sizes);
        }
    }
    Ok(out)
}

/// Checks that every `--tune-shape` parses and that every kernel qualifier names one of
/// `selected` (the kernels the command runs on). `found` is every kernel of the workspace, to tell
/// a typo from a kernel the selection leaves out.
pub fn check_shape_kernels(
    shapes: &[String],
    selected: &[&str],
    found: &[&str],
) -> Result<(), String> {
    for text in shapes {
        let Some(kernel) = ShapeArg::parse(text)?.kernel else {
            continue;
        };
        if selected.contains(&kernel) {
            continue;
        }
        let why = if found.contains(&kernel) {
            "which the kernel selection leaves out"
        } else {
            "which is not a kernel of the selection"
        };
        return Err(format!(
            "--tune-shape `{text}` names kernel `{kernel}`, {why}; the selected kernels are {}",
            selected.join(", ")
        ));
    }
    Ok(())
}

/// Replaces `kernel`'s tune shapes with those of `shapes` that apply to it ([`shapes_for`]: the
/// unqualified ones and those qualified with its name; each `name=value,…`, unnamed sizes keep
/// their defaults). No shape applying: the kernel is returned unchanged. Verification shapes
/// derived from the old tune shapes are derived anew; explicit ones are kept. Every binding length
/// and the launch rule must evaluate on the new shapes.
pub fn with_tune_shapes(
    kernel: &ResolvedKernel,
    shapes: &[String],
) -> Result<ResolvedKernel, String> {
    let shapes = shapes_for(shapes, &kernel.name)?;
    if shapes.is_empty() {
        return Ok(kernel.clone());
    }
    let declared: Vec<&str> = kernel.sizes.iter().map(|(n, _)| n.as_str()).collect();
    let mut parsed = Vec::new();
    for text in &shapes {
        let mut shape: kf_runtime::spec::Shape = kernel.sizes.iter().cloned().collect();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, value) = part
                .split_once('=')
                .ok_or_else(|| format!("`{part}` in --tune-shape is not `name=value`"))?;
            let name = name.trim();
            if !declared.contains(&name) {
                return Err(format!(
                    "--tune-shape names size `{name}`, which kernel {} does not declare; its sizes are {}",
                    kernel.name,
                    declared.join(", ")
                ));
            }
            let value: u64 = value
                .trim()
                .parse()
                .map_err(|_| format!("`{value}` in --tune-shape is not a whole number"))?;
            shape.insert(name.to_owned(), value);
        }
        parsed.push(shape);
    }
    let mut k = kernel.clone();
    let constraints = kernel.size_constraints();
    let derive =
        |s: &kf_runtime::spec::Shape| kf_runtime::resolve::derive_verify_shape(s, &constraints);
    let derived: Vec<_> = kernel.tune_shapes.iter().map(derive).collect();
    if kernel.verify_shapes == derived {
        k.verify_shapes = parsed.iter().map(derive).collect();
    }
    k.tune_shapes = parsed;
    for shape in k.tune_shapes.iter().chain(&k.verify_shapes) {
        let text = kf_runtime::resolve::shape_text(shape);
        for b in &k.buffers {
            match b.len_on(shape) {
                Ok(0) if b.len.is_some() => {
                    return Err(format!(
                        "binding `{}` has length 0 on shape {text}",
                        b.binding.name
                    ));
                }
                Err(e) => return Err(format!("{e} on shape {text}")),
                Ok(_) => {}
            }
        }
        k.baseline
            .workgroups(|n| shape.get(n).copied(), u32::MAX)
            .map_err(|e| format!("{e} on shape {text}"))?;
    }
    Ok(k)
}

/// How tuning one kernel ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// A variant beat the baseline and was written to the cache.
    Tuned,
    /// A usable entry for this kernel and adapter was already there.
    Cached,
    /// Nothing beat the baseline; an entry saying so was written.
    BaselineBest,
    /// The kernel could not be tuned (its spec, its baseline, or the cache write failed).
    Failed,
}

impl Status {
    /// `tuned`, `cached`, `baseline-best`, `failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Tuned => "tuned",
            Status::Cached => "cached",
            Status::BaselineBest => "baseline-best",
            Status::Failed => "failed",
        }
    }
}

/// One evaluated candidate, for `--verbose`.
#[derive(Clone, Debug, Serialize)]
pub struct CandidateLine {
    /// The candidate's id.
    pub id: String,
    /// How it was produced.
    pub origin: String,
    /// `search` or `final`.
    pub phase: &'static str,
    /// Ladder level.
    pub level: u8,
    /// Speedup, for correct candidates.
    pub speedup: Option<f64>,
    /// Why it failed, for failed ones.
    pub reason: Option<String>,
}

/// The result of tuning one kernel.
#[derive(Clone, Debug, Serialize)]
pub struct KernelResult {
    /// The static's name.
    pub name: String,
    /// Its package.
    pub package: String,
    /// The kernel's content hash, when its spec resolved.
    pub content_hash: Option<String>,
    /// How it ended.
    pub status: Status,
    /// Baseline time summed over the tune shapes, ns.
    pub baseline_ns: Option<f64>,
    /// The chosen program's time summed over the tune shapes, ns.
    pub best_ns: Option<f64>,
    /// Speedup of the chosen program over the baseline.
    pub speedup: Option<f64>,
    /// Search evaluations spent.
    pub evaluations: u64,
    /// The shapes it was tuned on (`(rows = 64, cols = 256)`; the attribute's or `--tune-shape`'s).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tune_shapes: Vec<String>,
    /// The cache file written or found.
    pub cache_file: Option<String>,
    /// Why it failed.
    pub error: Option<String>,
    /// The chosen variant's id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// Where the chosen program sits against the adapter's measured ceilings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub roofline: Option<Roofline>,
    /// Rejected candidates by reason (e.g. `{"timeout": 2, "wrong-values": 1}`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub rejected: BTreeMap<String, u64>,
    /// Why the search ended where it did (absent for cached and failed kernels).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// Candidates faster than the baseline rejected only because their outputs missed the
    /// tolerance by a hair, and the tolerance that would have accepted them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub near_miss: Option<crate::search::NearMiss>,
    /// The search strategy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strategy: Option<String>,
    /// Its seed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Archive cells filled (quality-diversity strategies).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cells_filled: Option<usize>,
    /// The behaviour descriptor of the tuned variant (`memory.compute.parallelism.work` levels).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub descriptor: Option<String>,
    /// The operator chain that made the tuned variant, e.g. `coarsen(4) → param(WG=256)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// Search evaluations per second of wall time (replayed ones included).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evaluations_per_s: Option<f64>,
    /// Per operator (`llm` included): candidates produced, correct, improving an elite.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub operators: BTreeMap<String, crate::search::qd::OperatorStats>,
    /// What the LLM did and cost (with `--llm`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llm: Option<crate::llm::LlmReport>,
    /// Every evaluated candidate with its verdict (kept for `--verbose`).
    #[serde(skip)]
    pub candidates: Vec<CandidateLine>,
    /// What the user should know: a stale or broken entry replaced, a check that could not run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl KernelResult {
    fn new(f: &Found) -> Self {
        KernelResult {
            name: f.name.clone(),
            package: f.package.clone(),
            content_hash: None,
            status: Status::Failed,
            baseline_ns: None,
            best_ns: None,
            speedup: None,
            evaluations: 0,
            tune_shapes: Vec::new(),
            cache_file: None,
            error: None,
            variant: None,
            roofline: None,
            rejected: BTreeMap::new(),
            verdict: None,
            near_miss: None,
            strategy: None,
            seed: None,
            cells_filled: None,
            descriptor: None,
            origin: None,
            evaluations_per_s: None,
            operators: BTreeMap::new(),
            llm: None,
            candidates: Vec::new(),
            notes: Vec::new(),
        }
    }

    fn failed(mut self, error: impl Into<String>) -> Self {
        self.status = Status::Failed;
        self.error = Some(error.into());
        self
    }
}

/// Reads stored ceilings for the evaluator's adapter, or measures and stores them. `notify` is
/// called before a measurement (it takes a while).
pub fn ceilings(
    evaluator: &mut dyn Evaluator,
    workspace_root: Option<&Path>,
    notify: impl FnOnce(&str),
) -> Option<Ceilings> {
    let key = evaluator.adapter().key.clone();
    if let Some(c) = workspace_root.and_then(|r| crate::cache::store::read_ceilings(r, &key)) {
        return Some(c);
    }
    notify(&evaluator.adapter().identity.name);
    match evaluator.probe() {
        Ok(c) => {
            if let Some(root) = workspace_root
                && let Err(e) = crate::cache::store::write_ceilings(root, &c)
            {
                log::warn!("could not store the adapter's ceilings: {e}");
            }
            Some(c)
        }
        Err(e) => {
            log::warn!("could not measure the adapter's ceilings (the roofline cap is off): {e}");
            None
        }
    }
}

/// Tunes one kernel: the cache check, the search, the entry. `progress` sees every evaluation.
/// With a `run`, every evaluation goes to the kernel's journal there (and is answered from it
/// when the run is resumed), and the strategy's state is checkpointed after each one.
pub fn tune_kernel(
    f: &Found,
    evaluator: &mut dyn Evaluator,
    ceilings: Option<&Ceilings>,
    options: &Options,
    run: Option<&Run>,
    mut progress: impl FnMut(Event<'_>),
) -> KernelResult {
    let mut out = KernelResult::new(f);
    let kernel = match &f.resolved {
        Ok(k) => k,
        Err(e) => return out.failed(e.clone()),
    };
    let tuned_kernel = match with_tune_shapes(kernel, &options.tune_shapes) {
        Ok(k) => k,
        Err(e) => return out.failed(e),
    };
    let kernel = &tuned_kernel;
    out.content_hash = Some(kernel.content_hash.clone());
    out.tune_shapes = kernel
        .tune_shapes
        .iter()
        .map(kf_runtime::resolve::shape_text)
        .collect();
    let key = evaluator.adapter().key.clone();
    // A stale entry (tuned with other settings) is searched again, a broken one replaced.
    let state =
        crate::cache::store::entry_state(&f.crate_root, kernel, &key, Some(&options.search));
    out.notes.extend(state.retune_note());
    if !options.force
        && let crate::cache::store::EntryState::Fresh { path, entry } = state
    {
        out.status = Status::Cached;
        out.baseline_ns = Some(entry.timings.iter().map(|t| t.baseline_ns).sum());
        out.best_ns = Some(entry.timings.iter().map(|t| t.variant_ns).sum());
        out.speedup = Some(entry.speedup);
        out.variant = entry.variant.map(|v| v.id);
        out.cache_file = Some(path.display().to_string());
        return out;
    }
    let config = &options.search;
    let started = std::time::Instant::now();
    let kernel_dir = run.map(|r| r.kernel_dir(&f.name, &kernel.content_hash));
    let mut journal;
    let evaluator: &mut dyn Evaluator = match &kernel_dir {
        Some(dir) => match Journal::open(evaluator, &dir.join("journal.jsonl")) {
            Ok(j) => {
                journal = j;
                &mut journal
            }
            Err(e) => {
                return out.failed(format!(
                    "cannot open the run journal in {}: {e}",
                    dir.display()
                ));
            }
        },
        None => evaluator,
    };
    let checkpoint = kernel_dir.as_ref().map(|d| d.join("archive.json"));
    let llm_report = std::sync::Arc::new(std::sync::Mutex::new(crate::llm::LlmReport::default()));
    let proposer: Option<Box<dyn search::qd::Proposer>> = options.llm.as_ref().map(|session| {
        Box::new(crate::llm::LlmProposer::new(
            session.clone(),
            kernel,
            evaluator.adapter(),
            ceilings,
            kernel_dir.clone(),
            llm_report.clone(),
        )) as Box<dyn search::qd::Proposer>
    });
    let mut operators = BTreeMap::new();
    let result = search::search_with(kernel, evaluator, ceilings, config, proposer, |event| {
        if let Event::Checkpoint(state) = &event
            && let Some(ops) = state.get("operators")
            && let Ok(ops) = serde_json::from_value(ops.clone())
        {
            operators = ops;
        }
        if let (Event::Checkpoint(state), Some(path)) = (&event, &checkpoint) {
            let text = serde_json::to_string(state).expect("strategy state serializes");
            if let Err(e) = crate::cache::store::write_atomic(path, &text) {
                log::warn!(
                    "could not checkpoint the archive to {}: {e}",
                    path.display()
                );
            }
        }
        progress(event)
    });
    let outcome = match result {
        Ok(o) => o,
        Err(e) => return out.failed(e.to_string()),
    };
    out.operators = operators;
    if options.llm.is_some() {
        let mut report = llm_report.lock().expect("not poisoned").clone();
        if report.disabled.is_none()
            && let Some(why) = options.llm.as_ref().and_then(|s| s.disabled())
        {
            report.disabled = Some(why);
        }
        out.llm = Some(report);
    }
    out.strategy = Some(outcome.strategy.clone());
    out.seed = Some(options.search.seed);
    out.cells_filled = outcome.cells_filled;
    let seconds = started.elapsed().as_secs_f64();
    out.evaluations_per_s = (seconds > 0.0).then(|| outcome.evaluations as f64 / seconds);
    if let Some((c, _)) = &outcome.tuned {
        out.origin = Some(c.origin.clone());
        out.descriptor = crate::evolve::descriptor::describe_program(&c.program)
            .ok()
            .map(|d| d.to_string());
    }
    out.evaluations = outcome.evaluations;
    out.roofline = outcome
        .tuned
        .as_ref()
        .map_or(&outcome.baseline, |(_, r)| r)
        .roofline
        .clone();
    let lines = outcome
        .history
        .iter()
        .map(|h| (h, "search"))
        .chain(outcome.finals.iter().map(|h| (h, "final")));
    for ((c, r), phase) in lines {
        if let Some(f) = &r.failure {
            *out.rejected.entry(f.reason.to_string()).or_default() += 1;
        }
        out.candidates.push(candidate_line(c, r, phase));
    }
    out.verdict = Some(outcome.verdict.clone());
    out.near_miss = outcome.near_miss.clone();
    let entry = entry(
        f,
        kernel,
        evaluator.adapter(),
        &outcome,
        shapes_for(&options.tune_shapes, &f.name).is_ok_and(|s| !s.is_empty()),
    );
    out.notes.extend(crate::evaluate::unseen_shapes_note(
        &kernel.verify_shapes,
        &entry.verification.checks,
    ));
    out.notes.extend(kernel_notes(kernel));
    out.status = match entry.outcome {
        CacheOutcome::Tuned => Status::Tuned,
        CacheOutcome::BaselineBest => Status::BaselineBest,
    };
    out.baseline_ns = Some(entry.timings.iter().map(|t| t.baseline_ns).sum());
    out.best_ns = Some(entry.timings.iter().map(|t| t.variant_ns).sum());
    out.speedup = Some(entry.speedup);
    out.variant = entry.variant.as_ref().map(|v| v.id.clone());
    match crate::cache::store::write_entry(&f.crate_root, &entry) {
        Ok(path) => out.cache_file = Some(path.display().to_string()),
        Err(e) => {
            let root = f.crate_root.display().to_string();
            return out.failed(format!("cannot write the cache entry under {root}: {e}"));
        }
    }
    out
}

/// What `tune` says of the kernel as written whatever the search found: a size constraint that
/// would let an operator in (16-byte accesses; tiling a matmul without bounds guards), and a loop
/// that keeps wgpu's hidden counter.
fn kernel_notes(kernel: &ResolvedKernel) -> Vec<String> {
    [
        crate::operators::widen::constraint_hint(kernel),
        crate::operators::tile::constraint_hint(kernel),
        loop_bound_note(&kernel.baseline),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// When a loop of the kernel as written keeps wgpu's forced loop counter (see
/// `kf_runtime::termination`), a note saying which loop and why, and what would drop it.
fn loop_bound_note(baseline: &kf_runtime::Program) -> Option<String> {
    let why = kf_runtime::termination::prove_program(baseline).err()?;
    Some(format!(
        "a loop of the kernel as written keeps wgpu's hidden iteration counter ({why}); it can \
         cost several times the loop's speed on NVIDIA GPUs. A loop whose one counter moves by a \
         constant every iteration towards a bound tested at its head is built without it"
    ))
}

fn candidate_line(
    c: &crate::evaluate::Candidate,
    r: &EvalReport,
    phase: &'static str,
) -> CandidateLine {
    CandidateLine {
        id: c.id.clone(),
        origin: c.origin.clone(),
        phase,
        level: r.fitness.level,
        speedup: r.fitness.speedup,
        reason: r
            .failure
            .as_ref()
            .map(|f| format!("{}: {}", f.reason, f.log.lines().next().unwrap_or(""))),
    }
}

/// The cache entry recording `outcome`.
pub fn entry(
    f: &Found,
    kernel: &ResolvedKernel,
    adapter: &crate::evaluate::AdapterReport,
    outcome: &Outcome,
    shapes_given: bool,
) -> CacheEntry {
    let (report, variant, result) = match &outcome.tuned {
        Some((candidate, report)) => {
            let mut program = candidate.program.clone();
            if let Some(wg) = report.workgroup_size {
                program.workgroup_size = wg;
            }
            program.workgroup_storage_bytes = report.workgroup_storage_bytes.unwrap_or(0);
            // The later stages of a sequence record the sizes the constants give them too: the
            // same check the worker passed, so it cannot fail here.
            if program.is_sequence()
                && let Ok(checked) = kf_runtime::variant::check(kernel, &program)
            {
                checked.apply_to(&mut program);
            }
            (
                report,
                Some(VariantRecord {
                    id: candidate.id.clone(),
                    origin: candidate.origin.clone(),
                    program,
                }),
                CacheOutcome::Tuned,
            )
        }
        None => (&outcome.baseline, None, CacheOutcome::BaselineBest),
    };
    let timings = report
        .timings
        .iter()
        .map(|t| ShapeTiming {
            shape: t.shape.clone(),
            baseline_ns: t.baseline_ns,
            variant_ns: if variant.is_some() {
                t.candidate_ns
            } else {
                t.baseline_ns
            },
            samples: t.samples,
            method: t.method.clone(),
        })
        .collect();
    let mut shapes = kernel.tune_shapes.clone();
    shapes.extend(kernel.verify_shapes.iter().cloned());
    CacheEntry {
        format_version: FORMAT_VERSION,
        tool_version: env!("CARGO_PKG_VERSION").to_owned(),
        kernel: KernelRecord {
            name: f.name.clone(),
            package: f.package.clone(),
            content_hash: kernel.content_hash.clone(),
            entry: kernel.interface.entry.clone(),
        },
        adapter: AdapterRecord {
            key: adapter.key.clone(),
            identity: adapter.identity.clone(),
            limits: adapter.limits.clone(),
            features: adapter.features.clone(),
        },
        outcome: result,
        speedup: if variant.is_some() {
            report.fitness.speedup.unwrap_or(1.0)
        } else {
            1.0
        },
        noise: outcome.noise,
        variant,
        timings,
        verification: VerificationRecord {
            shapes,
            seeds: search::verification_seeds(),
            checks: report.verification.checks.clone(),
            max_rel_l2: report.verification.max_rel_l2,
            max_rel_elem: report.verification.max_rel_elem,
        },
        search: SearchRecord {
            strategy: outcome.strategy.clone(),
            space_size: outcome.space_size,
            evaluations: outcome.evaluations,
            budget: outcome.budget,
        },
        tuning: Some(kf_runtime::cache::TuningRecord {
            shapes_given,
            ..kernel.tuning()
        }),
    }
}

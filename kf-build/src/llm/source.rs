//! The LLM as a source of children for the evolution strategy ([`Proposer`]): prompts chosen by the
//! parent's state, answers parsed into candidates, prompt genomes scored and evolved, templates
//! swept, and every exchange written to the run directory.
//!
//! The pipeline is one generation deep: at generation `g` the proposer waits for the answers to
//! the requests it submitted at `g−1`, hands them over as children, and submits the requests for
//! `g+1` built from the state after `g−1`'s reports. HTTP latency overlaps the GPU's evaluation of
//! generation `g`, and which answer lands in which generation never depends on timing. With the
//! response cache, a rerun or a resumed run gets the same answers in the same places.
//!
//! When a request fails after its retries (the endpoint is down, replay-only misses the cache),
//! the session is switched off for the rest of the run with that reason, and the offline operators
//! carry on alone; the reason goes into the summary.

use super::client::{Cache, Client, ClientOptions, Completion, LlmError, RetryPolicy, Ticket};
use super::config::{LlmConfig, redact};
use super::genome::Population;
use super::parse::{self, Unusable};
use super::prompt::{self, Context, Mode, Shown, SweepPoint};
use super::protocol::ChatRequest;
use crate::evaluate::{AdapterReport, Candidate, Ceilings, EvalReport, Reason};
use crate::evolve::{CandidateId, Individual, step_rng, targeted_dim};
use crate::operators::{Operator, Subject};
use crate::search::qd::{External, Payload, Proposer, View};
use kf_runtime::Program;
use kf_runtime::resolve::ResolvedKernel;
use rand::Rng;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Candidate values per override name.
type Params = Vec<(String, Vec<f64>)>;

/// Salt of the proposer's random stream (independent of the offline operators' steps).
const SALT: u64 = 0x11A1_7E57_0000_0001;

/// One tune's connection to the LLM, shared by the kernels of the run.
pub struct Session {
    config: LlmConfig,
    client: Mutex<Client>,
    disabled: Mutex<Option<String>>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("config", &self.config)
            .field("disabled", &self.disabled())
            .finish_non_exhaustive()
    }
}

impl Session {
    /// A session for `config`, caching answers in `cache_dir`.
    pub fn new(config: LlmConfig, cache_dir: &Path) -> Result<Session, String> {
        if config.models.is_empty() {
            return Err(
                "no LLM model is configured: set KERNELFOUNDRY_LLM_MODEL, or `model` in [workspace.metadata.kernelfoundry.llm]".into(),
            );
        }
        config.check()?;
        let transport: Option<Arc<dyn super::client::Transport>> = if config.replay_only {
            None
        } else {
            http_transport(&config)?
        };
        Ok(Session::with_transport(config, cache_dir, transport))
    }

    /// A session over any transport (tests use a scripted one).
    pub fn with_transport(
        config: LlmConfig,
        cache_dir: &Path,
        transport: Option<Arc<dyn super::client::Transport>>,
    ) -> Session {
        let client = Client::new(ClientOptions {
            transport,
            cache: Some(Cache::new(cache_dir)),
            replay_only: config.replay_only,
            policy: RetryPolicy {
                retries: config.retries,
                backoff: Duration::from_secs_f64(config.backoff_s),
                max_wait: Duration::from_secs(120),
            },
            concurrency: config.concurrency,
            key: config.api_key.clone(),
        });
        Session {
            config,
            client: Mutex::new(client),
            disabled: Mutex::new(None),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &LlmConfig {
        &self.config
    }

    /// Why the LLM was switched off, if it was.
    pub fn disabled(&self) -> Option<String> {
        self.disabled.lock().expect("not poisoned").clone()
    }

    fn disable(&self, reason: String) {
        let mut d = self.disabled.lock().expect("not poisoned");
        if d.is_none() {
            log::warn!("the LLM is off for the rest of this run: {reason}");
            *d = Some(reason);
        }
    }

    fn submit(&self, request: ChatRequest, position: String) -> Ticket {
        self.client
            .lock()
            .expect("not poisoned")
            .submit(request, Some(position))
    }

    /// `text` with the key removed.
    pub fn redact(&self, text: &str) -> String {
        redact(text, self.config.api_key.as_ref())
    }

    /// What the client spent and replayed over the whole run.
    pub fn accounting(&self) -> super::client::Accounting {
        self.client.lock().expect("not poisoned").accounting()
    }
}

#[cfg(feature = "llm")]
fn http_transport(config: &LlmConfig) -> Result<Option<Arc<dyn super::client::Transport>>, String> {
    super::http::HttpTransport::new(&config.url, config.api_key.clone(), config.timeout_s)
        .map(|t| Some(Arc::new(t) as Arc<dyn super::client::Transport>))
        .map_err(|e| redact(&e.to_string(), config.api_key.as_ref()))
}

#[cfg(not(feature = "llm"))]
fn http_transport(_: &LlmConfig) -> Result<Option<Arc<dyn super::client::Transport>>, String> {
    Err(LlmError::NoTransport.to_string())
}

/// What the LLM did for one kernel, for the summary.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LlmReport {
    /// Requests made (answers and meta calls), cached ones included.
    pub requests: u64,
    /// Of those, answered from the response cache.
    pub cached: u64,
    /// Of those, failed after their retries.
    pub failed: u64,
    /// HTTP attempts (retries included).
    pub http_attempts: u64,
    /// Prompt tokens paid for.
    pub prompt_tokens: u64,
    /// Completion tokens paid for.
    pub completion_tokens: u64,
    /// Cost in US dollars, when every model used has prices.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Answers per prompt kind (`seed`, `repair`, `optimize`, `template`).
    pub answers: BTreeMap<String, u64>,
    /// Answers that were no candidate (no code, bad JSON block).
    pub unusable: u64,
    /// Meta-prompt calls answered.
    pub meta_calls: u64,
    /// SEARCH/REPLACE edits applied.
    pub edits_applied: u64,
    /// Edits rejected (absent SEARCH text, unknown section, malformed).
    pub edits_rejected: u64,
    /// Prompt genomes in the population at the end.
    pub prompts: usize,
    /// With `--llm-replay-only`: requests the response cache could not answer (no child for
    /// them; the rerun's search took another path than the recorded one).
    #[serde(skip_serializing_if = "crate::is_zero")]
    pub not_cached: u64,
    /// Why the LLM was switched off, if it was; the search went on with the offline operators.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disabled: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
enum Kind {
    Answer {
        mode: Mode,
        prompt: String,
        model: String,
        params: Vec<(String, Vec<f64>)>,
    },
    Sweep {
        template: String,
        label: String,
    },
}

struct Asked {
    tag: u64,
    request: ChatRequest,
    parent: CandidateId,
    parent_program: Program,
    island: usize,
    mode: Mode,
    prompt: String,
}

struct MetaInFlight {
    ticket: Ticket,
    request: ChatRequest,
    base: String,
}

/// The LLM proposer of one kernel's search.
pub struct LlmProposer {
    session: Arc<Session>,
    kernel: ResolvedKernel,
    sheet: String,
    dir: Option<PathBuf>,
    population: Population,
    in_flight: Vec<(Ticket, Asked)>,
    meta: Option<MetaInFlight>,
    next_tag: u64,
    asks: u64,
    metas: u64,
    generations: u64,
    exchanges: u64,
    children: HashMap<u64, Kind>,
    reports: HashMap<String, EvalReport>,
    unrepaired: Vec<String>,
    repaired: HashSet<String>,
    templated: HashSet<String>,
    /// Correct templates to sweep: the candidate and the override candidates it declared.
    to_sweep: Vec<(String, Params)>,
    sweeps: BTreeMap<String, Vec<SweepPoint>>,
    since_meta: u32,
    recent: Vec<String>,
    report: Arc<Mutex<LlmReport>>,
    priced: bool,
}

impl LlmProposer {
    /// A proposer for `kernel` on `adapter`, writing its exchanges under `dir` (the kernel's run
    /// directory); `report` is filled as the search goes.
    pub fn new(
        session: Arc<Session>,
        kernel: &ResolvedKernel,
        adapter: &AdapterReport,
        ceilings: Option<&Ceilings>,
        dir: Option<PathBuf>,
        report: Arc<Mutex<LlmReport>>,
    ) -> Self {
        let population = Population::new(session.config.population);
        let priced = session
            .config
            .models
            .iter()
            .all(|m| m.input_price.is_some() && m.output_price.is_some());
        let p = LlmProposer {
            sheet: prompt::adapter_sheet(adapter, ceilings),
            kernel: kernel.clone(),
            dir,
            population,
            in_flight: Vec::new(),
            meta: None,
            next_tag: 0,
            asks: 0,
            metas: 0,
            generations: 0,
            exchanges: 0,
            children: HashMap::new(),
            reports: HashMap::new(),
            unrepaired: Vec::new(),
            repaired: HashSet::new(),
            templated: HashSet::new(),
            to_sweep: Vec::new(),
            sweeps: BTreeMap::new(),
            since_meta: 0,
            recent: Vec::new(),
            report,
            priced,
            session,
        };
        if p.priced {
            p.update(|r| r.cost_usd = Some(r.cost_usd.unwrap_or(0.0)));
        }
        p.save_prompts();
        p
    }

    fn config(&self) -> &LlmConfig {
        &self.session.config
    }

    /// The request's place in the run: the `index`-th request of `kind` for this kernel, adapter
    /// sheet and model.
    fn position(&self, kind: &str, index: u64, model: &str) -> String {
        use sha2::Digest;
        let mut h = sha2::Sha256::new();
        for part in [&self.kernel.content_hash, &self.sheet, kind, model] {
            h.update(part.as_bytes());
            h.update(b"\0");
        }
        h.update(index.to_le_bytes());
        kf_runtime::hash::hex16(&h.finalize())
    }

    fn update(&self, f: impl FnOnce(&mut LlmReport)) {
        f(&mut self.report.lock().expect("not poisoned"));
    }

    /// Counts an answer to a request for `model` (priced by the name asked for: servers often
    /// answer with a dated variant of it).
    fn account(&self, c: &Completion, model: &str) {
        let cost = self
            .config()
            .model(model)
            .or_else(|| self.config().model(&c.model))
            .and_then(|m| {
                Some(
                    c.usage.prompt_tokens as f64 * m.input_price? / 1e6
                        + c.usage.completion_tokens as f64 * m.output_price? / 1e6,
                )
            });
        let priced = self.priced;
        self.update(|r| {
            r.requests += 1;
            r.http_attempts += u64::from(c.attempts);
            if c.cached {
                r.cached += 1;
            } else {
                r.prompt_tokens += c.usage.prompt_tokens;
                r.completion_tokens += c.usage.completion_tokens;
                if priced {
                    r.cost_usd = Some(r.cost_usd.unwrap_or(0.0) + cost.unwrap_or(0.0));
                }
            }
        });
    }

    fn fail(&self, e: &LlmError, answered: u64) {
        self.update(|r| {
            r.requests += 1;
            r.failed += 1;
        });
        if *e == LlmError::NotCached {
            // Replay-only: this request has no recorded answer; later ones may.
            self.update(|r| r.not_cached += 1);
            return;
        }
        let reason = self.session.redact(&format!(
            "{e} (after {answered} answer(s) for this kernel); the search went on with the offline operators"
        ));
        self.session.disable(reason.clone());
        self.update(|r| r.disabled = Some(reason));
    }

    fn answered(&self) -> u64 {
        let r = self.report.lock().expect("not poisoned");
        r.answers.values().sum()
    }

    /// Writes one exchange to the run directory.
    fn record(&mut self, kind: &str, value: serde_json::Value) {
        self.exchanges += 1;
        let Some(dir) = &self.dir else { return };
        let path = dir
            .join("llm")
            .join("exchanges")
            .join(format!("{:04}-{kind}.json", self.exchanges));
        let text = self
            .session
            .redact(&serde_json::to_string_pretty(&value).expect("exchanges serialize"));
        if let Err(e) = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|_| crate::cache::store::write_atomic(&path, &text))
        {
            log::warn!(
                "could not record an LLM exchange in {}: {e}",
                path.display()
            );
        }
    }

    fn save_prompts(&self) {
        let Some(dir) = &self.dir else { return };
        let path = dir.join("llm").join("prompts.json");
        let text = self.session.redact(
            &serde_json::to_string_pretty(&self.population).expect("populations serialize"),
        );
        if let Err(e) = std::fs::create_dir_all(dir.join("llm"))
            .and_then(|_| crate::cache::store::write_atomic(&path, &text))
        {
            log::warn!(
                "could not save the prompt population to {}: {e}",
                path.display()
            );
        }
        self.update(|r| r.prompts = self.population.genomes().len());
    }

    fn find<'a>(
        archive: &'a crate::evolve::Archive<Payload>,
        id: &str,
    ) -> Option<&'a Individual<Payload>> {
        (0..archive.island_count())
            .flat_map(|i| archive.members(i))
            .find(|m| m.payload.candidate.id == id)
    }

    fn shown<'a>(&'a self, i: &'a Individual<Payload>) -> Shown<'a> {
        Shown {
            candidate: &i.payload.candidate,
            descriptor: i.descriptor,
            report: self.reports.get(&i.payload.candidate.id),
        }
    }

    /// Builds and submits one request for `island`.
    fn ask(&mut self, view: &View<'_>, island: usize, first: bool) {
        let mut rng = step_rng(view.seed ^ SALT, self.asks);
        self.asks += 1;
        let archive = view.archive;
        let repair = first && rng.random::<f64>() < self.config().repair;
        let oldest_failed = self
            .unrepaired
            .iter()
            .find(|id| !self.repaired.contains(*id))
            .and_then(|id| Self::find(archive, id));
        let (parent, mode) = match oldest_failed.filter(|_| repair) {
            Some(p) => (p, Mode::Repair),
            None => {
                let Some(sel) = archive.select_parent(island, view.tracker, &mut rng) else {
                    return;
                };
                let p = sel.individual;
                let mode = if p.parent.is_none() {
                    Mode::Seed
                } else if p.fitness.level < 5 {
                    Mode::Repair
                } else if !self.templated.contains(&p.payload.candidate.id)
                    && rng.random::<f64>() < self.config().template
                {
                    Mode::Template
                } else {
                    Mode::Optimize
                };
                (p, mode)
            }
        };
        let parent_id = parent.payload.candidate.id.clone();
        match mode {
            Mode::Repair => {
                self.repaired.insert(parent_id.clone());
            }
            Mode::Template => {
                self.templated.insert(parent_id.clone());
            }
            _ => {}
        }
        let island_best = archive
            .elites(island)
            .max_by(|a, b| a.score().total_cmp(&b.score()).then(b.id.cmp(&a.id)))
            .filter(|b| b.id != parent.id && b.fitness.level == 5);
        let inspirations: Vec<&Individual<Payload>> = if mode == Mode::Repair {
            Vec::new()
        } else {
            archive
                .inspirations(parent, &mut rng)
                .into_iter()
                .filter(|i| island_best.is_none_or(|b| b.id != i.id))
                .collect()
        };
        let gradient = parent
            .descriptor
            .zip(view.tracker)
            .map(|(cell, t)| t.gradient(cell, &archive.cell_scores(), archive.generation()));
        let target = if mode == Mode::Optimize || mode == Mode::Seed {
            parent.descriptor.and_then(|cell| {
                targeted_dim(cell, gradient.as_ref(), &mut rng).map(|d| (d, cell.level(d) + 1))
            })
        } else {
            None
        };
        let hints = gradient.as_ref().map(|g| g.hints()).unwrap_or_default();
        let genome = self.population.select(&mut rng);
        // The model comes from a stream of its own, so it does not depend on the search's path.
        let model = pick_model(
            &self.config().models,
            &mut step_rng(view.seed ^ SALT ^ 0x40DE1, self.asks),
        );
        let sweeps: Vec<(String, Vec<SweepPoint>)> = self
            .sweeps
            .iter()
            .rev()
            .take(2)
            .map(|(k, v)| (k.clone(), v.iter().take(8).cloned().collect()))
            .collect();
        let ctx = Context {
            mode,
            kernel: &self.kernel,
            sheet: &self.sheet,
            parent: self.shown(parent),
            island_best: island_best.map(|b| self.shown(b)),
            inspirations: inspirations.iter().map(|i| self.shown(i)).collect(),
            target,
            hints,
            sweeps,
        };
        let request = ChatRequest {
            model,
            messages: prompt::messages(&ctx, &genome),
            temperature: self.config().temperature,
            max_tokens: self.config().max_tokens,
        };
        let position = self.position("answer", self.asks, &request.model);
        let ticket = self.session.submit(request.clone(), position);
        let tag = self.next_tag;
        self.next_tag += 1;
        self.in_flight.push((
            ticket,
            Asked {
                tag,
                request,
                parent: parent.id,
                parent_program: parent.payload.candidate.program.clone(),
                island,
                mode,
                prompt: genome.id,
            },
        ));
    }

    /// The child of an answer.
    fn child(&mut self, f: Asked, c: Completion) -> External {
        self.account(&c, &f.request.model);
        self.update(|r| *r.answers.entry(f.mode.as_str().to_owned()).or_default() += 1);
        let step = format!(
            "llm(model={}, prompt={}, {})",
            f.request.model,
            f.prompt,
            f.mode.as_str()
        );
        let parsed = parse::answer(&c.text, &self.kernel, c.finish_reason.as_deref());
        let (program, params, judged, notes) = match parsed {
            Ok(a) => {
                let workgroup_size = kf_runtime::resolve::reflect(
                    &a.wgsl,
                    Some(&self.kernel.interface.entry),
                    "answer",
                )
                .map(|r| r.interface.workgroup_size)
                .unwrap_or([1, 1, 1]);
                let program = Program {
                    wgsl: a.wgsl.into(),
                    entry: self.kernel.baseline.entry.clone(),
                    constants: a
                        .constants
                        .into_iter()
                        .map(|(k, v)| (std::borrow::Cow::Owned(k), v))
                        .collect::<Vec<_>>()
                        .into(),
                    workgroup_size,
                    workgroup_storage_bytes: 0,
                    dispatch: a
                        .launch
                        .unwrap_or_else(|| f.parent_program.dispatch.clone()),
                    workspace: f.parent_program.workspace.clone(),
                    then: f.parent_program.then.clone(),
                };
                (program, a.params, None, a.notes)
            }
            Err(u) => {
                self.update(|r| r.unusable += 1);
                let reason = match u {
                    Unusable::NoCode(_) => Reason::NoCode,
                    Unusable::Json(_) => Reason::Parse,
                };
                // The answer's text stands for the program, so equal answers are one candidate
                // whatever their parent.
                let program = Program {
                    wgsl: c.text.clone().into(),
                    constants: Vec::new().into(),
                    ..self.kernel.baseline.clone()
                };
                (
                    program,
                    Vec::new(),
                    Some((reason, u.to_string())),
                    Vec::new(),
                )
            }
        };
        let candidate_id = Candidate::new(program.clone(), "").id;
        self.record(
            f.mode.as_str(),
            serde_json::json!({
                "kind": f.mode.as_str(),
                "prompt": f.prompt,
                "island": f.island,
                "parent": f.parent,
                "request": f.request,
                "answer": c.text,
                "finish_reason": c.finish_reason,
                "usage": c.usage,
                "model": c.model,
                "cached": c.cached,
                "attempts": c.attempts,
                "candidate": candidate_id,
                "unusable": judged.as_ref().map(|(_, why)| why.clone()),
                "notes": notes,
            }),
        );
        self.children.insert(
            f.tag,
            Kind::Answer {
                mode: f.mode,
                prompt: f.prompt.clone(),
                model: f.request.model.clone(),
                params: params.clone(),
            },
        );
        External {
            tag: f.tag,
            parent: f.parent,
            island: f.island,
            program,
            step,
            operator: "llm".into(),
            params,
            judged,
        }
    }

    fn collect_meta(&mut self) {
        let Some(m) = self.meta.take() else { return };
        match m.ticket.wait() {
            Ok(c) => {
                self.account(&c, &m.request.model);
                let (id, outcomes) = self.population.evolve(&m.base, &c.text);
                let applied = outcomes.iter().filter(|o| o.applied).count() as u64;
                let rejected = outcomes.len() as u64 - applied;
                self.update(|r| {
                    r.meta_calls += 1;
                    r.edits_applied += applied;
                    r.edits_rejected += rejected;
                });
                for o in outcomes.iter().filter(|o| !o.applied) {
                    log::info!("meta edit of {} rejected: {}", m.base, o.note);
                }
                self.record(
                    "meta",
                    serde_json::json!({
                        "kind": "meta",
                        "base": m.base,
                        "request": m.request,
                        "answer": c.text,
                        "usage": c.usage,
                        "model": c.model,
                        "cached": c.cached,
                        "edits": outcomes,
                        "new_prompt": id,
                    }),
                );
                self.save_prompts();
            }
            Err(e) => {
                let answered = self.answered();
                self.record(
                    "meta",
                    serde_json::json!({"kind": "meta", "base": m.base, "request": m.request, "error": e.to_string()}),
                );
                self.fail(&e, answered);
            }
        }
    }

    fn submit_meta(&mut self) {
        let base = self.population.best().clone();
        let outcomes = if self.recent.is_empty() {
            "(none yet)".to_owned()
        } else {
            self.recent.join("\n")
        };
        let Some(model) = self.config().meta_model().map(str::to_owned) else {
            return;
        };
        let request = ChatRequest {
            model,
            messages: prompt::meta_messages(&base, &outcomes),
            temperature: self.config().temperature,
            max_tokens: self.config().max_tokens.min(2048),
        };
        self.metas += 1;
        let position = self.position("meta", self.metas, &request.model);
        let ticket = self.session.submit(request.clone(), position);
        self.meta = Some(MetaInFlight {
            ticket,
            request,
            base: base.id,
        });
        self.since_meta = 0;
    }

    /// The parameter sweep children of templates that proved correct.
    fn sweep_children(&mut self, view: &View<'_>) -> Vec<External> {
        let mut out = Vec::new();
        for (id, params) in std::mem::take(&mut self.to_sweep) {
            let Some(parent) = Self::find(view.archive, &id) else {
                continue;
            };
            let subject = Subject {
                kernel: view.kernel,
                program: &parent.payload.candidate.program,
                target: view.target,
            };
            let rewrites = crate::operators::params::Params {
                extra: params.clone(),
                fixed_workgroup: parent.payload.fixed_workgroup,
            }
            .apply(&subject)
            .unwrap_or_default();
            // Only the points that move an override the answer declared.
            let declared: Vec<String> = params.iter().map(|(n, _)| format!("{n}=")).collect();
            for r in rewrites
                .into_iter()
                .filter(|r| declared.iter().any(|d| r.step.contains(d.as_str())))
                .take(self.config().template_points)
            {
                let tag = self.next_tag;
                self.next_tag += 1;
                let label = r
                    .program
                    .constants
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                self.children.insert(
                    tag,
                    Kind::Sweep {
                        template: id.clone(),
                        label,
                    },
                );
                out.push(External {
                    tag,
                    parent: parent.id,
                    island: parent.island,
                    program: r.program,
                    step: r.step,
                    operator: "param".into(),
                    params: r.params,
                    judged: None,
                });
            }
        }
        out
    }
}

fn pick_model(models: &[super::config::ModelSpec], rng: &mut impl Rng) -> String {
    let total: f64 = models.iter().map(|m| m.weight).sum();
    let mut r = rng.random::<f64>() * total;
    for m in models {
        if r < m.weight {
            return m.name.clone();
        }
        r -= m.weight;
    }
    models.last().map(|m| m.name.clone()).unwrap_or_default()
}

impl Proposer for LlmProposer {
    fn generation(&mut self, view: &View<'_>) -> Vec<External> {
        let mut out = self.sweep_children(view);
        for (ticket, f) in std::mem::take(&mut self.in_flight) {
            if self.session.disabled().is_some() {
                break;
            }
            match ticket.wait() {
                Ok(c) => out.push(self.child(f, c)),
                Err(e) => {
                    let answered = self.answered();
                    self.record(
                        f.mode.as_str(),
                        serde_json::json!({"kind": f.mode.as_str(), "prompt": f.prompt, "request": f.request, "error": e.to_string()}),
                    );
                    self.fail(&e, answered);
                }
            }
        }
        if self.session.disabled().is_none() {
            self.collect_meta();
        }
        let islands = view.archive.island_count().max(1);
        if self.session.disabled().is_none() && view.remaining > islands as u64 {
            let n = self.config().per_generation.min(islands);
            let start = (self.generations as usize * n) % islands;
            for k in 0..n {
                self.ask(view, (start + k) % islands, k == 0);
            }
            if self.config().meta_every > 0
                && self.since_meta >= self.config().meta_every
                && self.meta.is_none()
            {
                self.submit_meta();
            }
        }
        self.generations += 1;
        out.truncate(view.remaining as usize);
        out
    }

    fn busy(&self) -> bool {
        !self.in_flight.is_empty() && self.session.disabled().is_none()
    }

    fn observe(&mut self, tag: Option<u64>, candidate: &Candidate, report: &EvalReport) {
        self.reports.insert(candidate.id.clone(), report.clone());
        let Some(kind) = tag.and_then(|t| self.children.get(&t)).cloned() else {
            return;
        };
        match kind {
            Kind::Answer {
                mode,
                prompt,
                model,
                params,
            } => {
                self.population.score(&prompt, report.fitness.score);
                self.since_meta += 1;
                let verdict = match &report.failure {
                    Some(f) => format!(
                        "level {} {}: {}",
                        report.fitness.level,
                        f.reason,
                        f.log
                            .lines()
                            .find(|l| !l.trim().is_empty())
                            .unwrap_or("")
                            .trim()
                    ),
                    None => format!("correct, {:.2}x", report.fitness.speedup.unwrap_or(1.0)),
                };
                self.recent.push(format!(
                    "- prompt {prompt}, {}, model {model}: {verdict}",
                    mode.as_str()
                ));
                if self.recent.len() > 12 {
                    self.recent.remove(0);
                }
                if report.is_correct() {
                    if !params.is_empty() {
                        self.to_sweep.push((candidate.id.clone(), params));
                    }
                } else {
                    self.unrepaired.push(candidate.id.clone());
                }
                self.save_prompts();
            }
            Kind::Sweep { template, label } => {
                self.sweeps.entry(template).or_default().push(SweepPoint {
                    constants: label,
                    level: report.fitness.level,
                    speedup: report.fitness.speedup,
                    reason: report.failure.as_ref().map(|f| f.reason.to_string()),
                });
            }
        }
    }

    fn checkpoint(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({
            "prompts": self.population.genomes().iter().map(|g| serde_json::json!({
                "id": g.id, "parent": g.parent, "uses": g.uses, "best": g.best,
            })).collect::<Vec<_>>(),
            "answers_in_flight": self.in_flight.len(),
            "disabled": self.session.disabled(),
        }))
    }
}

/// The first request a tune of `kernel` would send: the seed prompt with the first genome.
pub fn first_request(
    config: &LlmConfig,
    kernel: &ResolvedKernel,
    adapter: &AdapterReport,
    ceilings: Option<&Ceilings>,
) -> ChatRequest {
    let sheet = prompt::adapter_sheet(adapter, ceilings);
    let baseline = Candidate::baseline(kernel);
    let population = Population::new(1);
    let ctx = Context {
        mode: Mode::Seed,
        kernel,
        sheet: &sheet,
        parent: Shown {
            candidate: &baseline,
            descriptor: crate::evolve::describe_program(&kernel.baseline).ok(),
            report: None,
        },
        island_best: None,
        inspirations: Vec::new(),
        target: None,
        hints: Vec::new(),
        sweeps: Vec::new(),
    };
    ChatRequest {
        model: config
            .models
            .first()
            .map_or_else(|| "(no model configured)".to_owned(), |m| m.name.clone()),
        messages: prompt::messages(&ctx, population.best()),
        temperature: config.temperature,
        max_tokens: config.max_tokens,
    }
}

#[cfg(test)]
mod tests;

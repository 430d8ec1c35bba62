//! The LLM proposer inside a real evolution search, with a scripted endpoint and injected
//! measurements: pipelining, prompts by state, templates swept, meta edits, replay, and the
//! switch to offline operators when the endpoint fails.

use super::*;
use crate::evaluate::{EvalRequest, Evaluator, Failure, Fitness, ShapeTime, VerifyStats};
use crate::llm::client::Transport;
use crate::llm::protocol::{ChatResponse, Choice, ResponseMessage, Usage};
use crate::search::{Config, Outcome, StrategyKind};
use kf_runtime::AdapterIdentity;
use std::sync::atomic::{AtomicUsize, Ordering};

const ELEMWISE: &str = r#"
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(4)
fn main(@builtin(global_invocation_id) g: vec3<u32>) { if (g.x < arrayLength(&x)) { y[g.x] = 2.0 * x[g.x]; } }
"#;

fn kernel() -> ResolvedKernel {
    let (spec, _) = kf_runtime::syntax::parse_spec(
        r#"source = "", sizes(n = 1024), bind(x = input(n), y = output(n))"#
            .parse()
            .unwrap(),
    )
    .unwrap();
    kf_runtime::resolve::resolve("K", &spec, ELEMWISE, "k.wgsl").unwrap()
}

fn code(marker: &str, wg: u32) -> String {
    format!(
        "```wgsl\n// {marker}\n@group(0) @binding(0) var<storage, read> x: array<f32>;\n@group(0) @binding(1) var<storage, read_write> y: array<f32>;\n@compute @workgroup_size({wg})\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {{ if (g.x < arrayLength(&x)) {{ y[g.x] = 2.0 * x[g.x]; }} }}\n```\n"
    )
}

const TEMPLATE: &str = "```wgsl\n// template\noverride ITEMS: u32 = 1u;\n@group(0) @binding(0) var<storage, read> x: array<f32>;\n@group(0) @binding(1) var<storage, read_write> y: array<f32>;\n@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) { for (var k = 0u; k < ITEMS; k++) { let i = g.x * ITEMS + k; if (i < arrayLength(&x)) { y[i] = 2.0 * x[i]; } } }\n```\n```json\n{\"launch\": \"grid(n)\", \"overrides\": {\"ITEMS\": [1, 2, 4]}}\n```\n";

/// Answers by the task line of the prompt; records every request.
struct Endpoint {
    calls: AtomicUsize,
    seen: Mutex<Vec<ChatRequest>>,
    fail_after: Option<usize>,
}

impl Endpoint {
    fn new(fail_after: Option<usize>) -> Arc<Self> {
        Arc::new(Endpoint {
            calls: AtomicUsize::new(0),
            seen: Mutex::new(Vec::new()),
            fail_after,
        })
    }
}

impl Transport for Endpoint {
    fn send(&self, r: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        self.seen.lock().unwrap().push(r.clone());
        if self.fail_after.is_some_and(|k| n >= k) {
            return Err(LlmError::Connect("connection refused".into()));
        }
        let user = &r.messages[1].content;
        let task = user.lines().next().unwrap_or("");
        let text = if task.contains("meta") {
            "<<<<<<< SEARCH pitfalls\n- Keep every binding exactly as the baseline declares it; a changed binding is rejected.\n=======\n- Keep every binding exactly as the baseline declares it.\n- Never compute a wrong value to look fast.\n>>>>>>> REPLACE\n<<<<<<< SEARCH strategies\nnot there\n=======\nx\n>>>>>>> REPLACE".to_owned()
        } else if task.contains("repair") {
            code(&format!("repaired speed=2 #{n}"), 32)
        } else if task.contains("template") {
            TEMPLATE.to_owned()
        } else {
            match n % 3 {
                0 => code(&format!("speed=3 #{n}"), 64),
                1 => code(&format!("wrong #{n}"), 64),
                _ => "I would vectorize the loads.".to_owned(),
            }
        };
        Ok(ChatResponse {
            choices: vec![Choice {
                message: ResponseMessage {
                    content: Some(text),
                },
                finish_reason: Some("stop".into()),
            }],
            usage: Some(Usage {
                prompt_tokens: 100,
                completion_tokens: 20,
            }),
            model: None,
        })
    }
}

/// Judges by markers in the code: `wrong` is wrong values, `speed=X` is X times faster,
/// `ITEMS=4` is 5 times faster, anything else 1.1 times.
struct Judge {
    adapter: AdapterReport,
    calls: usize,
}

fn judge() -> Judge {
    let identity = AdapterIdentity {
        name: "fake".into(),
        vendor: 1,
        device: 2,
        backend: "vulkan".into(),
        device_type: "DiscreteGpu".into(),
        driver: "d".into(),
        driver_info: "1".into(),
    };
    Judge {
        adapter: AdapterReport {
            index: 0,
            key: identity.key(),
            identity,
            limits: [("max_compute_invocations_per_workgroup".to_owned(), 256u64)]
                .into_iter()
                .collect(),
            features: vec![],
        },
        calls: 0,
    }
}

impl Evaluator for Judge {
    fn adapter(&self) -> &AdapterReport {
        &self.adapter
    }

    fn evaluate(&mut self, r: &EvalRequest) -> EvalReport {
        self.calls += 1;
        let c = &r.candidate;
        let w = &c.program.wgsl;
        if w.contains("wrong") {
            return EvalReport::failed(
                &c.id,
                Reason::WrongValues,
                "mismatch at element 7 on n=1024: got 1.0, expected 2.0",
            );
        }
        if naga::front::wgsl::parse_str(w).is_err() {
            return EvalReport::failed(&c.id, Reason::Parse, "does not parse");
        }
        let items = c
            .program
            .constants
            .iter()
            .find(|(k, _)| k == "ITEMS")
            .map(|(_, v)| *v);
        let s = if c.id == "baseline" {
            1.0
        } else if items == Some(4.0) {
            5.0
        } else if let Some(p) = w.find("speed=") {
            w[p + 6..p + 7].parse().unwrap_or(1.0)
        } else {
            1.1
        };
        EvalReport {
            candidate: c.id.clone(),
            fitness: Fitness::correct(Some(s)),
            failure: None::<Failure>,
            workgroup_size: Some(c.program.workgroup_size),
            workgroup_storage_bytes: Some(0),
            timings: vec![ShapeTime {
                shape: r.kernel.tune_shapes[0].clone(),
                baseline_ns: 1000.0,
                candidate_ns: 1000.0 / s,
                speedup: s,
                baseline_spread: 0.0,
                candidate_spread: 0.0,
                spread: 0.01,
                samples: r.plan.samples,
                method: "fake".into(),
                bytes: 8192,
                achieved_gbps: 8.192 * s,
                achieved_gflops: None,
                min_bytes: 0,
                min_gbps: 0.0,
            }],
            noise: Some(0.01),
            verification: VerifyStats::default(),
            roofline: None,
            wall_ms: 1.0,
            ceilings: None,
        }
    }

    fn probe(&mut self) -> Result<Ceilings, String> {
        Err("no probe".into())
    }
}

fn llm_config(replay_only: bool) -> LlmConfig {
    LlmConfig {
        models: vec![crate::llm::config::ModelSpec {
            name: "m".into(),
            weight: 1.0,
            input_price: Some(2.0),
            output_price: Some(10.0),
        }],
        per_generation: 3,
        meta_every: 3,
        repair: 1.0,
        template: 0.5,
        concurrency: 2,
        retries: 1,
        backoff_s: 0.0,
        replay_only,
        ..LlmConfig::default()
    }
}

struct Run {
    outcome: Outcome,
    report: LlmReport,
    evaluations: usize,
}

fn run(cache: &Path, dir: &Path, transport: Option<Arc<dyn Transport>>, replay_only: bool) -> Run {
    let k = kernel();
    let mut ev = judge();
    let session = Arc::new(Session::with_transport(
        llm_config(replay_only),
        cache,
        transport,
    ));
    let report = Arc::new(Mutex::new(LlmReport::default()));
    let proposer = LlmProposer::new(
        session,
        &k,
        ev.adapter(),
        None,
        Some(dir.to_owned()),
        report.clone(),
    );
    let config = Config {
        budget: 28,
        seed: 5,
        strategy: StrategyKind::Qd,
        ..Config::default()
    };
    let outcome =
        crate::search::search_with(&k, &mut ev, None, &config, Some(Box::new(proposer)), |_| {})
            .unwrap();
    let report = report.lock().unwrap().clone();
    Run {
        outcome,
        report,
        evaluations: ev.calls,
    }
}

fn ids(o: &Outcome) -> Vec<String> {
    o.history.iter().map(|(c, _)| c.id.clone()).collect()
}

#[test]
fn answers_become_candidates_prompts_follow_the_state_and_a_rerun_replays() {
    let cache = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let endpoint = Endpoint::new(None);
    let first = run(cache.path(), dir.path(), Some(endpoint.clone()), false);
    let o = &first.outcome;
    let by_origin = |needle: &str| {
        o.history
            .iter()
            .filter(|(c, _)| c.origin.contains(needle))
            .collect::<Vec<_>>()
    };
    // Answers entered the search with their origin, correct or at their ladder level.
    let llm = by_origin("llm(model=m");
    assert!(
        llm.len() >= 6,
        "{:#?}",
        o.history.iter().map(|h| &h.0.origin).collect::<Vec<_>>()
    );
    assert!(
        llm.iter()
            .any(|(c, r)| r.is_correct() && c.program.wgsl.contains("speed=3"))
    );
    assert!(llm.iter().any(|(_, r)| {
        r.failure
            .as_ref()
            .is_some_and(|f| f.reason == Reason::WrongValues)
    }));
    let prose = llm
        .iter()
        .find(|(c, _)| c.program.wgsl.contains("vectorize the loads"))
        .expect("the prose answer was recorded");
    assert_eq!(prose.1.fitness.level, 0);
    assert!(
        prose
            .1
            .failure
            .as_ref()
            .unwrap()
            .log
            .contains("no fenced WGSL block")
    );
    // The offline operators worked in the same archive.
    assert!(o.history.iter().any(|(c, _)| !c.origin.contains("llm(")));
    // The served answer is the tuned variant (3x, or a 5x sweep point of the template).
    let tuned = o.tuned.as_ref().expect("a variant won");
    assert!(tuned.0.origin.contains("llm("), "{}", tuned.0.origin);

    let seen = endpoint.seen.lock().unwrap().clone();
    let users: Vec<&str> = seen
        .iter()
        .map(|r| r.messages[1].content.as_str())
        .filter(|u| !u.starts_with("# Task: meta"))
        .collect();
    assert!(users[0].starts_with("# Task: seed"), "{}", users[0]);
    assert!(
        users
            .iter()
            .all(|u| u.contains("## Adapter\nAdapter: fake"))
    );
    // A failed answer came back as a repair parent with its distilled log.
    assert!(users.iter().any(|u| u.starts_with("# Task: repair")
        && u.contains("The distilled log:")
        && u.contains("mismatch at element 7")));
    // A correct answer came back later with its measurement (as parent, island best or inspiration).
    assert!(
        users
            .iter()
            .any(|u| u.contains("speed=3") && u.contains("Result: correct, score 8.00, 3.00x"))
    );
    // A template was swept, and the sweep's results went into a later prompt.
    assert!(
        o.history
            .iter()
            .any(|(c, _)| c.origin.contains("template") && c.origin.contains("param("))
    );
    assert!(users.iter().any(|u| u.contains("## Parameter sweeps of earlier templates") && u.contains("ITEMS=")));
    // Meta edits: one applied, one rejected, both logged; the new genome is in the population.
    let r = &first.report;
    assert!(
        r.meta_calls >= 1 && r.edits_applied >= 1 && r.edits_rejected >= 1,
        "{r:?}"
    );
    assert!(r.prompts >= 2);
    assert!(seen.iter().any(|q| {
        q.messages[0]
            .content
            .contains("Never compute a wrong value")
    }));
    assert!(r.unusable >= 1);
    assert_eq!(r.prompt_tokens, 100 * r.requests);
    let cost = r.requests as f64 * (100.0 * 2.0 + 20.0 * 10.0) / 1e6;
    assert!((r.cost_usd.unwrap() - cost).abs() < 1e-12, "{r:?}");
    assert_eq!(r.disabled, None);
    // Every exchange and the prompt lineage are in the run directory.
    let exchanges = std::fs::read_dir(dir.path().join("llm/exchanges"))
        .unwrap()
        .count() as u64;
    assert_eq!(exchanges, r.requests);
    let prompts = std::fs::read_to_string(dir.path().join("llm/prompts.json")).unwrap();
    assert!(prompts.contains("\"parent\": \"p0\""), "{prompts}");

    // The same run, replaying: the same candidates in the same order, nothing sent.
    let dir2 = tempfile::tempdir().unwrap();
    let again = run(cache.path(), dir2.path(), None, true);
    assert_eq!(ids(&again.outcome), ids(o));
    assert_eq!(again.report.cached, again.report.requests);
    assert_eq!(again.report.prompt_tokens, 0);
    assert_eq!(again.report.cost_usd, Some(0.0));
    assert_eq!(again.evaluations, first.evaluations);
}

#[test]
fn a_failing_endpoint_switches_the_llm_off_and_the_search_goes_on() {
    let cache = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let endpoint = Endpoint::new(Some(4));
    let r = run(cache.path(), dir.path(), Some(endpoint.clone()), false);
    let why = r.report.disabled.clone().expect("the LLM was switched off");
    assert!(
        why.contains("cannot reach the endpoint") && why.contains("offline"),
        "{why}"
    );
    let last_step = |c: &Candidate| c.origin.rsplit(" → ").next().unwrap_or("").to_owned();
    let answers = r
        .outcome
        .history
        .iter()
        .filter(|(c, _)| last_step(c).starts_with("llm("))
        .count();
    assert!(
        (1..=4).contains(&answers),
        "{answers} answers before the failure"
    );
    let last_answer = r
        .outcome
        .history
        .iter()
        .rposition(|(c, _)| last_step(c).starts_with("llm("))
        .unwrap();
    assert!(
        r.outcome.history.len() - last_answer > 8,
        "the search went on offline: {} evaluations after the last answer",
        r.outcome.history.len() - last_answer - 1
    );
    // Retries: the client used the configured retries on each failed request (backoff 2 s is not
    // waited here: the endpoint answered a refused connection, which is retried).
    assert!(endpoint.calls.load(Ordering::SeqCst) >= 5);
}

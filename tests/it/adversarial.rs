//! The adversarial suite: every candidate in `tests/data/adversarial/` is run through
//! `cargo kernelfoundry eval` against its honest baseline in `tests/fixtures/adversarial/` and
//! must land on the ladder level its header names. Adding a case is adding a file:
//!
//! ```text
//! // cheat: what it tries
//! // kernel: ELEMWISE            the baseline it pretends to replace
//! // fixture: kernels            optional: the baseline is in tests/fixtures/kernels instead
//! // args: --workgroups=n/256     optional extra `eval` arguments
//! // expect: level=4 reason=wrong-values      (or `level=5`, `level=5 faster`)
//! ```

use kf_tests::*;
use std::time::{Duration, Instant};

struct Case {
    file: std::path::PathBuf,
    kernel: String,
    fixture: String,
    args: Vec<String>,
    level: u64,
    reason: Option<String>,
    faster: bool,
}

fn header(text: &str, key: &str) -> Option<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("// "))
        .find_map(|l| l.strip_prefix(key).map(|v| v.trim().to_owned()))
}

fn cases() -> Vec<Case> {
    let dir = root().join("tests/data/adversarial");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "wgsl"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|file| {
            let text = std::fs::read_to_string(&file).unwrap();
            let expect = header(&text, "expect:")
                .unwrap_or_else(|| panic!("{} has no `// expect:`", file.display()));
            let mut level = None;
            let mut reason = None;
            let mut faster = false;
            for word in expect.split_whitespace() {
                if let Some(l) = word.strip_prefix("level=") {
                    level = l.parse().ok();
                } else if let Some(r) = word.strip_prefix("reason=") {
                    reason = Some(r.to_owned());
                } else if word == "faster" {
                    faster = true;
                }
            }
            Case {
                kernel: header(&text, "kernel:")
                    .unwrap_or_else(|| panic!("{} has no `// kernel:`", file.display())),
                fixture: header(&text, "fixture:").unwrap_or_else(|| "adversarial".into()),
                args: header(&text, "args:")
                    .map(|a| a.split_whitespace().map(str::to_owned).collect())
                    .unwrap_or_default(),
                level: level
                    .unwrap_or_else(|| panic!("{}: `expect:` needs level=N", file.display())),
                reason,
                faster,
                file,
            }
        })
        .collect()
}

#[test]
fn every_cheat_is_rejected_and_every_honest_variant_accepted() {
    let fixtures: std::collections::BTreeMap<&str, tempfile::TempDir> = ["adversarial", "kernels"]
        .into_iter()
        .map(|name| (name, copy_crate(&format!("tests/fixtures/{name}"))))
        .collect();
    let cases = cases();
    assert!(
        cases.iter().filter(|c| c.level < 5).count() >= 12,
        "at least 12 cheats"
    );
    assert!(
        cases.iter().any(|c| c.level == 5 && c.faster),
        "at least one honest, faster variant"
    );
    let mut failures = Vec::new();
    for case in &cases {
        let manifest = fixtures
            .get(case.fixture.as_str())
            .unwrap_or_else(|| {
                panic!(
                    "{}: unknown fixture `{}`",
                    case.file.display(),
                    case.fixture
                )
            })
            .path()
            .join("Cargo.toml");
        let start = Instant::now();
        let mut cmd = kf(&[
            "eval",
            "--json",
            "--samples",
            "5",
            "--kernel",
            &case.kernel,
            "--manifest-path",
        ]);
        cmd.arg(&manifest)
            .arg("--candidate")
            .arg(&case.file)
            .args(&case.args);
        let r = run(&mut cmd);
        let elapsed = start.elapsed();
        let name = case.file.file_name().unwrap().to_string_lossy().to_string();
        let json: serde_json::Value = match serde_json::from_str(r.stdout.trim()) {
            Ok(j) => j,
            Err(_) => {
                failures.push(format!("{name}: no JSON report\n{}", r.dump()));
                continue;
            }
        };
        let level = json["level"].as_u64().unwrap();
        // A loop nothing bounds is built with wgpu's counter, never without it.
        let loops = json["loops"].as_str().unwrap_or_default();
        if name == "infinite_loop.wgsl" && !loops.starts_with("wgpu's loop counter kept") {
            failures.push(format!("{name}: built without the loop counter: {loops}"));
        }
        let reason = json["reason"].as_str().map(str::to_owned);
        let expected_code = if case.level == 5 { 0 } else { 1 };
        if level != case.level
            || (case.reason.is_some() && reason != case.reason)
            || r.code != Some(expected_code)
        {
            failures.push(format!(
                "{name}: expected level {} {:?}, got level {level} {reason:?} (exit {:?}); log: {}",
                case.level,
                case.reason,
                r.code,
                json["log"].as_str().unwrap_or("")
            ));
        }
        if case.faster && !json["speedup"].as_f64().is_some_and(|s| s > 1.0) {
            failures.push(format!(
                "{name}: expected a speedup over the baseline, got {}",
                json["speedup"]
            ));
        }
        if case.reason.as_deref() == Some("timeout") {
            // A hanging candidate costs its timeout plus starting a worker, not more.
            let limit: f64 = case
                .args
                .iter()
                .find_map(|a| a.strip_prefix("--timeout="))
                .and_then(|t| t.parse().ok())
                .unwrap_or(120.0);
            if elapsed > Duration::from_secs_f64(limit + 20.0) {
                failures.push(format!("{name}: took {elapsed:?} for a {limit} s timeout"));
            }
        }
        if level < 5 && json["log"].as_str().is_none_or(str::is_empty) {
            failures.push(format!("{name}: a rejection must carry a distilled log"));
        }
    }
    assert!(
        failures.is_empty(),
        "adversarial suite:\n{}",
        failures.join("\n")
    );
}

#[test]
fn a_hanging_candidate_costs_only_its_timeout_and_the_tune_finishes() {
    let fixture = copy_crate("tests/fixtures/adversarial");
    let start = Instant::now();
    let r = run_ok(
        kf(&[
            "tune",
            "--json",
            "--strategy",
            "auto",
            "--kernel",
            "LOOPY",
            "--timeout",
            "12",
            "--manifest-path",
        ])
        .arg(fixture.path().join("Cargo.toml")),
    );
    let elapsed = start.elapsed();
    let json = r.json();
    let k = &json["kernels"][0];
    // STEP = 0 never advances its loop: both candidates with it must be killed, the third finishes.
    // (On lavapipe each such invocation stops after 65535 iterations, which over a million rows is
    // still far longer than the timeout; the honest candidate needs a few seconds.)
    assert_eq!(k["evaluations"], 3, "{}", r.dump());
    assert_eq!(k["rejected"]["timeout"], 2, "{}", r.dump());
    assert!(
        ["tuned", "baseline-best"].contains(&k["status"].as_str().unwrap()),
        "{}",
        r.dump()
    );
    assert!(std::path::Path::new(k["cache_file"].as_str().unwrap()).is_file());
    assert!(
        elapsed < Duration::from_secs(180),
        "two 12 s timeouts took {elapsed:?} in all"
    );
}

#[test]
fn a_crashing_worker_costs_one_candidate() {
    let fixture = copy_crate("tests/fixtures/adversarial");
    // The test hook makes the worker abort on candidates whose origin mentions STEP=0.
    let r = run_ok(
        kf(&[
            "tune",
            "--json",
            "--strategy",
            "auto",
            "--kernel",
            "LOOPY",
            "--manifest-path",
        ])
        .arg(fixture.path().join("Cargo.toml"))
        .env(kf_build::evaluate::process::FAULT_ENV, "crash:STEP=0"),
    );
    let json = r.json();
    let k = &json["kernels"][0];
    assert_eq!(k["evaluations"], 3, "{}", r.dump());
    assert_eq!(k["rejected"]["crash"], 2, "{}", r.dump());
    assert!(
        ["tuned", "baseline-best"].contains(&k["status"].as_str().unwrap()),
        "{}",
        r.dump()
    );
}

#[test]
fn a_degenerate_baseline_is_refused_with_a_hint() {
    let fixture = copy_crate("tests/fixtures/adversarial");
    let r = run(
        kf(&["tune", "--json", "--kernel", "CONSTANT", "--manifest-path"])
            .arg(fixture.path().join("Cargo.toml")),
    );
    assert_eq!(r.code, Some(1), "{}", r.dump());
    let json = r.json();
    let k = &json["kernels"][0];
    assert_eq!(k["status"], "failed", "{}", r.dump());
    let error = k["error"].as_str().unwrap();
    assert!(
        error.contains("cannot judge") && error.contains("every value the baseline wrote is 1"),
        "{error}"
    );
    assert!(
        error.contains("range("),
        "the error suggests an input distribution: {error}"
    );
}

#[test]
fn a_speed_above_the_ceiling_measured_again_is_rejected() {
    let fixture = copy_crate("tests/fixtures/adversarial");
    let manifest = fixture.path().join("Cargo.toml");
    // The test hook clamps every copy bandwidth the worker measures to 1 kB/s: the stored ceiling
    // is that low, and measuring it again (what the evaluator does before any verdict) confirms
    // it, so the candidate's speed is impossible and must be rejected at level 2.
    let hook = (kf_build::evaluate::process::FAULT_ENV, "ceiling:1e-6");
    let probe = run_ok(
        kf(&[
            "adapters",
            "--probe",
            "--json",
            "--adapter",
            "0",
            "--manifest-path",
        ])
        .arg(&manifest)
        .env(hook.0, hook.1),
    );
    let json = probe.json();
    assert_eq!(
        json["adapters"][0]["ceilings"]["copy_gbps"].as_f64(),
        Some(1e-6),
        "{}",
        probe.dump()
    );
    let candidate = root().join("tests/data/adversarial/honest_wider_workgroup.wgsl");
    let r = run(kf(&[
        "eval",
        "--json",
        "--samples",
        "3",
        "--adapter",
        "0",
        "--kernel",
        "ELEMWISE",
        "--manifest-path",
    ])
    .arg(&manifest)
    .arg("--candidate")
    .arg(&candidate)
    .env(hook.0, hook.1));
    let json = r.json();
    assert_eq!(
        (json["level"].as_u64(), json["reason"].as_str()),
        (Some(2), Some("exceeds-roofline")),
        "{}",
        r.dump()
    );
    let log = json["log"].as_str().unwrap();
    assert!(
        log.contains("copy ceiling, measured again") && log.contains("timed again"),
        "{}",
        r.dump()
    );
}

/// A variant with a workspace (buffers the runtime allocates for it and keeps between an app's
/// dispatches) that remembers its first results there and replays them afterwards: right on
/// every fresh trial, wrong in an app that dispatches it twice. The rerun check keeps the
/// workspace between its two runs, as the runtime does, and catches it; the same variant
/// without the replay passes.
#[test]
fn a_variant_that_replays_results_from_its_workspace_is_rejected() {
    use kf_build::evaluate::Evaluator;
    let wgsl = r#"
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < arrayLength(&x)) { y[g.x] = 2.0 * x[g.x]; }
}
"#;
    let kernel = crate::operators::resolve(
        "REPLAY",
        "path = \"replay.wgsl\", sizes(n = 4096), bind(x = input(n), y = output(n)), grid = (n)",
        wgsl,
    );
    let variant = |replay: bool| {
        let body = if replay {
            // 1.5 marks a result computed before.
            "if (ws[0] == 1.5) { y[g.x] = ws[1u + g.x]; return; }"
        } else {
            ""
        };
        format!(
            r#"
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(1) @binding(0) var<storage, read_write> ws: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {{
    if (g.x >= arrayLength(&x)) {{ return; }}
    {body}
    let v = 2.0 * x[g.x];
    y[g.x] = v;
    ws[1u + g.x] = v;
}}
@compute @workgroup_size(1)
fn mark() {{ ws[0] = 1.5; }}
"#
        )
    };
    let program = |replay: bool| {
        let mut p = kernel.baseline.clone();
        p.wgsl = variant(replay).into();
        p.workspace = vec![kf_runtime::Workspace {
            group: 1,
            binding: 0,
            words: kf_runtime::expr::SizeExpr::parse("n + 1").unwrap(),
        }]
        .into();
        p.then = vec![kf_runtime::Stage {
            entry: "mark".into(),
            workgroup_size: [1, 1, 1],
            workgroup_storage_bytes: 0,
            dispatch: kf_runtime::Dispatch {
                mode: kf_runtime::DispatchMode::Workgroups,
                size: [1, 1, 1].map(kf_runtime::expr::SizeExpr::lit),
            },
        }]
        .into();
        p
    };
    let (mut worker, _) = crate::operators::worker_and_target();
    let evaluate = |worker: &mut kf_build::evaluate::process::WorkerProcess, replay: bool| {
        let program = program(replay);
        worker.evaluate(&kf_build::evaluate::EvalRequest {
            kernel: kernel.clone(),
            candidate: kf_build::evaluate::Candidate {
                id: format!("replay-{replay}"),
                origin: "test".into(),
                program,
            },
            plan: crate::operators::verify_plan(&kernel),
            ceilings: None,
            deadline_s: None,
        })
    };
    let honest = evaluate(&mut worker, false);
    assert_eq!(
        honest.fitness.level,
        5,
        "{:?}",
        honest.failure.map(|f| f.log)
    );
    let replay = evaluate(&mut worker, true);
    assert_eq!(replay.fitness.level, 4, "{:?}", replay.failure);
    let log = replay.failure.map(|f| f.log).unwrap_or_default();
    assert!(log.contains("run again on the same buffers"), "{log}");
}

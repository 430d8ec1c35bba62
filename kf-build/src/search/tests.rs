//! Search tests with injected measurements: a fake evaluator decides each candidate's speedup, so
//! the decisions are tested without timing luck.

use super::*;
use crate::evaluate::{EvalPlan, EvalRequest};
use crate::evaluate::{EvalReport, Failure, Fitness, Reason, ShapeTime, VerifyStats};
use crate::gpu::AdapterReport;
use kf_runtime::AdapterIdentity;
use std::collections::BTreeMap;

const ELEMWISE: &str = r#"
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(4)
fn main(@builtin(global_invocation_id) g: vec3<u32>) { if (g.x < arrayLength(&x)) { y[g.x] = 2.0 * x[g.x]; } }
"#;

const TILED: &str = r#"
override WG: u32 = 64u;
override TILE: u32 = 4u;
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) g: vec3<u32>) { if (g.x < arrayLength(&x)) { y[g.x] = f32(TILE) * x[g.x]; } }
"#;

const MATMUL_2D: &str = r#"
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> c: array<f32>;
@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) g: vec3<u32>) { c[g.y * 64u + g.x] = a[g.x]; }
"#;

fn kernel(wgsl: &str, attr: &str) -> ResolvedKernel {
    let (spec, _) = kf_runtime::syntax::parse_spec(attr.parse().unwrap()).unwrap();
    kf_runtime::resolve::resolve("K", &spec, wgsl, "k.wgsl").unwrap()
}

fn limits(max_inv: u64) -> BTreeMap<String, u64> {
    [
        ("max_compute_invocations_per_workgroup", max_inv),
        ("max_compute_workgroup_size_x", 1024),
        ("max_compute_workgroup_size_y", 1024),
        ("max_compute_workgroup_size_z", 64),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

#[test]
fn a_literal_workgroup_size_is_lifted_into_the_space() {
    let k = kernel(
        ELEMWISE,
        r#"source = "", sizes(n = 1024), bind(x = input(n), y = output(n))"#,
    );
    let s = space(&k, &limits(256));
    assert!(s.lifted);
    let wgs: Vec<f64> = s.points.iter().map(|p| p.constants[0].1).collect();
    assert_eq!(
        wgs,
        vec![16.0, 32.0, 64.0, 128.0, 256.0],
        "within the 256-invocation limit"
    );
    assert!(s.wgsl.contains("@workgroup_size(KF_WG_X)"));
}

#[test]
fn two_dimensional_workgroups_search_shapes() {
    let k = kernel(
        MATMUL_2D,
        r#"source = "", sizes(n = 64), bind(a = input(n), c = output(n * n)), grid = (n, n)"#,
    );
    let s = space(&k, &limits(1024));
    assert!(s.points.iter().all(|p| p.constants.len() == 2));
    assert!(
        s.points
            .iter()
            .any(|p| p.constants == vec![("KF_WG_X".into(), 16.0), ("KF_WG_Y".into(), 16.0)])
    );
    assert!(
        !s.points
            .iter()
            .any(|p| p.constants == vec![("KF_WG_X".into(), 8.0), ("KF_WG_Y".into(), 8.0)]),
        "the baseline itself is not a candidate"
    );
}

#[test]
fn overrides_without_params_get_neighbouring_values() {
    let k = kernel(
        TILED,
        r#"source = "", sizes(n = 1024), bind(x = input(n), y = output(n))"#,
    );
    let s = space(&k, &limits(1024));
    let tiles: std::collections::BTreeSet<u64> = s
        .points
        .iter()
        .filter_map(|p| {
            p.constants
                .iter()
                .find(|(k, _)| k == "TILE")
                .map(|(_, v)| *v as u64)
        })
        .collect();
    assert_eq!(
        tiles,
        [1, 2, 4, 8, 16].into_iter().collect(),
        "TILE = 4 by default"
    );
    assert_eq!(
        s.points.len(),
        7 * 5 - 1,
        "workgroup shapes x TILE values, minus the baseline"
    );
}

#[test]
fn params_multiply_the_space_and_the_baseline_is_excluded() {
    let k = kernel(
        TILED,
        r#"source = "", sizes(n = 1024), bind(x = input(n), y = output(n)), params(WG = [64, 128], TILE = [4, 8])"#,
    );
    let s = space(&k, &limits(1024));
    assert!(!s.lifted);
    assert_eq!(s.points.len(), 3, "{:?}", s.points);
    let c = candidate(&k, &s, &s.points[0]);
    assert!(
        c.origin.contains("WG=64") && c.origin.contains("TILE=8"),
        "{}",
        c.origin
    );
}

/// Answers with a speedup from `speed`, or a failure when it returns `None`.
struct Fake<F: FnMut(&Candidate) -> Option<f64>> {
    speed: F,
    adapter: AdapterReport,
    calls: Vec<String>,
}

fn fake<F: FnMut(&Candidate) -> Option<f64>>(speed: F) -> Fake<F> {
    let identity = AdapterIdentity {
        name: "fake".into(),
        vendor: 1,
        device: 2,
        backend: "vulkan".into(),
        device_type: "DiscreteGpu".into(),
        driver: "d".into(),
        driver_info: "1".into(),
    };
    Fake {
        speed,
        adapter: AdapterReport {
            index: 0,
            key: identity.key(),
            identity,
            limits: limits(1024),
            features: vec![],
        },
        calls: vec![],
    }
}

impl<F: FnMut(&Candidate) -> Option<f64>> Evaluator for Fake<F> {
    fn adapter(&self) -> &AdapterReport {
        &self.adapter
    }

    fn evaluate(&mut self, request: &EvalRequest) -> EvalReport {
        self.calls.push(request.candidate.origin.clone());
        let speedup = if request.candidate.id == "baseline" {
            Some(1.0)
        } else {
            (self.speed)(&request.candidate)
        };
        match speedup {
            None => EvalReport::failed(&request.candidate.id, Reason::WrongValues, "differs"),
            Some(s) => EvalReport {
                candidate: request.candidate.id.clone(),
                fitness: Fitness::correct(Some(s)),
                failure: None::<Failure>,
                workgroup_size: Some(request.candidate.program.workgroup_size),
                workgroup_storage_bytes: Some(0),
                timings: vec![ShapeTime {
                    shape: request.kernel.tune_shapes[0].clone(),
                    baseline_ns: 1000.0,
                    candidate_ns: 1000.0 / s,
                    speedup: s,
                    spread: 0.01,
                    baseline_spread: 0.01,
                    candidate_spread: 0.01,
                    samples: request.plan.samples,
                    method: "fake".into(),
                    bytes: 0,
                    achieved_gbps: 0.0,
                    min_bytes: 0,
                    min_gbps: 0.0,
                    achieved_gflops: None,
                }],
                noise: Some(0.01),
                verification: VerifyStats::default(),
                roofline: None,
                ceilings: None,
                wall_ms: 1.0,
            },
        }
    }

    fn probe(&mut self) -> Result<Ceilings, String> {
        Err("no probe".into())
    }
}

fn wg_of(c: &Candidate) -> f64 {
    c.program
        .constants
        .iter()
        .find(|(k, _)| k == "KF_WG_X")
        .map_or(4.0, |(_, v)| *v)
}

#[test]
fn the_fastest_correct_candidate_wins() {
    let k = kernel(
        ELEMWISE,
        r#"source = "", sizes(n = 1024), bind(x = input(n), y = output(n))"#,
    );
    // Wider would be faster but computes the wrong thing; 128 is the fastest correct one.
    let mut ev = fake(|c| match wg_of(c) as u32 {
        wg if wg >= 256 => None,
        wg => Some(f64::from(wg) / 32.0),
    });
    let out = search(&k, &mut ev, None, &Config::default(), |_| {}).unwrap();
    let (winner, report) = out.tuned.expect("a winner");
    assert_eq!(wg_of(&winner), 128.0);
    assert_eq!(report.fitness.speedup, Some(4.0));
    assert_eq!(out.strategy, "exhaustive");
    assert_eq!(out.evaluations, out.space_size);
    assert!(
        matches!(out.verdict, Verdict::Tuned { .. }),
        "{:?}",
        out.verdict
    );
    assert_eq!(
        out.history
            .iter()
            .filter(|(_, r)| r.failure.is_some())
            .count(),
        3,
        "256, 512 and 1024"
    );
}

#[test]
fn a_win_within_the_noise_keeps_the_baseline() {
    let k = kernel(
        ELEMWISE,
        r#"source = "", sizes(n = 1024), bind(x = input(n), y = output(n))"#,
    );
    let mut ev = fake(|_| Some(1.015));
    let out = search(&k, &mut ev, None, &Config::default(), |_| {}).unwrap();
    assert!(out.tuned.is_none(), "1.5 % is below the 2 % floor");
    assert!(out.best.is_some());
    assert!(
        matches!(out.verdict, Verdict::WithinNoise { .. }),
        "{:?}",
        out.verdict
    );
    assert!(out.verdict.describe().contains("noise margin"));
}

#[test]
fn no_correct_candidate_keeps_the_baseline() {
    let k = kernel(
        ELEMWISE,
        r#"source = "", sizes(n = 1024), bind(x = input(n), y = output(n))"#,
    );
    let mut ev = fake(|_| None);
    let out = search(&k, &mut ev, None, &Config::default(), |_| {}).unwrap();
    assert!(out.tuned.is_none() && out.best.is_none());
    assert_eq!(out.verdict, Verdict::NoCorrectCandidate);
}

#[test]
fn large_spaces_use_successive_halving_within_the_budget() {
    let k = kernel(
        MATMUL_2D,
        r#"source = "", sizes(n = 64), bind(a = input(n), c = output(n * n)), grid = (n, n)"#,
    );
    let mut ev = fake(|c| {
        let x = c.program.constants[0].1;
        let y = c.program.constants[1].1;
        Some(1.0 + (x * y) / 1024.0 - (x - y).abs() / 512.0)
    });
    let config = Config {
        budget: 12,
        ..Config::default()
    };
    let out = search(&k, &mut ev, None, &config, |_| {}).unwrap();
    assert_eq!(out.strategy, "successive-halving");
    assert!(out.space_size > 12);
    assert!(out.evaluations <= 12, "{} evaluations", out.evaluations);
    assert!(out.tuned.is_some());
    // Later rounds measure with more samples.
    let samples: Vec<u32> = out
        .history
        .iter()
        .map(|(_, r)| r.timings[0].samples)
        .collect();
    assert!(samples.windows(2).any(|w| w[1] > w[0]), "{samples:?}");
}

#[test]
fn a_failing_baseline_stops_the_search() {
    let k = kernel(
        ELEMWISE,
        r#"source = "", sizes(n = 1024), bind(x = input(n), y = output(n))"#,
    );
    struct Broken(AdapterReport);
    impl Evaluator for Broken {
        fn adapter(&self) -> &AdapterReport {
            &self.0
        }
        fn evaluate(&mut self, r: &EvalRequest) -> EvalReport {
            EvalReport::failed(
                &r.candidate.id,
                Reason::DegenerateReference,
                "constant output",
            )
        }
        fn probe(&mut self) -> Result<Ceilings, String> {
            Err(String::new())
        }
    }
    let adapter = fake(|_| None).adapter;
    let err = search(&k, &mut Broken(adapter), None, &Config::default(), |_| {}).unwrap_err();
    assert!(
        err.to_string().contains("degenerate-reference")
            && err.to_string().contains("constant output"),
        "{err}"
    );
}

fn qd_config(seed: u64, budget: u64) -> Config {
    Config {
        budget,
        seed,
        strategy: StrategyKind::Qd,
        ..Config::default()
    }
}

fn by_workgroup(c: &Candidate) -> Option<f64> {
    Some(wg_of(c) / 16.0)
}

#[test]
fn qd_search_is_reproducible_from_its_seed() {
    let k = kernel(
        ELEMWISE,
        r#"source = "", sizes(n = 1024), bind(x = input(n), y = output(n))"#,
    );
    let ids = |seed| {
        let mut ev = fake(by_workgroup);
        let out = search(&k, &mut ev, None, &qd_config(seed, 8), |_| {}).unwrap();
        assert_eq!(out.strategy, "qd");
        assert!(out.cells_filled.is_some());
        out.history
            .iter()
            .map(|(c, _)| c.id.clone())
            .collect::<Vec<_>>()
    };
    let a = ids(1);
    assert!(!a.is_empty());
    assert_eq!(a, ids(1), "same seed, same candidates");
    let unique: std::collections::HashSet<_> = a.iter().collect();
    assert_eq!(unique.len(), a.len(), "no candidate is proposed twice");
}

#[test]
fn a_resumed_run_replays_its_journal_and_evaluates_nothing_twice() {
    let k = kernel(
        ELEMWISE,
        r#"source = "", sizes(n = 1024), bind(x = input(n), y = output(n))"#,
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    // The whole run, journaled.
    let mut ev = fake(by_workgroup);
    let full = {
        let mut j = journal::Journal::open(&mut ev, &path).unwrap();
        search(&k, &mut j, None, &qd_config(3, 6), |_| {}).unwrap()
    };
    let all_calls = ev.calls.len();
    // A kill after three evaluations: the journal holds three lines and half of a fourth.
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), all_calls);
    let kept = 3;
    std::fs::write(
        &path,
        format!(
            "{}\n{}",
            lines[..kept].join("\n"),
            &lines[kept][..lines[kept].len() / 2]
        ),
    )
    .unwrap();
    let mut ev2 = fake(by_workgroup);
    let resumed = {
        let mut j = journal::Journal::open(&mut ev2, &path).unwrap();
        let out = search(&k, &mut j, None, &qd_config(3, 6), |_| {}).unwrap();
        assert_eq!(j.replayed as usize, kept);
        out
    };
    assert_eq!(
        ev2.calls.len(),
        all_calls - kept,
        "only what the kill interrupted is evaluated again"
    );
    let ids = |o: &Outcome| {
        o.history
            .iter()
            .map(|(c, _)| c.id.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&full), ids(&resumed));
    assert_eq!(
        full.tuned.as_ref().map(|t| t.0.id.clone()),
        resumed.tuned.as_ref().map(|t| t.0.id.clone())
    );
    // Everything is in the journal now, once each.
    assert_eq!(journal::read(&path).unwrap().len(), all_calls);
}

const TEMPLATE: &str = r#"
override X: u32;
override Y: u32;
override THREADS: u32;
override ITEMS: u32;
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(X, Y)
fn main(@builtin(local_invocation_index) l: u32, @builtin(workgroup_id) w: vec3<u32>) {
    let base = w.x * THREADS * ITEMS;
    for (var k = 0u; k < ITEMS; k++) {
        let i = base + k * THREADS + l;
        if (i < arrayLength(&y)) { y[i] = 2.0 * x[i]; }
    }
}
"#;

/// The constants of a candidate by name.
fn constants_of(c: &Candidate) -> BTreeMap<String, i64> {
    c.program
        .constants
        .iter()
        .map(|(k, v)| (k.to_string(), *v as i64))
        .collect()
}

#[test]
fn a_launch_rule_over_parameters_launches_each_point_with_its_own_values() {
    let attr = r#"source = "", sizes(n = 8192), bind(x = input(n), y = output(n)),
        workgroups = (cdiv(n, THREADS * ITEMS)),
        params(X = [32, 64], Y = [1, 2], THREADS = X * Y, ITEMS = [4, 0, 8])"#;
    let k = kernel(TEMPLATE, attr);
    let s = space(&k, &limits(1024));
    // ITEMS = 0 cannot launch (division by zero): 2 x 2 x 2 points are left, less the baseline.
    assert_eq!(s.excluded, 4);
    assert_eq!(s.points.len(), 7);
    for p in &s.points {
        let c = candidate(&k, &s, p);
        let v = constants_of(&c);
        let counts = c
            .program
            .workgroups(|n| (n == "n").then_some(8192), 65535)
            .unwrap();
        assert_eq!(
            u64::from(counts[0]),
            8192u64.div_ceil((v["X"] * v["Y"] * v["ITEMS"]) as u64),
            "{v:?}"
        );
    }
}

#[test]
fn a_constrained_space_holds_only_points_that_meet_every_constraint() {
    // 4 x 4 x 4 = 64 combinations of X, Y and ITEMS; THREADS follows from X and Y. The kernel
    // covers THREADS * ITEMS elements per workgroup and is launched as n / 512 workgroups, so
    // only THREADS * ITEMS == 512 is right.
    let attr = r#"source = "", sizes(n = 8192), bind(x = input(n), y = output(n)),
        verify_shapes = [(n = 4096)],
        workgroups = (n / 512),
        params(X = [32, 8, 16, 64], Y = [1, 2, 4, 8], THREADS = X * Y, ITEMS = [16, 1, 2, 4]),
        constraints(THREADS * ITEMS == 512, THREADS <= 256, n % (THREADS * ITEMS) == 0)"#;
    let k = kernel(TEMPLATE, attr);
    assert_eq!(
        k.baseline.constants_pairs(),
        vec![("X", 32.0), ("Y", 1.0), ("ITEMS", 16.0), ("THREADS", 32.0)]
    );
    let s = space(&k, &limits(1024));
    let valid = |c: &BTreeMap<String, i64>| {
        c["THREADS"] == c["X"] * c["Y"] && c["THREADS"] * c["ITEMS"] == 512 && c["THREADS"] <= 256
    };
    // Count the valid combinations independently: X*Y*ITEMS == 512 with X*Y <= 256.
    let mut expected = 0;
    for x in [32, 8, 16, 64] {
        for y in [1, 2, 4, 8] {
            for items in [16, 1, 2, 4] {
                if x * y * items == 512 && x * y <= 256 {
                    expected += 1;
                }
            }
        }
    }
    assert_eq!(
        s.points.len(),
        expected - 1,
        "the baseline is not a candidate"
    );
    assert_eq!(s.excluded, 64 - expected);
    for p in &s.points {
        let c = constants_of(&candidate(&k, &s, p));
        assert!(valid(&c), "{c:?}");
    }
    // The search evaluates only such points, whatever the budget.
    let mut ev = fake(|c| {
        let c = constants_of(c);
        Some(1.0 + c["X"] as f64 / 100.0)
    });
    let config = Config {
        budget: 4,
        ..Config::default()
    };
    let out = search(&k, &mut ev, None, &config, |_| {}).unwrap();
    assert_eq!(out.space_size, (expected - 1) as u64);
    assert_eq!(
        ev.calls.len(),
        out.history.len() + out.finals.len() + 1,
        "the search, the final checks and the baseline"
    );
    for origin in ev.calls.iter().filter(|o| *o != "baseline") {
        let c: BTreeMap<String, i64> = origin
            .trim_start_matches("param ")
            .split(' ')
            .map(|kv| {
                let (k, v) = kv.split_once('=').unwrap();
                (k.to_owned(), v.parse().unwrap())
            })
            .collect();
        assert!(
            valid(&c),
            "evaluated a point that breaks a constraint: {origin}"
        );
    }
}

/// Counts the batches a search hands to `inner`; after `healthy` evaluations it reports a fault,
/// as a broker evaluator does when no worker serves the adapter any more.
struct Fleet<E> {
    inner: E,
    batches: Vec<usize>,
    healthy: usize,
    done: usize,
    fault: Option<String>,
}

impl<E: Evaluator> Evaluator for Fleet<E> {
    fn adapter(&self) -> &AdapterReport {
        self.inner.adapter()
    }
    fn evaluate(&mut self, request: &EvalRequest) -> EvalReport {
        self.evaluate_batch(std::slice::from_ref(request))
            .pop()
            .unwrap()
    }
    fn evaluate_batch(&mut self, requests: &[EvalRequest]) -> Vec<EvalReport> {
        self.batches.push(requests.len());
        // Like a broker evaluator, a batch is answered whole or not at all.
        if self.done + requests.len() > self.healthy {
            self.fault = Some("no worker serves adapter key 0123456789abcdef".into());
        }
        if self.fault.is_some() {
            return requests
                .iter()
                .map(|r| EvalReport::failed(&r.candidate.id, Reason::Crash, "not evaluated"))
                .collect();
        }
        self.done += requests.len();
        requests.iter().map(|r| self.inner.evaluate(r)).collect()
    }
    fn probe(&mut self) -> Result<Ceilings, String> {
        self.inner.probe()
    }
    fn fault(&self) -> Option<String> {
        self.fault.clone()
    }
}

fn fleet<E: Evaluator>(inner: E, healthy: usize) -> Fleet<E> {
    Fleet {
        inner,
        batches: Vec::new(),
        healthy,
        done: 0,
        fault: None,
    }
}

#[test]
fn a_wider_generation_gives_each_island_several_children() {
    let k = kernel(
        ELEMWISE,
        r#"source = "", sizes(n = 1024), bind(x = input(n), y = output(n))"#,
    );
    let batches = |width| {
        let mut ev = fleet(fake(by_workgroup), usize::MAX);
        let config = Config {
            width,
            ..qd_config(5, 16)
        };
        let out = search(&k, &mut ev, None, &config, |_| {}).unwrap();
        let unique: std::collections::HashSet<_> = out.history.iter().map(|(c, _)| &c.id).collect();
        assert_eq!(unique.len(), out.history.len(), "no candidate twice");
        // The baseline's measurement is the first batch; the generations follow.
        ev.batches[1..].to_vec()
    };
    let one = batches(1);
    assert!(one.iter().all(|&n| n <= 4), "one child per island: {one:?}");
    let two = batches(2);
    assert!(
        two[0] > one[0] && two[0] <= 8,
        "two children per island: {two:?} against {one:?}"
    );
}

#[test]
fn a_fault_stops_the_search_and_records_no_placeholder() {
    let k = kernel(
        ELEMWISE,
        r#"source = "", sizes(n = 1024), bind(x = input(n), y = output(n))"#,
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    // The baseline and the first generation, then the workers are gone.
    let mut ev = fleet(fake(by_workgroup), 5);
    let err = {
        let mut j = journal::Journal::open(&mut ev, &path).unwrap();
        search(&k, &mut j, None, &qd_config(3, 12), |_| {}).unwrap_err()
    };
    assert!(ev.done >= 2 && ev.batches.len() > 2, "{:?}", ev.batches);
    assert!(
        matches!(&err, SearchError::Evaluator(m) if m.contains("0123456789abcdef")),
        "{err}"
    );
    let lines = journal::read(&path).unwrap();
    assert_eq!(lines.len(), ev.done, "only real evaluations are journaled");
    assert!(lines.iter().all(|l| l.report.failure.is_none()));
}

const ROW_SUM: &str = r#"
struct Shape { rows: u32, cols: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> shape: Shape;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let row = g.x;
    if (row >= shape.rows) {
        return;
    }
    var s = 0.0;
    for (var c = 0u; c < shape.cols; c++) {
        s += x[row * shape.cols + c];
    }
    y[row] = s;
}
"#;

/// The row sum at 64 × 256.
fn row_sum() -> ResolvedKernel {
    kernel(
        ROW_SUM,
        r#"source = "", sizes(rows = 64, cols = 256), bind(x = input(rows * cols), y = output(rows), shape = uniform(rows, cols)), grid = (rows)"#,
    )
}

/// How many rewrites each operator offers on the user's kernel `k` (on a 1024-lane adapter
/// without features), asked directly; operators that offer none are left out.
fn forms_on_root(k: &ResolvedKernel) -> BTreeMap<&'static str, usize> {
    let target = crate::operators::Target {
        limits: limits(1024),
        features: vec![],
    };
    let subject = crate::operators::Subject {
        kernel: k,
        program: &k.baseline,
        target: &target,
    };
    crate::operators::all()
        .iter()
        .filter_map(|op| Some((op.name(), op.apply(&subject).ok()?.len())))
        .filter(|&(_, n)| n > 0)
        .collect()
}

#[test]
fn every_operator_is_tried_on_the_users_kernel_before_children_are_built_on() {
    let k = row_sum();
    let applicable: std::collections::BTreeSet<&str> = forms_on_root(&k).into_keys().collect();
    assert!(
        applicable.contains("reduce") && applicable.contains("unroll"),
        "{applicable:?}"
    );
    for strategy in [StrategyKind::Qd, StrategyKind::Greedy, StrategyKind::Random] {
        for seed in 1..=3 {
            // Unrolled children look far better than anything else, so a search that built on
            // children before covering the seed would pile onto them (and unrolling the loop
            // rules the reduction out).
            let mut ev = fake(|c: &Candidate| {
                Some(if c.origin.starts_with("unroll") {
                    8.0
                } else {
                    1.1
                })
            });
            let config = Config {
                budget: applicable.len() as u64 + 6,
                seed,
                strategy,
                ..Config::default()
            };
            let out = search(&k, &mut ev, None, &config, |_| {}).unwrap();
            let first: Vec<&str> = out
                .history
                .iter()
                .map(|(c, _)| c.origin.as_str())
                .filter(|o| *o != "baseline")
                .take(applicable.len())
                .collect();
            assert!(
                first.iter().all(|o| !o.contains('→')),
                "{strategy:?} seed {seed}: a child of a child before the seed was covered: {first:?}"
            );
            let ops: std::collections::BTreeSet<&str> =
                first.iter().map(|o| o.split('(').next().unwrap()).collect();
            assert_eq!(
                ops.len(),
                first.len(),
                "{strategy:?} seed {seed}: {first:?}"
            );
            assert!(
                first.iter().any(|o| o.starts_with("reduce")),
                "{strategy:?} seed {seed}: {first:?}"
            );
        }
    }
}

/// Answers every candidate with a speedup of `speed`, and fails it by a tolerance miss that
/// needs `needed` in the plans `fails` picks (always timed, as the runner times a near miss).
struct Hair {
    inner: Fake<fn(&Candidate) -> Option<f64>>,
    needed: f64,
    fails: fn(&EvalPlan) -> bool,
}

impl Evaluator for Hair {
    fn adapter(&self) -> &AdapterReport {
        &self.inner.adapter
    }

    fn evaluate(&mut self, request: &EvalRequest) -> EvalReport {
        let mut report = self.inner.evaluate(request);
        if request.candidate.id != "baseline" && (self.fails)(&request.plan) {
            let tolerance = request.kernel.tolerance;
            report.fitness = Fitness::failed(Reason::WrongValues);
            let mut failure = Failure::new(Reason::WrongValues, "1 of 1024 values differ");
            failure.miss = Some(crate::evaluate::ToleranceMiss {
                tolerance,
                needed: self.needed,
                output: "y".into(),
                shape: "(n = 1024)".into(),
                mismatched: 1,
                scalars: 1024,
                max_rel_elem: self.needed,
                rel_l2: tolerance / 100.0,
                worst: Some(crate::evaluate::WorstElement {
                    index: 17,
                    expected: "1.196375e-2".into(),
                    actual: "1.196668e-2".into(),
                }),
            });
            report.failure = Some(failure);
        }
        report
    }

    fn probe(&mut self) -> Result<Ceilings, String> {
        Err("no probe".into())
    }
}

fn hair(needed: f64, fails: fn(&EvalPlan) -> bool) -> Hair {
    Hair {
        inner: fake((|c: &Candidate| Some(wg_of(c) / 8.0)) as fn(&Candidate) -> Option<f64>),
        needed,
        fails,
    }
}

fn is_final(plan: &EvalPlan) -> bool {
    plan.reverify.is_some()
}

#[test]
fn finalists_failing_by_a_hair_name_the_tolerance_that_would_accept_them() {
    let k = kernel(
        ELEMWISE,
        r#"source = "", sizes(n = 1024), bind(x = input(n), y = output(n)), tolerance = 1e-4"#,
    );
    let out = search(
        &k,
        &mut hair(2.4e-4, is_final),
        None,
        &Config::default(),
        |_| {},
    )
    .unwrap();
    assert!(out.tuned.is_none());
    assert!(matches!(
        out.verdict,
        Verdict::FinalVerificationFailed { .. }
    ));
    let near = out.near_miss.expect("a near miss");
    assert_eq!(near.candidates.len(), super::accept::FINALISTS);
    assert!(near.candidates.iter().all(|c| c.speedup > 1.0));
    assert_eq!(near.suggested, 5e-4);
    let text = near.describe();
    for part in [
        "3 candidates faster than the baseline (128.00x",
        "`tolerance = 5e-4`",
        "[17] expected 1.196375e-2 got 1.196668e-2",
        "relative error 2.40e-4",
        "the kernel's is 1e-4",
        "never changes it",
    ] {
        assert!(text.contains(part), "{part} in {text}");
    }
}

#[test]
fn candidates_rejected_by_a_hair_while_searching_are_reported_too() {
    let k = kernel(
        ELEMWISE,
        r#"source = "", sizes(n = 1024), bind(x = input(n), y = output(n)), tolerance = 1e-7"#,
    );
    let out = search(
        &k,
        &mut hair(2.2e-6, |_| true),
        None,
        &Config::default(),
        |_| {},
    )
    .unwrap();
    assert_eq!(out.verdict, Verdict::NoCorrectCandidate);
    let near = out.near_miss.expect("a near miss");
    // Every candidate of the space (workgroups of 16 to 1024, 2x to 128x), each once.
    let speeds: Vec<f64> = near.candidates.iter().map(|c| c.speedup.round()).collect();
    assert_eq!(speeds, [128.0, 64.0, 32.0, 16.0, 8.0, 4.0, 2.0], "{near:?}");
    assert_eq!(near.suggested, 5e-6);
}

#[test]
fn a_miss_far_outside_the_tolerance_or_a_finalist_failing_otherwise_is_no_near_miss() {
    let k = kernel(
        ELEMWISE,
        r#"source = "", sizes(n = 1024), bind(x = input(n), y = output(n)), tolerance = 1e-4"#,
    );
    let far = search(
        &k,
        &mut hair(2e-2, is_final),
        None,
        &Config::default(),
        |_| {},
    )
    .unwrap();
    assert!(matches!(
        far.verdict,
        Verdict::FinalVerificationFailed { .. }
    ));
    assert_eq!(far.near_miss, None);
    // The plain fake fails its candidates with no comparison figures: a wrong kernel.
    let mut ev = fake(|_| None);
    let wrong = search(&k, &mut ev, None, &Config::default(), |_| {}).unwrap();
    assert_eq!(wrong.near_miss, None);
}

#[test]
fn migration_and_gradient_trust_scale_to_the_budget() {
    use crate::evolve::{ArchiveConfig, GradientConfig};
    let small = Config {
        budget: 32,
        ..Config::default()
    };
    // 32 evaluations over 4 islands are 8 generations: migrate every 2, trust after 8 departures.
    assert_eq!(qd::scaled_archive(&small).migration_interval, 2);
    assert_eq!(qd::scaled_gradient(&small).full_confidence_departures, 8);
    let large = Config {
        budget: 4000,
        ..Config::default()
    };
    assert_eq!(
        qd::scaled_archive(&large).migration_interval,
        ArchiveConfig::default().migration_interval
    );
    assert_eq!(
        qd::scaled_gradient(&large).full_confidence_departures,
        GradientConfig::default().full_confidence_departures
    );
    // A search limited by time keeps the paper's constants: its budget is only a cap.
    let timed = Config {
        budget: 32,
        time_s: Some(60.0),
        ..Config::default()
    };
    assert_eq!(qd::scaled_archive(&timed), ArchiveConfig::default());
    assert_eq!(qd::scaled_gradient(&timed), GradientConfig::default());
}

#[test]
fn operators_with_several_forms_get_several_tries_on_the_users_kernel() {
    let k = row_sum();
    let on_root = forms_on_root(&k);
    let forms = |name: &str| on_root.get(name).copied().unwrap_or(0);
    assert!(forms("reduce") >= 2, "reduce has several forms here");
    let config = Config {
        budget: 48,
        seed: 5,
        strategy: StrategyKind::Qd,
        ..Config::default()
    };
    assert_eq!(qd::root_variants(&config), 3);
    let mut ev = fake(|c: &Candidate| {
        Some(if c.origin.contains("unroll") {
            8.0
        } else {
            1.1
        })
    });
    let out = search(&k, &mut ev, None, &config, |_| {}).unwrap();
    let origins: Vec<&str> = out
        .history
        .iter()
        .map(|(c, _)| c.origin.as_str())
        .filter(|o| *o != "baseline")
        .collect();
    let first_chain = origins
        .iter()
        .position(|o| o.contains('→'))
        .unwrap_or(origins.len());
    let reduce_on_root = origins[..first_chain]
        .iter()
        .filter(|o| o.starts_with("reduce("))
        .count();
    // The root rounds give it three tries; a parent drawn at random afterwards may be the
    // user's kernel again, so more are possible before the first chain.
    assert!(
        reduce_on_root >= forms("reduce").min(3),
        "reduce's forms tried on the user's kernel before any chain: {origins:?}"
    );
}

#[test]
fn known_good_chains_name_their_next_link() {
    let o = |steps: &[&str]| steps.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        qd::chain_next(&o(&["reduce(subgroup, unroll 4)"])),
        Some("unroll")
    );
    assert_eq!(qd::chain_next(&o(&["tile-blocked(4x4)"])), Some("unroll"));
    assert_eq!(
        qd::chain_next(&o(&["reduce(workgroup)", "unroll(i@54, x4)"])),
        Some("param")
    );
    assert_eq!(qd::chain_next(&o(&["param(KF_WG_X=64)"])), None);
    assert_eq!(
        qd::chain_next(&[]),
        None,
        "the user's kernel has no chain yet"
    );
}

#[test]
fn greedy_goes_on_from_the_runner_up_once_the_best_is_spent() {
    let k = row_sum();
    // The reductions of the user's kernel are far ahead, and everything built on them is
    // slower, so the best stays one reduction: once its rewrites are all evaluated, greedy
    // must build on another candidate rather than end with budget left.
    let mut ev = fake(|c: &Candidate| {
        Some(if c.origin.contains('→') {
            1.0
        } else if c.origin.starts_with("reduce(") {
            8.0
        } else {
            1.1
        })
    });
    let config = Config {
        budget: 400,
        seed: 2,
        strategy: StrategyKind::Greedy,
        ..Config::default()
    };
    let out = search(&k, &mut ev, None, &config, |_| {}).unwrap();
    let best = out
        .history
        .iter()
        .filter(|(c, _)| c.origin.starts_with("reduce(") && !c.origin.contains('→'))
        .map(|(c, _)| c.origin.clone())
        .min_by(|a, b| {
            let id = |o: &str| {
                out.history
                    .iter()
                    .find(|(c, _)| c.origin == o)
                    .map(|(c, _)| c.id.clone())
                    .unwrap()
            };
            id(a).cmp(&id(b))
        })
        .expect("a reduction of the user's kernel was evaluated");
    // A child's origin is its parent's, then " → " and its own steps (canonicalisations
    // included).
    let on = format!("{best} → ");
    let on_best = out
        .history
        .iter()
        .filter(|(c, _)| c.origin.starts_with(&on))
        .count();
    let elsewhere: Vec<&str> = out
        .history
        .iter()
        .map(|(c, _)| c.origin.as_str())
        .filter(|o| o.contains('→') && !o.starts_with(&on))
        .collect();
    assert!(on_best > 0, "the best, {best}, was built on");
    assert!(
        !elsewhere.is_empty(),
        "greedy stopped after the best's {on_best} children ({} evaluations)",
        out.history.len()
    );
}

//! Unit tests of the benchmark's pure parts: reading an evaluation into timings, the suite's
//! figures, the tuning cost from a run directory, the markdown table.

use super::*;
use crate::cache::run::RunOptions;
use crate::evaluate::{AdapterReport, Fitness, Reason, VerifyStats};
use kf_runtime::AdapterIdentity;
use kf_runtime::cache::{
    AdapterRecord, FORMAT_VERSION as CACHE_FORMAT, KernelRecord, Outcome, SearchRecord,
    VerificationRecord,
};

fn identity() -> AdapterIdentity {
    AdapterIdentity {
        name: "Test | GPU".into(),
        vendor: 1,
        device: 2,
        backend: "vulkan".into(),
        device_type: "Cpu".into(),
        driver: "test".into(),
        driver_info: "1.0".into(),
    }
}

fn adapter() -> AdapterReport {
    AdapterReport {
        index: 0,
        key: identity().key(),
        identity: identity(),
        limits: Default::default(),
        features: vec![],
    }
}

fn ceilings() -> Ceilings {
    Ceilings {
        format_version: 1,
        tool_version: "test".into(),
        adapter: adapter(),
        copy_gbps: 100.0,
        copy_by_size: vec![],
        fma_gflops: 1000.0,
        method: "test".into(),
        samples: 1,
        measured_at: 0,
        probes: 1,
    }
}

fn shape_time(n: u64, baseline_ns: f64, candidate_ns: f64, flops: Option<f64>) -> ShapeTime {
    ShapeTime {
        shape: [("n".to_owned(), n)].into_iter().collect(),
        baseline_ns,
        candidate_ns,
        speedup: baseline_ns / candidate_ns,
        spread: 0.05,
        baseline_spread: 0.02,
        candidate_spread: 0.03,
        samples: 10,
        method: "test".into(),
        bytes: 4 * n,
        achieved_gbps: (4 * n) as f64 / candidate_ns,
        achieved_gflops: flops.map(|f| f / candidate_ns),
        min_bytes: 0,
        min_gbps: 0.0,
    }
}

fn correct_report(timings: Vec<ShapeTime>) -> EvalReport {
    let speedup = geomean(timings.iter().map(|t| t.speedup));
    EvalReport {
        candidate: "v1".into(),
        fitness: Fitness::correct(speedup),
        failure: None,
        workgroup_size: Some([64, 1, 1]),
        workgroup_storage_bytes: Some(0),
        noise: timings.iter().map(|t| t.spread).reduce(f64::max),
        timings,
        verification: VerifyStats {
            trials: 11,
            ..VerifyStats::default()
        },
        roofline: None,
        wall_ms: 250.0,
        ceilings: None,
    }
}

#[test]
fn a_comparison_sums_shapes_and_recovers_the_work() {
    let report = correct_report(vec![
        shape_time(1000, 400.0, 100.0, Some(8000.0)),
        shape_time(3000, 1200.0, 300.0, Some(24000.0)),
    ]);
    let c = Comparison::of("v1", &report, Some(&ceilings()));
    assert!(c.correct);
    assert_eq!(c.trials, 11);
    let b = c.baseline.as_ref().unwrap();
    let t = c.timing.as_ref().unwrap();
    assert_eq!((b.ns, t.ns), (1600.0, 400.0));
    assert_eq!((b.spread, t.spread), (0.02, 0.03));
    // 16000 bytes over 400 ns; 32000 FLOP over 400 ns.
    assert!((t.gbps - 40.0).abs() < 1e-9, "{}", t.gbps);
    assert!((t.gflops.unwrap() - 80.0).abs() < 1e-9);
    assert!((b.gbps - 10.0).abs() < 1e-9);
    // Intensity 2 FLOP/byte is below the ridge (10): memory-bound at 40 % of 100 GB/s.
    let r = t.roofline.as_ref().unwrap();
    assert_eq!(r.bound, "memory");
    assert!((r.fraction - 0.4).abs() < 1e-9);
    assert!((c.speedup.unwrap() - 4.0).abs() < 1e-9);
    assert_eq!(c.speedup_spread, Some(0.05));
    assert_eq!(c.shapes.len(), 2);
}

#[test]
fn a_failed_comparison_has_no_timing() {
    let report = EvalReport::failed("v1", Reason::WrongValues, "outputs differ\nat element 3");
    let c = Comparison::of("v1", &report, Some(&ceilings()));
    assert!(!c.correct);
    assert_eq!(c.level, 4);
    assert_eq!(c.failure.as_deref(), Some("wrong-values: outputs differ"));
    assert!(c.timing.is_none() && c.baseline.is_none() && c.speedup.is_none());
}

/// A benchmarked kernel without measurements (unit tests of the suite's figures).
pub(crate) fn kernel(
    name: &str,
    status: Status,
    correct: bool,
    speedup: Option<f64>,
) -> KernelBench {
    KernelBench {
        name: name.into(),
        package: "p".into(),
        content_hash: Some("0123456789abcdef".into()),
        status,
        error: None,
        cache_file: None,
        variant: None,
        origin: None,
        correct,
        speedup,
        deployed: None,
        reference: None,
        tuning: None,
    }
}

#[test]
fn fast_p_counts_correct_kernels_strictly_faster_over_the_whole_suite() {
    let ks = vec![
        kernel("A", Status::Tuned, true, Some(3.0)),
        kernel("B", Status::Tuned, true, Some(1.2)),
        kernel("C", Status::BaselineBest, true, Some(1.0)),
        // A wrong variant counts for nothing, however fast.
        kernel("D", Status::Tuned, false, Some(10.0)),
        kernel("E", Status::NotTuned, false, None),
    ];
    assert_eq!(fast_p(&ks, 1.0), 2.0 / 5.0);
    // 1.2 is not faster than 1.2.
    assert_eq!(fast_p(&ks, 1.2), 1.0 / 5.0);
    assert_eq!(fast_p(&ks, 2.0), 1.0 / 5.0);
    assert_eq!(fast_p(&[], 1.0), 0.0);
    let s = Suite::of(&ks);
    assert_eq!(
        (s.kernels, s.tuned, s.baseline_best, s.not_tuned, s.failed),
        (5, 3, 1, 1, 0)
    );
    assert_eq!(s.correct, 3);
    assert_eq!(s.correctness_rate, 3.0 / 5.0);
    assert_eq!((s.fast_1, s.fast_1_2, s.fast_2), (0.4, 0.2, 0.2));
    let g = s.geomean_speedup.unwrap();
    assert!(
        (g - (3.0f64 * 1.2 * 1.0).powf(1.0 / 3.0)).abs() < 1e-12,
        "{g}"
    );
}

#[test]
fn geomean_refuses_non_positive_values() {
    assert_eq!(geomean([]), None);
    assert!((geomean([2.0, 8.0]).unwrap() - 4.0).abs() < 1e-12);
    assert_eq!(geomean([2.0, 0.0]), None);
    assert_eq!(geomean([2.0, f64::NAN]), None);
}

fn cache_entry(evaluations: u64) -> CacheEntry {
    CacheEntry {
        format_version: CACHE_FORMAT,
        tool_version: "test".into(),
        kernel: KernelRecord {
            name: "SAXPY".into(),
            package: "p".into(),
            content_hash: "0123456789abcdef".into(),
            entry: "main".into(),
        },
        adapter: AdapterRecord {
            key: identity().key(),
            identity: identity(),
            limits: Default::default(),
            features: vec![],
        },
        outcome: Outcome::BaselineBest,
        variant: None,
        speedup: 1.0,
        noise: 0.02,
        timings: vec![],
        verification: VerificationRecord {
            shapes: vec![],
            seeds: vec![],
            checks: vec![],
            max_rel_l2: 0.0,
            max_rel_elem: 0.0,
        },
        search: SearchRecord {
            strategy: "qd".into(),
            space_size: 0,
            evaluations,
            budget: 8,
        },
        tuning: None,
    }
}

fn run_options() -> RunOptions {
    RunOptions {
        search: crate::search::Config {
            strategy: crate::search::StrategyKind::Qd,
            seed: 1,
            budget: 8,
            ..crate::search::Config::default()
        },
        tune_shapes: vec![],
        force: false,
        kernels: vec![],
        llm: false,
        llm_replay_only: false,
    }
}

fn write_journal(run: &Run, kernel: &str, hash: &str, wall_ms: &[f64]) {
    let dir = run.kernel_dir(kernel, hash);
    std::fs::create_dir_all(&dir).unwrap();
    let mut text = String::new();
    for (i, ms) in wall_ms.iter().enumerate() {
        let mut report = correct_report(vec![]);
        report.wall_ms = *ms;
        let line = crate::search::journal::Line {
            key: format!("k{i}"),
            candidate: Candidate {
                id: format!("v{i}"),
                origin: "test".into(),
                program: kf_runtime::Program {
                    wgsl: "".into(),
                    entry: "main".into(),
                    constants: Default::default(),
                    workgroup_size: [1, 1, 1],
                    workgroup_storage_bytes: 0,
                    dispatch: kf_runtime::Dispatch {
                        mode: kf_runtime::DispatchMode::Grid,
                        size: [
                            kf_runtime::expr::SizeExpr::size("n"),
                            kf_runtime::expr::SizeExpr::lit(1),
                            kf_runtime::expr::SizeExpr::lit(1),
                        ],
                    },
                    workspace: std::borrow::Cow::Borrowed(&[]),
                    then: Default::default(),
                },
            },
            plan: None,
            report,
        };
        text.push_str(&serde_json::to_string(&line).unwrap());
        text.push('\n');
    }
    std::fs::write(dir.join("journal.jsonl"), text).unwrap();
}

#[test]
fn tuning_seconds_come_from_the_newest_journal_of_this_adapter() {
    let t = tempfile::tempdir().unwrap();
    let key = identity().key().to_string();
    let old = Run::create(t.path(), &key, run_options()).unwrap();
    write_journal(&old, "SAXPY", "0123456789abcdef", &[1000.0, 1000.0]);
    let newer = Run::create(t.path(), &key, run_options()).unwrap();
    write_journal(&newer, "SAXPY", "0123456789abcdef", &[500.0, 250.0, 250.0]);
    // A newer run on another adapter, and one of another kernel version, are not this tune.
    let other = Run::create(t.path(), "ffffffffffffffff", run_options()).unwrap();
    write_journal(&other, "SAXPY", "0123456789abcdef", &[9000.0]);
    let changed = Run::create(t.path(), &key, run_options()).unwrap();
    write_journal(&changed, "SAXPY", "fedcba9876543210", &[9000.0]);

    let cost = tuning_cost(&cache_entry(7), Some(t.path()), "SAXPY");
    assert_eq!(cost.evaluations, 7);
    assert_eq!(cost.seconds, Some(1.0));
    assert_eq!(
        cost.run.as_deref(),
        Some(newer.dir.display().to_string().as_str())
    );

    let none = tuning_cost(&cache_entry(7), None, "SAXPY");
    assert_eq!((none.seconds, none.run), (None, None));
}

#[test]
fn the_markdown_table_has_a_row_per_kernel_and_escapes_cells() {
    let mut a = kernel("SAXPY", Status::Tuned, true, Some(2.5));
    a.deployed = Some(Comparison::of(
        "v1",
        &correct_report(vec![shape_time(1000, 250.0, 100.0, None)]),
        Some(&ceilings()),
    ));
    a.tuning = Some(TuningCost {
        strategy: "qd".into(),
        evaluations: 12,
        budget: 12,
        seconds: Some(3.25),
        run: None,
    });
    let mut b = kernel("MATMUL", Status::Tuned, false, None);
    b.deployed = Some(Comparison::of(
        "v2",
        &EvalReport::failed("v2", Reason::WrongValues, "a | b differ"),
        None,
    ));
    let c = kernel("GEMV", Status::NotTuned, false, None);
    let report = BenchReport::new(&adapter(), Some(&ceilings()), 30, vec![a, b, c]);
    let text = report.markdown();
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("| ")).collect();
    // Header + 3 kernels, header + 1 suite line.
    assert_eq!(rows.len(), 6, "{text}");
    assert!(text.contains("Test \\| GPU"), "{text}");
    let saxpy = rows.iter().find(|r| r.starts_with("| SAXPY")).unwrap();
    assert!(saxpy.contains("| 2.50x |"), "{saxpy}");
    assert!(saxpy.contains("250 ns ± 2 %"), "{saxpy}");
    assert!(
        saxpy.contains("| 40.0 |") && saxpy.contains("40.0 % memory"),
        "{saxpy}"
    );
    assert_eq!(
        [
            rate(1234.5),
            rate(123.4),
            rate(12.34),
            rate(1.234),
            rate(0.01234)
        ],
        ["1234", "123", "12.3", "1.23", "0.012"]
    );
    assert!(saxpy.contains("| 12 | 3.2 |"), "{saxpy}");
    let matmul = rows.iter().find(|r| r.starts_with("| MATMUL")).unwrap();
    assert!(
        matmul.contains("NO (wrong-values: a \\| b differ)"),
        "{matmul}"
    );
    let suite = rows.last().unwrap();
    assert!(
        suite.starts_with(
            "| 3 | 2 | 0 | 1 | 0 | 1 (33 %) | 33 % | 33 % | 33 % | 2.50x | 12 | 3.2 |"
        ),
        "{suite}"
    );
    let json = serde_json::to_string(&report).unwrap();
    let back: BenchReport = serde_json::from_str(&json).unwrap();
    assert_eq!(back, report);
}

#[test]
fn formats_durations() {
    assert_eq!(fmt_ns(1_500_000.0), "1.50 ms");
    assert_eq!(fmt_ns(2_500.0), "2.5 µs");
    assert_eq!(fmt_ns(12.0), "12 ns");
}

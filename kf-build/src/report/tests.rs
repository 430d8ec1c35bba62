//! Report tests on a real run directory: a quality-diversity tune of a small kernel through the
//! real pipeline (`tune::tune_kernel`, journal, archive checkpoints, cache entry) with a fake
//! evaluator that injects the measurements, then gathered and rendered.

use super::*;
use crate::cache::run::RunOptions;
use crate::evaluate::{
    AdapterReport, EvalReport, EvalRequest, Evaluator, Fitness, Reason, ShapeTime, VerifyStats,
};
use kf_runtime::AdapterIdentity;
use sha2::{Digest, Sha256};

const ELEMWISE: &str = r#"
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(4)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < arrayLength(&x)) { y[g.x] = 2.0 * x[g.x]; }
}
"#;

/// Speedups and failures derived from each candidate's id, so they are fixed but varied.
struct Fake {
    adapter: AdapterReport,
    /// Evaluations of candidates so far: every third fails, so a run always has failures to plot.
    evaluated: u32,
}

fn identity() -> AdapterIdentity {
    AdapterIdentity {
        name: "fake".into(),
        vendor: 1,
        device: 2,
        backend: "vulkan".into(),
        device_type: "DiscreteGpu".into(),
        driver: "d".into(),
        driver_info: "1".into(),
    }
}

impl Fake {
    fn new() -> Self {
        let limits = [
            ("max_compute_invocations_per_workgroup", 1024),
            ("max_compute_workgroup_size_x", 1024),
            ("max_compute_workgroup_size_y", 1024),
            ("max_compute_workgroup_size_z", 64),
            ("max_compute_workgroup_storage_size", 32768),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        Fake {
            adapter: AdapterReport {
                index: 0,
                key: identity().key(),
                identity: identity(),
                limits,
                features: vec![],
            },
            evaluated: 0,
        }
    }
}

impl Evaluator for Fake {
    fn adapter(&self) -> &AdapterReport {
        &self.adapter
    }

    fn evaluate(&mut self, request: &EvalRequest) -> EvalReport {
        let id = &request.candidate.id;
        let h = Sha256::digest(id.as_bytes())[0];
        if id != "baseline" {
            self.evaluated += 1;
        }
        if id != "baseline" && self.evaluated.is_multiple_of(3) {
            return EvalReport::failed(id, Reason::WrongValues, "differs at element 3");
        }
        let s = if id == "baseline" {
            1.0
        } else {
            1.0 + f64::from(h % 100) / 50.0
        };
        let n = 1024u64;
        EvalReport {
            candidate: id.clone(),
            fitness: Fitness::correct(Some(s)),
            failure: None,
            workgroup_size: Some(request.candidate.program.workgroup_size),
            workgroup_storage_bytes: Some(0),
            timings: vec![ShapeTime {
                shape: request.kernel.tune_shapes[0].clone(),
                baseline_ns: 1000.0,
                candidate_ns: 1000.0 / s,
                speedup: s,
                spread: 0.001,
                baseline_spread: 0.001,
                candidate_spread: 0.001,
                samples: request.plan.samples,
                method: "fake".into(),
                bytes: 8 * n,
                achieved_gbps: (8 * n) as f64 * s / 1000.0,
                achieved_gflops: None,
                min_bytes: 0,
                min_gbps: 0.0,
            }],
            noise: Some(0.001),
            verification: VerifyStats::default(),
            roofline: None,
            wall_ms: 20.0,
            ceilings: None,
        }
    }

    fn probe(&mut self) -> Result<Ceilings, String> {
        Err("no probe".into())
    }
}

fn found(crate_root: &Path) -> Found {
    let attr = r#"source = "", sizes(n = 1024), bind(x = input(n), y = output(n)), grid = (n)"#;
    let (spec, _) = kf_runtime::syntax::parse_spec(attr.parse().unwrap()).unwrap();
    let kernel = kf_runtime::resolve::resolve("ELEMWISE", &spec, ELEMWISE, "k.wgsl").unwrap();
    Found {
        package: "demo".into(),
        crate_root: crate_root.to_owned(),
        name: "ELEMWISE".into(),
        file: crate_root.join("src/lib.rs"),
        line: 1,
        spec: Some(spec),
        resolved: Ok(kernel),
        skipped: None,
    }
}

/// Tunes ELEMWISE with the QD strategy into a run under `target`, writing the entry under `root`.
fn tune(root: &Path, target: &Path) -> crate::tune::KernelResult {
    let f = found(root);
    let defaults = crate::tune::Options::default();
    let options = crate::tune::Options {
        search: crate::search::Config {
            budget: 12,
            ..defaults.search
        },
        force: true,
        ..crate::tune::Options::default()
    };
    let mut run = Run::create(
        target,
        &identity().key().to_string(),
        RunOptions {
            search: options.search.clone(),
            tune_shapes: vec![],
            force: true,
            kernels: vec![],
            llm: false,
            llm_replay_only: false,
        },
    )
    .unwrap();
    let result = crate::tune::tune_kernel(&f, &mut Fake::new(), None, &options, Some(&run), |_| {});
    run.finish().unwrap();
    result
}

#[test]
fn a_qd_run_is_gathered_and_rendered() {
    let root = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let result = tune(root.path(), target.path());
    assert!(result.error.is_none(), "{:?}", result.error);
    assert!(result.evaluations > 0);

    let run = open_run(target.path(), None).unwrap().expect("the run");
    let report = gather(
        Some(run),
        &[found(root.path())],
        root.path(),
        target.path(),
        None,
    )
    .unwrap();
    assert_eq!(report.kernels.len(), 1);
    let k = &report.kernels[0];
    assert_eq!(k.name, "ELEMWISE");
    assert_eq!(k.package.as_deref(), Some("demo"));
    assert_eq!(k.cells_source, CellSource::Archive);
    assert!(!k.cells.is_empty());
    assert_eq!(
        Some(k.cells.len()),
        result.cells_filled,
        "the heatmap shows the archive's filled cells"
    );
    // The journal: the baseline first, then the search's evaluations, then final verifications.
    assert_eq!(k.points[0].phase, Phase::Baseline);
    let searched = k.points.iter().filter(|p| p.phase == Phase::Search).count();
    assert_eq!(searched as u64, result.evaluations);
    assert!(k.points.iter().any(|p| p.phase == Phase::Final));
    assert!(
        k.points.iter().any(|p| p.level == 4),
        "a failure is plotted"
    );
    // Every archive cell was reached by an evaluation of the journal.
    let lines = journal::read(
        &report
            .run
            .as_ref()
            .unwrap()
            .kernel_dir("ELEMWISE", &k.content_hash)
            .join("journal.jsonl"),
    )
    .unwrap();
    let from_journal = cells_of_journal(&lines);
    for c in &k.cells {
        let j = from_journal
            .iter()
            .find(|j| j.descriptor == c.descriptor)
            .unwrap_or_else(|| panic!("{} is not in the journal", c.descriptor));
        assert!(j.score >= c.score);
    }
    // The entry and the placements.
    let entry = k.entry.as_ref().expect("the cache entry is read");
    assert_eq!(entry.variant.as_ref().map(|v| v.id.clone()), result.variant);
    assert_eq!(k.measured, Measured::Run);
    assert_eq!(k.placements[0].label, "baseline");
    if result.variant.is_some() {
        assert_eq!(k.placements[1].label, "tuned");
        assert!(k.placements[1].gbps > k.placements[0].gbps);
    }
    // Worker time: 20 ms per measured evaluation (failures report none).
    let measured = lines.iter().filter(|l| l.report.is_correct()).count();
    assert!((k.seconds.unwrap() - 0.02 * measured as f64).abs() < 1e-9);

    let page = html::render(&report);
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert_eq!(page.matches("<svg class=\"heatmap\"").count(), 1);
    assert_eq!(page.matches("<rect class=\"cell ").count(), 256);
    assert_eq!(
        page.matches("<rect class=\"cell filled\"").count(),
        k.cells.len()
    );
    assert!(page.contains("id=\"k-ELEMWISE\""));
    // Self-contained: no script, no link to anything outside the file.
    assert!(!page.contains("<script"));
    assert!(!page.contains("http://") && !page.contains("https://"));
    assert!(!page.contains(" src="));
}

#[test]
fn without_an_archive_the_cells_come_from_the_journal() {
    let root = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    tune(root.path(), target.path());
    let run = open_run(target.path(), None).unwrap().unwrap();
    let (_, hash, dir) = run.kernels().remove(0);
    std::fs::remove_file(dir.join("archive.json")).unwrap();
    let report = gather(Some(run), &[], root.path(), target.path(), None).unwrap();
    let k = &report.kernels[0];
    assert_eq!(k.content_hash, hash);
    assert_eq!(k.cells_source, CellSource::Journal);
    assert!(!k.cells.is_empty());
    // Not found in the workspace: no entry, no package, but the run is still shown.
    assert!(k.entry.is_none() && k.package.is_none());
}

#[test]
fn nothing_to_report_names_where_runs_were_looked_for() {
    let target = tempfile::tempdir().unwrap();
    assert!(open_run(target.path(), None).unwrap().is_none());
    let err = gather(None, &[], target.path(), target.path(), None).unwrap_err();
    assert!(err.to_string().contains("kernelfoundry"), "{err}");
    let missing = target.path().join("nope");
    assert!(matches!(
        open_run(target.path(), Some(&missing)),
        Err(ReportError::Run { .. })
    ));
}

#[test]
fn bench_figures_replace_the_run_placements() {
    let root = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let result = tune(root.path(), target.path());
    let run = open_run(target.path(), None).unwrap().unwrap();
    let hash = run.kernels()[0].1.clone();
    let timing = |ns: f64| crate::bench::Timing {
        ns,
        spread: 0.01,
        gbps: 8192.0 / ns,
        gflops: None,
        roofline: None,
    };
    let comparison = |program: &str, base: f64, ns: f64| Comparison {
        program: program.into(),
        level: 5,
        correct: true,
        failure: None,
        trials: 7,
        baseline: Some(timing(base)),
        timing: Some(timing(ns)),
        speedup: Some(base / ns),
        speedup_spread: Some(0.01),
        shapes: vec![],
    };
    let kernel = KernelBench {
        name: "ELEMWISE".into(),
        package: "demo".into(),
        content_hash: Some(hash),
        status: crate::bench::Status::Tuned,
        error: None,
        cache_file: None,
        variant: result.variant.clone(),
        origin: None,
        correct: true,
        speedup: Some(2.0),
        deployed: Some(comparison("v", 1000.0, 500.0)),
        reference: Some(comparison("reference", 1000.0, 250.0)),
        tuning: None,
    };
    let bench = BenchReport::new(&Fake::new().adapter, None, 30, vec![kernel]);
    let report = gather(
        Some(run),
        &[found(root.path())],
        root.path(),
        target.path(),
        Some(bench),
    )
    .unwrap();
    let k = &report.kernels[0];
    assert_eq!(k.measured, Measured::Bench);
    let labels: Vec<&str> = k.placements.iter().map(|p| p.label).collect();
    assert_eq!(labels, ["baseline", "tuned", "reference"]);
    assert_eq!(k.placements[2].ns, 250.0);
    let page = html::render(&report);
    assert!(page.contains("Suite (bench"));
    assert!(page.contains("<table class=\"figures\">"));
    assert!(page.contains("2.00x"));
}

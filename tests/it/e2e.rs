//! The spine, end to end: tune the quickstart, rebuild, run, and the cache's failure modes.

use kf_runtime::cache::{
    AdapterRecord, CacheEntry, FORMAT_VERSION, KernelRecord, Outcome, SearchRecord, ShapeTiming,
    VariantRecord, VerificationRecord,
};
use kf_runtime::{AdapterIdentity, Dispatch, DispatchMode, Program};
use kf_tests::*;
use std::borrow::Cow;
use std::path::Path;

pub(crate) fn lock() -> std::sync::MutexGuard<'static, ()> {
    crate::BUILD_AND_RUN
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// The identity of the adapter the tuner uses by default.
pub(crate) fn this_adapter() -> AdapterIdentity {
    let r = run_ok(&mut kf(&["adapters", "--json"]));
    let json = r.json();
    let adapters = json["adapters"].as_array().expect("adapters");
    assert!(
        !adapters.is_empty(),
        "no GPU adapter found (CI installs lavapipe):\n{}",
        r.dump()
    );
    let a = adapters
        .iter()
        .find(|a| a["default"] == true)
        .expect("a default adapter");
    serde_json::from_value(a.clone()).expect("adapter fields")
}

/// Content hashes of the copied quickstart's kernels, from `list --json`.
pub(crate) fn content_hash(dir: &Path, kernel: &str) -> String {
    let r = run_ok(kf(&["list", "--json", "--manifest-path"]).arg(dir.join("Cargo.toml")));
    let json = r.json();
    json["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == kernel)
        .unwrap_or_else(|| panic!("kernel {kernel} not listed:\n{}", r.dump()))["content_hash"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// A cache entry for the quickstart's SAXPY with the workgroup size lifted and set to `wg`.
pub(crate) fn saxpy_entry(
    dir: &Path,
    adapter: &AdapterIdentity,
    wg: u32,
    wgsl_override: Option<&str>,
) -> CacheEntry {
    let baseline = std::fs::read_to_string(dir.join("src/shaders/saxpy.wgsl")).unwrap();
    let lifted =
        kf_build::analysis::workgroup::lift_workgroup_size(&baseline, "main", [4, 1, 1], 1)
            .unwrap();
    let wgsl = wgsl_override.map(str::to_owned).unwrap_or(lifted);
    let dispatch = Dispatch {
        mode: DispatchMode::Grid,
        size: [
            kf_runtime::expr::SizeExpr::size("n"),
            kf_runtime::expr::SizeExpr::lit(1),
            kf_runtime::expr::SizeExpr::lit(1),
        ],
    };
    let id =
        kf_runtime::hash::variant_id(&wgsl, &[("KF_WG_X", f64::from(wg))], &dispatch.to_string());
    CacheEntry {
        format_version: FORMAT_VERSION,
        tool_version: "test".into(),
        kernel: KernelRecord {
            name: "SAXPY".into(),
            package: "quickstart".into(),
            content_hash: content_hash(dir, "SAXPY"),
            entry: "main".into(),
        },
        adapter: AdapterRecord {
            key: adapter.key(),
            identity: adapter.clone(),
            limits: Default::default(),
            features: vec![],
        },
        outcome: Outcome::Tuned,
        variant: Some(VariantRecord {
            id,
            origin: "test".into(),
            program: Program {
                wgsl: Cow::Owned(wgsl),
                entry: "main".into(),
                constants: Cow::Owned(vec![(Cow::Borrowed("KF_WG_X"), f64::from(wg))]),
                workgroup_size: [wg, 1, 1],
                workgroup_storage_bytes: 0,
                dispatch,
                workspace: Cow::Borrowed(&[]),
                then: Cow::Borrowed(&[]),
            },
        }),
        speedup: 2.0,
        noise: 0.05,
        timings: vec![ShapeTiming {
            shape: [("n".to_string(), 131072)].into_iter().collect(),
            baseline_ns: 2.0,
            variant_ns: 1.0,
            samples: 10,
            method: "test".into(),
        }],
        verification: VerificationRecord {
            shapes: vec![],
            seeds: vec![],
            checks: vec![],
            max_rel_l2: 0.0,
            max_rel_elem: 0.0,
        },
        search: SearchRecord {
            strategy: "test".into(),
            space_size: 1,
            evaluations: 1,
            budget: 1,
        },
        tuning: None,
    }
}

pub(crate) fn write_entry(dir: &Path, entry: &CacheEntry) -> std::path::PathBuf {
    let path = CacheEntry::path(
        dir,
        &entry.kernel.name,
        &entry.kernel.content_hash,
        &entry.adapter.key,
    );
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, entry.to_json()).unwrap();
    path
}

/// The quickstart's SAXPY line: (kernel, variant, match, result correct).
fn saxpy_line(app: &Run) -> (String, String, String, bool) {
    quickstart_lines(&app.stdout)
        .into_iter()
        .find(|l| l.0 == "SAXPY")
        .unwrap_or_else(|| panic!("no SAXPY line:\n{}", app.dump()))
}

fn run_quickstart(log: &str) -> Run {
    let r = run(std::process::Command::new(built_bin("quickstart"))
        .env("RUST_LOG", log)
        .env_remove("KERNELFOUNDRY_VARIANT"));
    assert_eq!(r.code, Some(0), "the quickstart failed:\n{}", r.dump());
    r
}

#[test]
fn tune_rebuild_run_then_cached() {
    let dir = copy_crate("examples/quickstart");
    let manifest = dir.path().join("Cargo.toml");
    let tuned = run_ok(crate::candidates_win(
        kf(&["tune", "--json", "--manifest-path"]).arg(&manifest),
    ));
    let json = tuned.json();
    let kernels = json["kernels"].as_array().expect("kernels");
    assert_eq!(kernels.len(), 3, "{}", tuned.dump());
    let key = json["adapter"]["key"].as_str().unwrap().to_owned();
    for k in kernels {
        let status = k["status"].as_str().unwrap();
        assert!(
            ["tuned", "baseline-best"].contains(&status),
            "{k}\n{}",
            tuned.dump()
        );
        let file = Path::new(k["cache_file"].as_str().unwrap());
        assert!(
            file.starts_with(dir.path()),
            "entries go under the crate root: {}",
            file.display()
        );
        let entry = CacheEntry::parse(file, &std::fs::read_to_string(file).unwrap())
            .expect("a valid entry");
        assert_eq!(entry.adapter.key.as_str(), key);
        assert!(
            entry.verification.seeds.len() >= 3,
            "verified on at least 3 seeds"
        );
        assert!(
            entry
                .verification
                .checks
                .iter()
                .any(|c| c == "poisoned-outputs")
        );
        assert!(
            entry
                .verification
                .checks
                .iter()
                .any(|c| c == "reverify-after-timing")
        );
        assert!(k["evaluations"].as_u64().unwrap() > 0);
    }
    // SAXPY's baseline launches 4 invocations per workgroup: any real adapter runs it slower than
    // a wider workgroup, and `candidates_win` keeps noise from deciding it, so a tuned variant
    // must win.
    let saxpy = kernels.iter().find(|k| k["name"] == "SAXPY").unwrap();
    assert_eq!(saxpy["status"], "tuned", "{}", tuned.dump());
    let saxpy_variant = saxpy["variant"].as_str().unwrap().to_owned();
    // Its spec has no size constraint, and one is all that keeps 16-byte accesses out: tune says
    // which to declare.
    assert!(
        saxpy["notes"]
            .to_string()
            .contains("constraints(n % 4 == 0)"),
        "{}",
        tuned.dump()
    );

    let _guard = lock();
    build(dir.path());
    let app = run_quickstart("warn");
    let lines = quickstart_lines(&app.stdout);
    assert_eq!(lines.len(), 3, "{}", app.dump());
    for (kernel, variant, matched, ok) in &lines {
        assert!(ok, "{kernel} computed a wrong result:\n{}", app.dump());
        assert_eq!(
            matched, "exact",
            "{kernel}: every kernel has an entry for this adapter"
        );
        let expected = kernels
            .iter()
            .find(|k| k["name"] == kernel.as_str())
            .unwrap();
        assert_eq!(variant, expected["variant"].as_str().unwrap_or("baseline"));
    }
    assert!(
        lines
            .iter()
            .any(|(k, v, _, _)| k == "SAXPY" && *v == saxpy_variant)
    );

    // A second run finds every entry and measures nothing.
    let before: Vec<String> = kernels
        .iter()
        .map(|k| std::fs::read_to_string(k["cache_file"].as_str().unwrap()).unwrap())
        .collect();
    let again = run_ok(kf(&["tune", "--json", "--manifest-path"]).arg(&manifest));
    let again_json = again.json();
    for (k, text) in again_json["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .zip(&before)
    {
        assert_eq!(k["status"], "cached", "{}", again.dump());
        assert_eq!(k["evaluations"], 0);
        assert_eq!(
            &std::fs::read_to_string(k["cache_file"].as_str().unwrap()).unwrap(),
            text
        );
    }
}

#[test]
fn entries_for_another_adapter_run_the_baseline() {
    let dir = copy_crate("examples/quickstart");
    let h200 = AdapterIdentity {
        name: "NVIDIA H200".into(),
        vendor: 0x10de,
        device: 0x2335,
        backend: "vulkan".into(),
        device_type: "DiscreteGpu".into(),
        driver: "NVIDIA".into(),
        driver_info: "580.95.05".into(),
    };
    let here = this_adapter();
    assert_ne!(h200.key(), here.key());
    write_entry(dir.path(), &saxpy_entry(dir.path(), &h200, 256, None));
    let _guard = lock();
    build(dir.path());
    let app = run_quickstart("info");
    let lines = quickstart_lines(&app.stdout);
    assert_eq!(lines.len(), 3, "{}", app.dump());
    for (kernel, variant, matched, ok) in &lines {
        assert!(ok, "{kernel} computed a wrong result:\n{}", app.dump());
        assert_eq!(
            (variant.as_str(), matched.as_str()),
            ("baseline", "none"),
            "{kernel}:\n{}",
            app.dump()
        );
    }
    assert!(
        app.stderr
            .contains("none of the 1 embedded entries was tuned on"),
        "the choice is logged:\n{}",
        app.dump()
    );
}

#[test]
fn same_device_with_another_driver_uses_that_entry() {
    let dir = copy_crate("examples/quickstart");
    let mut other_driver = this_adapter();
    other_driver.driver_info = format!("{} (an older build)", other_driver.driver_info);
    let entry = saxpy_entry(dir.path(), &other_driver, 64, None);
    let id = entry.variant.as_ref().unwrap().id.clone();
    write_entry(dir.path(), &entry);
    let _guard = lock();
    build(dir.path());
    let app = run_quickstart("warn");
    let saxpy = saxpy_line(&app);
    assert_eq!(
        (saxpy.1.as_str(), saxpy.2.as_str(), saxpy.3),
        (id.as_str(), "same-device", true),
        "{}",
        app.dump()
    );
}

#[test]
fn broken_cache_entries_are_skipped_and_logged() {
    let dir = copy_crate("examples/quickstart");
    let here = this_adapter();
    // SAXPY: an entry for this very adapter whose WGSL was edited into nonsense.
    let broken = saxpy_entry(dir.path(), &here, 64, Some("fn main( {"));
    let broken_path = write_entry(dir.path(), &broken);
    // SAXPY: a file that is not JSON, under another key.
    let garbage = broken_path.with_file_name("0123456789abcdef.json");
    std::fs::write(&garbage, "{ this is not json").unwrap();
    let _guard = lock();
    let built = build(dir.path());
    assert!(
        built.stderr.contains("is not valid WGSL"),
        "the build warns about the edited entry:\n{}",
        built.dump()
    );
    assert!(
        built.stderr.contains("0123456789abcdef.json"),
        "the build warns about the garbage file:\n{}",
        built.dump()
    );
    let app = run_quickstart("warn");
    let lines = quickstart_lines(&app.stdout);
    assert_eq!(lines.len(), 3, "{}", app.dump());
    for (kernel, variant, _, ok) in &lines {
        assert!(ok, "{kernel} computed a wrong result:\n{}", app.dump());
        assert_eq!(variant, "baseline", "{kernel}");
    }
    assert!(
        app.stderr.contains("skipped cache file"),
        "the app logs why:\n{}",
        app.dump()
    );
    assert!(app.stderr.contains("not valid WGSL"), "{}", app.dump());
}

#[test]
fn a_variant_the_device_rejects_falls_back_at_runtime() {
    let dir = copy_crate("examples/quickstart");
    let here = this_adapter();
    // Valid WGSL (naga accepts `f64` with its FLOAT64 capability) that needs a feature the app's
    // device was not opened with: the quickstart requests what tuned variants may use
    // (`kf_runtime::features`), and SHADER_F64 is not among them.
    let baseline = std::fs::read_to_string(dir.path().join("src/shaders/saxpy.wgsl")).unwrap();
    let lifted =
        kf_build::analysis::workgroup::lift_workgroup_size(&baseline, "main", [4, 1, 1], 1)
            .unwrap();
    let needs_f64 = format!("{lifted}\nfn unused_double(v: f64) -> f64 {{ return v; }}\n");
    write_entry(
        dir.path(),
        &saxpy_entry(dir.path(), &here, 64, Some(&needs_f64)),
    );
    let _guard = lock();
    build(dir.path());
    let app = run_quickstart("warn");
    let saxpy = saxpy_line(&app);
    assert_eq!(
        (saxpy.1.as_str(), saxpy.3),
        ("baseline", true),
        "{}",
        app.dump()
    );
    assert!(
        app.stderr
            .contains("rejected on this device, using the baseline"),
        "{}",
        app.dump()
    );
}

#[test]
fn a_new_entry_rebuilds_the_crate() {
    let dir = copy_crate("examples/quickstart");
    let _guard = lock();
    build(dir.path());
    let first = run_quickstart("warn");
    assert!(
        quickstart_lines(&first.stdout)
            .iter()
            .all(|l| l.1 == "baseline"),
        "{}",
        first.dump()
    );
    // An entry tuned on this adapter appears (e.g. merged from a colleague's machine).
    let entry = saxpy_entry(dir.path(), &this_adapter(), 128, None);
    let id = entry.variant.as_ref().unwrap().id.clone();
    write_entry(dir.path(), &entry);
    build(dir.path());
    let second = run_quickstart("warn");
    let saxpy = saxpy_line(&second);
    assert_eq!(
        (saxpy.1.as_str(), saxpy.2.as_str(), saxpy.3),
        (id.as_str(), "exact", true),
        "{}",
        second.dump()
    );
}

#[test]
fn a_variant_reading_vec4s_runs_in_the_app_when_the_spec_promises_whole_vectors() {
    use kf_build::operators::{Operator, Subject, Target};
    let dir = copy_crate("examples/quickstart");
    // The copy's SAXPY promises lengths that are whole vec4s (the app dispatches n = 131072).
    let kernels = dir.path().join("src/kernels.rs");
    let source = std::fs::read_to_string(&kernels).unwrap();
    let promised = source.replace(
        "    bind(x = input(n), y = inout(n), params = uniform(n, 2.5)),\n    grid = (n),\n",
        "    bind(x = input(n), y = inout(n), params = uniform(n, 2.5)),\n    grid = (n),\n    constraints(n % 4 == 0),\n",
    );
    assert_ne!(promised, source, "the SAXPY attribute was edited");
    std::fs::write(&kernels, promised).unwrap();
    // The operator's rewrite, as a tune would propose it.
    let wgsl = std::fs::read_to_string(dir.path().join("src/shaders/saxpy.wgsl")).unwrap();
    let kernel = crate::operators::resolve(
        "saxpy.wgsl",
        r#"path = "src/shaders/saxpy.wgsl", sizes(n = 131072), bind(x = input(n), y = inout(n), params = uniform(n, 2.5)), grid = (n), constraints(n % 4 == 0)"#,
        &wgsl,
    );
    let target = Target::default();
    let rewrite = kf_build::operators::widen::Widen
        .apply(&Subject {
            kernel: &kernel,
            program: &kernel.baseline,
            target: &target,
        })
        .expect("widen applies")
        .remove(0);
    assert!(rewrite.program.wgsl.contains("array<vec4<f32>>"));
    let here = this_adapter();
    let mut entry = saxpy_entry(dir.path(), &here, 64, None);
    let program = rewrite.program.clone();
    let id = kf_runtime::hash::variant_id(&program.wgsl, &[], &program.dispatch.to_string());
    entry.variant = Some(VariantRecord {
        id: id.clone(),
        origin: rewrite.step.clone(),
        program,
    });
    write_entry(dir.path(), &entry);
    let _guard = lock();
    // The app dispatches SAXPY with n = 100 003, which breaks the promise: the runtime refuses
    // the dispatch, naming the constraint, whichever program it selected.
    build(dir.path());
    let refused = run(std::process::Command::new(built_bin("quickstart"))
        .env("RUST_LOG", "warn")
        .env_remove("KERNELFOUNDRY_VARIANT"));
    assert_ne!(refused.code, Some(0), "{}", refused.dump());
    assert!(
        refused
            .stderr
            .contains("(n = 100003) break the kernel's constraint `n % 4 == 0`"),
        "{}",
        refused.dump()
    );
    // With a length of whole vectors it runs.
    let main = dir.path().join("src/main.rs");
    let app_source = std::fs::read_to_string(&main).unwrap();
    let whole = app_source.replace("let n = 100_003usize;", "let n = 100_004usize;");
    assert_ne!(whole, app_source, "the app's SAXPY length was edited");
    std::fs::write(&main, whole).unwrap();
    build(dir.path());
    // The app binds its f32 buffers with the baseline's layouts, runs the variant and checks
    // every element against the CPU.
    let app = run_quickstart("warn");
    let saxpy = saxpy_line(&app);
    assert_eq!(
        (saxpy.1.as_str(), saxpy.2.as_str(), saxpy.3),
        (id.as_str(), "exact", true),
        "{}",
        app.dump()
    );
}

//! `--tune-shape KERNEL:name=N,…`: one run over a crate whose kernels have different sizes gives
//! each kernel its own shape, and a qualifier naming no selected kernel is refused.

use kf_tests::*;
use serde_json::{Value, json};

/// The kernel named `name` in a `tune --json` or `bench --json` report.
#[track_caller]
fn kernel<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {report}"))
}

#[test]
fn each_kernel_of_one_run_is_tuned_and_benchmarked_at_its_own_shape() {
    let dir = copy_crate("examples/quickstart");
    let manifest = dir.path().join("Cargo.toml");
    let cmd = |args: &[&str]| {
        let mut c = kf(args);
        c.arg("--manifest-path")
            .arg(&manifest)
            .env("CARGO_TARGET_DIR", dir.path().join("target"));
        c
    };

    // A misspelt qualifier, and one naming a kernel `--kernel` leaves out: usage errors, before
    // any GPU work, naming the qualifier and the selected kernels.
    let typo = run(&mut cmd(&["tune", "--tune-shape", "SAXPYY:n=4096"]));
    assert_eq!(typo.code, Some(2), "{}", typo.dump());
    assert!(
        typo.stderr.contains("kernel `SAXPYY`") && typo.stderr.contains("SAXPY, SOFTMAX, MATMUL"),
        "{}",
        typo.dump()
    );
    let left_out = run(&mut cmd(&[
        "bench",
        "--kernel",
        "SAXPY",
        "--tune-shape",
        "MATMUL:m=8",
    ]));
    assert_eq!(left_out.code, Some(2), "{}", left_out.dump());
    assert!(
        left_out.stderr.contains("kernel `MATMUL`")
            && left_out.stderr.contains("selection leaves out"),
        "{}",
        left_out.dump()
    );

    // SAXPY has only `n`, MATMUL `m`, `n`, `k`, SOFTMAX `rows`, `cols`: no unqualified shape fits
    // them all. SAXPY gets two shapes, MATMUL one, SOFTMAX none (it keeps its attribute's).
    let shapes = [
        "--tune-shape",
        "SAXPY:n=4096",
        "--tune-shape",
        "MATMUL:m=24,n=40,k=8",
        "--tune-shape",
        "SAXPY:n=2048",
    ];
    let expected = [
        ("SAXPY", vec![json!({"n": 4096}), json!({"n": 2048})]),
        ("MATMUL", vec![json!({"m": 24, "n": 40, "k": 8})]),
        ("SOFTMAX", vec![json!({"rows": 512, "cols": 512})]),
    ];
    let tuned = run_ok(cmd(&["tune", "--json", "--budget", "2"]).args(shapes));
    let tune = tuned.json();
    for (name, shapes) in &expected {
        let k = kernel(&tune, name);
        assert!(
            ["tuned", "baseline-best"].contains(&k["status"].as_str().unwrap()),
            "{k}\n{}",
            tuned.dump()
        );
        let file = k["cache_file"].as_str().unwrap();
        let entry: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        let timed: Vec<&Value> = entry["timings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| &t["shape"])
            .collect();
        assert_eq!(timed, shapes.iter().collect::<Vec<_>>(), "{name}: {entry}");
        // `shapes_given` is left out of the entry when false.
        assert_eq!(
            entry["tuning"]["shapes_given"].as_bool().unwrap_or(false),
            *name != "SOFTMAX",
            "{name}: {entry}"
        );
        assert_eq!(
            k["tune_shapes"].as_array().unwrap().len(),
            shapes.len(),
            "{k}"
        );
    }

    // `bench` with the same shapes re-verifies each kernel's entry at its own shapes.
    let benched = run_ok(cmd(&["bench", "--json", "--samples", "3"]).args(shapes));
    let bench = benched.json();
    for (name, shapes) in &expected {
        let k = kernel(&bench, name);
        assert_eq!(k["correct"], true, "{k}\n{}", benched.dump());
        let timed: Vec<&Value> = k["deployed"]["shapes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| &t["shape"])
            .collect();
        assert_eq!(timed, shapes.iter().collect::<Vec<_>>(), "{name}: {k}");
    }
}

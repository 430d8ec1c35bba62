//! Candidates that fail only by a hair: faster variants of a row sum whose outputs differ from the
//! baseline's by rounding, beyond the attribute's `tolerance = 1e-7`. `tune` keeps the baseline
//! and names the tolerance that would have accepted them; `eval` says the same of one candidate;
//! the attribute is never changed.

use kf_tests::*;
use serde_json::Value;

const ATTRIBUTE_TOLERANCE: f64 = 1e-7;

#[test]
fn tune_and_eval_name_the_tolerance_a_rounding_difference_needs_and_keep_the_baseline() {
    let dir = copy_crate("tests/fixtures/rounding");
    let manifest = dir.path().join("Cargo.toml");
    let source = std::fs::read_to_string(dir.path().join("src/lib.rs")).unwrap();
    let cmd = |args: &[&str]| {
        let mut c = kf(args);
        c.arg("--manifest-path")
            .arg(&manifest)
            .env("CARGO_TARGET_DIR", dir.path().join("target"));
        c
    };
    // Only the parallel reduction: its tree sums are faster and round differently.
    let search = ["--strategy", "qd", "--operators", "reduce", "--budget", "4"];

    let tuned = run_ok(cmd(&["tune", "--json"]).args(search));
    let report = tuned.json();
    let k = &report["kernels"][0];
    assert_eq!(k["status"], "baseline-best", "{k}\n{}", tuned.dump());
    assert_eq!(k["variant"], Value::Null, "{k}");
    let near = &k["near_miss"];
    let suggested = near["suggested"].as_f64().unwrap_or_else(|| panic!("{k}"));
    let needed = near["needed"].as_f64().unwrap();
    assert_eq!(
        near["tolerance"].as_f64(),
        Some(ATTRIBUTE_TOLERANCE),
        "{near}"
    );
    assert!(
        ATTRIBUTE_TOLERANCE < needed
            && needed <= suggested
            && suggested <= 100.0 * ATTRIBUTE_TOLERANCE,
        "{near}"
    );
    let candidates = near["candidates"].as_array().unwrap();
    assert!(!candidates.is_empty(), "{near}");
    for c in candidates {
        assert!(c["speedup"].as_f64().unwrap() > 1.0, "{near}");
        assert!(c["origin"].as_str().unwrap().contains("reduce"), "{near}");
    }
    let worst = &near["worst"];
    assert_eq!(worst["output"], "y", "{near}");
    assert!(worst["worst"]["index"].is_u64(), "{near}");
    assert!(worst["rel_l2"].as_f64().unwrap() > 0.0, "{near}");

    // The text report ends the kernel's lines with the same, and whose choice it is.
    let text = run_ok(cmd(&["tune", "--force"]).args(search));
    let line = text
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("near miss:"))
        .unwrap_or_else(|| panic!("no near-miss line:\n{}", text.dump()));
    for part in [
        "faster than the baseline",
        "failed only by the tolerance",
        "`tolerance = ",
        "the kernel's is 1e-7",
        "never changes it",
    ] {
        assert!(line.contains(part), "{part}: {line}");
    }

    // One such candidate through `eval`: rejected, with the tolerance that would accept it.
    let tree = dir.path().join("tree_sum.wgsl");
    let tree = tree.to_str().unwrap();
    let eval = |json: bool| {
        let mut c = cmd(&[
            "eval",
            "--kernel",
            "ROW_SUM",
            "--candidate",
            tree,
            "--workgroups",
            "rows",
            "--samples",
            "3",
        ]);
        if json {
            c.arg("--json");
        }
        run(&mut c)
    };
    let judged = eval(false);
    assert_eq!(judged.code, Some(1), "{}", judged.dump());
    assert!(
        judged.stdout.contains("rejected (wrong-values)")
            && judged.stdout.contains("would pass at `tolerance = ")
            && judged.stdout.contains("never changes it"),
        "{}",
        judged.dump()
    );
    let judged = eval(true);
    let report = judged.json();
    let miss = &report["failure"]["miss"];
    let needed = miss["needed"]
        .as_f64()
        .unwrap_or_else(|| panic!("{}", judged.dump()));
    assert!(
        ATTRIBUTE_TOLERANCE < needed && needed <= 100.0 * ATTRIBUTE_TOLERANCE,
        "{miss}"
    );

    // The tolerance is the user's: nothing rewrote the attribute.
    assert_eq!(
        std::fs::read_to_string(dir.path().join("src/lib.rs")).unwrap(),
        source
    );
}

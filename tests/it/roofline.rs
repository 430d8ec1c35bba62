//! The roofline cap never rejects an honest kernel: a gather that reads a small part of its table
//! and a residual add are tuned twice in a row against a deliberately pessimistic stored ceiling,
//! and both runs accept them (the evaluator measures the ceiling again instead of giving a
//! verdict on first sight, and counts only traffic every correct kernel must move).

use kf_tests::*;
use std::path::{Path, PathBuf};

/// Probes the adapter into `manifest`'s workspace and returns the stored ceilings file.
fn probe(manifest: &Path) -> PathBuf {
    let r = run_ok(
        kf(&[
            "adapters",
            "--probe",
            "--json",
            "--adapter",
            "0",
            "--manifest-path",
        ])
        .arg(manifest),
    );
    PathBuf::from(r.json()["adapters"][0]["ceilings_file"].as_str().unwrap())
}

/// Rewrites the stored ceilings as if the adapter could copy only `gbps` (a probe on a machine
/// far busier than it is now), keeping the tool version and time so the file counts as current.
fn make_pessimistic(file: &Path, gbps: f64) {
    let mut c: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    c["copy_gbps"] = serde_json::json!(gbps);
    for p in c["copy_by_size"].as_array_mut().unwrap() {
        p["gbps"] = serde_json::json!(gbps);
    }
    std::fs::write(file, c.to_string()).unwrap();
}

fn stored_copy_gbps(file: &Path) -> f64 {
    let c: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    c["copy_gbps"].as_f64().unwrap()
}

#[test]
fn honest_gather_and_residual_add_pass_twice_against_a_pessimistic_ceiling() {
    let fixture = copy_crate("tests/fixtures/kernels");
    let manifest = fixture.path().join("Cargo.toml");
    let file = probe(&manifest);
    let real = stored_copy_gbps(&file);
    assert!(real > 0.0);
    for run_no in 0..2 {
        make_pessimistic(&file, 1e-6);
        for kernel in ["GATHER", "RESIDUAL"] {
            let r = run(kf(&[
                "tune",
                "--json",
                "--force",
                "--budget",
                "3",
                "--adapter",
                "0",
                "--kernel",
                kernel,
                "--manifest-path",
            ])
            .arg(&manifest));
            assert_eq!(r.code, Some(0), "run {run_no}, {kernel}:\n{}", r.dump());
            let json = r.json();
            let k = &json["kernels"][0];
            assert!(
                ["tuned", "baseline-best"].contains(&k["status"].as_str().unwrap()),
                "run {run_no}, {kernel}: {}",
                r.dump()
            );
            assert!(
                k["rejected"].get("exceeds-roofline").is_none(),
                "run {run_no}, {kernel}: an honest candidate was rejected by the cap: {}",
                r.dump()
            );
            // The re-measured ceiling replaced the pessimistic one in the store.
            assert!(
                stored_copy_gbps(&file) > 1e-3,
                "run {run_no}, {kernel}: the stored ceiling stayed at {}",
                stored_copy_gbps(&file)
            );
            make_pessimistic(&file, 1e-6);
        }
    }
}

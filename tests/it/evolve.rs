//! The evolution engine end to end: a quality-diversity tune that is killed with SIGKILL and
//! resumed, on the real binary and adapter.

use kf_tests::*;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The run directories under a target directory.
fn runs(target: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(target.join("kernelfoundry/runs"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

fn journal_keys(path: &Path) -> Vec<(String, String)> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .map(|v| {
            (
                v["key"].as_str().unwrap().to_owned(),
                v["candidate"]["id"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn a_killed_qd_tune_resumes_without_evaluating_anything_twice() {
    let dir = copy_crate("examples/quickstart");
    let manifest = dir.path().join("Cargo.toml");
    // A private target directory, so the run directory is this test's alone.
    let target = tempfile::tempdir().unwrap();
    let args = [
        "tune",
        "--strategy",
        "qd",
        "--budget",
        "14",
        "--seed",
        "1",
        "--force",
        "--kernel",
        "MATMUL",
        "--json",
        "--manifest-path",
    ];
    let mut child = kf(&args)
        .arg(&manifest)
        .env("CARGO_TARGET_DIR", target.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until a few evaluations are journaled, then kill the tuner outright.
    let started = Instant::now();
    let journal = loop {
        if let Some(run) = runs(target.path()).last()
            && let Some(k) = std::fs::read_dir(run)
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .find(|p| p.is_dir())
        {
            let j = k.join("journal.jsonl");
            if journal_keys(&j).len() >= 4 {
                break j;
            }
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the tune finished before it could be killed"
        );
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "no evaluations journaled in time"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    child.kill().unwrap(); // SIGKILL on Unix
    child.wait().unwrap();
    let before = journal_keys(&journal);
    assert!(before.len() >= 4);
    let run_json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(journal.parent().unwrap().parent().unwrap().join("run.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(run_json["finished"], false);

    let resumed = run_ok(
        kf(&["tune", "--resume", "--json", "--manifest-path"])
            .arg(&manifest)
            .env("CARGO_TARGET_DIR", target.path()),
    );
    let json = resumed.json();
    let k = &json["kernels"][0];
    assert_eq!(k["name"], "MATMUL", "{}", resumed.dump());
    assert!(
        k["status"] == "tuned" || k["status"] == "baseline-best",
        "{}",
        resumed.dump()
    );
    assert_eq!(k["strategy"], "qd");
    assert_eq!(k["seed"], 1);
    // Same run directory, now finished.
    assert_eq!(runs(target.path()).len(), 1, "resume continues the run");
    let after = journal_keys(&journal);
    let keys: HashSet<&String> = after.iter().map(|(k, _)| k).collect();
    assert_eq!(keys.len(), after.len(), "an evaluation was repeated");
    for b in &before {
        assert!(after.contains(b), "{b:?} was lost");
    }
    assert!(after.len() > before.len(), "the resumed run did more work");
    // The archive checkpoint holds every candidate evaluated before the kill.
    let archive = std::fs::read_to_string(journal.with_file_name("archive.json")).unwrap();
    for (_, id) in &before {
        assert!(
            id == "baseline" || archive.contains(id.as_str()),
            "candidate {id} evaluated before the kill is missing from the archive"
        );
    }
    let run_json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(journal.parent().unwrap().parent().unwrap().join("run.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(run_json["finished"], true);
}

//! The evolution engine end to end: a quality-diversity tune that is killed with SIGKILL and
//! resumed, and a run of several `--kernel`s resumed on the same kernels, on the real binary and
//! adapter.

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

#[test]
fn a_run_of_several_kernels_tunes_exactly_those_and_resumes_on_them() {
    let dir = copy_crate("examples/quickstart");
    let manifest = dir.path().join("Cargo.toml");
    let target = tempfile::tempdir().unwrap();
    let cmd = |args: &[&str]| {
        let mut c = kf(args);
        c.arg("--manifest-path")
            .arg(&manifest)
            .env("CARGO_TARGET_DIR", target.path());
        c
    };
    let names = |report: &serde_json::Value| -> Vec<String> {
        report["kernels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k["name"].as_str().unwrap().to_owned())
            .collect()
    };

    // A name the workspace lacks, or a pattern that matches nothing, is refused before any GPU
    // work, listing the kernels there are.
    for (wanted, message) in [
        ("SAXPI", "no kernel named `SAXPI`"),
        ("CONV*", "no kernel matches `CONV*`"),
    ] {
        let r = run(&mut cmd(&["tune", "--kernel", "SAXPY", "--kernel", wanted]));
        assert_eq!(r.code, Some(2), "{}", r.dump());
        assert!(
            r.stderr.contains(message) && r.stderr.contains("SAXPY, SOFTMAX, MATMUL"),
            "{}",
            r.dump()
        );
    }
    assert!(runs(target.path()).is_empty(), "a refused tune left a run");

    // One name and one pattern, on small shapes with a tiny budget: SAXPY and SOFTMAX, never
    // MATMUL.
    let tune = [
        "tune",
        "--kernel",
        "SAXPY",
        "--kernel",
        "SOFT*",
        "--budget",
        "2",
        "--force",
        "--json",
        "--tune-shape",
        "SAXPY:n=1024",
        "--tune-shape",
        "SOFTMAX:rows=16,cols=64",
    ];
    let first = run_ok(&mut cmd(&tune));
    assert_eq!(
        names(&first.json()),
        ["SAXPY", "SOFTMAX"],
        "{}",
        first.dump()
    );
    let [run_dir] = runs(target.path()).try_into().unwrap();
    let record = || -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("run.json")).unwrap()).unwrap()
    };
    assert_eq!(
        record()["options"]["kernels"],
        serde_json::json!(["SAXPY", "SOFTMAX"])
    );
    assert_eq!(record()["finished"], true);
    let kernel_dirs = || -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&run_dir)
            .unwrap()
            .flatten()
            .filter(|e| e.path().is_dir())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let dirs = kernel_dirs();
    assert_eq!(dirs.len(), 2, "{dirs:?}");
    assert!(
        dirs[0].starts_with("SAXPY-") && dirs[1].starts_with("SOFTMAX-"),
        "{dirs:?}"
    );

    // As if the tune had been killed after SAXPY: SOFTMAX's search is gone and the run is not
    // finished. The resumed run tunes the same two kernels (SOFTMAX from scratch), in the same
    // run directory, without being told which.
    std::fs::remove_dir_all(run_dir.join(&dirs[1])).unwrap();
    let mut unfinished = record();
    unfinished["finished"] = serde_json::Value::Bool(false);
    std::fs::write(
        run_dir.join("run.json"),
        serde_json::to_string_pretty(&unfinished).unwrap(),
    )
    .unwrap();
    let resumed = run_ok(&mut cmd(&["tune", "--resume", "--json"]));
    let report = resumed.json();
    assert_eq!(names(&report), ["SAXPY", "SOFTMAX"], "{}", resumed.dump());
    for k in report["kernels"].as_array().unwrap() {
        assert!(
            k["status"] == "tuned" || k["status"] == "baseline-best",
            "{k}\n{}",
            resumed.dump()
        );
    }
    assert_eq!(
        runs(target.path()),
        std::slice::from_ref(&run_dir),
        "resume continues the run"
    );
    assert_eq!(kernel_dirs(), dirs);
    assert_eq!(
        record()["options"]["kernels"],
        serde_json::json!(["SAXPY", "SOFTMAX"])
    );
    assert_eq!(record()["finished"], true);
}

//! Remote evaluation end to end: a real `nats-server` (JetStream on, its store in a temporary
//! directory, a free port), real `worker --broker` processes on this machine's adapters, a real
//! `tune --broker`; and `tune --worker-cmd` through the stdio worker.
//!
//! Workers run in their own process group, so killing one with SIGKILL takes its evaluation
//! process too, as when a machine dies; SIGTERM and SIGINT go to the worker alone, which must end
//! within two seconds in every state (connecting, its broker gone, evaluating, waiting). Deadlines here are short (`--ack-wait 2`) so that
//! redeliveries happen within seconds.

use kf_tests::{Run, copy_crate, kf, nats_server};
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const USER: &str = "kf-e2e";
const PASSWORD: &str = "Brk-s3cret-4711-never-logged";

/// A nats-server for one test.
struct Nats {
    child: Child,
    addr: String,
    _store: tempfile::TempDir,
}

impl Nats {
    fn start(auth: bool) -> Nats {
        let store = tempfile::tempdir().unwrap();
        let mut cmd = Command::new(nats_server());
        cmd.args(["-js", "-a", "127.0.0.1", "-p", "-1", "-sd"])
            .arg(store.path().join("js"))
            .arg("--ports_file_dir")
            .arg(store.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if auth {
            cmd.args(["--user", USER, "--pass", PASSWORD]);
        }
        let child = cmd.spawn().expect("nats-server starts");
        let started = Instant::now();
        let addr = loop {
            let ports = std::fs::read_dir(store.path())
                .unwrap()
                .flatten()
                .find(|e| e.file_name().to_string_lossy().ends_with(".ports"));
            if let Some(p) = ports
                && let Ok(v) = serde_json::from_str::<serde_json::Value>(
                    &std::fs::read_to_string(p.path()).unwrap_or_default(),
                )
                && let Some(url) = v["nats"][0].as_str()
            {
                break url.trim_start_matches("nats://").to_owned();
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "nats-server did not write its ports file"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        Nats {
            child,
            addr,
            _store: store,
        }
    }

    fn url(&self, with_password: bool) -> String {
        if with_password {
            format!("nats://{USER}:{PASSWORD}@{}", self.addr)
        } else {
            format!("nats://{}", self.addr)
        }
    }
}

impl Nats {
    /// Stops the server, as when the broker's machine goes away.
    fn stop(&mut self) {
        self.child.kill().expect("nats-server is running");
        self.child.wait().unwrap();
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A `worker --broker` process (in its own process group) and the lines of its stderr.
struct Worker {
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Worker {
    fn start(url: &str, name: &str, extra: &[&str], env: &[(&str, &str)]) -> Worker {
        let mut cmd = kf(&["worker", "--broker", url, "--name", name, "--ack-wait", "2"]);
        cmd.args(extra)
            .env_remove("KERNELFOUNDRY_TEST_FAULT")
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = cmd.spawn().expect("the worker starts");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = lines.clone();
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                sink.lock().unwrap().push(line);
            }
        });
        Worker { child, lines }
    }

    fn log(&self) -> String {
        self.lines.lock().unwrap().join("\n")
    }

    /// How many evaluations the worker has reported so far.
    fn reports(&self) -> usize {
        self.log().matches("reported ").count()
    }

    /// Whether the worker reports more than `before` evaluations within 30 s: its stderr reaches
    /// the test through a reader thread, and on a loaded machine the line can trail the result
    /// that the client already received.
    fn reported_more_than(&self, before: usize) -> bool {
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(30) {
            if self.reports() > before {
                return true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    }

    /// The first stderr line that `matches`, waiting up to `timeout`.
    #[track_caller]
    fn wait_for(
        &mut self,
        what: &str,
        timeout: Duration,
        matches: impl Fn(&str) -> bool,
    ) -> String {
        let started = Instant::now();
        loop {
            if let Some(l) = self.lines.lock().unwrap().iter().find(|l| matches(l)) {
                return l.clone();
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                // Let the reader drain what the worker wrote before it ended.
                std::thread::sleep(Duration::from_millis(200));
                panic!("the worker ended ({status}) before {what}:\n{}", self.log());
            }
            assert!(
                started.elapsed() < timeout,
                "no {what} within {timeout:?}; worker log:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until the worker announced itself; returns its adapter key.
    #[track_caller]
    fn ready(&mut self) -> String {
        let line = self.wait_for("its announcement", Duration::from_secs(180), |l| {
            l.contains("waiting for evaluations")
        });
        line.split("adapter key ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .expect("the ready line names the key")
            .to_owned()
    }

    /// Sends `signal` (`TERM`, `INT`) to the worker process alone, as a service manager or a
    /// terminal would.
    fn signal(&self, signal: &str) {
        let sent = Command::new("kill")
            .args([&format!("-{signal}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success(), "kill -{signal} failed");
    }

    /// Sends `signal` and asserts that the worker ends cleanly within `limit`.
    #[track_caller]
    fn stops_on(&mut self, signal: &str, limit: Duration) {
        assert!(
            self.child.try_wait().unwrap().is_none(),
            "the worker ended before SIG{signal}:\n{}",
            self.log()
        );
        self.signal(signal);
        let sent = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(
                sent.elapsed() < limit,
                "the worker was still running {limit:?} after SIG{signal}:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        // Let the reader drain what the worker wrote before it ended.
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(
            status.code(),
            Some(0),
            "SIG{signal} did not stop the worker cleanly ({status}):\n{}",
            self.log()
        );
        assert!(
            self.log().lines().any(|l| l == "worker stopping"),
            "{}",
            self.log()
        );
    }

    /// SIGKILL to the worker and its evaluation process, as when its machine dies.
    fn kill(&mut self) {
        let pgid = self.child.id();
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{pgid}")])
            .stderr(Stdio::null())
            .status();
        let _ = self.child.wait();
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `tune --broker`-style command on a copy of the quickstart, with a private target directory.
fn tune(dir: &Path, target: &Path, args: &[&str]) -> Command {
    let mut cmd = kf(&[
        "tune",
        "--strategy",
        "qd",
        "--seed",
        "1",
        "--json",
        "--verbose",
    ]);
    cmd.args(args)
        .arg("--manifest-path")
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", target)
        .env_remove("KERNELFOUNDRY_BROKER")
        .env_remove("KERNELFOUNDRY_TEST_FAULT");
    cmd
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// The journal lines of every kernel of every run under `target`: (kernel dir, line).
fn journals(target: &Path) -> Vec<(String, serde_json::Value)> {
    let mut files = Vec::new();
    files_under(&target.join("kernelfoundry/runs"), &mut files);
    files.sort();
    let mut out = Vec::new();
    for f in files.iter().filter(|f| f.ends_with("journal.jsonl")) {
        let kernel = f
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        for line in std::fs::read_to_string(f).unwrap().lines() {
            out.push((kernel.clone(), serde_json::from_str(line).unwrap()));
        }
    }
    out
}

/// The search candidates of the one kernel of a `--verbose --json` tune.
fn search_candidates(json: &serde_json::Value) -> Vec<serde_json::Value> {
    json["kernels"][0]["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["phase"] == "search")
        .cloned()
        .collect()
}

#[track_caller]
fn assert_unique_journal(target: &Path) -> Vec<(String, serde_json::Value)> {
    let lines = journals(target);
    assert!(!lines.is_empty(), "nothing was journaled");
    let mut keys = std::collections::HashSet::new();
    for (kernel, l) in &lines {
        assert!(
            keys.insert((kernel.clone(), l["key"].as_str().unwrap().to_owned())),
            "evaluation {} of {} has two reports in the run",
            l["key"],
            l["candidate"]["id"]
        );
    }
    lines
}

#[test]
fn two_workers_share_the_queue_and_a_killed_one_loses_nothing() {
    let nats = Nats::start(true);
    // Worker a logs in with the password in its URL, worker b from the environment. Worker a
    // hangs on the first candidate it takes (the baseline runs), and is killed while it does.
    let mut a = Worker::start(
        &nats.url(true),
        "a",
        &[],
        &[
            ("KERNELFOUNDRY_TEST_FAULT", "hang:v"),
            ("RUST_LOG", "debug"),
        ],
    );
    let mut b = Worker::start(
        &nats.url(false),
        "b",
        &[],
        &[
            ("KERNELFOUNDRY_BROKER_USER", USER),
            ("KERNELFOUNDRY_BROKER_PASSWORD", PASSWORD),
            ("RUST_LOG", "debug"),
        ],
    );
    let key = a.ready();
    assert_eq!(b.ready(), key, "both workers serve this machine's adapter");
    let dir = copy_crate("examples/quickstart");
    let target = tempfile::tempdir().unwrap();
    let tuner = tune(
        dir.path(),
        target.path(),
        &[
            "--broker",
            &nats.url(true),
            "--kernel",
            "SAXPY",
            "--budget",
            "10",
        ],
    )
    .env("RUST_LOG", "kf_build=debug")
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let took = a.wait_for(
        "a candidate taken by worker a",
        Duration::from_secs(180),
        |l| l.starts_with("took ") && l.contains(" v"),
    );
    std::thread::sleep(Duration::from_millis(500));
    a.kill();
    let lost = took
        .split_whitespace()
        .nth(1)
        .unwrap()
        .trim_end_matches(':')
        .to_owned();
    let candidate = took.split_whitespace().nth(3).unwrap().to_owned();
    assert!(
        !a.log().contains(&format!("reported {lost}:")),
        "worker a finished {lost} before the kill:\n{}",
        a.log()
    );
    let out: Run = tuner.wait_with_output().unwrap().into();
    assert_eq!(
        out.code,
        Some(0),
        "{}\n--- worker b\n{}",
        out.dump(),
        b.log()
    );
    let json = out.json();
    let k = &json["kernels"][0];
    assert!(
        k["status"] == "tuned" || k["status"] == "baseline-best",
        "{json}"
    );
    assert_eq!(json["adapter"]["key"], key.as_str());
    // The request of the killed worker went to worker b, as its second delivery.
    let b_log = b.log();
    assert!(
        b_log
            .lines()
            .any(|l| l.starts_with(&format!("took {lost}: SAXPY {candidate} (delivery 2)"))),
        "worker b did not get {lost} ({candidate}) again:\n{b_log}"
    );
    assert!(b_log.contains(&format!("reported {lost}:")), "{b_log}");
    assert!(
        out.stderr
            .contains("went to another worker after the first stopped answering")
            || out.stderr.contains(&format!("{lost} went to worker b")),
        "{}",
        out.stderr
    );
    // Every candidate has exactly one report in the run, the lost one included.
    let lines = assert_unique_journal(target.path());
    let search = search_candidates(&json);
    assert_eq!(search.len() as u64, k["evaluations"].as_u64().unwrap());
    let ids: std::collections::HashSet<&str> =
        search.iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), search.len(), "a candidate was reported twice");
    assert!(
        ids.contains(candidate.as_str()),
        "{candidate} has no report"
    );
    assert_eq!(
        lines
            .iter()
            .filter(|(_, l)| l["candidate"]["id"] == candidate.as_str()
                && l["plan"]["reverify"].is_null())
            .count(),
        1,
        "the lost candidate's search evaluation is journaled once"
    );
    // The cache entry is written, for the workers' adapter.
    let file = PathBuf::from(k["cache_file"].as_str().unwrap());
    assert!(
        file.starts_with(dir.path().join("kernelfoundry")),
        "{file:?}"
    );
    assert_eq!(
        file.file_name().unwrap().to_string_lossy(),
        format!("{key}.json")
    );
    let entry: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(entry["adapter"]["key"], key.as_str());
    // The password is in no output, log or file the run left.
    let mut files = Vec::new();
    files_under(target.path(), &mut files);
    files_under(&dir.path().join("kernelfoundry"), &mut files);
    for (what, text) in [
        ("the tune's stdout".to_owned(), out.stdout.clone()),
        ("the tune's stderr".to_owned(), out.stderr.clone()),
        ("worker a's log".to_owned(), a.log()),
        ("worker b's log".to_owned(), b_log),
    ]
    .into_iter()
    .chain(files.iter().filter_map(|f| {
        let bytes = std::fs::read(f).ok()?;
        Some((
            f.display().to_string(),
            String::from_utf8_lossy(&bytes).into_owned(),
        ))
    })) {
        assert!(!text.contains(PASSWORD), "the broker password is in {what}");
        assert!(
            !text.contains("s3cret-4711"),
            "part of the password is in {what}"
        );
    }
}

#[test]
fn a_key_nobody_serves_ends_the_tune_naming_it() {
    let nats = Nats::start(false);
    let dir = copy_crate("examples/quickstart");
    let target = tempfile::tempdir().unwrap();
    // Nobody at all serves the key asked for.
    let out: Run = tune(
        dir.path(),
        target.path(),
        &[
            "--broker",
            &nats.url(false),
            "--adapter-key",
            "00000000deadbeef",
            "--broker-timeout",
            "2",
            "--kernel",
            "SAXPY",
            "--budget",
            "4",
        ],
    )
    .output()
    .unwrap()
    .into();
    assert_eq!(out.code, Some(3), "{}", out.dump());
    assert!(
        out.stderr
            .contains("no worker serves adapter key 00000000deadbeef"),
        "{}",
        out.dump()
    );
    assert!(
        !dir.path().join("kernelfoundry").exists(),
        "no entry written"
    );

    // The only worker dies mid-run: once its announcement expires, the tune stops and names the
    // key; nothing it did not evaluate is journaled, and the run stays resumable.
    let mut w = Worker::start(
        &nats.url(false),
        "only",
        &[],
        &[("KERNELFOUNDRY_TEST_FAULT", "hang:v")],
    );
    let key = w.ready();
    let tuner = tune(
        dir.path(),
        target.path(),
        &[
            "--broker",
            &nats.url(false),
            "--broker-timeout",
            "3",
            "--kernel",
            "SAXPY",
            "--budget",
            "8",
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    w.wait_for("a candidate taken", Duration::from_secs(180), |l| {
        l.starts_with("took ") && l.contains(" v")
    });
    w.kill();
    let out: Run = tuner.wait_with_output().unwrap().into();
    assert_eq!(out.code, Some(3), "{}", out.dump());
    assert!(
        out.stderr
            .contains(&format!("no worker serves adapter key {key}")),
        "{}",
        out.dump()
    );
    let lines = assert_unique_journal(target.path());
    assert!(
        lines.iter().all(|(_, l)| !l["report"]["failure"]["log"]
            .as_str()
            .unwrap_or("")
            .contains("not evaluated")),
        "a placeholder was journaled"
    );
    let mut runs = Vec::new();
    files_under(&target.path().join("kernelfoundry/runs"), &mut runs);
    let record = runs.iter().find(|f| f.ends_with("run.json")).unwrap();
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(record).unwrap()).unwrap();
    assert_eq!(record["finished"], false, "the run can be resumed");
}

#[test]
fn a_candidate_that_kills_its_workers_is_recorded_as_a_crash() {
    let nats = Nats::start(false);
    // One worker slot, restarted whenever its worker dies (as a service manager would); every
    // worker aborts when it takes the candidate with workgroup size 64.
    let url = nats.url(false);
    let deaths = Arc::new(Mutex::new(0u32));
    let stop = Arc::new(Mutex::new(false));
    let logs = Arc::new(Mutex::new(String::new()));
    let key = {
        let mut first = Worker::start(
            &url,
            "slot",
            &["--max-deliveries", "2"],
            &[("KERNELFOUNDRY_TEST_FAULT", "worker-abort:KF_WG_X=64)")],
        );
        let key = first.ready();
        let (deaths, stop, logs, url) = (deaths.clone(), stop.clone(), logs.clone(), url.clone());
        std::thread::spawn(move || {
            let mut w = first;
            loop {
                if *stop.lock().unwrap() {
                    break;
                }
                if let Ok(Some(_)) = w.child.try_wait() {
                    *deaths.lock().unwrap() += 1;
                    logs.lock().unwrap().push_str(&w.log());
                    w = Worker::start(
                        &url,
                        "slot",
                        &["--max-deliveries", "2"],
                        &[("KERNELFOUNDRY_TEST_FAULT", "worker-abort:KF_WG_X=64)")],
                    );
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            logs.lock().unwrap().push_str(&w.log());
        });
        key
    };
    let dir = copy_crate("examples/quickstart");
    let target = tempfile::tempdir().unwrap();
    let out: Run = tune(
        dir.path(),
        target.path(),
        &[
            "--broker",
            &url,
            "--adapter-key",
            &key,
            "--kernel",
            "SAXPY",
            "--operators",
            "lift-workgroup-size,param",
            "--budget",
            "6",
        ],
    )
    .output()
    .unwrap()
    .into();
    *stop.lock().unwrap() = true;
    let logs = logs.lock().unwrap().clone();
    assert_eq!(out.code, Some(0), "{}\n--- workers\n{logs}", out.dump());
    let json = out.json();
    let crashed: Vec<serde_json::Value> = search_candidates(&json)
        .into_iter()
        .filter(|c| c["origin"].as_str().unwrap().contains("KF_WG_X=64)"))
        .collect();
    assert!(!crashed.is_empty(), "{json}");
    for c in &crashed {
        assert_eq!(c["level"], 2);
        let reason = c["reason"].as_str().unwrap();
        assert!(
            reason.starts_with("crash: handed to workers 2 time(s) and no report came back"),
            "{reason}"
        );
    }
    assert_eq!(
        *deaths.lock().unwrap() as usize,
        2 * crashed.len(),
        "two runs of each, then the crash record"
    );
    assert_unique_journal(target.path());
    assert!(json["kernels"][0]["cache_file"].is_string(), "{json}");
}

#[test]
fn one_archive_and_one_entry_per_adapter_key() {
    let nats = Nats::start(false);
    let url = nats.url(false);
    let mut vulkan = Worker::start(&url, "vk", &["--adapter", "vulkan"], &[]);
    let mut gl = Worker::start(&url, "gl", &["--adapter", "gl"], &[]);
    let vk_key = vulkan.ready();
    let gl_key = gl.ready();
    assert_ne!(
        vk_key, gl_key,
        "this test needs two adapters: lavapipe over Vulkan and llvmpipe over GL (Debian: mesa-vulkan-drivers, libegl-mesa0, libgl1-mesa-dri)"
    );
    let dir = copy_crate("examples/quickstart");
    let target = tempfile::tempdir().unwrap();
    let out: Run = tune(
        dir.path(),
        target.path(),
        &[
            "--broker",
            &url,
            "--adapter-key",
            &vk_key,
            "--adapter-key",
            &gl_key,
            "--kernel",
            "SAXPY",
            "--budget",
            "6",
        ],
    )
    .output()
    .unwrap()
    .into();
    assert_eq!(out.code, Some(0), "{}", out.dump());
    let json = out.json();
    let targets = json["targets"].as_array().expect("one report per key");
    let keys: Vec<&str> = targets
        .iter()
        .map(|t| t["adapter"]["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, [vk_key.as_str(), gl_key.as_str()]);
    for t in targets {
        let key = t["adapter"]["key"].as_str().unwrap();
        let file = PathBuf::from(t["kernels"][0]["cache_file"].as_str().unwrap());
        assert_eq!(
            file.file_name().unwrap().to_string_lossy(),
            format!("{key}.json")
        );
        assert!(file.is_file());
        assert!(t["kernels"][0]["evaluations"].as_u64().unwrap() > 0);
    }
    // One run (archive and journal) per key, each evaluated by that key's worker only.
    let hash = targets[0]["kernels"][0]["content_hash"].as_str().unwrap();
    let mut runs: Vec<String> = std::fs::read_dir(target.path().join("kernelfoundry/runs"))
        .unwrap()
        .flatten()
        .map(|e| {
            let record = std::fs::read_to_string(e.path().join("run.json")).unwrap();
            let v: serde_json::Value = serde_json::from_str(&record).unwrap();
            let kernel = e.path().join(format!("SAXPY-{hash}"));
            assert!(
                kernel.join("journal.jsonl").is_file() && kernel.join("archive.json").is_file()
            );
            v["adapter_key"].as_str().unwrap().to_owned()
        })
        .collect();
    runs.sort();
    let mut want = vec![vk_key.clone(), gl_key.clone()];
    want.sort();
    assert_eq!(runs, want);
    for (w, name) in [(&vulkan, "vk"), (&gl, "gl")] {
        assert!(
            w.log().contains("reported "),
            "worker {name} evaluated nothing"
        );
    }

    // `bench` through the same broker: it measures one key, so with two served it asks which.
    let bench = |args: &[&str]| -> Run {
        let mut cmd = kf(&["bench", "--kernel", "SAXPY", "--samples", "3", "--json"]);
        cmd.args(args)
            .arg("--manifest-path")
            .arg(dir.path().join("Cargo.toml"))
            .env("CARGO_TARGET_DIR", target.path())
            .env_remove("KERNELFOUNDRY_BROKER");
        cmd.output().unwrap().into()
    };
    let both = bench(&["--broker", &url]);
    assert_ne!(both.code, Some(0), "{}", both.dump());
    assert!(
        both.stderr.contains("serves 2 adapter keys") && both.stderr.contains("--adapter-key"),
        "{}",
        both.dump()
    );
    let gl_reports_before = gl.reports();
    let one = bench(&["--broker", &url, "--adapter-key", &gl_key]);
    assert_eq!(one.code, Some(0), "{}", one.dump());
    let j = one.json();
    assert_eq!(j["adapter"]["key"], gl_key.as_str(), "{}", one.dump());
    // The GL key's entry is measured: a tuned variant, or the baseline where the tune on this
    // noisy CPU driver found nothing faster (whether it does is timing, not what is tested).
    let status = j["kernels"][0]["status"].as_str().unwrap_or_default();
    assert!(
        status == "tuned" || status == "baseline-best",
        "{}",
        one.dump()
    );
    assert_eq!(j["kernels"][0]["correct"], true, "{}", one.dump());
    assert!(
        gl.reported_more_than(gl_reports_before),
        "the bench's evaluation went to the GL key's worker:\n{}",
        gl.log()
    );

    // `eval` too: the kernel's own file as the candidate, on the Vulkan key's workers.
    let vk_reports_before = vulkan.reports();
    let candidate = dir.path().join("src/shaders/saxpy.wgsl");
    let mut cmd = kf(&[
        "eval",
        "--kernel",
        "SAXPY",
        "--samples",
        "3",
        "--json",
        "--broker",
        &url,
        "--adapter-key",
        &vk_key,
    ]);
    cmd.arg("--candidate")
        .arg(&candidate)
        .arg("--manifest-path")
        .arg(dir.path().join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", target.path())
        .env_remove("KERNELFOUNDRY_BROKER");
    let evaluated: Run = cmd.output().unwrap().into();
    assert_eq!(evaluated.code, Some(0), "{}", evaluated.dump());
    let j = evaluated.json();
    assert_eq!(j["adapter_key"], vk_key.as_str(), "{}", evaluated.dump());
    assert_eq!(j["correct"], true, "{}", evaluated.dump());
    assert!(
        vulkan.reported_more_than(vk_reports_before),
        "the evaluation went to the Vulkan key's worker:\n{}",
        vulkan.log()
    );

    // `ablate` opens its backend the same way: one short search, on the GL key's workers.
    let gl_reports_before = gl.reports();
    let mut cmd = kf(&[
        "ablate",
        "--kernel",
        "SAXPY",
        "--budget",
        "2",
        "--seeds",
        "1",
        "--strategies",
        "greedy",
        "--json",
        "--broker",
        &url,
        "--adapter-key",
        &gl_key,
    ]);
    cmd.arg("--manifest-path")
        .arg(dir.path().join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", target.path())
        .env_remove("KERNELFOUNDRY_BROKER");
    let ablated: Run = cmd.output().unwrap().into();
    assert_eq!(ablated.code, Some(0), "{}", ablated.dump());
    let j = ablated.json();
    assert_eq!(j["adapter_key"], gl_key.as_str(), "{}", ablated.dump());
    assert_eq!(j["runs"].as_array().unwrap().len(), 1, "{}", ablated.dump());
    assert!(
        j["runs"][0]["evaluations"].as_u64().unwrap() > 0,
        "{}",
        ablated.dump()
    );
    assert!(
        gl.reported_more_than(gl_reports_before),
        "the ablation's evaluations went to the GL key's worker:\n{}",
        gl.log()
    );
}

#[test]
fn a_worker_command_speaks_the_protocol_over_stdio() {
    let dir = copy_crate("examples/quickstart");
    let target = tempfile::tempdir().unwrap();
    // The far end kills the candidate that hangs at its deadline and answers with a timeout.
    let cmd = format!(
        "KERNELFOUNDRY_TEST_FAULT='hang:KF_WG_X=64)' '{}' kernelfoundry worker --stdio",
        kf_tests::bin().display()
    );
    let out: Run = tune(
        dir.path(),
        target.path(),
        &[
            "--worker-cmd",
            &cmd,
            "--kernel",
            "SAXPY",
            "--operators",
            "lift-workgroup-size,param",
            "--timeout",
            "3",
            "--budget",
            "6",
        ],
    )
    .output()
    .unwrap()
    .into();
    assert_eq!(out.code, Some(0), "{}", out.dump());
    let json = out.json();
    let hung: Vec<serde_json::Value> = search_candidates(&json)
        .into_iter()
        .filter(|c| c["origin"].as_str().unwrap().contains("KF_WG_X=64)"))
        .collect();
    assert_eq!(hung.len(), 1, "{json}");
    assert!(
        hung[0]["reason"].as_str().unwrap().starts_with("timeout:"),
        "{}",
        hung[0]
    );
    assert!(json["kernels"][0]["cache_file"].is_string(), "{json}");
}

#[test]
fn the_broker_bench_script_needs_only_the_binary_and_nats_server() {
    // A PATH with the shell tools the script uses and nothing else: no cargo, as on a GPU machine
    // that only received the release binary.
    let tools = tempfile::tempdir().unwrap();
    for tool in [
        "bash", "realpath", "mkdir", "mktemp", "cp", "rm", "sed", "printf", "cat", "date", "grep",
        "awk", "wc", "cut", "paste", "tee", "seq", "sleep", "kill", "dirname", "head", "echo",
    ] {
        let found = ["/usr/bin", "/bin"]
            .iter()
            .map(|d| Path::new(d).join(tool))
            .find(|p| p.is_file())
            .unwrap_or_else(|| panic!("{tool} is not installed"));
        std::os::unix::fs::symlink(found, tools.path().join(tool)).unwrap();
    }
    let out_dir = tempfile::tempdir().unwrap();
    let script = kf_tests::root().join("examples/kernelbench/scripts/broker-bench.sh");
    let out: Run = Command::new(tools.path().join("bash"))
        .arg(&script)
        .arg(kf_tests::bin())
        .arg(nats_server())
        .arg(out_dir.path())
        .arg("2")
        .env_clear()
        .env("PATH", tools.path())
        .env("HOME", out_dir.path())
        .output()
        .unwrap()
        .into();
    assert_eq!(out.code, Some(0), "{}", out.dump());
    let text = std::fs::read_to_string(out_dir.path().join("broker-bench.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let modes: Vec<(String, u64)> = lines
        .iter()
        .map(|l| {
            (
                l["mode"].as_str().unwrap().to_owned(),
                l["workers"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        modes,
        [
            ("local".to_owned(), 0),
            ("broker".to_owned(), 1),
            ("broker".to_owned(), 2)
        ]
    );
    for l in &lines {
        assert_eq!(l["kernels"], 3, "{l}");
        assert_eq!(l["evaluations"], 6, "two per kernel: {l}");
        assert!(l["evals_per_s"].as_f64().unwrap() > 0.0, "{l}");
        assert_eq!(l["tune_evals_per_s"].as_array().unwrap().len(), 3, "{l}");
    }
    let worker2 = std::fs::read_to_string(out_dir.path().join("worker-2.log")).unwrap();
    assert!(
        worker2.contains("reported "),
        "the second worker took nothing:\n{worker2}"
    );
}

/// How soon a worker must end after SIGTERM or SIGINT, in any state.
const STOP_WITHIN: Duration = Duration::from_secs(2);

#[test]
fn a_worker_stops_at_once_on_sigterm_after_its_broker_is_gone_past_the_back_off_ceiling() {
    let mut nats = Nats::start(false);
    let mut w = Worker::start(&nats.url(false), "lonely", &[], &[]);
    w.ready();
    nats.stop();
    // Long enough for the client's reconnect back-off to reach its ceiling and for anything the
    // worker queued meanwhile to pile up behind the reconnection: async-nats's default delay
    // doubles from 2 ms to its 4 s ceiling, reached after about 8 s of refused attempts, so the
    // worker is in a ceiling wait (or starting the next attempt) when the signal comes. (It was a
    // minute, which held one of CI's two test threads idle for 45 s more than this shows.)
    std::thread::sleep(Duration::from_secs(15));
    w.stops_on("TERM", STOP_WITHIN);
}

#[test]
fn a_worker_stops_at_once_on_sigint_while_it_connects() {
    // A "broker" that accepts the connection and never says a word: the client waits for the
    // server's greeting (up to its connection timeout, far longer than the limit here).
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    silent.set_nonblocking(true).unwrap();
    let url = format!("nats://{}", silent.local_addr().unwrap());
    let mut w = Worker::start(&url, "hopeful", &[], &[]);
    let started = Instant::now();
    let _held = loop {
        match silent.accept() {
            Ok((stream, _)) => break stream,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("accept failed: {e}"),
        }
        if let Ok(Some(status)) = w.child.try_wait() {
            panic!(
                "the worker ended ({status}) before it connected:\n{}",
                w.log()
            );
        }
        assert!(
            started.elapsed() < Duration::from_secs(180),
            "the worker did not connect:\n{}",
            w.log()
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    w.stops_on("INT", STOP_WITHIN);
}

#[test]
fn a_worker_stopped_mid_evaluation_hands_its_request_to_another() {
    let nats = Nats::start(false);
    let url = nats.url(false);
    // Worker a hangs on the first candidate it takes; worker b starts once a has stopped.
    let mut a = Worker::start(&url, "a", &[], &[("KERNELFOUNDRY_TEST_FAULT", "hang:v")]);
    a.ready();
    let dir = copy_crate("examples/quickstart");
    let target = tempfile::tempdir().unwrap();
    let tuner = tune(
        dir.path(),
        target.path(),
        // The tune waits for worker b however long b takes to start on a loaded machine.
        &[
            "--broker",
            &url,
            "--broker-timeout",
            "600",
            "--kernel",
            "SAXPY",
            "--budget",
            "4",
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let took = a.wait_for("a candidate taken", Duration::from_secs(180), |l| {
        l.starts_with("took ") && l.contains(" v")
    });
    a.stops_on("TERM", STOP_WITHIN);
    let id = took
        .split_whitespace()
        .nth(1)
        .unwrap()
        .trim_end_matches(':');
    assert!(!a.log().contains(&format!("reported {id}:")), "{}", a.log());
    let mut b = Worker::start(&url, "b", &[], &[]);
    b.ready();
    let out: Run = tuner.wait_with_output().unwrap().into();
    assert_eq!(
        out.code,
        Some(0),
        "{}\n--- worker b\n{}",
        out.dump(),
        b.log()
    );
    assert!(
        b.log()
            .lines()
            .any(|l| l.starts_with(&format!("took {id}: ")) && l.ends_with("(delivery 2)")),
        "worker b did not get {id} again:\n{}",
        b.log()
    );
    assert!(b.log().contains(&format!("reported {id}:")), "{}", b.log());
    assert_unique_journal(target.path());
    // Waiting for the next request, with the broker up.
    b.stops_on("TERM", STOP_WITHIN);
}

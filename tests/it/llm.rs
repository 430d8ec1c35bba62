//! `tune --llm` end to end on a real adapter, against the replay server: served answers become
//! candidates judged at their ladder level, a served kernel wins, prompts carry the adapter's spec
//! sheet and the search's results, meta edits apply, the endpoint's faults are survived, a stopped
//! server leaves the run to the offline operators, a replay-only rerun sends nothing, and the API
//! key is nowhere in what the runs wrote.

use kf_tests::replay::{Fault, Received, ReplayServer, Reply, Script};
use kf_tests::{Run, copy_crate, kf, root, run};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

const KEY: &str = "sk-kf-e2e-0123456789abcdef-do-not-log";

fn answer(name: &str) -> Reply {
    Reply::new(
        std::fs::read_to_string(root().join("tests/data/llm").join(format!("{name}.md"))).unwrap(),
    )
}

/// The quickstart with the LLM settings of these tests in its manifest (the URL and the key come
/// from the environment, as a user would set them).
fn quickstart() -> tempfile::TempDir {
    let dir = copy_crate("examples/quickstart");
    let manifest = dir.path().join("Cargo.toml");
    let mut text = std::fs::read_to_string(&manifest).unwrap();
    text.push_str(
        r#"
[package.metadata.kernelfoundry.llm]
model = "replay-model"
input_price = 0.5
output_price = 1.5
temperature = 0.2
concurrency = 1
per_generation = 3
meta_every = 3
repair = 1.0
template = 0.0
retries = 4
backoff_s = 0.1
timeout_s = 2.0
"#,
    );
    std::fs::write(&manifest, text).unwrap();
    dir
}

fn script() -> Script {
    let mut s = Script::default();
    s.answer("SAXPY", "*", answer("saxpy_fast"))
        .answer("SAXPY", "*", answer("saxpy_constant"))
        .answer("SOFTMAX", "*", answer("softmax_workgroup"))
        .answer("SOFTMAX", "*", answer("softmax_prose"))
        .answer("SOFTMAX", "*", answer("softmax_uniform"))
        .answer("MATMUL", "*", answer("matmul_tiled"))
        .answer("MATMUL", "*", answer("matmul_blocked"))
        .answer("MATMUL", "*", answer("matmul_syntax"))
        .answer("MATMUL", "*", answer("matmul_wrong_index"))
        .answer("MATMUL", "*", answer("matmul_interface"))
        .answer("MATMUL", "*", answer("matmul_previous_output"))
        .answer(
            "MATMUL",
            "*",
            Reply::truncated(answer("matmul_truncated").text),
        )
        .answer("MATMUL", "repair", answer("matmul_repaired"));
    for kernel in ["SAXPY", "SOFTMAX", "MATMUL"] {
        s.fallback.insert(
            kernel.into(),
            Reply::new("I have no further improvement to offer for this kernel."),
        );
    }
    s.meta.extend([
        answer("meta_good"),
        answer("meta_malformed"),
        answer("meta_good"),
    ]);
    s
}

/// The offline operators of these runs: all but the matmul tiling ones. Those reach about 8x
/// the naive matmul on lavapipe, as fast as the served register-blocked kernel within the timing
/// noise; without them the served kernel wins by far more than the noise, so which variant wins
/// does not depend on timing luck.
const OPERATORS: &str = "param,unroll,hoist,reshape,lift-workgroup-size";

fn tune(dir: &Path, target: &Path, url: &str, extra: &[&str]) -> Run {
    let mut cmd = kf(&["tune", "--llm", "--force", "--budget", "16", "--verbose"]);
    cmd.args(["--operators", OPERATORS]);
    cmd.args(extra)
        .arg("--manifest-path")
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", target)
        .env("KERNELFOUNDRY_LLM_URL", url)
        .env("KERNELFOUNDRY_LLM_API_KEY", KEY)
        .env_remove("KERNELFOUNDRY_LLM_MODEL")
        .env_remove("OPENAI_API_KEY")
        .env("RUST_LOG", "kf_build=debug");
    run(&mut cmd)
}

/// Every exchange the run recorded: (kernel, exchange JSON).
fn exchanges(target: &Path) -> Vec<(String, serde_json::Value)> {
    let runs = target.join("kernelfoundry/runs");
    let mut out = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    let newest = dirs.last().expect("a run directory");
    for k in std::fs::read_dir(newest).unwrap().flatten() {
        let ex = k.path().join("llm/exchanges");
        let Ok(files) = std::fs::read_dir(&ex) else {
            continue;
        };
        let kernel = k
            .file_name()
            .to_string_lossy()
            .split('-')
            .next()
            .unwrap()
            .to_owned();
        let mut files: Vec<PathBuf> = files.map(|f| f.unwrap().path()).collect();
        files.sort();
        for f in files {
            let v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
            out.push((kernel.clone(), v));
        }
    }
    out
}

/// The served marker (`// replay: …`) of each answer, with the candidate it became.
fn candidates_by_marker(target: &Path) -> BTreeMap<String, String> {
    exchanges(target)
        .into_iter()
        .filter_map(|(_, e)| {
            let answer = e["answer"].as_str()?;
            let marker = answer
                .lines()
                .find_map(|l| l.trim().strip_prefix("// replay: "))
                .map(str::to_owned)
                .or_else(|| {
                    answer
                        .starts_with("The kernel makes three passes")
                        .then(|| "softmax prose".to_owned())
                })?;
            Some((marker, e["candidate"].as_str()?.to_owned()))
        })
        .collect()
}

fn kernel<'a>(json: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    json["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {json}"))
}

/// (level, reason) of candidate `id` in the search of `name`.
fn verdict(json: &serde_json::Value, name: &str, id: &str) -> (u64, String) {
    let c = kernel(json, name)["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id && c["phase"] == "search")
        .unwrap_or_else(|| panic!("{id} was not evaluated for {name}"));
    (
        c["level"].as_u64().unwrap(),
        c["reason"].as_str().unwrap_or("").to_owned(),
    )
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

#[track_caller]
fn assert_no_key(what: &str, text: &str) {
    assert!(!text.contains(KEY), "the API key is in {what}");
    assert!(
        !text.contains("0123456789abcdef-do-not-log"),
        "part of the API key is in {what}"
    );
}

fn user_prompts(received: &[Received]) -> Vec<String> {
    received
        .iter()
        .filter(|r| r.served == "answer")
        .map(|r| r.message("user"))
        .collect()
}

#[test]
fn tune_with_an_llm_against_the_replay_server() {
    let crate_dir = quickstart();
    let target = tempfile::tempdir().unwrap();
    let mut s = script();
    s.faults.extend([
        Fault::TooManyRequests(1),
        Fault::ServerError,
        Fault::Hang(Duration::from_secs(4)),
        Fault::InvalidJson,
    ]);
    let server = ReplayServer::start(s);
    let first = tune(crate_dir.path(), target.path(), &server.url(), &["--json"]);
    assert_eq!(first.code, Some(0), "{}", first.dump());
    let json = first.json();
    let received = server.received();

    // The faults were survived: four failed attempts, then answers.
    let faults = received
        .iter()
        .filter(|r| r.served.starts_with("fault"))
        .count();
    assert_eq!(faults, 4, "{received:#?}");
    assert!(received.iter().all(|r| r.path == "/v1/chat/completions"));
    assert!(
        received
            .iter()
            .all(|r| r.authorization.as_deref() == Some(&format!("Bearer {KEY}")[..])),
        "the key is sent to the endpoint, in the header"
    );

    // Every answer was judged at its ladder level.
    let ids = candidates_by_marker(target.path());
    let expect = [
        (
            "SAXPY",
            "saxpy with 256-wide workgroups, 4 elements per invocation",
            5,
            "",
        ),
        (
            "SAXPY",
            "saxpy cheat, writes a constant instead of computing",
            4,
            "wrong-values",
        ),
        (
            "SOFTMAX",
            "softmax, one 64-wide workgroup per row, tree reductions in workgroup memory",
            5,
            "",
        ),
        ("SOFTMAX", "softmax prose", 0, "no-code"),
        (
            "SOFTMAX",
            "softmax cheat, a uniform distribution for every row",
            4,
            "wrong-values",
        ),
        (
            "MATMUL",
            "matmul tiled through workgroup memory, 8x8 tiles",
            5,
            "",
        ),
        (
            "MATMUL",
            "matmul register-blocked, a 4x4 block of outputs per invocation",
            5,
            "",
        ),
        ("MATMUL", "matmul with a syntax error", 0, "parse"),
        (
            "MATMUL",
            "matmul with wrong indexing, B read transposed",
            4,
            "wrong-values",
        ),
        (
            "MATMUL",
            "matmul with a changed interface, A declared read_write",
            3,
            "interface-mismatch",
        ),
        (
            "MATMUL",
            "matmul cheat, keeps what the previous run left in the output",
            4,
            "wrong-values",
        ),
        ("MATMUL", "matmul cut at the token limit", 0, "parse"),
    ];
    for (name, marker, level, reason) in expect {
        let id = ids
            .get(marker)
            .unwrap_or_else(|| panic!("`{marker}` was never served: {ids:#?}\n{}", first.dump()));
        let (got, why) = verdict(&json, name, id);
        assert_eq!(got, level, "{marker}: {why}");
        assert!(why.starts_with(reason), "{marker}: {why}");
    }

    // A served kernel wins: the register-blocked matmul runs about 5x the naive one on lavapipe,
    // and none of the offline operators of this run blocks registers (see OPERATORS), so the
    // tuned variant is the served kernel or a rewrite of it.
    let matmul = kernel(&json, "MATMUL");
    assert_eq!(matmul["status"], "tuned", "{}", first.dump());
    assert!(
        matmul["origin"]
            .as_str()
            .unwrap()
            .starts_with("llm(model=replay-model"),
        "{matmul}"
    );
    let entry = std::fs::read_to_string(matmul["cache_file"].as_str().unwrap()).unwrap();
    assert!(entry.contains("replay: matmul register-blocked"), "{entry}");

    // Operators and the LLM's cost in the summary.
    for name in ["SAXPY", "SOFTMAX", "MATMUL"] {
        let k = kernel(&json, name);
        let llm = &k["operators"]["llm"];
        assert!(llm["proposed"].as_u64().unwrap() >= 3, "{k}");
        assert!(
            k["operators"].as_object().unwrap().len() >= 2,
            "offline operators too: {k}"
        );
        assert!(k["llm"]["prompt_tokens"].as_u64().unwrap() > 0);
        assert!(k["llm"]["cost_usd"].as_f64().unwrap() > 0.0);
        assert!(k["llm"].get("disabled").is_none(), "{k}");
    }
    assert!(
        kernel(&json, "MATMUL")["operators"]["llm"]["correct"]
            .as_u64()
            .unwrap()
            >= 1
    );
    let applied: u64 = ["SAXPY", "SOFTMAX", "MATMUL"]
        .iter()
        .map(|n| kernel(&json, n)["llm"]["edits_applied"].as_u64().unwrap())
        .sum();
    let rejected: u64 = ["SAXPY", "SOFTMAX", "MATMUL"]
        .iter()
        .map(|n| kernel(&json, n)["llm"]["edits_rejected"].as_u64().unwrap())
        .sum();
    assert!(applied >= 1 && rejected >= 1, "{}", first.dump());
    assert!(
        received
            .iter()
            .any(|r| r.served == "meta" && r.message("user").contains("## Recent results"))
    );

    // Prompts carry the adapter's spec sheet, the results of earlier answers and the errors.
    let adapter = json["adapter"]["name"].as_str().unwrap();
    let prompts = user_prompts(&received);
    for p in &prompts {
        assert!(
            p.contains(&format!("## Adapter\nAdapter: {adapter}")),
            "{p}"
        );
        assert!(p.contains("Measured ceilings: copy bandwidth"), "{p}");
        assert!(
            p.contains("## Kernel spec") && p.contains("Bindings"),
            "{p}"
        );
    }
    let sections = |p: &str| p.split("\n## ").map(str::to_owned).collect::<Vec<_>>();
    let came_back = prompts.iter().any(|p| {
        sections(p).iter().any(|s| {
            s.contains("// replay: ")
                && s.contains("Result: correct, score")
                && s.contains(" vs baseline ")
        })
    });
    assert!(
        came_back,
        "no correct answer came back in a later prompt with its timings"
    );
    let repaired = prompts.iter().any(|p| {
        p.starts_with("# Task: repair")
            && p.contains("// replay: ")
            && p.contains("The distilled log:")
    });
    assert!(
        repaired,
        "no failed answer came back with its distilled error"
    );

    // The key is nowhere in the output or in any file the run wrote.
    assert_no_key("the output", &(first.stdout.clone() + &first.stderr));
    let mut files = Vec::new();
    files_under(target.path(), &mut files);
    files_under(crate_dir.path(), &mut files);
    assert!(
        files
            .iter()
            .any(|f| f.to_string_lossy().contains("llm-cache"))
    );
    for f in &files {
        if let Ok(text) = std::fs::read(f) {
            assert_no_key(&f.display().to_string(), &String::from_utf8_lossy(&text));
        }
    }

    // A second identical run, replaying only: no HTTP request, the same answers, the same winner.
    let before = server.received().len();
    let again = tune(
        crate_dir.path(),
        target.path(),
        &server.url(),
        &["--json", "--llm-replay-only"],
    );
    assert_eq!(again.code, Some(0), "{}", again.dump());
    assert_eq!(
        server.received().len(),
        before,
        "the replay-only run sent a request"
    );
    let json2 = again.json();
    // The search's choices follow measured times, so on a loaded machine the second run may take
    // another path and send a prompt the first never sent: that one misses the cache (and is not
    // sent). What replay-only promises is checked: nothing reaches the endpoint, every kernel is
    // answered from the cache, and every answer is one the first run received, as the same
    // candidate.
    for name in ["SAXPY", "SOFTMAX", "MATMUL"] {
        let l = &kernel(&json2, name)["llm"];
        let (cached, requests) = (
            l["cached"].as_u64().unwrap(),
            l["requests"].as_u64().unwrap(),
        );
        assert!(cached >= 1 && cached <= requests, "{l}");
        assert_eq!(l["prompt_tokens"], 0);
        assert!(l.get("disabled").is_none(), "{l}");
    }
    for (marker, id) in candidates_by_marker(target.path()) {
        assert_eq!(
            ids.get(&marker),
            Some(&id),
            "`{marker}`: the same answers became the same candidates"
        );
    }
    let matmul2 = kernel(&json2, "MATMUL");
    assert_eq!(matmul2["status"], "tuned");
    let entry2 = std::fs::read_to_string(matmul2["cache_file"].as_str().unwrap()).unwrap();
    assert!(
        entry2.contains("replay: matmul register-blocked"),
        "{entry2}"
    );
    assert_no_key("the replay run's output", &(again.stdout + &again.stderr));
}

#[test]
fn a_server_that_stops_halfway_leaves_the_run_to_the_offline_operators() {
    let crate_dir = quickstart();
    let target = tempfile::tempdir().unwrap();
    let mut s = script();
    s.stop_after = Some(3);
    let server = ReplayServer::start(s);
    let r = tune(
        crate_dir.path(),
        target.path(),
        &server.url(),
        &["--kernel", "MATMUL"],
    );
    assert_eq!(r.code, Some(0), "{}", r.dump());
    assert!(r.stdout.contains("MATMUL"), "{}", r.dump());
    assert!(
        r.stdout.contains("16 evaluations"),
        "the budget was spent: {}",
        r.dump()
    );
    assert!(
        r.stdout.contains("llm off: cannot reach the endpoint"),
        "{}",
        r.dump()
    );
    assert!(r.stdout.contains("offline operators"), "{}", r.dump());
    assert!(
        r.stderr
            .contains("note: the LLM was switched off during the run"),
        "{}",
        r.dump()
    );
    assert_eq!(
        server
            .received()
            .iter()
            .filter(|q| q.served == "answer")
            .count(),
        3
    );
    assert_no_key("the output", &(r.stdout + &r.stderr));
}

#[test]
fn dry_run_prints_the_first_prompt_and_sends_nothing() {
    let crate_dir = quickstart();
    let target = tempfile::tempdir().unwrap();
    let server = ReplayServer::start(Script::default());
    let r = tune(
        crate_dir.path(),
        target.path(),
        &server.url(),
        &["--dry-run", "--kernel", "SAXPY"],
    );
    assert_eq!(r.code, Some(0), "{}", r.dump());
    assert!(r.stdout.contains("nothing was sent"), "{}", r.dump());
    assert!(r.stdout.contains("model replay-model") && r.stdout.contains("API key set"));
    assert!(r.stdout.contains("# Task: seed") && r.stdout.contains("Kernel `SAXPY`"));
    assert!(r.stdout.contains("## Output contract"));
    assert!(server.received().is_empty());
    assert_no_key("the output", &(r.stdout + &r.stderr));
}

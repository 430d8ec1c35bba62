//! What invalidates a cache entry and what only makes it stale; broken entries; `#[cfg]`-gated
//! kernels; honest check names.

use kf_runtime::cache::CacheEntry;
use kf_tests::*;
use std::path::Path;

fn lock() -> std::sync::MutexGuard<'static, ()> {
    crate::BUILD_AND_RUN
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// Replaces `from` by `to` in the file at `path`, which must contain it.
#[track_caller]
fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "`{from}` is in {}", path.display());
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
}

/// `list --json`'s object for `kernel`, and its cache status on the adapter with `key`.
#[track_caller]
fn listed(manifest: &Path, kernel: &str, key: &str) -> (serde_json::Value, serde_json::Value) {
    let r = run(kf(&["list", "--json", "--manifest-path"]).arg(manifest));
    let json = r.json();
    let k = json["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == kernel)
        .unwrap_or_else(|| panic!("{kernel} is listed:\n{}", r.dump()))
        .clone();
    let status = k["cache"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["adapter_key"] == key)
        .cloned()
        .unwrap_or_default();
    (k, status)
}

fn saxpy_line(app: &Run) -> (String, String) {
    let line = quickstart_lines(&app.stdout)
        .into_iter()
        .find(|l| l.0 == "SAXPY")
        .unwrap_or_else(|| panic!("a SAXPY line:\n{}", app.dump()));
    assert!(line.3, "SAXPY computed a wrong result:\n{}", app.dump());
    (line.1, line.2)
}

fn run_quickstart() -> Run {
    let r = run(std::process::Command::new(built_bin("quickstart"))
        .env("RUST_LOG", "warn")
        .env_remove("KERNELFOUNDRY_VARIANT"));
    assert_eq!(r.code, Some(0), "the quickstart failed:\n{}", r.dump());
    r
}

#[test]
fn spec_edits_invalidate_or_stale_the_entry() {
    let dir = copy_crate("examples/quickstart");
    let manifest = dir.path().join("Cargo.toml");
    let kernels = dir.path().join("src/kernels.rs");
    let tune = |extra: &[&str]| {
        let r = run_ok(crate::candidates_win(
            kf(&[
                "tune",
                "--json",
                "--kernel",
                "SAXPY",
                "--budget",
                "2",
                "--manifest-path",
            ])
            .arg(&manifest)
            .args(extra),
        ));
        let json = r.json();
        (
            json["adapter"]["key"].as_str().unwrap().to_owned(),
            json["kernels"][0].clone(),
        )
    };

    // SAXPY's 4-wide baseline loses to any wider workgroup (and the worker is told so, see
    // `candidates_win`): a variant is tuned.
    let (key, tuned) = tune(&[]);
    assert_eq!(tuned["status"], "tuned", "{tuned}");
    let variant = tuned["variant"].as_str().unwrap().to_owned();
    let hash = tuned["content_hash"].as_str().unwrap().to_owned();
    let (_, status) = listed(&manifest, "SAXPY", &key);
    assert_eq!(status["status"], "tuned", "{status}");

    // Tune shapes decide speed only: same hash, the entry is stale, and still used.
    edit(
        &kernels,
        "sizes(n = 131072),",
        "sizes(n = 131072),\n    tune_shapes = [(n = 16384)],",
    );
    let (k, status) = listed(&manifest, "SAXPY", &key);
    assert_eq!(k["content_hash"], hash.as_str());
    assert_eq!(status["status"], "stale", "{status}");
    assert_eq!(
        status["stale"][0], "tune shapes changed from [(n = 131072)] to [(n = 16384)]",
        "{status}"
    );
    let human = run_ok(kf(&["list", "--manifest-path"]).arg(&manifest));
    assert!(
        human.stdout.contains(": stale") && human.stdout.contains("stale: tune shapes changed"),
        "{}",
        human.dump()
    );
    {
        let _guard = lock();
        build(dir.path());
        assert_eq!(
            saxpy_line(&run_quickstart()),
            (variant.clone(), "exact".to_owned()),
            "a stale entry is still valid and used"
        );
    }
    // `tune` searches it again without `--force`; then it is up to date.
    let (_, retuned) = tune(&[]);
    assert!(
        ["tuned", "baseline-best"].contains(&retuned["status"].as_str().unwrap()),
        "{retuned}"
    );
    assert!(retuned["evaluations"].as_u64().unwrap() > 0, "{retuned}");
    assert!(
        retuned["notes"][0]
            .as_str()
            .unwrap()
            .starts_with("retuned a stale entry: tune shapes changed"),
        "{retuned}"
    );
    let (_, status) = listed(&manifest, "SAXPY", &key);
    assert!(
        ["tuned", "baseline-best"].contains(&status["status"].as_str().unwrap()),
        "{status}"
    );
    let (_, cached) = tune(&[]);
    assert_eq!(cached["status"], "cached", "{cached}");

    // Every part that decides correctness gives the kernel a new content hash: the entry no
    // longer matches (the build embeds nothing for it).
    for (from, to) in [
        ("y = inout(n)", "y = output(n)"),
        ("x = input(n)", "x = input(n + 1)"),
        ("x = input(n)", "x = input(n, range(0.0, 1.0))"),
        ("params = uniform(n, 2.5)", "params = uniform(n, 3.5)"),
        ("grid = (n),", "grid = (n),\n    tolerance = 1e-3,"),
        (
            "grid = (n),",
            "grid = (n),\n    verify_shapes = [(n = 1001)],",
        ),
    ] {
        let original = std::fs::read_to_string(&kernels).unwrap();
        edit(&kernels, from, to);
        let (k, status) = listed(&manifest, "SAXPY", &key);
        assert_ne!(k["content_hash"], hash.as_str(), "`{from}` → `{to}`");
        assert_eq!(status["status"], "not-tuned", "`{from}` → `{to}`: {status}");
        assert_eq!(k["unmatched_entries"], 1, "`{from}` → `{to}`: {k}");
        std::fs::write(&kernels, original).unwrap();
    }
    // …and the app runs the baseline.
    edit(
        &kernels,
        "grid = (n),",
        "grid = (n),\n    tolerance = 1e-3,",
    );
    let _guard = lock();
    build(dir.path());
    assert_eq!(
        saxpy_line(&run_quickstart()),
        ("baseline".to_owned(), "none".to_owned())
    );
}

const TINY: &str = r#"@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < arrayLength(&y)) { y[g.x] = 2.0 * x[g.x] + 1.0; }
}
"#;

/// A package read only by `list` and `tune` (never built): a tiny kernel, and one behind a
/// feature whose WGSL file does not exist, so tuning it would fail.
fn gated_package() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("kf-e2e-")
        .tempdir()
        .unwrap();
    let write = |rel: &str, text: &str| {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "Cargo.toml",
        "[package]\nname = \"gated\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\n[features]\ndefault = []\nexperimental = []\n\n[workspace]\n",
    );
    write("src/tiny.wgsl", TINY);
    write(
        "src/lib.rs",
        r#"use kf_macros::kernelfoundry;
use kf_runtime::Kernel;

#[cfg(feature = "experimental")]
mod experimental;

/// Two elements: no verify shape can differ from the tune shape.
#[kernelfoundry(path = "src/tiny.wgsl", sizes(n = 2), bind(x = input(n), y = output(n)))]
pub static TINY: Kernel;
"#,
    );
    write(
        "src/experimental.rs",
        r#"use kf_macros::kernelfoundry;
use kf_runtime::Kernel;

#[kernelfoundry(path = "src/not_written_yet.wgsl", sizes(n = 64), bind(x = input(n), y = output(n)))]
pub static EXPERIMENTAL: Kernel;
"#,
    );
    dir
}

#[test]
fn cfg_gated_kernels_are_skipped_and_broken_entries_shown_and_replaced() {
    let dir = gated_package();
    let manifest = dir.path().join("Cargo.toml");

    // Without the feature the gated kernel is listed as skipped, and is no error.
    let r = run_ok(kf(&["list", "--json", "--manifest-path"]).arg(&manifest));
    let json = r.json();
    let gated = json["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == "EXPERIMENTAL")
        .unwrap_or_else(|| panic!("{}", r.dump()));
    assert_eq!(
        gated["skipped"],
        "`cfg(feature = \"experimental\")` is off with the selected features (default)",
        "{}",
        r.dump()
    );
    assert!(gated.get("error").is_none() && gated["cache"].as_array().unwrap().is_empty());
    // With it, the kernel is compiled and its missing WGSL file is an error.
    let r = run(kf(&["list", "--features", "experimental", "--manifest-path"]).arg(&manifest));
    assert_eq!(r.code, Some(1), "{}", r.dump());
    assert!(r.stdout.contains("not_written_yet.wgsl"), "{}", r.dump());
    let r = run(kf(&["list", "--features", "nope", "--manifest-path"]).arg(&manifest));
    assert_eq!(r.code, Some(2), "{}", r.dump());
    assert!(r.stderr.contains("feature `nope`"), "{}", r.dump());

    // `tune` leaves the gated kernel alone and says so.
    let tuned = run_ok(kf(&["tune", "--json", "--budget", "2", "--manifest-path"]).arg(&manifest));
    let json = tuned.json();
    let key = json["adapter"]["key"].as_str().unwrap().to_owned();
    let kernels = json["kernels"].as_array().unwrap();
    assert_eq!(kernels.len(), 1, "{}", tuned.dump());
    let tiny = &kernels[0];
    assert_eq!(tiny["name"], "TINY");
    // The only verify shape is the tune shape: the report says so rather than claim the check.
    let file = Path::new(tiny["cache_file"].as_str().unwrap()).to_owned();
    let entry = CacheEntry::parse(&file, &std::fs::read_to_string(&file).unwrap()).unwrap();
    assert!(
        !entry
            .verification
            .checks
            .iter()
            .any(|c| c == "unseen-verification-shapes"),
        "{:?}",
        entry.verification.checks
    );
    assert!(
        entry
            .verification
            .checks
            .iter()
            .any(|c| c == "poisoned-outputs")
    );
    assert!(
        tiny["notes"].as_array().into_iter().flatten().any(|n| n
            .as_str()
            .unwrap()
            .starts_with("no shape unseen by the search was verified")),
        "{}",
        tuned.dump()
    );
    let human = run_ok(kf(&["tune", "--force", "--budget", "1", "--manifest-path"]).arg(&manifest));
    assert!(
        human.stderr.contains("skipping EXPERIMENTAL (src/experimental.rs:4): `cfg(feature = \"experimental\")` is off"),
        "{}",
        human.dump()
    );

    // A corrupt entry: the build would skip it, `list` shows it as broken with the parse error…
    std::fs::write(&file, "{ \"format_version\": 1, ").unwrap();
    let (_, status) = listed(&manifest, "TINY", &key);
    assert_eq!(status["status"], "broken", "{status}");
    assert!(
        status["error"]
            .as_str()
            .unwrap()
            .contains("is not a valid cache entry"),
        "{status}"
    );
    let human = run_ok(kf(&["list", "--manifest-path"]).arg(&manifest));
    assert!(human.stdout.contains(": broken"), "{}", human.dump());
    // …and `tune` replaces it without `--force`, saying so.
    let r = run_ok(kf(&["tune", "--json", "--budget", "1", "--manifest-path"]).arg(&manifest));
    let tiny = &r.json()["kernels"][0];
    assert_ne!(tiny["status"], "cached", "{}", r.dump());
    assert!(
        tiny["notes"][0]
            .as_str()
            .unwrap()
            .starts_with("replaced a broken entry:"),
        "{}",
        r.dump()
    );
    CacheEntry::parse(&file, &std::fs::read_to_string(&file).unwrap())
        .expect("a valid entry again");
}

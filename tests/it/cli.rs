//! The command line itself: help, errors and exit codes, listing, adapters and their ceilings.

use kf_tests::*;

#[test]
fn help_explains_every_verb() {
    let top = run_ok(&mut kf(&["--help"]));
    for verb in ["adapters", "list", "tune", "eval", "bench", "report"] {
        assert!(
            top.stdout.contains(verb),
            "top-level help lists `{verb}`:\n{}",
            top.dump()
        );
    }
    for (verb, options) in [
        ("adapters", &["--probe", "--json"][..]),
        ("list", &["--manifest-path", "--package", "--json"][..]),
        (
            "tune",
            &[
                "--manifest-path",
                "--package",
                "--kernel",
                "--adapter",
                "--budget",
                "--force",
                "--json",
            ][..],
        ),
        (
            "eval",
            &[
                "--kernel",
                "--candidate",
                "--manifest-path",
                "--adapter",
                "--json",
                "--grid",
            ][..],
        ),
        (
            "bench",
            &[
                "--manifest-path",
                "--package",
                "--workspace",
                "--kernel",
                "--adapter",
                "--samples",
                "--tune-shape",
                "--markdown",
                "--json",
            ][..],
        ),
        (
            "ablate",
            &[
                "--kernel",
                "--budget",
                "--time",
                "--seeds",
                "--strategies",
                "--broker",
                "--adapter-key",
                "--worker-cmd",
                "--json",
            ][..],
        ),
        (
            "report",
            &["--manifest-path", "--run", "--bench", "--out", "--json"][..],
        ),
    ] {
        let r = run_ok(&mut kf(&[verb, "--help"]));
        for o in options {
            assert!(
                r.stdout.contains(o),
                "`{verb} --help` documents {o}:\n{}",
                r.dump()
            );
        }
    }
}

/// `ablate --time`: every search stops at the wall time (with no evaluation cap it would not stop
/// otherwise), and the report's curve carries the second each evaluation was seen.
#[test]
fn ablate_compares_strategies_at_equal_wall_time() {
    let manifest = root().join("examples/quickstart/Cargo.toml");
    let r = run_ok(
        kf(&[
            "ablate",
            "--kernel",
            "SAXPY",
            "--time",
            "2",
            "--seeds",
            "1",
            "--strategies",
            "greedy,random",
            "--json",
            "--manifest-path",
        ])
        .arg(&manifest),
    );
    let j = r.json();
    assert_eq!(j["time_s"], 2.0, "{}", r.dump());
    let runs = j["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{}", r.dump());
    for run in runs {
        let best: Vec<f64> = serde_json::from_value(run["best_after"].clone()).unwrap();
        let secs: Vec<f64> = serde_json::from_value(run["seconds_after"].clone()).unwrap();
        assert!(!best.is_empty(), "{}", r.dump());
        assert_eq!(best.len(), secs.len(), "{}", r.dump());
        assert!(secs.windows(2).all(|w| w[0] <= w[1]), "{}", r.dump());
        // The limit is checked between generations (one child for each of the 4 islands): at most
        // the generation under way when it passed finishes after it.
        let late = secs.iter().filter(|&&t| t > 2.0).count();
        assert!(
            late <= 4,
            "{late} evaluations after the limit:\n{}",
            r.dump()
        );
    }
    for s in j["summaries"].as_array().unwrap() {
        let auc = s["auc"].as_f64().unwrap();
        let best = s["best_at"][2].as_f64().unwrap();
        assert!(auc >= 1.0 && auc <= best, "{}", r.dump());
    }
    let r = run(kf(&["ablate", "--time", "0", "--manifest-path"]).arg(&manifest));
    assert_eq!(r.code, Some(2), "{}", r.dump());
    assert!(
        r.stderr.contains("not a positive number of seconds"),
        "{}",
        r.dump()
    );
}

#[test]
fn runs_without_the_cargo_verb_too() {
    let r = run_ok(std::process::Command::new(bin()).args(["list", "--help"]));
    assert!(r.stdout.contains("--manifest-path"));
}

#[test]
fn bad_input_exits_2_with_a_hint() {
    let manifest = root().join("examples/quickstart/Cargo.toml");
    let r = run(kf(&["tune", "--kernel", "NOPE", "--manifest-path"]).arg(&manifest));
    assert_eq!(r.code, Some(2), "{}", r.dump());
    assert!(
        r.stderr.contains("no kernel named `NOPE`") && r.stderr.contains("SAXPY"),
        "{}",
        r.dump()
    );

    let r = run(kf(&[
        "tune",
        "--adapter",
        "no-such-gpu-anywhere",
        "--manifest-path",
    ])
    .arg(&manifest));
    assert_eq!(r.code, Some(2), "{}", r.dump());
    assert!(
        r.stderr
            .contains("no adapter matches `no-such-gpu-anywhere`"),
        "{}",
        r.dump()
    );

    let r = run(&mut kf(&[
        "list",
        "--manifest-path",
        "/nonexistent/Cargo.toml",
    ]));
    assert_eq!(r.code, Some(2), "{}", r.dump());
    assert!(
        r.stderr.contains("cannot read the cargo workspace"),
        "{}",
        r.dump()
    );

    let r = run(&mut kf(&["tune", "--budget", "many"]));
    assert_eq!(r.code, Some(2), "{}", r.dump());
}

#[test]
fn list_shows_each_kernel_its_spec_and_cache_status() {
    let dir = copy_crate("examples/quickstart");
    let r = run_ok(kf(&["list", "--json", "--manifest-path"]).arg(dir.path().join("Cargo.toml")));
    let json = r.json();
    let kernels = json["kernels"].as_array().unwrap();
    let names: Vec<&str> = kernels
        .iter()
        .map(|k| k["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["SAXPY", "SOFTMAX", "MATMUL"], "{}", r.dump());
    for k in kernels {
        assert_eq!(k["package"], "quickstart");
        assert!(k["file"].as_str().unwrap().ends_with("src/kernels.rs"));
        assert!(k["spec"].as_str().unwrap().contains("tune on"), "{k}");
        assert_eq!(k["content_hash"].as_str().unwrap().len(), 16);
        let cache = k["cache"].as_array().unwrap();
        assert!(!cache.is_empty(), "one status per adapter found");
        assert!(cache.iter().all(|c| c["status"] == "not-tuned"));
    }
    let human = run_ok(kf(&["list", "--manifest-path"]).arg(dir.path().join("Cargo.toml")));
    assert!(
        human.stdout.contains("MATMUL (quickstart) src/kernels.rs:"),
        "{}",
        human.dump()
    );
}

#[test]
fn list_reports_spec_errors_with_file_and_line() {
    let dir = copy_crate("examples/quickstart");
    let kernels = dir.path().join("src/kernels.rs");
    let text = std::fs::read_to_string(&kernels).unwrap();
    std::fs::write(
        &kernels,
        text.replace("c = output(m * n)", "c = output(m * q)"),
    )
    .unwrap();
    let r = run(kf(&["list", "--manifest-path"]).arg(dir.path().join("Cargo.toml")));
    assert_eq!(r.code, Some(1), "{}", r.dump());
    assert!(
        r.stdout.contains("src/kernels.rs:") && r.stdout.contains("size `q` is not declared"),
        "{}",
        r.dump()
    );
}

#[test]
fn adapters_lists_keys_and_probes_ceilings() {
    // As in a container or CI job: no login session. The driver's Wayland probe must stay quiet.
    let r = run_ok(
        kf(&["adapters", "--json"])
            .env_remove("XDG_RUNTIME_DIR")
            .env_remove("NODEVICE_SELECT")
            .env_remove("MESA_VK_DEVICE_SELECT"),
    );
    assert!(!r.stderr.contains("XDG_RUNTIME_DIR"), "{}", r.dump());
    let json = r.json();
    let adapters = json["adapters"].as_array().unwrap();
    assert!(
        !adapters.is_empty(),
        "no GPU adapter found (CI installs lavapipe):\n{}",
        r.dump()
    );
    assert_eq!(adapters.iter().filter(|a| a["default"] == true).count(), 1);
    for a in adapters {
        assert_eq!(a["key"].as_str().unwrap().len(), 16);
        assert!(a["name"].as_str().is_some() && a["backend"].as_str().is_some());
    }
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join("Cargo.toml"),
        "[package]\nname = \"probe-ws\"\nversion = \"0.0.0\"\nedition = \"2024\"\n[workspace]\n",
    )
    .unwrap();
    std::fs::create_dir_all(ws.path().join("src")).unwrap();
    std::fs::write(ws.path().join("src/lib.rs"), "").unwrap();
    let probe = run_ok(
        kf(&[
            "adapters",
            "--probe",
            "--json",
            "--adapter",
            "0",
            "--manifest-path",
        ])
        .arg(ws.path().join("Cargo.toml")),
    );
    let json = probe.json();
    let a = &json["adapters"][0];
    let c = &a["ceilings"];
    assert!(c["copy_gbps"].as_f64().unwrap() > 0.0, "{}", probe.dump());
    assert!(c["fma_gflops"].as_f64().unwrap() > 0.0, "{}", probe.dump());
    assert!(!c["copy_by_size"].as_array().unwrap().is_empty());
    let stored = std::path::Path::new(a["ceilings_file"].as_str().unwrap());
    assert!(
        stored.starts_with(ws.path()) && stored.is_file(),
        "{}",
        probe.dump()
    );
    let human = run_ok(&mut kf(&["adapters", "--probe", "--adapter", "0"]));
    assert!(
        human.stdout.contains("GB/s") && human.stdout.contains("GFLOP/s"),
        "{}",
        human.dump()
    );
}

#[test]
fn wall_clock_timing_works_where_timestamps_are_switched_off() {
    let fixture = copy_crate("tests/fixtures/adversarial");
    let r = run_ok(
        kf(&[
            "eval",
            "--json",
            "--samples",
            "3",
            "--kernel",
            "ELEMWISE",
            "--manifest-path",
        ])
        .arg(fixture.path().join("Cargo.toml"))
        .arg("--candidate")
        .arg(root().join("tests/data/adversarial/honest_wider_workgroup.wgsl"))
        .env("KERNELFOUNDRY_TIMING", "wall-clock"),
    );
    let json = r.json();
    assert_eq!(json["level"], 5, "{}", r.dump());
    let timing = &json["timings"][0];
    assert_eq!(timing["method"], "wall-clock", "{}", r.dump());
    assert!(
        timing["baseline_ns"].as_f64().unwrap() > 0.0
            && timing["candidate_ns"].as_f64().unwrap() > 0.0
    );
    assert!(
        json["roofline"]["achieved_gbps"].as_f64().unwrap() > 0.0,
        "{}",
        r.dump()
    );
}

#[test]
fn timing_starts_after_the_sustained_load_and_the_diagnostics_log_every_dispatch() {
    let fixture = copy_crate("tests/fixtures/adversarial");
    let log = fixture.path().join("timing.jsonl");
    let r = run_ok(
        kf(&[
            "eval",
            "--json",
            "--samples",
            "3",
            "--kernel",
            "ELEMWISE",
            "--manifest-path",
        ])
        .arg(fixture.path().join("Cargo.toml"))
        .arg("--candidate")
        .arg(root().join("tests/data/adversarial/honest_wider_workgroup.wgsl"))
        // A CPU adapter skips the sustained load unless asked for it.
        .env("KERNELFOUNDRY_WARM_MS", "150")
        .env("KERNELFOUNDRY_DIAG", &log),
    );
    assert_eq!(r.json()["level"], 5, "{}", r.dump());
    let text = std::fs::read_to_string(&log).unwrap();
    let (phases, lines): (Vec<serde_json::Value>, Vec<serde_json::Value>) = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .partition(|l: &serde_json::Value| l.get("phases").is_some());
    // One line of phases per evaluation, adding up to its wall time.
    assert_eq!(phases.len(), 1, "{text}");
    let wall = phases[0]["wall_ms"].as_f64().unwrap();
    let sum: f64 = phases[0]["phases"]
        .as_object()
        .unwrap()
        .values()
        .map(|ms| ms.as_f64().unwrap())
        .sum();
    assert!(wall > 0.0 && (sum - wall).abs() < 0.05, "{text}");
    assert!(
        phases[0]["phases"]["sustain"].as_f64().unwrap() >= 150.0,
        "{text}"
    );
    // Every timed dispatch of both programs (warm-up samples included), in pairs.
    assert!(lines.len() >= 6 && lines.len().is_multiple_of(2), "{text}");
    for pair in lines.chunks(2) {
        let programs: Vec<u64> = pair
            .iter()
            .map(|l| l["program"].as_u64().unwrap())
            .collect();
        assert!(programs == [0, 1] || programs == [1, 0], "{text}");
        assert!(pair.iter().all(|l| l["ns"].as_f64().unwrap() > 0.0));
    }
    // No sample was taken before the 150 ms of sustained load had passed.
    let first = lines
        .iter()
        .map(|l| l["ms"].as_f64().unwrap())
        .fold(f64::INFINITY, f64::min);
    assert!(first >= 150.0, "first sample at {first} ms:\n{text}");
}

/// The sustain phase of every evaluation that timed something, in order, from a
/// `KERNELFOUNDRY_DIAG` file.
fn sustained_ms(diag: &std::path::Path) -> Vec<f64> {
    let text = std::fs::read_to_string(diag).unwrap();
    text.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter_map(|l| l.get("phases").cloned())
        .filter(|p| p["timing"].as_f64().unwrap() > 0.0)
        .map(|p| p["sustain"].as_f64().unwrap())
        .collect()
}

#[test]
fn the_clock_ramp_is_paid_once_per_batch_of_evaluations() {
    let fixture = copy_crate("tests/fixtures/adversarial");
    let tune = |idle_ms: &str, log: &std::path::Path| {
        run_ok(
            kf(&[
                "tune",
                "--json",
                "--force",
                "--budget",
                "3",
                "--kernel",
                "ELEMWISE",
                "--manifest-path",
            ])
            .arg(fixture.path().join("Cargo.toml"))
            // A CPU adapter skips the ramp unless asked for it.
            .env("KERNELFOUNDRY_WARM_MS", "150")
            .env("KERNELFOUNDRY_RAMP_IDLE_MS", idle_ms)
            .env("KERNELFOUNDRY_DIAG", log),
        )
    };
    // Evaluations that follow each other within the idle threshold (set far above any gap here,
    // so a loaded machine cannot change the outcome): the first timing ramps, the rest do not.
    let log = fixture.path().join("batch.jsonl");
    let r = tune("600000", &log);
    let sustained = sustained_ms(&log);
    assert!(sustained.len() >= 3, "{sustained:?}\n{}", r.dump());
    assert!(sustained[0] >= 150.0, "{sustained:?}");
    assert!(
        sustained[1..].iter().all(|ms| *ms < 150.0),
        "the ramp was paid again within the batch: {sustained:?}"
    );
    // With no idle time allowed, every timing ramps, as before batches.
    let log = fixture.path().join("each.jsonl");
    let r = tune("0", &log);
    let sustained = sustained_ms(&log);
    assert!(sustained.len() >= 3, "{sustained:?}\n{}", r.dump());
    assert!(sustained.iter().all(|ms| *ms >= 150.0), "{sustained:?}");
}

#[test]
fn no_adapter_exits_3_and_says_what_to_install() {
    for verb in [&["adapters"][..], &["tune", "--manifest-path"][..]] {
        let mut cmd = kf(verb);
        if verb.len() > 1 {
            cmd.arg(root().join("examples/quickstart/Cargo.toml"));
        }
        // Only the Vulkan backend, with no Vulkan driver to load.
        let r = run(cmd
            .env("WGPU_BACKEND", "vulkan")
            .env("VK_ICD_FILENAMES", "/nonexistent/icd.json")
            .env("VK_DRIVER_FILES", "/nonexistent/icd.json"));
        assert_eq!(r.code, Some(3), "{}", r.dump());
        assert!(
            r.stderr.contains("no GPU adapter found") && r.stderr.contains("mesa-vulkan-drivers"),
            "{}",
            r.dump()
        );
    }
}

/// A kernel naga 30 panics on when its pipeline is created (an array sized by an expression of
/// overrides): `tune` names the construct, says the app would crash the same way, gives the
/// workaround and leaves the kernel alone; with the workaround applied, the kernel tunes.
#[test]
fn a_kernel_naga_panics_on_is_explained_not_reported_as_a_bare_crash() {
    let dir = copy_crate("examples/quickstart");
    let kernels = dir.path().join("src/kernels.rs");
    let wgsl = "override A: u32 = 62u;
override B: u32 = 2u;
@group(0) @binding(0) var<storage, read_write> y: array<f32>;
var<workgroup> tile: array<f32, A + B>;
override WG: u32 = 64u;
@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) l: u32, @builtin(global_invocation_id) g: vec3<u32>) {
    tile[l] = y[g.x];
    workgroupBarrier();
    y[g.x] = tile[(l + 1u) % 64u] * 2.0;
}
";
    let write = |wgsl: &str| {
        let mut text = std::fs::read_to_string(&kernels).unwrap();
        if let Some(at) = text.find("\n#[kernelfoundry(\n    source") {
            text.truncate(at);
        }
        text.push_str(&format!(
            "\n#[kernelfoundry(\n    source = r#\"{wgsl}\"#,\n    sizes(n = 4096),\n    bind(y = inout(n)),\n    grid = (n),\n)]\npub static SPLIT: Kernel;\n"
        ));
        std::fs::write(&kernels, text).unwrap();
    };
    write(wgsl);
    let manifest = dir.path().join("Cargo.toml");
    let tune = |manifest: &std::path::Path| {
        run(kf(&[
            "tune",
            "--kernel",
            "SPLIT",
            "--strategy",
            "exhaustive",
            "--budget",
            "1",
            "--manifest-path",
        ])
        .arg(manifest))
    };
    let r = tune(&manifest);
    assert_ne!(r.code, Some(0), "{}", r.dump());
    let out = r.dump();
    for needle in [
        "`A + B`",
        "`var tile`, line 4",
        "your app would crash the same way",
        "`override TILE_LEN: u32 = A + B;` and `array<T, TILE_LEN>`",
        "https://github.com/gfx-rs/wgpu/pull/7082",
        "does not rewrite your kernel",
    ] {
        assert!(out.contains(needle), "missing {needle:?}:\n{out}");
    }
    let after = std::fs::read_to_string(&kernels).unwrap();
    assert!(
        after.contains("array<f32, A + B>"),
        "the kernel was rewritten"
    );

    write(&wgsl.replace(
        "var<workgroup> tile: array<f32, A + B>;",
        "override TILE_LEN: u32 = A + B;\nvar<workgroup> tile: array<f32, TILE_LEN>;",
    ));
    let fixed = tune(&manifest);
    assert_eq!(fixed.code, Some(0), "{}", fixed.dump());
}

#[test]
fn list_prints_a_wgsl_diagnostic_with_one_prefix_and_its_own_span() {
    let dir = copy_crate("examples/quickstart");
    let shader = dir.path().join("src/shaders/saxpy.wgsl");
    let text = std::fs::read_to_string(&shader).unwrap();
    let broken = text.replacen(';', "", 1);
    assert_ne!(broken, text);
    std::fs::write(&shader, broken).unwrap();
    let r = run(kf(&["list", "--manifest-path"]).arg(dir.path().join("Cargo.toml")));
    assert_eq!(r.code, Some(1), "{}", r.dump());
    assert!(!r.stdout.contains("error: error"), "{}", r.dump());
    let saxpy: Vec<&str> = r
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("SAXPY"))
        .take_while(|l| !l.starts_with("SOFTMAX"))
        .collect();
    let errors = saxpy.iter().filter(|l| l.contains("error:")).count();
    assert_eq!(errors, 1, "{}", r.dump());
    assert!(
        saxpy
            .iter()
            .any(|l| l.contains("┌─ src/shaders/saxpy.wgsl:")),
        "{}",
        r.dump()
    );
}

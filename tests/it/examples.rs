//! The bundled example apps, end to end on this machine's adapter: the KernelBench suite, the
//! Llama-3.2-1B layer and the blind corpus build, run every kernel (and every hand-written
//! reference) through `kf-runtime` at their small shapes, and match the CPU; `list` resolves every
//! kernel with its reference. The real shapes run on a GPU (see README); lavapipe's loop limit
//! forbids them here.

use kf_tests::*;

fn lock() -> std::sync::MutexGuard<'static, ()> {
    crate::BUILD_AND_RUN
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// Builds both example binaries in the workspace (shared target directory, built once).
fn build_examples() {
    run_ok(
        cargo()
            .args(["build", "-p", "kernelbench", "-p", "llama32-1b"])
            .current_dir(root()),
    );
}

/// The `<KERNEL>: <key>=...` lines of an app's output whose first field starts with `key=`.
fn lines_with<'a>(stdout: &'a str, key: &str) -> Vec<(&'a str, &'a str)> {
    stdout
        .lines()
        .filter_map(|l| l.split_once(": "))
        .filter(|(_, rest)| rest.starts_with(key))
        .collect()
}

#[test]
fn kernelbench_runs_every_kernel_and_reference_and_matches_the_cpu() {
    let _guard = lock();
    build_examples();
    let r = run(std::process::Command::new(built_bin("kernelbench")).arg("--small"));
    assert_eq!(r.code, Some(0), "{}", r.dump());
    let kernels = lines_with(&r.stdout, "variant=");
    let names: Vec<&str> = kernels.iter().map(|(k, _)| *k).collect();
    assert_eq!(
        kernels.len(),
        32,
        "21 level-1 and 11 level-2 kernels:\n{}",
        r.dump()
    );
    for expected in [
        "GEMM",
        "CONV2D",
        "ARGMAX",
        "EMBEDDING",
        "ATTENTION_HEAD",
        "SGEMM",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing:\n{}",
            r.dump()
        );
    }
    for (kernel, rest) in &kernels {
        assert!(rest.ends_with(" ok"), "{kernel}: {rest}\n{}", r.dump());
    }
    let references = lines_with(&r.stdout, "reference=");
    let with_reference: Vec<&str> = references.iter().map(|(k, _)| *k).collect();
    assert_eq!(
        with_reference,
        ["GEMM", "SOFTMAX", "LAYERNORM"],
        "{}",
        r.dump()
    );
    for (kernel, rest) in &references {
        // lavapipe has subgroups: a skipped reference here is a failure.
        assert!(rest.ends_with(" ok"), "{kernel}: {rest}\n{}", r.dump());
    }
}

#[test]
fn kernelbench_rejects_an_unknown_kernel_name() {
    let _guard = lock();
    build_examples();
    let r =
        run(std::process::Command::new(built_bin("kernelbench"))
            .args(["--small", "--kernel", "GEMMM"]));
    assert_eq!(r.code, Some(2), "{}", r.dump());
    assert!(r.stderr.contains("no kernel named `GEMMM`"), "{}", r.dump());
}

/// The blind corpus (`tests/data/unseen/`, marked in `examples/blind`) at its headers' shapes: all
/// 45 kernels, bindings in other groups and orders included, run and match the CPU.
#[test]
fn blind_runs_every_kernel_and_matches_the_cpu() {
    let _guard = lock();
    run_ok(cargo().args(["build", "-p", "blind"]).current_dir(root()));
    let r = run(std::process::Command::new(built_bin("blind")).arg("--small"));
    assert!(
        !r.stderr.contains("no GPU adapter found"),
        "no GPU adapter found (CI installs lavapipe):\n{}",
        r.dump()
    );
    assert_eq!(r.code, Some(0), "{}", r.dump());
    assert!(
        r.stdout.starts_with("adapter: ") && r.stdout.contains("small shapes"),
        "{}",
        r.dump()
    );
    let kernels = lines_with(&r.stdout, "variant=");
    assert_eq!(kernels.len(), 45, "45 kernels:\n{}", r.dump());
    let names: Vec<&str> = kernels.iter().map(|(k, _)| *k).collect();
    // The spellings the harness must handle: an input in group 1, a uniform in group 1, a uniform
    // at binding 0, a storage vec2 shape, no uniform at all, a u32 output.
    for expected in [
        "TRANSPOSE_GROUPS",
        "B2_GEMV_AT",
        "COL_SUM_STRIDED",
        "B2_COL_SUM",
        "B2_MEAN_COUNTDOWN",
        "ARGMAX_ROWS",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing:\n{}",
            r.dump()
        );
    }
    for (kernel, rest) in &kernels {
        assert!(rest.ends_with(" ok"), "{kernel}: {rest}\n{}", r.dump());
    }
}

/// The Llama layer's decode kernels in the order the step runs them.
const DECODE_KERNELS: [&str; 9] = [
    "EMBED",
    "RMSNORM",
    "QKV_GEMV",
    "ROPE",
    "ATTN_DECODE",
    "O_PROJ",
    "GATE_UP",
    "DOWN_PROJ",
    "LOGITS",
];

#[test]
fn llama_decode_step_matches_the_cpu_layer() {
    let _guard = lock();
    build_examples();
    let r = run(std::process::Command::new(built_bin("llama32-1b")).arg("--small"));
    assert_eq!(r.code, Some(0), "{}", r.dump());
    let kernels = lines_with(&r.stdout, "variant=");
    let names: Vec<&str> = kernels.iter().map(|(k, _)| *k).collect();
    assert_eq!(
        names,
        DECODE_KERNELS
            .iter()
            .copied()
            .chain(["QKV_GEMM"])
            .collect::<Vec<_>>(),
        "{}",
        r.dump()
    );
    for (kernel, rest) in &kernels {
        assert!(rest.ends_with(" ok"), "{kernel}: {rest}\n{}", r.dump());
    }
    let step = r
        .stdout
        .lines()
        .find(|l| l.starts_with("DECODE_STEP: "))
        .unwrap_or_else(|| panic!("no DECODE_STEP line:\n{}", r.dump()));
    assert!(step.ends_with(" ok"), "{}", r.dump());
}

#[test]
fn llama_bench_times_the_step_and_each_kernels_share() {
    let _guard = lock();
    build_examples();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("step.json");
    let r = run(std::process::Command::new(built_bin("llama32-1b"))
        .args(["--small", "--bench", "--repeats", "3", "--bench-json"])
        .arg(&json)
        .env("KERNELFOUNDRY_VARIANT", "baseline"));
    assert_eq!(r.code, Some(0), "{}", r.dump());
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(
        report["variants"]
            .as_str()
            .unwrap()
            .contains("KERNELFOUNDRY_VARIANT=baseline"),
        "{report}"
    );
    let steps = report["steps"].as_array().unwrap();
    let names: Vec<&str> = steps.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["decode", "prefill"], "{report}");
    for step in steps {
        let step_ns = step["step_ns"].as_f64().unwrap();
        assert!(step_ns > 0.0, "{step}");
        let kernels = step["kernels"].as_array().unwrap();
        let sum: f64 = kernels.iter().map(|k| k["ns"].as_f64().unwrap()).sum();
        // The dispatches lie within the step (first start to last end); medians are taken per
        // kernel, so allow a little for rounding across repeats.
        assert!(sum > 0.0 && sum <= step_ns * 1.05, "{step}");
        for k in kernels {
            assert_eq!(k["variant"], "baseline", "{step}");
            let share = k["share"].as_f64().unwrap();
            assert!(share > 0.0 && share <= 1.0, "{step}");
        }
    }
    let decode: Vec<&str> = steps[0]["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["name"].as_str().unwrap())
        .collect();
    assert_eq!(decode, DECODE_KERNELS);
    assert!(
        r.stdout.lines().any(|l| l.starts_with("BENCH decode: ")),
        "{}",
        r.dump()
    );
}

#[test]
fn list_resolves_every_example_kernel_and_its_reference() {
    let r = run_ok(
        kf(&["list", "--json", "--manifest-path"])
            .arg(root().join("Cargo.toml"))
            .args(["-p", "kernelbench", "-p", "llama32-1b"]),
    );
    let json = r.json();
    let kernels = json["kernels"].as_array().expect("kernels");
    assert_eq!(kernels.len(), 32 + 10, "{}", r.dump());
    for k in kernels {
        assert!(k.get("error").is_none(), "{k}");
    }
    let with_reference: Vec<(&str, &str)> = kernels
        .iter()
        .filter_map(|k| Some((k["name"].as_str()?, k["reference"].as_str()?)))
        .collect();
    assert_eq!(
        with_reference,
        [
            (
                "GEMM",
                "entry `main`, workgroup 16x16x1, workgroups((n + 63) / 64, (m + 63) / 64, 1)"
            ),
            (
                "SOFTMAX",
                "entry `main`, workgroup 256x1x1, workgroups(rows, 1, 1)"
            ),
            (
                "LAYERNORM",
                "entry `main`, workgroup 256x1x1, workgroups(rows, 1, 1)"
            ),
        ],
        "{}",
        r.dump()
    );
}

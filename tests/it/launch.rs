//! Launch rules over tuned parameters, end to end: a GEMV computing `OUTPUTS_PER_WG` outputs per
//! workgroup (`workgroups = (cdiv(m, OUTPUTS_PER_WG))`) is tuned, and an app built against the
//! cache dispatches the chosen variant with the workgroup count of its own value and checks every
//! output against the CPU; `eval` of a kernel's own file runs with the baseline's constants.

use kf_tests::*;

/// The fixture app's `GEMV: variant=.. match=.. OUTPUTS_PER_WG=.. workgroups=.. ok` line.
struct Line {
    variant: String,
    matched: String,
    outputs_per_wg: u64,
    workgroups: u64,
    ok: bool,
}

#[track_caller]
fn run_app(variant: Option<&str>) -> Line {
    let mut cmd = std::process::Command::new(built_bin("gemv-fixture"));
    cmd.env_remove("KERNELFOUNDRY_VARIANT");
    if let Some(v) = variant {
        cmd.env("KERNELFOUNDRY_VARIANT", v);
    }
    let r = run(&mut cmd);
    assert_eq!(r.code, Some(0), "the app failed:\n{}", r.dump());
    let line = r
        .stdout
        .lines()
        .find(|l| l.starts_with("GEMV: "))
        .unwrap_or_else(|| panic!("no GEMV line:\n{}", r.dump()));
    let field = |key: &str| {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(key))
            .unwrap_or_else(|| panic!("no `{key}` in {line}"))
            .to_owned()
    };
    let number = |key: &str| {
        field(key)
            .parse::<u64>()
            .unwrap_or_else(|e| panic!("`{key}` in {line}: {e}"))
    };
    Line {
        variant: field("variant="),
        matched: field("match="),
        outputs_per_wg: number("OUTPUTS_PER_WG="),
        workgroups: number("workgroups="),
        ok: line.trim_end().ends_with(" ok"),
    }
}

#[test]
fn a_launch_rule_over_a_tuned_parameter_dispatches_the_chosen_variants_count() {
    let dir = copy_crate("tests/fixtures/gemv");
    let manifest = dir.path().join("Cargo.toml");
    // The parameter space only (no rewrites), so the winner differs from the baseline in
    // `OUTPUTS_PER_WG` alone; the baseline's 1 output per workgroup of 64 is clearly slow, and
    // `candidates_win` keeps noise from deciding it.
    let r = run(crate::candidates_win(
        kf(&[
            "tune",
            "--json",
            "--strategy",
            "exhaustive",
            "--adapter",
            "0",
            "--kernel",
            "GEMV",
            "--manifest-path",
        ])
        .arg(&manifest),
    ));
    assert_eq!(r.code, Some(0), "{}", r.dump());
    let k = r.json()["kernels"][0].clone();
    assert_eq!(k["status"], "tuned", "{}", r.dump());
    assert!(
        k["rejected"].get("wrong-values").is_none(),
        "each candidate launches with its own count, so none is wrong: {k}"
    );
    let entry: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(k["cache_file"].as_str().unwrap()).unwrap())
            .unwrap();
    let program = &entry["variant"];
    assert_eq!(
        program["dispatch"],
        serde_json::json!({"mode": "workgroups", "size": ["cdiv(m, OUTPUTS_PER_WG)", "1", "1"]}),
        "{entry}"
    );
    let chosen = program["constants"]["OUTPUTS_PER_WG"]
        .as_f64()
        .unwrap_or_else(|| panic!("the variant carries the rule's parameter: {entry}"));
    // The baseline's value is the first candidate, 1: the variant really launches another.
    assert_ne!(chosen, 1.0, "{entry}");
    let chosen = chosen as u64;
    let m = 1001; // the app's size

    let _guard = crate::e2e::lock();
    build(dir.path());
    let tuned = run_app(None);
    assert_eq!(
        tuned.variant,
        entry["variant"]["id"].as_str().unwrap(),
        "the app runs the tuned entry"
    );
    assert_eq!(tuned.matched, "exact");
    assert_eq!(tuned.outputs_per_wg, chosen);
    assert_eq!(tuned.workgroups, u64::div_ceil(m, chosen));
    assert!(tuned.ok, "every output matches the CPU");

    // The baseline, forced, launches with its own value.
    let baseline = run_app(Some("baseline"));
    assert_eq!(baseline.variant, "baseline");
    assert_eq!(baseline.outputs_per_wg, 1);
    assert_eq!(baseline.workgroups, m);
    assert!(baseline.ok);
}

#[test]
fn eval_of_a_kernels_own_file_runs_with_the_baselines_constants() {
    let fixture = copy_crate("tests/fixtures/kernels");
    let manifest = fixture.path().join("Cargo.toml");
    let own = fixture.path().join("src/shaders/template.wgsl");
    let eval = |extra: &[&str], candidate: &std::path::Path| {
        run(
            kf(&["eval", "--json", "--samples", "3", "--kernel", "TEMPLATE"])
                .args(extra)
                .arg("--manifest-path")
                .arg(&manifest)
                .arg("--candidate")
                .arg(candidate),
        )
    };
    // X, Y and THREADS have no default; `params(..)` gives the baseline's values.
    let r = eval(&[], &own);
    assert_eq!(r.code, Some(0), "{}", r.dump());
    assert_eq!(r.json()["level"], 5, "{}", r.dump());
    // `--constant` still wins: half the elements per workgroup leaves half the outputs unwritten.
    let r = eval(&["--constant", "ITEMS=4"], &own);
    assert_eq!(r.code, Some(1), "{}", r.dump());
    assert_eq!(r.json()["level"], 4, "{}", r.dump());
    assert_eq!(r.json()["reason"], "wrong-values", "{}", r.dump());
    // And a consistent set of values the baseline does not use is right.
    let r = eval(
        &[
            "--constant",
            "X=32",
            "--constant",
            "THREADS=32",
            "--constant",
            "ITEMS=16",
        ],
        &own,
    );
    assert_eq!(r.json()["level"], 5, "{}", r.dump());

    // An override of the candidate's own without a default needs `--constant`, and says so.
    let text = std::fs::read_to_string(&own).unwrap();
    let extra = fixture.path().join("extra.wgsl");
    std::fs::write(
        &extra,
        text.replace(
            "override ITEMS: u32 = 8u;",
            "override ITEMS: u32 = 8u;\noverride SCALE: u32;",
        )
        .replace("3.0 * x[i]", "f32(SCALE) * x[i]"),
    )
    .unwrap();
    let r = eval(&[], &extra);
    assert_eq!(r.code, Some(2), "{}", r.dump());
    assert!(
        r.stderr.contains("`SCALE`") && r.stderr.contains("--constant SCALE=<value>"),
        "{}",
        r.dump()
    );
    let r = eval(&["--constant", "SCALE=3"], &extra);
    assert_eq!(r.json()["level"], 5, "{}", r.dump());
}

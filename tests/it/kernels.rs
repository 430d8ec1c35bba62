//! Real kernel shapes tuned end to end: image kernels over textures and samplers, and a template
//! whose parameters are tied together by derived values and constraints.

use kf_tests::*;

/// Tunes `kernel` of the kernels fixture at `manifest` with `strategy`; returns the kernel's report
/// and its cache entry.
fn tune(
    manifest: &std::path::Path,
    kernel: &str,
    budget: &str,
    strategy: &str,
) -> (serde_json::Value, serde_json::Value) {
    let r = run(kf(&[
        "tune",
        "--json",
        "--strategy",
        strategy,
        "--budget",
        budget,
        "--adapter",
        "0",
        "--kernel",
        kernel,
        "--manifest-path",
    ])
    .arg(manifest));
    assert_eq!(r.code, Some(0), "{kernel}:\n{}", r.dump());
    let k = r.json()["kernels"][0].clone();
    assert!(
        ["tuned", "baseline-best"].contains(&k["status"].as_str().unwrap()),
        "{kernel}: {}",
        r.dump()
    );
    let file = k["cache_file"].as_str().unwrap();
    let entry: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    (k, entry)
}

#[test]
fn texture_kernels_are_tuned_and_verified_texel_by_texel() {
    let fixture = copy_crate("tests/fixtures/kernels");
    let manifest = fixture.path().join("Cargo.toml");
    for kernel in ["BLUR", "HEIGHTS"] {
        let (k, entry) = tune(&manifest, kernel, "4", "auto");
        // Every candidate is the same filter with another workgroup shape: none may be judged
        // wrong (the texel comparison agrees with itself across workgroup sizes), and the
        // search must have evaluated some.
        assert!(k["evaluations"].as_u64().unwrap() >= 1, "{kernel}: {k}");
        assert!(
            k["rejected"].get("wrong-values").is_none(),
            "{kernel}: an honest variant was judged wrong: {k}"
        );
        let checks: Vec<&str> = entry["verification"]["checks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        for check in [
            "poisoned-outputs",
            "stale-output-rerun",
            "unseen-verification-shapes",
        ] {
            assert!(checks.contains(&check), "{kernel}: {checks:?}");
        }
        assert!(
            entry["verification"]["shapes"].as_array().unwrap().len() >= 2,
            "{kernel}: tune and verify shapes: {entry}"
        );
    }
}

#[test]
fn a_constrained_space_is_searched_without_a_point_that_breaks_it() {
    let fixture = copy_crate("tests/fixtures/kernels");
    let manifest = fixture.path().join("Cargo.toml");
    // The parameter space itself, searched exhaustively.
    let (k, entry) = tune(&manifest, "TEMPLATE", "32", "exhaustive");
    // Count the points that meet the constraint independently: X * Y * ITEMS == 512.
    let mut valid = 0;
    for x in [64, 8, 16, 32] {
        for y in [1, 2, 4, 8] {
            for items in [8, 1, 2, 4, 16] {
                if x * y * items == 512 {
                    valid += 1;
                }
            }
        }
    }
    assert_eq!(
        entry["search"]["space_size"].as_u64(),
        Some(valid - 1),
        "the space holds exactly the valid points but the baseline's: {entry}"
    );
    assert_eq!(entry["search"]["strategy"], "exhaustive", "{entry}");
    // Every point in the space computes the right thing: none is rejected as wrong.
    assert!(k["rejected"].get("wrong-values").is_none(), "{k}");
    assert_eq!(k["evaluations"].as_u64(), Some(valid - 1), "{k}");
    if let Some(constants) = entry["variant"]["program"]["constants"].as_object() {
        let c = |n: &str| constants[n].as_f64().unwrap();
        assert_eq!(c("THREADS"), c("X") * c("Y"), "{entry}");
        assert_eq!(c("THREADS") * c("ITEMS"), 512.0, "{entry}");
    }
}

//! Selection by measurement on a GPU no entry was tuned on: the quickstart with entries tuned
//! only under foreign adapter keys, run with `--measure` (`LoadMode::Measure`).

use crate::e2e::{content_hash, lock, saxpy_entry, this_adapter, write_entry};
use kf_runtime::AdapterIdentity;
use kf_runtime::cache::{CacheEntry, VariantRecord};
use kf_tests::*;
use std::borrow::Cow;
use std::path::Path;

fn foreign(name: &str, vendor: u32, device: u32) -> AdapterIdentity {
    AdapterIdentity {
        name: name.into(),
        vendor,
        device,
        backend: "vulkan".into(),
        device_type: "DiscreteGpu".into(),
        driver: "vendor driver".into(),
        driver_info: "1.0".into(),
    }
}

/// A MATMUL entry whose variant keeps the interface but sums one term instead of `k`: far
/// faster than the kernel on any adapter, and wrong.
fn wrong_matmul_entry(dir: &Path, adapter: &AdapterIdentity) -> CacheEntry {
    let baseline = std::fs::read_to_string(dir.join("src/shaders/matmul.wgsl")).unwrap();
    let wgsl = baseline.replace("i < dims.k;", "i < min(dims.k, 1u);");
    assert_ne!(wgsl, baseline, "the loop bound was rewritten");
    let mut entry = saxpy_entry(dir, adapter, 64, None);
    entry.kernel.name = "MATMUL".into();
    entry.kernel.content_hash = content_hash(dir, "MATMUL");
    let base = entry.variant.take().unwrap();
    let mut program = base.program;
    program.wgsl = Cow::Owned(wgsl.clone());
    program.constants = Cow::Owned(vec![]);
    program.workgroup_size = [8, 8, 1];
    program.dispatch = kf_runtime::Dispatch {
        mode: kf_runtime::DispatchMode::Grid,
        size: [
            kf_runtime::expr::SizeExpr::size("n"),
            kf_runtime::expr::SizeExpr::size("m"),
            kf_runtime::expr::SizeExpr::lit(1),
        ],
    };
    entry.variant = Some(VariantRecord {
        id: kf_runtime::hash::variant_id(&wgsl, &[], &program.dispatch.to_string()),
        origin: "test: one term of the sum".into(),
        program,
    });
    entry
}

fn run_measured(user_cache: &Path) -> Run {
    let r = run(std::process::Command::new(built_bin("quickstart"))
        // A budget that fits enough rounds on a busy CPU adapter too (the default is 50 ms).
        .args(["--measure", "--measure-budget-ms", "400"])
        .env("RUST_LOG", "kf_runtime=info")
        .env("KERNELFOUNDRY_USER_CACHE", user_cache)
        .env_remove("KERNELFOUNDRY_VARIANT"));
    assert_eq!(r.code, Some(0), "the quickstart failed:\n{}", r.dump());
    r
}

/// `(variant, match, timed)` of `kernel`'s line, which must say `ok`.
#[track_caller]
fn line(r: &Run, kernel: &str) -> (String, String, u64) {
    let l = r
        .stdout
        .lines()
        .find(|l| l.starts_with(&format!("{kernel}: ")))
        .unwrap_or_else(|| panic!("no line for {kernel}:\n{}", r.dump()));
    assert!(
        l.ends_with(" ok"),
        "{kernel} computed a wrong result:\n{}",
        r.dump()
    );
    let field = |key: &str| {
        l.split_whitespace()
            .find_map(|w| w.strip_prefix(key))
            .unwrap_or_else(|| panic!("no {key} in {l:?}"))
            .to_owned()
    };
    (
        field("variant="),
        field("match="),
        field("timed=").parse().unwrap(),
    )
}

#[test]
fn an_unseen_gpu_measures_the_variants_tuned_elsewhere_and_remembers_the_choice() {
    let dir = copy_crate("examples/quickstart");
    let here = this_adapter();
    // SAXPY: two variants tuned on other GPUs; both launch far wider workgroups than the
    // kernel's 4 invocations, which any adapter runs several times faster.
    let h200 = foreign("NVIDIA H200", 0x10de, 0x2335);
    let mi300 = foreign("AMD Instinct MI300X", 0x1002, 0x74a1);
    let e256 = saxpy_entry(dir.path(), &h200, 256, None);
    let e128 = saxpy_entry(dir.path(), &mi300, 128, None);
    let ids = [
        e256.variant.as_ref().unwrap().id.clone(),
        e128.variant.as_ref().unwrap().id.clone(),
    ];
    write_entry(dir.path(), &e256);
    write_entry(dir.path(), &e128);
    // MATMUL: one variant tuned elsewhere that is faster and wrong.
    let wrong = wrong_matmul_entry(dir.path(), &h200);
    let wrong_id = wrong.variant.as_ref().unwrap().id.clone();
    write_entry(dir.path(), &wrong);
    for key in [h200.key(), mi300.key()] {
        assert_ne!(
            key,
            here.key(),
            "the entries must be foreign to this adapter"
        );
    }
    assert_ne!((h200.vendor, h200.device), (here.vendor, here.device));
    assert_ne!((mi300.vendor, mi300.device), (here.vendor, here.device));

    let _guard = lock();
    build(dir.path());
    let user = tempfile::tempdir().unwrap();
    let selections = user.path().join("selections.json");

    // The default load is unchanged: no entry for this adapter, so the kernel runs.
    let plain = run(std::process::Command::new(built_bin("quickstart"))
        .env("KERNELFOUNDRY_USER_CACHE", &selections)
        .env_remove("KERNELFOUNDRY_VARIANT"));
    assert_eq!(plain.code, Some(0), "{}", plain.dump());
    for (kernel, variant, matched, ok) in quickstart_lines(&plain.stdout) {
        assert!(ok, "{kernel}:\n{}", plain.dump());
        assert_eq!((variant.as_str(), matched.as_str()), ("baseline", "none"));
    }
    assert!(
        !selections.exists(),
        "the default load measures and writes nothing"
    );

    // First start: measured.
    let first = run_measured(&selections);
    let (variant, matched, timed) = line(&first, "SAXPY");
    assert_eq!(matched, "measured", "{}", first.dump());
    assert!(
        ids.contains(&variant),
        "SAXPY picks one of the variants tuned elsewhere, not {variant}:\n{}",
        first.dump()
    );
    assert!(
        timed >= 3 * 4,
        "a warm-up and at least 3 rounds of 3 programs: {timed}"
    );
    assert!(
        first.stderr.contains("by measurement"),
        "the choice is logged:\n{}",
        first.dump()
    );
    let (variant, matched, timed) = line(&first, "MATMUL");
    assert_eq!(
        (variant.as_str(), matched.as_str()),
        ("baseline", "measured"),
        "the wrong variant ({wrong_id}) must never be picked:\n{}",
        first.dump()
    );
    assert!(timed > 0);
    assert!(
        first
            .stderr
            .contains("computes other values than the baseline"),
        "{}",
        first.dump()
    );
    // SOFTMAX has no variant at all: nothing to measure.
    assert_eq!(
        line(&first, "SOFTMAX"),
        ("baseline".into(), "none".into(), 0)
    );
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&selections).unwrap()).unwrap();
    let choices = file["choices"].as_object().unwrap();
    assert_eq!(
        choices.len(),
        2,
        "SAXPY and MATMUL are remembered: {file:#}"
    );
    for key in choices.keys() {
        assert!(key.starts_with(&format!("{}/", here.key())), "{key}");
    }
    let saxpy_choice = line(&first, "SAXPY").0;

    // Second start: the remembered choice, nothing measured.
    let second = run_measured(&selections);
    assert_eq!(
        line(&second, "SAXPY"),
        (saxpy_choice.clone(), "remembered".into(), 0),
        "{}",
        second.dump()
    );
    assert_eq!(
        line(&second, "MATMUL"),
        ("baseline".into(), "remembered".into(), 0),
        "{}",
        second.dump()
    );
    assert!(
        second
            .stderr
            .contains("remembered from an earlier measurement"),
        "{}",
        second.dump()
    );
    assert!(
        !second.stderr.contains("match=measured"),
        "{}",
        second.dump()
    );

    // A corrupt file fails nothing: it is ignored with a warning, measured again, rewritten.
    std::fs::write(&selections, "{ truncated").unwrap();
    let third = run_measured(&selections);
    assert_eq!(line(&third, "SAXPY").1, "measured", "{}", third.dump());
    assert!(
        third.stderr.contains("not a valid selections file"),
        "{}",
        third.dump()
    );
    let rewritten: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&selections).unwrap())
            .expect("the file is rewritten whole");
    assert_eq!(rewritten["choices"].as_object().unwrap().len(), 2);
}

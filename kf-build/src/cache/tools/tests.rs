//! Tests of the cache tools on entries written into temporary crates: what verify reports, what gc removes, what merge keeps.

use super::*;
use kf_runtime::AdapterIdentity;
use kf_runtime::cache::{
    AdapterRecord, FORMAT_VERSION, KernelRecord, Outcome, SearchRecord, VariantRecord,
    VerificationRecord,
};
use std::borrow::Cow;

const WGSL: &str = r#"
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < arrayLength(&y)) { y[g.x] = 2.0 * x[g.x]; }
}
"#;

fn kernel() -> ResolvedKernel {
    let attr = r#"source = "", sizes(n = 1024), bind(x = input(n), y = output(n))"#;
    let (spec, _) = kf_runtime::syntax::parse_spec(attr.parse().unwrap()).unwrap();
    kf_runtime::resolve::resolve("K", &spec, WGSL, "k.wgsl").unwrap()
}

fn found(root: &Path, resolved: Result<ResolvedKernel, String>) -> Found {
    Found {
        package: "p".into(),
        crate_root: root.to_owned(),
        name: "K".into(),
        file: root.join("src/lib.rs"),
        line: 1,
        skipped: None,
        spec: None,
        resolved,
    }
}

fn adapter(name: &str) -> AdapterIdentity {
    AdapterIdentity {
        name: name.into(),
        vendor: 1,
        device: 2,
        backend: "vulkan".into(),
        device_type: "DiscreteGpu".into(),
        driver: "test".into(),
        driver_info: "1".into(),
    }
}

/// A tuned entry of `K` whose variant runs `variant_ns` on `(n = 1024)`.
fn entry(hash: &str, gpu: &str, variant_ns: f64, speedup: f64) -> CacheEntry {
    let k = kernel();
    let mut program = k.baseline.clone();
    program.wgsl = Cow::Owned(format!("{WGSL}// {variant_ns}\n"));
    CacheEntry {
        format_version: FORMAT_VERSION,
        tool_version: "test".into(),
        kernel: KernelRecord {
            name: "K".into(),
            package: "p".into(),
            content_hash: hash.into(),
            entry: "main".into(),
        },
        adapter: AdapterRecord {
            key: adapter(gpu).key(),
            identity: adapter(gpu),
            limits: Default::default(),
            features: vec![],
        },
        outcome: Outcome::Tuned,
        variant: Some(VariantRecord {
            id: format!("v{}", variant_ns as u64),
            origin: "test".into(),
            program,
        }),
        speedup,
        noise: 0.02,
        timings: vec![kf_runtime::cache::ShapeTiming {
            shape: [("n".to_string(), 1024)].into_iter().collect(),
            baseline_ns: 2000.0,
            variant_ns,
            samples: 10,
            method: "test".into(),
        }],
        verification: VerificationRecord {
            shapes: vec![],
            seeds: vec![],
            checks: vec![],
            max_rel_l2: 0.0,
            max_rel_elem: 0.0,
        },
        search: SearchRecord {
            strategy: "qd".into(),
            space_size: 1,
            evaluations: 1,
            budget: 1,
        },
        tuning: None,
    }
}

fn put(root: &Path, dir_kernel: &str, dir_hash: &str, e: &CacheEntry) -> PathBuf {
    let path = root
        .join(CACHE_DIR)
        .join(dir_kernel)
        .join(dir_hash)
        .join(format!("{}.json", e.adapter.key));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, e.to_json()).unwrap();
    path
}

#[test]
fn verify_names_every_problem_with_its_file_and_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let h = kernel().content_hash;
    let good = put(root, "K", &h, &entry(&h, "a", 1000.0, 2.0));
    let corrupt = good.with_file_name("0123456789abcdef.json");
    std::fs::write(&corrupt, "{ not json").unwrap();
    let old = put(
        root,
        "K",
        "00000000deadbeef",
        &entry("00000000deadbeef", "a", 1.0, 2.0),
    );
    let mut gone = entry("1111111111111111", "a", 1.0, 2.0);
    gone.kernel.name = "GONE".into();
    let gone = put(root, "GONE", "1111111111111111", &gone);
    let misplaced = put(root, "K", &h, &entry("2222222222222222", "b", 1.0, 2.0));
    let mut misfit = entry(&h, "c", 1.0, 2.0);
    misfit.variant.as_mut().unwrap().program.wgsl = Cow::Borrowed("fn main( {");
    let misfit = put(root, "K", &h, &misfit);
    // Ceilings are not entries.
    std::fs::create_dir_all(root.join("kernelfoundry/_adapters")).unwrap();
    std::fs::write(root.join("kernelfoundry/_adapters/x.json"), "{}").unwrap();

    let v = verify(&[root.to_owned()], &[found(root, Ok(kernel()))]);
    assert_eq!(v.checked, 6);
    let by_path = |p: &Path| {
        v.problems
            .iter()
            .find(|x| x.path == p)
            .unwrap_or_else(|| panic!("no problem for {}: {:#?}", p.display(), v.problems))
    };
    assert!(
        v.problems.iter().all(|p| p.path != good),
        "{:#?}",
        v.problems
    );
    let p = by_path(&corrupt);
    assert_eq!(p.kind, "corrupt");
    assert!(
        p.message.contains("is not a valid cache entry"),
        "{}",
        p.message
    );
    assert!(p.hint.contains("tune --kernel K"), "{}", p.hint);
    let p = by_path(&old);
    assert_eq!(p.kind, "unmatched");
    assert!(
        p.message.contains(&format!("has content hash {h} now")),
        "{}",
        p.message
    );
    assert!(p.hint.contains("cache gc"), "{}", p.hint);
    let p = by_path(&gone);
    assert_eq!(p.kind, "unmatched");
    assert!(
        p.message.contains("no marked kernel named GONE"),
        "{}",
        p.message
    );
    assert_eq!(by_path(&misplaced).kind, "misplaced");
    let p = by_path(&misfit);
    assert_eq!(p.kind, "misfit");
    assert!(p.message.contains("is not valid WGSL"), "{}", p.message);
    assert_eq!(v.problems.len(), 5);

    // A kernel that does not resolve: its entries cannot be checked, and verify says so.
    let v = verify(
        &[root.to_owned()],
        &[found(root, Err("src/lib.rs:3: unknown size `m`".into()))],
    );
    let p = by_path_in(&v, &good);
    assert_eq!(p.kind, "unresolved");
    assert!(p.message.contains("unknown size `m`"), "{}", p.message);
}

fn by_path_in<'a>(v: &'a Verification, p: &Path) -> &'a Problem {
    v.problems.iter().find(|x| x.path == p).unwrap()
}

#[test]
fn gc_removes_only_entries_no_kernel_matches() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let h = kernel().content_hash;
    let good = put(root, "K", &h, &entry(&h, "a", 1000.0, 2.0));
    let corrupt = good.with_file_name("0123456789abcdef.json");
    std::fs::write(&corrupt, "{ not json").unwrap();
    let old = put(
        root,
        "K",
        "00000000deadbeef",
        &entry("00000000deadbeef", "a", 1.0, 2.0),
    );
    let mut gone = entry("1111111111111111", "a", 1.0, 2.0);
    gone.kernel.name = "GONE".into();
    let gone = put(root, "GONE", "1111111111111111", &gone);

    let plan = gc_plan(&[root.to_owned()], &[found(root, Ok(kernel()))]);
    let removed: Vec<&Path> = plan.remove.iter().map(|r| r.path.as_path()).collect();
    assert_eq!(removed, vec![gone.as_path(), old.as_path()]);
    assert!(
        plan.remove[1].reason.contains("has content hash"),
        "{:?}",
        plan.remove
    );
    assert!(plan.kept.is_empty());

    // With the kernel unresolved, nothing of it is removed; a kernel that is gone still is.
    let plan = gc_plan(&[root.to_owned()], &[found(root, Err("broken".into()))]);
    let removed: Vec<&Path> = plan.remove.iter().map(|r| r.path.as_path()).collect();
    assert_eq!(removed, vec![gone.as_path()]);
    assert_eq!(plan.kept.len(), 3, "{:?}", plan.kept);
}

#[test]
fn judging_two_entries_for_one_key_keeps_the_faster_verified_one() {
    let h = kernel().content_hash;
    let k = kernel();
    let slow = entry(&h, "a", 1500.0, 1.3);
    let fast = entry(&h, "a", 1000.0, 2.0);
    let (wins, why) = judge(&slow, &fast, Some(&k));
    assert!(wins, "{why}");
    assert!(why.contains("timings[].variant_ns"), "{why}");
    assert!(why.contains("both were measured on adapter key"), "{why}");
    assert!(
        why.contains("v1000, 1.0 µs is faster than v1500, 1.5 µs"),
        "{why}"
    );
    let (wins, why) = judge(&fast, &slow, Some(&k));
    assert!(!wins, "{why}");
    // A tie keeps what is there.
    assert!(!judge(&fast, &fast.clone(), Some(&k)).0);
    // No shape in common: the recorded speedups decide.
    let mut other_shape = entry(&h, "a", 900.0, 1.5);
    other_shape.timings[0].shape.insert("n".into(), 4096);
    let (wins, why) = judge(&fast, &other_shape, Some(&k));
    assert!(!wins && why.contains("compared `speedup`"), "{why}");
    // A faster entry that fails the check loses.
    let mut broken = entry(&h, "a", 10.0, 9.0);
    broken.variant.as_mut().unwrap().program.wgsl = Cow::Borrowed("fn (");
    let (wins, why) = judge(&slow, &broken, Some(&k));
    assert!(!wins && why.contains("fails the check"), "{why}");
}

#[test]
fn merge_accounts_for_every_file() {
    let dest = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    let h = kernel().content_hash;
    // Already here: a slow entry for adapter a and an entry for adapter b.
    let here_a = put(dest.path(), "K", &h, &entry(&h, "a", 1500.0, 1.3));
    let here_b = put(dest.path(), "K", &h, &entry(&h, "b", 700.0, 1.1));
    // Incoming, as another machine's crate: a faster one for a, the same b, a new c, a slower d
    // than the one here, ceilings, a README and a corrupt file.
    let theirs = src.path().join(CACHE_DIR);
    put(src.path(), "K", &h, &entry(&h, "a", 1000.0, 2.0));
    std::fs::copy(
        &here_b,
        theirs.join("K").join(&h).join(here_b.file_name().unwrap()),
    )
    .unwrap();
    put(src.path(), "K", &h, &entry(&h, "c", 800.0, 1.8));
    let here_d = put(dest.path(), "K", &h, &entry(&h, "d", 500.0, 3.0));
    put(src.path(), "K", &h, &entry(&h, "d", 600.0, 2.5));
    std::fs::create_dir_all(theirs.join("_adapters")).unwrap();
    std::fs::write(theirs.join("_adapters/x.json"), "{}").unwrap();
    std::fs::write(theirs.join("README.md"), "cache").unwrap();
    std::fs::write(theirs.join("K").join(&h).join("ffffffffffffffff.json"), "{").unwrap();

    let dests = [Destination {
        package: "p".into(),
        crate_root: dest.path().to_owned(),
    }];
    let kernels = [found(dest.path(), Ok(kernel()))];
    let before_a = std::fs::read_to_string(&here_a).unwrap();
    let dry = merge(&[src.path().to_owned()], &dests, &kernels, true);
    assert_eq!(
        std::fs::read_to_string(&here_a).unwrap(),
        before_a,
        "a dry run writes nothing"
    );
    let actions = merge(&[src.path().to_owned()], &dests, &kernels, false);
    let dry_kinds: Vec<&str> = dry.iter().map(|a| a.action).collect();
    let kinds: Vec<&str> = actions.iter().map(|a| a.action).collect();
    assert_eq!(dry_kinds, kinds);
    let count = |k: &str| kinds.iter().filter(|x| **x == k).count();
    assert_eq!(actions.len(), 7, "{actions:#?}");
    assert_eq!(
        (
            count("replaced"),
            count("identical"),
            count("added"),
            count("kept")
        ),
        (1, 1, 1, 1),
        "{actions:#?}"
    );
    assert_eq!((count("skipped"), count("failed")), (2, 1), "{actions:#?}");
    let replaced = actions.iter().find(|a| a.action == "replaced").unwrap();
    assert_eq!(replaced.dest.as_deref(), Some(here_a.as_path()));
    assert!(
        replaced.message.contains("is faster than"),
        "{}",
        replaced.message
    );
    assert!(
        std::fs::read_to_string(&here_a)
            .unwrap()
            .contains("\"variant_ns\": 1000.0"),
        "the faster entry is in place"
    );
    let kept = actions.iter().find(|a| a.action == "kept").unwrap();
    assert_eq!(kept.dest.as_deref(), Some(here_d.as_path()));
    assert!(
        kept.message.contains("kept the existing entry"),
        "{}",
        kept.message
    );
    assert!(
        actions
            .iter()
            .any(|a| a.failed() && a.message.contains("not merged"))
    );
    assert!(
        !dest.path().join(CACHE_DIR).join("_adapters").exists(),
        "ceilings are not merged"
    );
}

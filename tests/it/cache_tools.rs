//! `cargo kernelfoundry cache verify|gc|merge` on a copy of the quickstart.

use crate::e2e::{content_hash, saxpy_entry, write_entry};
use kf_runtime::AdapterIdentity;
use kf_runtime::cache::CacheEntry;
use kf_tests::*;
use std::path::{Path, PathBuf};

fn gpu(name: &str, device: u32) -> AdapterIdentity {
    AdapterIdentity {
        name: name.into(),
        vendor: 0x10de,
        device,
        backend: "vulkan".into(),
        device_type: "DiscreteGpu".into(),
        driver: "NVIDIA".into(),
        driver_info: "580.95.05".into(),
    }
}

fn cache(dir: &Path, args: &[&str]) -> Run {
    run(kf(&["cache"])
        .args(args)
        .arg("--manifest-path")
        .arg(dir.join("Cargo.toml")))
}

/// The quickstart with a good SAXPY entry, a corrupt file beside it, an entry under a content
/// hash SAXPY no longer has, and an entry of a kernel that is gone.
struct Fixture {
    dir: tempfile::TempDir,
    good: PathBuf,
    corrupt: PathBuf,
    old: PathBuf,
    gone: PathBuf,
}

fn fixture() -> Fixture {
    let dir = copy_crate("examples/quickstart");
    let good = write_entry(
        dir.path(),
        &saxpy_entry(dir.path(), &gpu("H200", 0x2335), 256, None),
    );
    let corrupt = good.with_file_name("0123456789abcdef.json");
    std::fs::write(&corrupt, "{ \"format_version\": 1, truncated").unwrap();
    let mut old = saxpy_entry(dir.path(), &gpu("H100", 0x2330), 128, None);
    old.kernel.content_hash = "00000000deadbeef".into();
    let old = write_entry(dir.path(), &old);
    let mut gone = saxpy_entry(dir.path(), &gpu("H100", 0x2330), 128, None);
    gone.kernel.name = "RENAMED".into();
    let gone = write_entry(dir.path(), &gone);
    Fixture {
        dir,
        good,
        corrupt,
        old,
        gone,
    }
}

fn rel(dir: &Path, path: &Path) -> String {
    path.strip_prefix(dir).unwrap().display().to_string()
}

#[test]
fn verify_fails_on_corrupt_and_mismatched_entries_naming_each_file() {
    let f = fixture();
    let dir = f.dir.path();
    let r = cache(dir, &["verify"]);
    assert_eq!(r.code, Some(1), "{}", r.dump());
    assert!(
        r.stdout.contains("4 entries checked, 3 problems"),
        "{}",
        r.dump()
    );
    assert!(!r.stdout.contains(&rel(dir, &f.good)), "{}", r.dump());
    let line = |path: &Path| {
        let name = rel(dir, path);
        let mut lines = r.stdout.lines().skip_while(|l| !l.starts_with(&name));
        let problem = lines
            .next()
            .unwrap_or_else(|| panic!("{name} is not listed:\n{}", r.dump()))
            .to_owned();
        let hint = lines.next().unwrap_or_default().to_owned();
        (problem, hint)
    };
    let (problem, hint) = line(&f.corrupt);
    assert!(problem.contains("is not a valid cache entry"), "{problem}");
    assert!(
        hint.contains("hint:") && hint.contains("tune --kernel SAXPY"),
        "{hint}"
    );
    let hash = content_hash(dir, "SAXPY");
    let (problem, hint) = line(&f.old);
    assert!(
        problem.contains(&format!(
            "kernel SAXPY has content hash {hash} now, not 00000000deadbeef"
        )),
        "{problem}"
    );
    assert!(hint.contains("cache gc"), "{hint}");
    let (problem, _) = line(&f.gone);
    assert!(
        problem.contains("no marked kernel named RENAMED"),
        "{problem}"
    );

    // The same as JSON, and a clean cache passes.
    let json = cache(dir, &["verify", "--json"]).json();
    assert_eq!(json["checked"], 4);
    assert_eq!(json["problems"].as_array().unwrap().len(), 3);
    for p in [&f.corrupt, &f.old, &f.gone] {
        std::fs::remove_file(p).unwrap();
    }
    let r = cache(dir, &["verify"]);
    assert_eq!(r.code, Some(0), "{}", r.dump());
    assert!(
        r.stdout.contains("1 entry checked, 0 problems"),
        "{}",
        r.dump()
    );
}

#[test]
fn gc_removes_only_entries_no_kernel_matches() {
    let f = fixture();
    let dir = f.dir.path();
    let dry = cache(dir, &["gc", "--dry-run"]);
    assert_eq!(dry.code, Some(0), "{}", dry.dump());
    assert!(
        dry.stdout
            .contains(&format!("would remove {}", rel(dir, &f.old))),
        "{}",
        dry.dump()
    );
    assert!(
        dry.stdout
            .contains(&format!("would remove {}", rel(dir, &f.gone)))
    );
    assert!(
        dry.stdout.contains("4 entries checked, would remove 2"),
        "{}",
        dry.dump()
    );
    assert!(
        f.old.exists() && f.gone.exists(),
        "a dry run removes nothing"
    );

    let r = cache(dir, &["gc"]);
    assert_eq!(r.code, Some(0), "{}", r.dump());
    assert!(
        r.stdout.contains(&format!("removed {}", rel(dir, &f.old))),
        "{}",
        r.dump()
    );
    assert!(!f.old.exists() && !f.gone.exists());
    assert!(
        !dir.join("kernelfoundry/RENAMED").exists(),
        "emptied directories go too"
    );
    // The live hash's files stay, the corrupt one included (verify reports it, tune replaces it).
    assert!(f.good.exists() && f.corrupt.exists());
    let r = cache(dir, &["verify"]);
    assert!(
        r.stdout.contains("2 entries checked, 1 problem"),
        "{}",
        r.dump()
    );
    let again = cache(dir, &["gc", "--json"]).json();
    assert_eq!(again["remove"].as_array().unwrap().len(), 0);
}

#[test]
fn merge_adds_new_entries_and_keeps_the_faster_of_two_for_one_key() {
    let dest = copy_crate("examples/quickstart");
    let h200 = gpu("H200", 0x2335);
    // Two machines tuned SAXPY on the same adapter key; the second found a faster variant.
    let mine = saxpy_entry(dest.path(), &h200, 128, None);
    let here = write_entry(dest.path(), &mine);
    let other = tempfile::tempdir().unwrap();
    let mut faster = saxpy_entry(dest.path(), &h200, 256, None);
    faster.timings[0].variant_ns = mine.timings[0].variant_ns / 2.0;
    write_entry(other.path(), &faster);
    // And one for a GPU this crate has no entry for, plus a file that is not an entry.
    let h100 = write_entry(
        other.path(),
        &saxpy_entry(dest.path(), &gpu("H100", 0x2330), 64, None),
    );
    std::fs::write(
        other.path().join("kernelfoundry/notes.txt"),
        "tuned on the lab box",
    )
    .unwrap();

    let dry = cache(
        dest.path(),
        &["merge", "--dry-run", other.path().to_str().unwrap()],
    );
    assert_eq!(dry.code, Some(0), "{}", dry.dump());
    assert_eq!(
        std::fs::read_to_string(&here).unwrap(),
        mine.to_json(),
        "a dry run writes nothing"
    );
    let r = cache(dest.path(), &["merge", other.path().to_str().unwrap()]);
    assert_eq!(r.code, Some(0), "{}", r.dump());
    assert!(
        r.stdout
            .contains("1 added, 1 replaced, 0 kept, 0 identical, 1 skipped, 0 failed"),
        "{}",
        r.dump()
    );
    let replaced = r
        .stdout
        .lines()
        .find(|l| l.starts_with("replaced:"))
        .unwrap_or_else(|| panic!("{}", r.dump()));
    let faster_id = &faster.variant.as_ref().unwrap().id;
    assert!(
        replaced.contains(&format!("kept the incoming entry: {faster_id}")),
        "{replaced}"
    );
    assert!(replaced.contains("timings[].variant_ns"), "{replaced}");
    assert!(
        replaced.contains(&format!("both were measured on adapter key {}", h200.key())),
        "{replaced}"
    );
    assert!(
        r.stdout.contains("skipped:") && r.stdout.contains("notes.txt"),
        "{}",
        r.dump()
    );
    assert_eq!(std::fs::read_to_string(&here).unwrap(), faster.to_json());
    let merged_h100 = dest.path().join(h100.strip_prefix(other.path()).unwrap());
    assert!(merged_h100.is_file(), "the new adapter's entry is added");
    assert!(
        CacheEntry::parse(
            &merged_h100,
            &std::fs::read_to_string(&merged_h100).unwrap()
        )
        .is_ok()
    );

    // Merging the slower one back keeps the faster one and says so; the cache verifies.
    let back = tempfile::tempdir().unwrap();
    write_entry(back.path(), &mine);
    let r = cache(dest.path(), &["merge", back.path().to_str().unwrap()]);
    assert!(r.stdout.contains("kept the existing entry"), "{}", r.dump());
    assert_eq!(std::fs::read_to_string(&here).unwrap(), faster.to_json());
    let v = cache(dest.path(), &["verify"]);
    assert_eq!(v.code, Some(0), "{}", v.dump());
    // A corrupt incoming file is reported and fails the merge; nothing is lost silently.
    let bad = tempfile::tempdir().unwrap();
    let bad_path = bad
        .path()
        .join("kernelfoundry/SAXPY")
        .join(content_hash(dest.path(), "SAXPY"))
        .join("0123456789abcdef.json");
    std::fs::create_dir_all(bad_path.parent().unwrap()).unwrap();
    std::fs::write(&bad_path, "{").unwrap();
    let r = cache(dest.path(), &["merge", bad.path().to_str().unwrap()]);
    assert_eq!(r.code, Some(1), "{}", r.dump());
    assert!(
        r.stdout.contains("failed:") && r.stdout.contains("not merged"),
        "{}",
        r.dump()
    );
}

#[test]
fn help_documents_the_cache_verbs() {
    let top = run_ok(&mut kf(&["--help"]));
    assert!(top.stdout.contains("cache"), "{}", top.dump());
    let r = run_ok(&mut kf(&["cache", "--help"]));
    for verb in ["verify", "gc", "merge"] {
        assert!(r.stdout.contains(verb), "{}", r.dump());
    }
    for (verb, options) in [
        ("verify", &["--manifest-path", "--package", "--json"][..]),
        ("gc", &["--manifest-path", "--dry-run", "--json"][..]),
        (
            "merge",
            &["<DIR>", "--manifest-path", "--dry-run", "--json"][..],
        ),
    ] {
        let r = run_ok(&mut kf(&["cache", verb, "--help"]));
        for o in options {
            assert!(
                r.stdout.contains(o),
                "`cache {verb} --help` documents {o}:\n{}",
                r.dump()
            );
        }
    }
    // `merge` needs a directory.
    let r = run(&mut kf(&["cache", "merge"]));
    assert_eq!(r.code, Some(2), "{}", r.dump());
}

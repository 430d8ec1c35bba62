//! Repository rules, checked as tests: every Rust module says why it exists.

use kf_tests::root;
use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().to_string();
        if path.is_dir() {
            if name.starts_with('.') || name == "target" || name == "ui" || name == "ui-pass" {
                continue;
            }
            rust_files(&path, out);
        } else if name.ends_with(".rs") && name != "build.rs" {
            out.push(path);
        }
    }
}

#[test]
fn every_module_starts_with_a_doc_comment() {
    let mut files = Vec::new();
    for dir in ["kf-runtime", "kf-macros", "kf-build", "examples", "tests"] {
        rust_files(&root().join(dir), &mut files);
    }
    assert!(files.len() > 20);
    let missing: Vec<String> = files
        .iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            !(first.starts_with("//!") || first.starts_with("/*!"))
        })
        .map(|f| f.strip_prefix(root()).unwrap().display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "modules without a `//!` doc saying why they exist:\n{}",
        missing.join("\n")
    );
}

/// A build script that only calls `kf_build::track_cache()` depends on kf-build without its default
/// features; it must not pull the tuner's heavy dependencies into every user's build.
#[test]
fn the_build_script_helper_stays_light() {
    let out = kf_tests::cargo()
        .args([
            "tree",
            "-p",
            "kf-build",
            "--no-default-features",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--offline",
        ])
        .current_dir(root())
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8_lossy(&out.stdout);
    let crates: Vec<&str> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(crates.contains(&"sha2"), "{tree}");
    for heavy in [
        "wgpu",
        "naga",
        "clap",
        "reqwest",
        "tokio",
        "async-nats",
        "lapin",
    ] {
        assert!(
            !crates.contains(&heavy),
            "kf-build without default features depends on {heavy}:\n{tree}"
        );
    }
}

//! The build-script helper: make cargo rebuild a crate when its variant cache changes.
//!
//! The macro names every cache file it read in an `include_bytes!`, so edits to known files already
//! trigger a rebuild. A file for a *new* adapter did not exist at expansion time; this helper covers
//! that case by watching the whole `kernelfoundry/` directory and passing a stamp of its contents to
//! rustc, which changes whenever a file is added, removed or edited.
//!
//! Invariant: this module depends on nothing but `std` and `sha2`, so a build script can use it
//! with `kf-build = { default-features = false }` without compiling the tuner.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The environment variable the stamp is passed in (visible to the crate's code through `env!`).
pub const STAMP_ENV: &str = "KERNELFOUNDRY_CACHE_STAMP";

/// Call from `build.rs`: rebuild this crate whenever anything under `kernelfoundry/` changes,
/// including new entries tuned on another machine.
///
/// While `kernelfoundry/` does not exist, cargo cannot watch it and reruns the build script on
/// every build (with a warning saying so); the first `cargo kernelfoundry tune` creates it.
///
/// ```no_run
/// // build.rs, in `fn main()`:
/// kf_build::track_cache();
/// ```
pub fn track_cache() {
    let root = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    for line in track_cache_lines(&root) {
        println!("{line}");
    }
}

/// The `cargo::` lines [`track_cache`] prints for the crate at `root` (for tests and custom build
/// scripts).
pub fn track_cache_lines(root: &Path) -> Vec<String> {
    let dir = root.join(kf_runtime::cache::CACHE_DIR);
    let mut lines = vec![
        "cargo::rerun-if-changed=build.rs".to_owned(),
        format!("cargo::rerun-if-changed={}", dir.display()),
    ];
    if !dir.is_dir() {
        // Cargo treats a missing path as always changed: correct (a merged-in cache is noticed)
        // but it rebuilds the crate every time, so say how to stop it.
        lines.push(format!(
            "cargo::warning=`{}` does not exist yet, so this crate is rebuilt on every build; `cargo kernelfoundry tune` creates it (or create it yourself)",
            dir.display()
        ));
    }
    lines.push(format!("cargo::rustc-env={STAMP_ENV}={}", stamp(&dir)));
    lines
}

/// A hash over every file's relative path and contents under `dir` ("none" if it does not exist).
pub fn stamp(dir: &Path) -> String {
    if !dir.is_dir() {
        return "none".to_owned();
    }
    let mut files = Vec::new();
    collect(dir, &mut files);
    files.sort();
    let mut hasher = Sha256::new();
    for file in files {
        let rel = file.strip_prefix(dir).unwrap_or(&file);
        hasher.update(rel.to_string_lossy().as_bytes());
        hasher.update([0u8]);
        hasher.update(std::fs::read(&file).unwrap_or_default());
        hasher.update([0u8]);
    }
    kf_runtime::hash::hex16(&hasher.finalize())
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else {
            out.push(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamp_changes_when_a_file_is_added_or_edited() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("kernelfoundry");
        assert_eq!(stamp(&cache), "none");
        std::fs::create_dir_all(cache.join("K/abc")).unwrap();
        let empty = stamp(&cache);
        std::fs::write(cache.join("K/abc/1111111111111111.json"), "{}").unwrap();
        let one = stamp(&cache);
        assert_ne!(one, empty);
        std::fs::write(cache.join("K/abc/2222222222222222.json"), "{}").unwrap();
        let two = stamp(&cache);
        assert_ne!(two, one);
        std::fs::write(cache.join("K/abc/2222222222222222.json"), "{ }").unwrap();
        assert_ne!(stamp(&cache), two);
        let lines = track_cache_lines(dir.path());
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("cargo::rustc-env=KERNELFOUNDRY_CACHE_STAMP="))
        );
    }
}

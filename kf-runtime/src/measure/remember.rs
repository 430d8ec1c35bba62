//! The per-user file that remembers what measurement chose, so only the first start measures.
//!
//! One JSON file per user (`selections.json` under the platform's cache directory, from the
//! `dirs` crate: `~/.cache/kernelfoundry/` on Linux, `~/Library/Caches/kernelfoundry/` on macOS,
//! `%LOCALAPPDATA%\kernelfoundry\` on Windows; [`USER_CACHE_ENV`] names another file). A choice
//! is keyed by the adapter key and the kernel's content hash, and records the variants it was
//! chosen among and the budget it was measured with: a build that embeds other variants, or a
//! load with another budget, measures again.
//!
//! Invariant: the file is a cache, never a source of failure. A missing, unreadable or corrupt
//! file reads as empty (a corrupt one with a warning, and it is rewritten by the next choice);
//! writes go to a temporary file in the same directory renamed over the target, so a reader never
//! sees half a file. Two apps measuring at the same moment may each write their own choice last;
//! the loser is measured again on a later start.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Environment variable naming the file instead of the default location.
pub const USER_CACHE_ENV: &str = "KERNELFOUNDRY_USER_CACHE";

/// The file format this version reads and writes.
const FILE_VERSION: u32 = 1;

/// What measurement chose for one kernel on one adapter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Choice {
    /// The kernel's static name (for people reading the file).
    pub kernel: String,
    /// The adapter's name (for people reading the file).
    pub adapter: String,
    /// The chosen variant's id, or `baseline`.
    pub variant: String,
    /// The ids of the variants it was chosen among, sorted.
    pub candidates: Vec<String>,
    /// The measurement budget in milliseconds.
    pub budget_ms: f64,
    /// The fastest candidate's measured speedup over the baseline.
    pub speedup: f64,
    /// Why, as logged when it was chosen.
    pub reason: String,
    /// When, in seconds since the Unix epoch.
    pub measured_at: u64,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    format_version: u32,
    choices: BTreeMap<String, Choice>,
}

/// The key of a choice: `<adapter-key>/<content-hash>`.
pub fn key(adapter_key: &str, content_hash: &str) -> String {
    format!("{adapter_key}/{content_hash}")
}

/// The file to use: [`USER_CACHE_ENV`] if set, else `selections.json` in the user's cache
/// directory; `None` where the platform has none.
pub fn default_path() -> Option<PathBuf> {
    match std::env::var_os(USER_CACHE_ENV) {
        Some(p) if !p.is_empty() => Some(PathBuf::from(p)),
        _ => dirs::cache_dir().map(|d| d.join("kernelfoundry").join("selections.json")),
    }
}

/// Reads the file: its choices, and a warning if it exists but cannot be used.
fn read(path: &Path) -> (File, Option<String>) {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (File::default(), None),
        Err(e) => {
            return (
                File::default(),
                Some(format!("cannot read {}: {e}; ignoring it", path.display())),
            );
        }
    };
    match serde_json::from_str::<File>(&text) {
        Ok(file) if file.format_version == FILE_VERSION => (file, None),
        Ok(file) => (
            File::default(),
            Some(format!(
                "{} has format_version {}, this version reads {FILE_VERSION}; ignoring it (it is rewritten with the next choice)",
                path.display(),
                file.format_version
            )),
        ),
        Err(e) => (
            File::default(),
            Some(format!(
                "{} is not a valid selections file ({e}); ignoring it (it is rewritten with the next choice)",
                path.display()
            )),
        ),
    }
}

/// The choice remembered under `key`, and a warning if the file could not be used.
pub fn lookup(path: &Path, key: &str) -> (Option<Choice>, Option<String>) {
    let (mut file, warning) = read(path);
    (file.choices.remove(key), warning)
}

/// Remembers `choice` under `key`, keeping the other choices in the file (a corrupt file is
/// replaced).
pub fn remember(path: &Path, key: &str, choice: Choice) -> std::io::Result<()> {
    let (mut file, _) = read(path);
    file.format_version = FILE_VERSION;
    file.choices.insert(key.to_owned(), choice);
    let mut text = serde_json::to_string_pretty(&file).expect("selections serialize");
    text.push('\n');
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "selections.json".into());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Seconds since the Unix epoch (0 if the clock is before it).
pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choice(variant: &str) -> Choice {
        Choice {
            kernel: "SAXPY".into(),
            adapter: "GPU".into(),
            variant: variant.into(),
            candidates: vec!["v1".into(), "v2".into()],
            budget_ms: 50.0,
            speedup: 3.0,
            reason: "measured".into(),
            measured_at: 1,
        }
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "kf-remember-{name}-{}-{}",
            std::process::id(),
            now_secs()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn choices_are_kept_per_key_and_survive_other_writes() {
        let dir = temp_dir("keys");
        let path = dir.join("nested/selections.json");
        assert_eq!(
            lookup(&path, "a/h"),
            (None, None),
            "a missing file is empty"
        );
        remember(&path, &key("a", "h"), choice("v1")).unwrap();
        remember(&path, &key("b", "h"), choice("baseline")).unwrap();
        assert_eq!(lookup(&path, "a/h").0, Some(choice("v1")));
        assert_eq!(lookup(&path, "b/h").0, Some(choice("baseline")));
        assert_eq!(lookup(&path, "a/other").0, None);
        let names: Vec<String> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec!["selections.json"], "no temporary file is left");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_corrupt_file_is_ignored_with_a_warning_and_rewritten() {
        let dir = temp_dir("corrupt");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("selections.json");
        std::fs::write(&path, "{ not json").unwrap();
        let (found, warning) = lookup(&path, "a/h");
        assert_eq!(found, None);
        let warning = warning.expect("a warning");
        assert!(warning.contains("not a valid selections file"), "{warning}");
        remember(&path, "a/h", choice("v2")).unwrap();
        assert_eq!(lookup(&path, "a/h"), (Some(choice("v2")), None));
        // Another format version is ignored the same way.
        std::fs::write(&path, r#"{"format_version": 99, "choices": {}}"#).unwrap();
        assert!(
            lookup(&path, "a/h")
                .1
                .unwrap()
                .contains("format_version 99")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

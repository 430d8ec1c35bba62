//! Writing what tuning learned: cache entries (per crate) and adapter ceilings (per workspace).
//!
//! Every write goes to a temporary file in the destination directory and is renamed over the
//! target, so a crash or Ctrl-C mid-write never leaves a half-written entry that the next build
//! would have to skip.
//!
//! Invariant: this is the only module that writes under `kernelfoundry/`.

use crate::harness::Ceilings;
use kf_runtime::AdapterKey;
use kf_runtime::cache::{CACHE_DIR, CacheEntry};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Directory under a workspace's `kernelfoundry/` holding measured ceilings, one file per adapter.
pub const ADAPTERS_DIR: &str = "_adapters";

/// Writes `text` to `path` atomically (temporary file in the same directory, then rename).
pub fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".kf-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(text.as_bytes())?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Writes a cache entry under `crate_root`; returns its path.
pub fn write_entry(crate_root: &Path, entry: &CacheEntry) -> std::io::Result<PathBuf> {
    let path = CacheEntry::path(
        crate_root,
        &entry.kernel.name,
        &entry.kernel.content_hash,
        &entry.adapter.key,
    );
    write_atomic(&path, &entry.to_json())?;
    Ok(path)
}

/// Reads the usable entry for `(kernel, hash, key)`, if there is one.
pub fn read_entry(
    crate_root: &Path,
    kernel: &str,
    content_hash: &str,
    key: &AdapterKey,
) -> Option<(PathBuf, CacheEntry)> {
    let path = CacheEntry::path(crate_root, kernel, content_hash, key);
    let text = std::fs::read_to_string(&path).ok()?;
    CacheEntry::parse(&path, &text).ok().map(|e| (path, e))
}

/// Where the ceilings of adapter `key` live in the workspace at `root`.
pub fn ceilings_path(root: &Path, key: &AdapterKey) -> PathBuf {
    root.join(CACHE_DIR)
        .join(ADAPTERS_DIR)
        .join(format!("{key}.json"))
}

/// Reads stored ceilings for `key`, whatever their age or tool version, if the file is readable
/// and belongs to that adapter.
pub fn read_ceilings_any(root: &Path, key: &AdapterKey) -> Option<Ceilings> {
    let text = std::fs::read_to_string(ceilings_path(root, key)).ok()?;
    let c: Ceilings = serde_json::from_str(&text).ok()?;
    (c.adapter.key == *key).then_some(c)
}

/// Reads stored ceilings for `key` that can be used as they are: measured by this tool version,
/// in this format, recently enough ([`Ceilings::is_current`]). Anything else is measured again.
pub fn read_ceilings(root: &Path, key: &AdapterKey) -> Option<Ceilings> {
    read_ceilings_any(root, key).filter(|c| c.is_current(crate::harness::probe::now_secs()))
}

/// Stores ceilings in the workspace at `root`, keeping the best of `c` and a current stored
/// record for the same adapter ([`Ceilings::merge`]); a stale record is replaced. Returns the
/// path.
pub fn write_ceilings(root: &Path, c: &Ceilings) -> std::io::Result<PathBuf> {
    let path = ceilings_path(root, &c.adapter.key);
    let mut best = c.clone();
    if let Some(stored) = read_ceilings(root, &c.adapter.key)
        && stored.method == c.method
    {
        best.merge(&stored);
    }
    let mut text = serde_json::to_string_pretty(&best).expect("ceilings serialize");
    text.push('\n');
    write_atomic(&path, &text)?;
    Ok(path)
}

/// Stores ceilings an evaluation measured again (see [`write_ceilings`]), if there are any;
/// a failure to write is only logged, since the ceilings are an optimisation of later runs.
pub fn remember_ceilings(root: &Path, measured: Option<&Ceilings>) {
    if let Some(c) = measured
        && let Err(e) = write_ceilings(root, c)
    {
        log::warn!("could not store the re-measured ceilings: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_leaves_no_temporaries() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/c.json");
        write_atomic(&path, "one").unwrap();
        write_atomic(&path, "two").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two");
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .collect();
        assert_eq!(names, vec!["c.json"]);
    }

    #[test]
    fn ceilings_keep_the_best_known_and_stale_ones_are_replaced() {
        use crate::harness::probe::{MAX_AGE, now_secs, tests::ceilings};
        let dir = tempfile::tempdir().unwrap();
        let now = now_secs();
        let low = ceilings(&[(1 << 20, 1.0)], 2.0, now);
        let key = low.adapter.key.clone();
        write_ceilings(dir.path(), &low).unwrap();
        assert_eq!(read_ceilings(dir.path(), &key).unwrap().copy_gbps, 1.0);
        // A better measurement raises the stored ceiling; a worse one never lowers it.
        write_ceilings(dir.path(), &ceilings(&[(1 << 20, 5.0)], 1.0, now)).unwrap();
        write_ceilings(dir.path(), &ceilings(&[(1 << 20, 3.0)], 1.0, now)).unwrap();
        let stored = read_ceilings(dir.path(), &key).unwrap();
        assert_eq!((stored.copy_gbps, stored.fma_gflops), (5.0, 2.0));
        // A stale record is not read as current and is replaced, not merged.
        let old = ceilings(&[(1 << 20, 50.0)], 50.0, now - MAX_AGE.as_secs() - 10);
        std::fs::write(
            ceilings_path(dir.path(), &key),
            serde_json::to_string(&old).unwrap(),
        )
        .unwrap();
        assert!(read_ceilings(dir.path(), &key).is_none());
        assert!(read_ceilings_any(dir.path(), &key).is_some());
        write_ceilings(dir.path(), &low).unwrap();
        assert_eq!(read_ceilings(dir.path(), &key).unwrap().copy_gbps, 1.0);
    }
}

//! Writing what tuning learned: cache entries (per crate) and adapter ceilings (per workspace).
//!
//! Every write goes to a temporary file in the destination directory and is renamed over the
//! target, so a crash or Ctrl-C mid-write never leaves a half-written entry that the next build
//! would have to skip.
//!
//! Invariant: this is the only module that writes under `kernelfoundry/`.

use crate::evaluate::Ceilings;
use crate::search::Config;
use kf_runtime::AdapterKey;
use kf_runtime::cache::{CACHE_DIR, CacheEntry};
use kf_runtime::resolve::ResolvedKernel;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Directory under a workspace's `kernelfoundry/` holding measured ceilings, one file per adapter.
pub const ADAPTERS_DIR: &str = "_adapters";

/// Writes `text` to `path` atomically (temporary file in the same directory, then rename).
pub fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut builder = tempfile::Builder::new();
    builder.prefix(".kf-").suffix(".tmp");
    // Readable by everyone like any other committed file (a temporary file is owner-only); the
    // mode goes through open(2), so the user's umask still applies.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644));
    let mut tmp = builder.tempfile_in(dir)?;
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

/// Removes a cache entry file under `crate_root/kernelfoundry/`, then its content-hash and kernel
/// directories if that left them empty (`cache gc`). Refuses a path outside the cache.
pub fn remove_entry(crate_root: &Path, path: &Path) -> std::io::Result<()> {
    let cache = crate_root.join(CACHE_DIR);
    if !path.starts_with(&cache) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} is not under {}", path.display(), cache.display()),
        ));
    }
    std::fs::remove_file(path)?;
    let mut dir = path.parent();
    while let Some(d) = dir {
        // Only empty directories go (remove_dir refuses the others), never the cache itself.
        if d == cache || std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
    Ok(())
}

/// The state of a kernel's cache entry for one adapter: what `list` shows and what `tune` does.
#[derive(Debug)]
pub enum EntryState {
    /// No entry: `tune` tunes the kernel.
    Missing,
    /// A file is there but the build skips it (not a cache entry, another format version, or a
    /// variant that no longer fits the kernel): `tune` replaces it.
    Broken {
        /// The file.
        path: PathBuf,
        /// Why it cannot be used.
        error: String,
    },
    /// Usable, and tuned with the settings the spec has today: `tune` keeps it.
    Fresh {
        /// The file.
        path: PathBuf,
        /// The entry.
        entry: Box<CacheEntry>,
    },
    /// Usable (the build embeds it and the runtime may pick it), but tuned with other settings
    /// than the spec's today: `tune` searches again.
    Stale {
        /// The file.
        path: PathBuf,
        /// The entry.
        entry: Box<CacheEntry>,
        /// What changed since, one line each.
        why: Vec<String>,
    },
}

impl EntryState {
    /// `not-tuned`, `broken`, `stale`, or the entry's outcome (`tuned`, `baseline-best`).
    pub fn status(&self) -> &'static str {
        match self {
            EntryState::Missing => "not-tuned",
            EntryState::Broken { .. } => "broken",
            EntryState::Stale { .. } => "stale",
            EntryState::Fresh { entry, .. } => match entry.outcome {
                kf_runtime::cache::Outcome::Tuned => "tuned",
                kf_runtime::cache::Outcome::BaselineBest => "baseline-best",
            },
        }
    }
}

impl EntryState {
    /// Why `tune` searches a kernel that has an entry: it is stale or broken.
    pub fn retune_note(&self) -> Option<String> {
        match self {
            EntryState::Stale { why, .. } => {
                Some(format!("retuned a stale entry: {}", why.join("; ")))
            }
            EntryState::Broken { error, .. } => Some(format!("replaced a broken entry: {error}")),
            EntryState::Missing | EntryState::Fresh { .. } => None,
        }
    }
}

/// Why an entry found by `recorded` is not what `search`, the search `tune` is about to run, would
/// do, if it is not.
fn differences(search: &Config, recorded: &kf_runtime::cache::SearchRecord) -> Vec<String> {
    let asked = search.strategy.as_str();
    let mut why = Vec::new();
    let same_strategy = match asked {
        "auto" => matches!(
            recorded.strategy.as_str(),
            "exhaustive" | "successive-halving"
        ),
        asked => recorded.strategy == asked,
    };
    if !same_strategy {
        why.push(format!(
            "it was searched with strategy `{}`; this tune asks for `{}`",
            recorded.strategy, asked
        ));
    }
    // A search that saw every point of its space gains nothing from a bigger budget; a search
    // limited by time has its budget only as a cap, so it does not ask for more evaluations.
    let complete = recorded.strategy == "exhaustive" && recorded.evaluations >= recorded.space_size;
    if same_strategy && !complete && search.time_s.is_none() && search.budget > recorded.budget {
        why.push(format!(
            "the search budget was raised from {} to {}",
            recorded.budget, search.budget
        ));
    }
    why
}

/// Reads and judges the entry of `kernel` for adapter `key` under `crate_root`. `search` is the
/// search about to run, if any: an entry found by another strategy, or by an incomplete search
/// with a smaller budget, is then stale too.
pub fn entry_state(
    crate_root: &Path,
    kernel: &ResolvedKernel,
    key: &AdapterKey,
    search: Option<&Config>,
) -> EntryState {
    let path = CacheEntry::path(crate_root, &kernel.name, &kernel.content_hash, key);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return EntryState::Missing,
        Err(e) => {
            return EntryState::Broken {
                error: format!("cannot read it: {e}"),
                path,
            };
        }
    };
    let entry = match CacheEntry::parse(&path, &text) {
        Ok(entry) => entry,
        Err(e) => {
            return EntryState::Broken {
                error: e.to_string().replace(&path.display().to_string(), "it"),
                path,
            };
        }
    };
    let fits = if entry.kernel.content_hash != kernel.content_hash {
        Err(format!(
            "its content hash {} does not match the directory it is in",
            entry.kernel.content_hash
        ))
    } else {
        kf_runtime::variant::check_entry(kernel, &entry)
    };
    if let Err(error) = fits {
        return EntryState::Broken { path, error };
    }
    let mut why = match &entry.tuning {
        Some(recorded) => recorded.changes(&kernel.tuning()),
        None => vec!["the entry does not record the settings it was tuned with".to_owned()],
    };
    if let Some(search) = search {
        why.extend(differences(search, &entry.search));
    }
    let entry = Box::new(entry);
    if why.is_empty() {
        EntryState::Fresh { path, entry }
    } else {
        EntryState::Stale { path, entry, why }
    }
}

/// Reads the usable entry for `(kernel, hash, key)`, if there is one (whatever its staleness; see
/// [`entry_state`] for the judgement `list` and `tune` use).
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
    read_ceilings_any(root, key).filter(|c| c.is_current(crate::evaluate::probe::now_secs()))
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
    use crate::search::StrategyKind;
    use kf_runtime::AdapterIdentity;
    use kf_runtime::cache::{
        AdapterRecord, FORMAT_VERSION, KernelRecord, Outcome, SearchRecord, VerificationRecord,
    };

    const WGSL: &str = r#"
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < arrayLength(&y)) { y[g.x] = 2.0 * x[g.x]; }
}
"#;

    fn kernel(extra: &str) -> ResolvedKernel {
        let attr =
            format!(r#"source = "", sizes(n = 1024), bind(x = input(n), y = output(n)){extra}"#);
        let (spec, _) = kf_runtime::syntax::parse_spec(attr.parse().unwrap()).unwrap();
        kf_runtime::resolve::resolve("K", &spec, WGSL, "k.wgsl").unwrap()
    }

    fn adapter() -> AdapterIdentity {
        AdapterIdentity {
            name: "Test GPU".into(),
            vendor: 1,
            device: 2,
            backend: "vulkan".into(),
            device_type: "DiscreteGpu".into(),
            driver: "test".into(),
            driver_info: "1".into(),
        }
    }

    fn baseline_best(kernel: &ResolvedKernel, strategy: &str, budget: u64) -> CacheEntry {
        CacheEntry {
            format_version: FORMAT_VERSION,
            tool_version: "test".into(),
            kernel: KernelRecord {
                name: kernel.name.clone(),
                package: "p".into(),
                content_hash: kernel.content_hash.clone(),
                entry: "main".into(),
            },
            adapter: AdapterRecord {
                key: adapter().key(),
                identity: adapter(),
                limits: Default::default(),
                features: vec![],
            },
            outcome: Outcome::BaselineBest,
            variant: None,
            speedup: 1.0,
            noise: 0.02,
            timings: vec![],
            verification: VerificationRecord {
                shapes: vec![],
                seeds: vec![],
                checks: vec![],
                max_rel_l2: 0.0,
                max_rel_elem: 0.0,
            },
            search: SearchRecord {
                strategy: strategy.into(),
                // An exhaustive search saw its whole space; the others a part of it.
                space_size: if strategy == "exhaustive" {
                    budget
                } else {
                    100
                },
                evaluations: budget,
                budget,
            },
            tuning: Some(kernel.tuning()),
        }
    }

    #[test]
    fn entries_are_missing_fresh_stale_or_broken() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let k = kernel("");
        let key = adapter().key();
        let status = |k: &ResolvedKernel, budget: Option<u64>| {
            let search = budget.map(|budget| Config {
                strategy: StrategyKind::Auto,
                budget,
                ..Config::default()
            });
            entry_state(root, k, &key, search.as_ref())
        };
        assert!(matches!(status(&k, None), EntryState::Missing));

        let path = write_entry(root, &baseline_best(&k, "successive-halving", 32)).unwrap();
        assert_eq!(status(&k, None).status(), "baseline-best");
        assert_eq!(status(&k, Some(32)).status(), "baseline-best");

        // Speed-only edits: same hash, same file, now stale and why.
        let retuned = kernel(", tune_shapes = [(n = 4096)]");
        assert_eq!(retuned.content_hash, k.content_hash);
        match status(&retuned, None) {
            EntryState::Stale { why, .. } => assert_eq!(
                why,
                vec!["tune shapes changed from [(n = 1024)] to [(n = 4096)]"]
            ),
            other => panic!("{other:?}"),
        }
        match status(&k, Some(64)) {
            EntryState::Stale { why, .. } => {
                assert_eq!(why, vec!["the search budget was raised from 32 to 64"])
            }
            other => panic!("{other:?}"),
        }
        // A search limited by time has its budget only as a cap: not stale by budget.
        let timed = Config {
            strategy: StrategyKind::Auto,
            budget: 200,
            time_s: Some(20.0),
            ..Config::default()
        };
        assert_eq!(
            entry_state(root, &k, &key, Some(&timed)).status(),
            "baseline-best"
        );
        // An exhaustive search saw everything: a bigger budget changes nothing.
        write_entry(root, &baseline_best(&k, "exhaustive", 32)).unwrap();
        assert_eq!(status(&k, Some(64)).status(), "baseline-best");
        // Another strategy than the one asked for: stale.
        let qd = Config {
            strategy: StrategyKind::Qd,
            budget: 32,
            ..Config::default()
        };
        match entry_state(root, &k, &key, Some(&qd)) {
            EntryState::Stale { why, .. } => assert_eq!(
                why,
                vec!["it was searched with strategy `exhaustive`; this tune asks for `qd`"]
            ),
            other => panic!("{other:?}"),
        }
        // Entries that do not record their settings count as stale.
        let mut old = baseline_best(&k, "exhaustive", 32);
        old.tuning = None;
        write_entry(root, &old).unwrap();
        assert_eq!(status(&k, None).status(), "stale");

        // A corrupt file is broken, with the parse error, and says how to fix it.
        std::fs::write(&path, "{ not json").unwrap();
        let state = status(&k, None);
        assert_eq!(state.status(), "broken");
        let note = state.retune_note().unwrap();
        assert!(note.starts_with("replaced a broken entry:"), "{note}");
        match state {
            EntryState::Broken { error, .. } => {
                assert!(error.contains("is not a valid cache entry"), "{error}");
                assert!(!error.contains(&root.display().to_string()), "{error}");
            }
            other => panic!("{other:?}"),
        }
        // So is an entry of another kernel under this one's name.
        let mut foreign = baseline_best(&k, "exhaustive", 32);
        foreign.kernel.name = "OTHER".into();
        std::fs::write(&path, foreign.to_json()).unwrap();
        assert_eq!(status(&k, None).status(), "broken");
    }

    #[cfg(unix)]
    #[test]
    fn written_files_are_readable_like_any_committed_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain");
        std::fs::write(&plain, "x").unwrap();
        // 0o666 minus the umask: what the user gets for any other new file.
        let plain_mode = std::fs::metadata(&plain).unwrap().permissions().mode() & 0o777;
        let entry = write_entry(dir.path(), &baseline_best(&kernel(""), "exhaustive", 1)).unwrap();
        let mode = std::fs::metadata(&entry).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644 & plain_mode, "{mode:o} vs {plain_mode:o}");
    }

    #[test]
    fn removing_an_entry_removes_the_directories_it_empties() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let a = root.join("kernelfoundry/K/h1/a.json");
        let b = root.join("kernelfoundry/K/h2/b.json");
        write_atomic(&a, "a").unwrap();
        write_atomic(&b, "b").unwrap();
        remove_entry(root, &a).unwrap();
        assert!(!root.join("kernelfoundry/K/h1").exists());
        assert!(b.exists());
        remove_entry(root, &b).unwrap();
        assert!(!root.join("kernelfoundry/K").exists());
        assert!(
            root.join("kernelfoundry").is_dir(),
            "the cache directory stays"
        );
        let outside = root.join("other.json");
        std::fs::write(&outside, "x").unwrap();
        assert!(remove_entry(root, &outside).is_err());
        assert!(outside.exists());
    }

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
        use crate::evaluate::probe::{MAX_AGE, now_secs, tests::ceilings};
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

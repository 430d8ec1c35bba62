//! The variant cache format: one JSON file per (kernel content hash, adapter key).
//!
//! Layout under a crate root: `kernelfoundry/<KERNEL>/<content-hash>/<adapter-key>.json`. Files are
//! committed like a lockfile; tuning on several machines adds files and never edits another
//! machine's, so merges do not conflict. Every entry carries a `format_version`; readers reject
//! versions they do not know instead of guessing.
//!
//! An entry is *matched* by its content hash (which covers everything that decides correctness,
//! see [`crate::hash::content_hash`]) and *stale* when the tuning settings it records
//! ([`TuningRecord`]) differ from the spec's today; a stale entry is still valid and used.
//! Adding a field with a serde default does not change `format_version`: older entries still read.
//!
//! Invariant: a corrupt or unknown entry is reported and skipped — [`scan`] never fails as a whole,
//! so neither the build nor the app breaks because of one bad file.

use crate::adapter::{AdapterIdentity, AdapterKey};
use crate::program::Program;
use crate::spec::Shape;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The version this crate writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// The cache directory name at a crate root.
pub const CACHE_DIR: &str = "kernelfoundry";

/// What tuning concluded for one adapter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// A variant beat the baseline by more than the measured noise.
    Tuned,
    /// Nothing beat the baseline by more than the noise; the runtime keeps the baseline.
    BaselineBest,
}

/// Which kernel an entry belongs to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelRecord {
    /// The static's name, e.g. `SAXPY`.
    pub name: String,
    /// The package that declares it.
    pub package: String,
    /// See [`crate::hash::content_hash`].
    pub content_hash: String,
    /// The baseline's entry point.
    pub entry: String,
}

/// The adapter the entry was tuned on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AdapterRecord {
    /// See [`AdapterIdentity::key`].
    pub key: AdapterKey,
    /// The readable fields the key hashes.
    #[serde(flatten)]
    pub identity: AdapterIdentity,
    /// Limits relevant to compute, by wgpu's field name.
    pub limits: BTreeMap<String, u64>,
    /// Features the adapter reported, by wgpu's name.
    pub features: Vec<String>,
}

/// The tuned variant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VariantRecord {
    /// See [`crate::hash::variant_id`].
    pub id: String,
    /// How it was produced, e.g. `param-sweep KF_WG_X=256`.
    pub origin: String,
    /// WGSL, entry point, constants, workgroup size and dispatch rule.
    #[serde(flatten)]
    pub program: Program,
}

/// Baseline and variant time on one shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShapeTiming {
    /// The shape.
    pub shape: Shape,
    /// Median baseline time in nanoseconds.
    pub baseline_ns: f64,
    /// Median variant time in nanoseconds (equal to the baseline's for `baseline-best`).
    pub variant_ns: f64,
    /// Timed samples of each.
    pub samples: u32,
    /// `timestamp-query` or `wall-clock`.
    pub method: String,
}

/// How the variant was checked against the baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VerificationRecord {
    /// Shapes the outputs were compared on.
    pub shapes: Vec<Shape>,
    /// Input seeds used.
    pub seeds: Vec<u64>,
    /// Checks that ran, e.g. `poisoned-outputs`, `fresh-buffers`, `reverify-after-timing`.
    pub checks: Vec<String>,
    /// Largest relative L2 error over all outputs and trials.
    pub max_rel_l2: f64,
    /// Largest elementwise error relative to the output's scale.
    pub max_rel_elem: f64,
}

/// What the search was asked to explore: the spec parts that decide only how fast a variant is.
///
/// They are not in the content hash (a variant verified against the baseline stays correct when
/// they change), so an entry whose record differs from the spec today is still embedded and used,
/// but is *stale*: `cargo kernelfoundry list` says so and why, and `tune` searches it again.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TuningRecord {
    /// The full shapes the candidates were timed on.
    pub tune_shapes: Vec<Shape>,
    /// Candidate values `params(..)` gave, by override name, in spec order.
    pub params: Vec<(String, Vec<f64>)>,
    /// Derived parameters (`params(THREADS = X * Y)`), as written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub derived: Vec<(String, String)>,
    /// `constraints(..)`, as written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub constraints: Vec<String>,
    /// The tune shapes were given for the run (`tune --tune-shape`, e.g. production shapes on
    /// the GPU machine) rather than taken from the attribute: they are a deliberate choice, so
    /// a difference from the attribute's does not make the entry stale.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shapes_given: bool,
}

impl TuningRecord {
    /// What changed from `self` (recorded in an entry) to `now` (the spec today), one readable line
    /// per change; empty when the entry is up to date.
    pub fn changes(&self, now: &TuningRecord) -> Vec<String> {
        let mut out = Vec::new();
        if !self.shapes_given && self.tune_shapes != now.tune_shapes {
            out.push(format!(
                "tune shapes changed from {} to {}",
                shapes_text(&self.tune_shapes),
                shapes_text(&now.tune_shapes)
            ));
        }
        let values = |v: &[f64]| {
            let v: Vec<String> = v.iter().map(|x| x.to_string()).collect();
            format!("[{}]", v.join(", "))
        };
        for (name, before) in &self.params {
            match now.params.iter().find(|(n, _)| n == name) {
                None => out.push(format!("params({name}) was removed")),
                Some((_, after)) if after != before => out.push(format!(
                    "params({name}) changed from {} to {}",
                    values(before),
                    values(after)
                )),
                Some(_) => {}
            }
        }
        for (name, after) in &now.params {
            if !self.params.iter().any(|(n, _)| n == name) {
                out.push(format!("params({name} = {}) was added", values(after)));
            }
        }
        if self.derived != now.derived {
            let text = |d: &[(String, String)]| {
                let d: Vec<String> = d.iter().map(|(n, e)| format!("{n} = {e}")).collect();
                format!("[{}]", d.join(", "))
            };
            out.push(format!(
                "derived parameters changed from {} to {}",
                text(&self.derived),
                text(&now.derived)
            ));
        }
        if self.constraints != now.constraints {
            out.push(format!(
                "constraints changed from [{}] to [{}]",
                self.constraints.join(", "),
                now.constraints.join(", ")
            ));
        }
        out
    }
}

/// `[(n = 1024), (n = 4096)]`.
fn shapes_text(shapes: &[Shape]) -> String {
    let shapes: Vec<String> = shapes
        .iter()
        .map(|s| {
            let sizes: Vec<String> = s.iter().map(|(k, v)| format!("{k} = {v}")).collect();
            format!("({})", sizes.join(", "))
        })
        .collect();
    format!("[{}]", shapes.join(", "))
}

/// How the search went.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchRecord {
    /// `exhaustive` or `successive-halving`.
    pub strategy: String,
    /// Candidates in the parameter space.
    pub space_size: u64,
    /// Candidate evaluations spent.
    pub evaluations: u64,
    /// The budget given.
    pub budget: u64,
}

/// One cache file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CacheEntry {
    /// Always [`FORMAT_VERSION`] when written by this version.
    pub format_version: u32,
    /// `kf-build` version that wrote it.
    pub tool_version: String,
    /// Which kernel.
    pub kernel: KernelRecord,
    /// Which adapter.
    pub adapter: AdapterRecord,
    /// What tuning concluded.
    pub outcome: Outcome,
    /// The variant, for `tuned`.
    pub variant: Option<VariantRecord>,
    /// Geometric-mean speedup over the tune shapes (1.0 for `baseline-best`).
    pub speedup: f64,
    /// Relative timing noise measured alongside, the threshold a speedup had to clear.
    pub noise: f64,
    /// Per-shape timings.
    pub timings: Vec<ShapeTiming>,
    /// How the variant was verified.
    pub verification: VerificationRecord,
    /// How it was found.
    pub search: SearchRecord,
    /// What the search was asked to explore, to tell when the entry is stale. Absent in entries
    /// written before it was recorded; such entries count as stale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tuning: Option<TuningRecord>,
}

/// Why a cache file could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CacheError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The file is not a cache entry.
    #[error("{path} is not a valid cache entry: {message}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// Written by a newer or older format.
    #[error(
        "{path} has format_version {found}; this version reads {FORMAT_VERSION} (retune or upgrade kf-build)"
    )]
    Version {
        /// The file.
        path: PathBuf,
        /// The version found.
        found: u64,
    },
}

impl CacheEntry {
    /// Where the entry for `kernel`/`content_hash`/`key` lives under `crate_root`.
    pub fn path(crate_root: &Path, kernel: &str, content_hash: &str, key: &AdapterKey) -> PathBuf {
        crate_root
            .join(CACHE_DIR)
            .join(kernel)
            .join(content_hash)
            .join(format!("{key}.json"))
    }

    /// Parses and checks an entry read from `path`.
    pub fn parse(path: &Path, text: &str) -> Result<CacheEntry, CacheError> {
        let corrupt = |message: String| CacheError::Corrupt {
            path: path.to_owned(),
            message,
        };
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| corrupt(e.to_string()))?;
        let version = value.get("format_version").and_then(|v| v.as_u64());
        match version {
            Some(v) if v == u64::from(FORMAT_VERSION) => {}
            Some(found) => {
                return Err(CacheError::Version {
                    path: path.to_owned(),
                    found,
                });
            }
            None => return Err(corrupt("missing `format_version`".into())),
        }
        let entry: CacheEntry =
            serde_json::from_value(value).map_err(|e| corrupt(e.to_string()))?;
        if entry.adapter.identity.key() != entry.adapter.key {
            return Err(corrupt(format!(
                "adapter key {} does not match the adapter fields (they hash to {})",
                entry.adapter.key,
                entry.adapter.identity.key()
            )));
        }
        if entry.outcome == Outcome::Tuned && entry.variant.is_none() {
            return Err(corrupt(
                "outcome is `tuned` but there is no `variant`".into(),
            ));
        }
        let expected_file = format!("{}.json", entry.adapter.key);
        if path.file_name().and_then(|f| f.to_str()) != Some(expected_file.as_str()) {
            return Err(corrupt(format!(
                "file name does not match its adapter key (expected {expected_file})"
            )));
        }
        Ok(entry)
    }

    /// Serializes with a stable field order and a trailing newline (diff-friendly).
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("cache entries serialize");
        text.push('\n');
        text
    }
}

/// Entries found for one kernel, and the files that could not be used.
#[derive(Debug, Default)]
pub struct Scan {
    /// Usable entries with their paths.
    pub entries: Vec<(PathBuf, CacheEntry)>,
    /// Files that were skipped, and why.
    pub problems: Vec<CacheError>,
}

/// Reads every entry under `crate_root/kernelfoundry/<kernel>/<content_hash>/`, sorted by path.
/// A missing directory is an empty scan, not an error.
pub fn scan(crate_root: &Path, kernel: &str, content_hash: &str) -> Scan {
    let dir = crate_root.join(CACHE_DIR).join(kernel).join(content_hash);
    let mut scan = Scan::default();
    let Ok(read_dir) = std::fs::read_dir(&dir) else {
        return scan;
    };
    let mut paths: Vec<PathBuf> = read_dir
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    for path in paths {
        let result = std::fs::read_to_string(&path)
            .map_err(|source| CacheError::Io {
                path: path.clone(),
                source,
            })
            .and_then(|text| CacheEntry::parse(&path, &text));
        match result {
            Ok(entry) if entry.kernel.content_hash != content_hash => {
                scan.problems.push(CacheError::Corrupt {
                    path,
                    message: format!(
                        "its content hash {} does not match the directory it is in",
                        entry.kernel.content_hash
                    ),
                })
            }
            Ok(entry) => scan.entries.push((path, entry)),
            Err(e) => scan.problems.push(e),
        }
    }
    scan
}

#[cfg(test)]
mod golden {
    //! The cache format is pinned: files users committed must keep loading, and writing an entry
    //! back must give the same bytes, so a renamed or reordered field cannot slip through.
    use super::*;

    const V1: &str = include_str!("../tests/data/cache-entry-v1.json");

    #[test]
    fn a_committed_v1_entry_loads_and_writes_back_byte_for_byte() {
        let entry = CacheEntry::parse(
            Path::new("SAXPY/00f085b2bbbcd3f0/85dd398420cbbf32.json"),
            V1,
        )
        .expect("the golden v1 entry loads");
        assert_eq!(entry.format_version, 1);
        assert_eq!(
            entry.to_json(),
            V1,
            "serializing changed the bytes of a committed entry: a field was renamed, reordered, \
             added without a default or dropped; bump FORMAT_VERSION and keep reading v1"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(n: u64) -> Shape {
        [("n".to_string(), n)].into_iter().collect()
    }

    #[test]
    fn shapes_given_for_a_run_do_not_make_an_entry_stale() {
        let production = TuningRecord {
            tune_shapes: vec![shape(1 << 24)],
            shapes_given: true,
            ..Default::default()
        };
        let attribute = TuningRecord {
            tune_shapes: vec![shape(1024)],
            ..Default::default()
        };
        assert!(production.changes(&attribute).is_empty());
        let from_attribute = TuningRecord {
            shapes_given: false,
            ..production.clone()
        };
        assert_eq!(from_attribute.changes(&attribute).len(), 1);
    }

    #[test]
    fn tuning_changes_name_what_changed() {
        let before = TuningRecord {
            tune_shapes: vec![shape(1024)],
            params: vec![
                ("TILE".into(), vec![8.0, 16.0]),
                ("UNROLL".into(), vec![2.0]),
            ],
            ..Default::default()
        };
        assert!(before.changes(&before.clone()).is_empty());
        let after = TuningRecord {
            tune_shapes: vec![shape(4096)],
            params: vec![
                ("TILE".into(), vec![8.0, 16.0, 32.0]),
                ("VEC".into(), vec![4.0]),
            ],
            ..Default::default()
        };
        assert_eq!(
            before.changes(&after),
            vec![
                "tune shapes changed from [(n = 1024)] to [(n = 4096)]",
                "params(TILE) changed from [8, 16] to [8, 16, 32]",
                "params(UNROLL) was removed",
                "params(VEC = [4]) was added",
            ]
        );
    }
}

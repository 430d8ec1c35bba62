//! Run directories: what one `tune` invocation leaves under the target directory, so that it can
//! be resumed after a kill and inspected (or reported on) afterwards.
//!
//! `<target>/kernelfoundry/runs/<run-id>/run.json` records the options of the run and whether it
//! finished; each kernel gets `<KERNEL>-<content-hash>/` with `journal.jsonl` (every evaluation,
//! see [`crate::search::journal`]) and `archive.json` (the strategy's state after the last
//! evaluation), and with `--llm` an `llm/` directory with every exchange with the endpoint
//! (`exchanges/NNNN-<kind>.json`, the key never in them) and the prompt population with its
//! lineage (`prompts.json`). `tune --resume` picks the newest unfinished run and continues it with
//! its options.
//!
//! Invariant: run directories hold records of evaluations only; the cache entries a run produces
//! are written by [`crate::cache::store`] under the crate, never here.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The options a run was started with, enough to continue it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunOptions {
    /// The search settings (strategy, seed, budget, time, gradients, timeout, operators, width),
    /// flattened into `run.json` as the fields they always were; `--resume` reads them back.
    #[serde(flatten)]
    pub search: crate::search::Config,
    /// Tune shapes given on the command line (`rows=4096,cols=4096`), replacing the attribute's.
    pub tune_shapes: Vec<String>,
    /// Whether entries already cached were retuned.
    pub force: bool,
    /// Only these kernels (the names `--kernel` selected, its patterns resolved); empty: every
    /// kernel of the selection. Records written before several were allowed have `kernel`, a name
    /// or null.
    #[serde(default, alias = "kernel", deserialize_with = "names")]
    pub kernels: Vec<String>,
    /// Whether the LLM proposed children too.
    #[serde(default)]
    pub llm: bool,
    /// Whether LLM answers came only from the response cache.
    #[serde(default)]
    pub llm_replay_only: bool,
}

/// A list of names, or one name or null (the older `kernel` field).
fn names<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Names {
        Many(Vec<String>),
        One(String),
    }
    Ok(match Option::<Names>::deserialize(d)? {
        None => Vec::new(),
        Some(Names::One(name)) => vec![name],
        Some(Names::Many(names)) => names,
    })
}

/// `run.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// kf-build version.
    pub tool_version: String,
    /// Seconds since the Unix epoch at the start.
    pub started: u64,
    /// The adapter key the run tunes for.
    pub adapter_key: String,
    /// The options.
    pub options: RunOptions,
    /// Whether every kernel of the run reached its decision.
    pub finished: bool,
}

/// A run directory.
#[derive(Debug)]
pub struct Run {
    /// Its path.
    pub dir: PathBuf,
    /// Its record.
    pub record: RunRecord,
}

fn runs_dir(target_dir: &Path) -> PathBuf {
    target_dir.join("kernelfoundry").join("runs")
}

impl Run {
    /// Creates a new run directory under `target_dir`.
    pub fn create(
        target_dir: &Path,
        adapter_key: &str,
        options: RunOptions,
    ) -> std::io::Result<Run> {
        let started = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let base = runs_dir(target_dir);
        let mut n = 0;
        let dir = loop {
            let dir = base.join(format!("{started}-{n}"));
            if !dir.exists() {
                break dir;
            }
            n += 1;
        };
        std::fs::create_dir_all(&dir)?;
        let run = Run {
            dir,
            record: RunRecord {
                tool_version: env!("CARGO_PKG_VERSION").to_owned(),
                started,
                adapter_key: adapter_key.to_owned(),
                options,
                finished: false,
            },
        };
        run.save()?;
        Ok(run)
    }

    /// The newest run under `target_dir` that did not finish, if any.
    pub fn latest_unfinished(target_dir: &Path) -> Option<Run> {
        Run::all(target_dir)
            .into_iter()
            .rfind(|r| !r.record.finished)
    }

    /// Every run under `target_dir` whose `run.json` reads, oldest first.
    pub fn all(target_dir: &Path) -> Vec<Run> {
        let Ok(entries) = std::fs::read_dir(runs_dir(target_dir)) else {
            return Vec::new();
        };
        let mut runs: Vec<Run> = entries
            .flatten()
            .filter_map(|e| Run::open(&e.path()).ok())
            .collect();
        runs.sort_by_key(|r| (r.record.started, r.dir.clone()));
        runs
    }

    /// The run in directory `dir`.
    pub fn open(dir: &Path) -> std::io::Result<Run> {
        let text = std::fs::read_to_string(dir.join("run.json"))?;
        let record: RunRecord = serde_json::from_str(&text)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
        Ok(Run {
            dir: dir.to_owned(),
            record,
        })
    }

    /// The kernel directories of this run: `(kernel name, content hash, directory)`, by name.
    pub fn kernels(&self) -> Vec<(String, String, PathBuf)> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut out: Vec<(String, String, PathBuf)> = entries
            .flatten()
            .filter(|e| e.path().is_dir())
            .filter_map(|e| {
                let name = e.file_name().to_str()?.to_owned();
                let (kernel, hash) = name.rsplit_once('-')?;
                Some((kernel.to_owned(), hash.to_owned(), e.path()))
            })
            .collect();
        out.sort();
        out
    }

    /// The directory of one kernel's search.
    pub fn kernel_dir(&self, kernel: &str, content_hash: &str) -> PathBuf {
        self.dir.join(format!("{kernel}-{content_hash}"))
    }

    /// Marks the run finished.
    pub fn finish(&mut self) -> std::io::Result<()> {
        self.record.finished = true;
        self.save()
    }

    fn save(&self) -> std::io::Result<()> {
        let mut text = serde_json::to_string_pretty(&self.record).expect("run records serialize");
        text.push('\n');
        crate::cache::store::write_atomic(&self.dir.join("run.json"), &text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> RunOptions {
        RunOptions {
            search: crate::search::Config {
                strategy: crate::search::StrategyKind::Qd,
                seed: 1,
                budget: 60,
                ..crate::search::Config::default()
            },
            tune_shapes: vec![],
            force: true,
            kernels: vec!["MATMUL".into(), "ROW_SUM".into()],
            llm: false,
            llm_replay_only: false,
        }
    }

    #[test]
    fn the_newest_unfinished_run_is_resumed() {
        let t = tempfile::tempdir().unwrap();
        let mut first = Run::create(t.path(), "k", options()).unwrap();
        let second = Run::create(t.path(), "k", options()).unwrap();
        assert_ne!(first.dir, second.dir);
        let latest = Run::latest_unfinished(t.path()).unwrap();
        assert_eq!(latest.dir, second.dir);
        assert_eq!(latest.record.options, options());
        first.finish().unwrap();
        let mut s = Run::latest_unfinished(t.path()).unwrap();
        s.finish().unwrap();
        assert!(Run::latest_unfinished(t.path()).is_none());
        assert_eq!(Run::all(t.path()).len(), 2);
    }

    #[test]
    fn records_that_name_one_kernel_or_none_still_read() {
        let mut record = serde_json::to_value(options()).unwrap();
        let fields = record.as_object_mut().unwrap();
        assert_eq!(fields["kernels"], serde_json::json!(["MATMUL", "ROW_SUM"]));
        fields.remove("kernels");
        for (old, kernels) in [
            (serde_json::json!("MATMUL"), vec!["MATMUL".to_owned()]),
            (serde_json::Value::Null, vec![]),
        ] {
            fields.insert("kernel".into(), old);
            let read: RunOptions =
                serde_json::from_value(serde_json::Value::Object(fields.clone())).unwrap();
            assert_eq!(read.kernels, kernels);
        }
    }

    #[test]
    fn the_search_settings_are_the_fields_run_json_always_had() {
        // A record written before the settings were one object: no samples, a strategy name.
        let old = r#"{"strategy":"greedy","seed":7,"budget":12,"time_s":3.5,"gradients":false,
            "tune_shapes":["n=64"],"force":false,"kernels":["MATMUL"],"timeout_s":20.0,
            "operators":["param"],"llm":false,"llm_replay_only":false,"width":2}"#;
        let read: RunOptions = serde_json::from_str(old).unwrap();
        let want = crate::search::Config {
            strategy: crate::search::StrategyKind::Greedy,
            seed: 7,
            budget: 12,
            time_s: Some(3.5),
            gradients: false,
            timeout: Some(20.0),
            operators: Some(vec!["param".into()]),
            width: 2,
            ..crate::search::Config::default()
        };
        assert_eq!(read.search, want);
        assert_eq!(read.tune_shapes, ["n=64"]);
        // Written back, the same fields at the top level, under the same names.
        let written = serde_json::to_value(&read).unwrap();
        for (field, value) in [
            ("strategy", serde_json::json!("greedy")),
            ("timeout_s", serde_json::json!(20.0)),
            ("width", serde_json::json!(2)),
        ] {
            assert_eq!(written[field], value, "{written}");
        }
        assert_eq!(serde_json::from_value::<RunOptions>(written).unwrap(), read);
    }

    #[test]
    fn kernel_directories_are_listed_with_their_hash() {
        let t = tempfile::tempdir().unwrap();
        let run = Run::create(t.path(), "k", options()).unwrap();
        std::fs::create_dir_all(run.kernel_dir("ROW_SUM", "00ff00ff00ff00ff")).unwrap();
        std::fs::create_dir_all(run.kernel_dir("MATMUL", "0123456789abcdef")).unwrap();
        let kernels: Vec<(String, String)> =
            run.kernels().into_iter().map(|(k, h, _)| (k, h)).collect();
        assert_eq!(
            kernels,
            vec![
                ("MATMUL".to_owned(), "0123456789abcdef".to_owned()),
                ("ROW_SUM".to_owned(), "00ff00ff00ff00ff".to_owned()),
            ]
        );
    }
}

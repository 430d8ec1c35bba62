//! The run journal: every evaluation of a run, appended to a file the moment it finishes, so a
//! killed run can be resumed without evaluating anything twice.
//!
//! [`Journal`] wraps an evaluator. A request whose key (kernel content hash, candidate id and the
//! evaluation plan) is in the journal is answered from it; any other is evaluated and appended
//! (one JSON line, flushed and synced). Because strategies are deterministic given the reports
//! they observe, replaying the journal walks a resumed run through exactly the proposals of the
//! killed one, and the first request the journal cannot answer is the first one never finished.
//!
//! Invariant: a line is written only after its evaluation finished, and a line cut short by a kill
//! is ignored on reading, so the journal never holds a report that was not produced (nor the
//! placeholders of an evaluator that reports a fault).

use crate::evaluate::{
    AdapterReport, Candidate, Ceilings, EvalPlan, EvalReport, EvalRequest, Evaluator,
};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

/// One line of the journal.
#[derive(Debug, Serialize, Deserialize)]
pub struct Line {
    /// See [`key`].
    pub key: String,
    /// The candidate evaluated.
    pub candidate: Candidate,
    /// What the evaluation ran (absent in journals written before it was recorded): a report
    /// tells search evaluations from final verifications by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<EvalPlan>,
    /// What the evaluation reported.
    pub report: EvalReport,
}

/// What identifies an evaluation: the kernel, the candidate and the plan.
pub fn key(request: &EvalRequest) -> String {
    let mut h = Sha256::new();
    h.update(request.kernel.content_hash.as_bytes());
    h.update(b"\0");
    h.update(request.candidate.id.as_bytes());
    h.update(b"\0");
    h.update(serde_json::to_vec(&request.plan).expect("plans serialize"));
    kf_runtime::hash::hex16(&h.finalize())
}

/// Reads the complete lines of a journal file (none when it does not exist).
pub fn read(path: &Path) -> std::io::Result<Vec<Line>> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut out = Vec::new();
    for line in BufReader::new(file).lines() {
        let line = line?;
        // A kill mid-write leaves a partial last line: it is simply not a finished evaluation.
        if let Ok(l) = serde_json::from_str::<Line>(&line) {
            out.push(l);
        }
    }
    Ok(out)
}

/// An evaluator that answers from the journal where it can and records everything else.
pub struct Journal<'a> {
    inner: &'a mut dyn Evaluator,
    path: PathBuf,
    file: File,
    done: HashMap<String, EvalReport>,
    /// Requests answered from the journal.
    pub replayed: u64,
    /// Requests the inner evaluator ran.
    pub evaluated: u64,
}

impl<'a> Journal<'a> {
    /// Opens (or creates) the journal at `path` over `inner`.
    pub fn open(inner: &'a mut dyn Evaluator, path: &Path) -> std::io::Result<Self> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let done = read(path)?.into_iter().map(|l| (l.key, l.report)).collect();
        let mut file = OpenOptions::new().create(true).append(true).open(path)?;
        // A kill mid-write leaves a partial last line; end it, so the next line starts clean.
        let len = file.metadata()?.len();
        if len > 0 {
            let mut last = [0u8; 1];
            use std::io::{Read, Seek, SeekFrom};
            let mut reader = File::open(path)?;
            reader.seek(SeekFrom::Start(len - 1))?;
            reader.read_exact(&mut last)?;
            if last[0] != b'\n' {
                file.write_all(b"\n")?;
            }
        }
        Ok(Journal {
            inner,
            path: path.to_owned(),
            file,
            done,
            replayed: 0,
            evaluated: 0,
        })
    }

    /// Where the journal is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn record(&mut self, request: &EvalRequest, key: String, report: &EvalReport) {
        let line = Line {
            key: key.clone(),
            candidate: request.candidate.clone(),
            plan: Some(request.plan.clone()),
            report: report.clone(),
        };
        let text = serde_json::to_string(&line).expect("journal lines serialize");
        let written = writeln!(self.file, "{text}")
            .and_then(|_| self.file.flush())
            .and_then(|_| self.file.sync_data());
        if let Err(e) = written {
            log::warn!(
                "could not append to the run journal {}: {e}; this evaluation would be repeated on resume",
                self.path.display()
            );
        }
        self.done.insert(key, report.clone());
    }
}

impl Evaluator for Journal<'_> {
    fn adapter(&self) -> &AdapterReport {
        self.inner.adapter()
    }

    fn evaluate(&mut self, request: &EvalRequest) -> EvalReport {
        let key = key(request);
        if let Some(r) = self.done.get(&key) {
            self.replayed += 1;
            return r.clone();
        }
        let report = self.inner.evaluate(request);
        if self.inner.fault().is_some() {
            return report;
        }
        self.evaluated += 1;
        self.record(request, key, &report);
        report
    }

    fn evaluate_batch(&mut self, requests: &[EvalRequest]) -> Vec<EvalReport> {
        let keys: Vec<String> = requests.iter().map(key).collect();
        let missing: Vec<usize> = (0..requests.len())
            .filter(|&i| !self.done.contains_key(&keys[i]))
            .collect();
        let fresh = self.inner.evaluate_batch(
            &missing
                .iter()
                .map(|&i| requests[i].clone())
                .collect::<Vec<_>>(),
        );
        if self.inner.fault().is_some() {
            // Placeholders of an evaluator that gave up are not evaluations.
            let mut fresh = fresh.into_iter();
            return (0..requests.len())
                .map(|i| match self.done.get(&keys[i]) {
                    Some(r) => r.clone(),
                    None => fresh.next().expect("one report per missing request"),
                })
                .collect();
        }
        for (&i, report) in missing.iter().zip(&fresh) {
            self.evaluated += 1;
            self.record(&requests[i], keys[i].clone(), report);
        }
        self.replayed += (requests.len() - missing.len()) as u64;
        keys.iter().map(|k| self.done[k].clone()).collect()
    }

    fn probe(&mut self) -> Result<Ceilings, String> {
        self.inner.probe()
    }

    fn parallelism(&self) -> usize {
        self.inner.parallelism()
    }

    fn fault(&self) -> Option<String> {
        self.inner.fault()
    }
}

//! Figures against outside reference times: `bench --against FILE`.
//!
//! A speedup over the user's own draft says how much the tool helped; what a user weighs is the
//! time against what they would run instead (torch, cuBLAS, a hand-written library). This module
//! reads reference times from a JSON-lines file — the format `examples/kernelbench/torch_bench.py`
//! prints, one object per kernel with its `op` name, the `shape` it timed and its time in `ms` —
//! and places each benchmarked kernel's deployed program against them.
//!
//! The figures follow KernelBench's definitions, over the kernels that have a reference time:
//! - **fast_p**: the share of those kernels whose deployed program is correct on this adapter and
//!   faster than the reference by more than a factor `p` (reference time / program time > p);
//! - **geomean**: the geometric mean of reference time / program time over the correct ones.
//!
//! The same figures for the baseline (the user's kernel as written) stand beside them, so the
//! table shows both what the kernels were and what tuning made of them.
//!
//! A reference time applies only to the shape it was measured at: a line whose `shape` names a
//! size with another value than the kernel's timed shape, or a kernel timed at several shapes, is
//! reported as not comparable rather than compared. Lines with `"tf32": true` are skipped: they
//! time a lower-precision matmul than the fp32 kernels here compute.

use super::{KernelBench, geomean};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The factors of the fast_p figures against a reference (KernelBench reports fast_0, i.e. the
/// correct share, then 1 and above; 0.8 is the bar of "close to torch").
pub const FAST_P: [f64; 4] = [0.8, 1.0, 1.2, 2.0];

/// Why a reference-times file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum AgainstError {
    /// The file cannot be read.
    #[error("cannot read reference times from {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A line is not a JSON object with an op name and a time.
    #[error("{path}:{line}: {message}")]
    Line {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// No line carries a usable time.
    #[error(
        "{path} holds no reference times (expected JSON lines such as \
         {{\"op\": \"SOFTMAX\", \"shape\": {{\"rows\": 4096}}, \"ms\": 0.0576}})"
    )]
    Empty {
        /// The file.
        path: PathBuf,
    },
}

/// One reference time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReferenceTime {
    /// The kernel it stands for (the static's name).
    pub op: String,
    /// The sizes it was measured at (may name only some of the kernel's sizes).
    pub shape: BTreeMap<String, u64>,
    /// Its time, ms.
    pub ms: f64,
}

/// Reference times read from a file.
#[derive(Clone, Debug, PartialEq)]
pub struct ReferenceTimes {
    /// Where they came from, as given.
    pub source: String,
    /// The JSON field read as the time.
    pub field: String,
    /// The times, in file order.
    pub times: Vec<ReferenceTime>,
}

#[derive(Deserialize)]
struct Line {
    #[serde(alias = "name", alias = "kernel")]
    op: String,
    #[serde(default)]
    shape: BTreeMap<String, serde_json::Value>,
    #[serde(default)]
    tf32: bool,
    #[serde(flatten)]
    rest: BTreeMap<String, serde_json::Value>,
}

impl ReferenceTimes {
    /// Reads `path`, taking each line's `field` (e.g. `ms`) as its time. Blank lines and lines
    /// starting with `#` are skipped.
    pub fn read(path: &Path, field: &str) -> Result<Self, AgainstError> {
        let text = std::fs::read_to_string(path).map_err(|source| AgainstError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&text, path, field)
    }

    /// Parses the text of a reference-times file (see [`ReferenceTimes::read`]).
    pub fn parse(text: &str, path: &Path, field: &str) -> Result<Self, AgainstError> {
        let err = |line: usize, message: String| AgainstError::Line {
            path: path.to_owned(),
            line,
            message,
        };
        let mut times = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let raw = raw.trim();
            if raw.is_empty() || raw.starts_with('#') {
                continue;
            }
            let line: Line = serde_json::from_str(raw).map_err(|e| {
                err(
                    i + 1,
                    format!("not a reference time: {e} (each line is a JSON object with `op` and `{field}`)"),
                )
            })?;
            if line.tf32 {
                continue;
            }
            let ms = match line.rest.get(field) {
                Some(v) => v
                    .as_f64()
                    .filter(|ms| *ms > 0.0 && ms.is_finite())
                    .ok_or_else(|| {
                        err(
                            i + 1,
                            format!("`{field}` is {v}, not a positive time in ms"),
                        )
                    })?,
                None => {
                    return Err(err(
                        i + 1,
                        format!("no `{field}` field (choose the field with --against-field)"),
                    ));
                }
            };
            let mut shape = BTreeMap::new();
            for (name, v) in line.shape {
                let n = v.as_u64().ok_or_else(|| {
                    err(
                        i + 1,
                        format!("shape size `{name}` is {v}, not a whole number"),
                    )
                })?;
                shape.insert(name, n);
            }
            times.push(ReferenceTime {
                op: line.op,
                shape,
                ms,
            });
        }
        if times.is_empty() {
            return Err(AgainstError::Empty {
                path: path.to_owned(),
            });
        }
        Ok(ReferenceTimes {
            source: path.display().to_string(),
            field: field.to_owned(),
            times,
        })
    }
}

/// One kernel against its reference time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelAgainst {
    /// The kernel.
    pub name: String,
    /// The reference time, ms, when one applies.
    pub reference_ms: Option<f64>,
    /// Why no reference time applies (none in the file, another shape, several shapes).
    pub note: Option<String>,
    /// The deployed program's time, ms (correct programs only).
    pub deployed_ms: Option<f64>,
    /// The baseline's time, ms.
    pub baseline_ms: Option<f64>,
    /// Reference time / deployed time, when both exist and the deployed program is correct.
    pub speedup: Option<f64>,
    /// Reference time / baseline time.
    pub baseline_speedup: Option<f64>,
}

/// Fast_p and geomean of one program set against the reference.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// `(p, share)` for each factor of [`FAST_P`].
    pub fast_p: Vec<(f64, f64)>,
    /// Geometric mean of the speedups over the correct kernels.
    pub geomean: Option<f64>,
    /// Correct kernels faster than the reference (speedup > 1).
    pub faster: usize,
}

/// The benchmark against reference times.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Against {
    /// The file.
    pub source: String,
    /// The field read as the time.
    pub field: String,
    /// Per benchmarked kernel.
    pub kernels: Vec<KernelAgainst>,
    /// Kernels with a reference time that applies: the denominator of fast_p.
    pub compared: usize,
    /// The deployed programs (tuned variants, or the baselines entries kept).
    pub deployed: Figures,
    /// The baselines as the user wrote them.
    pub baseline: Figures,
}

/// The shape a kernel was timed at, when it was timed at exactly one.
fn timed_shape(k: &KernelBench) -> Result<&BTreeMap<String, u64>, String> {
    let shapes = &k.deployed.as_ref().ok_or("not measured")?.shapes;
    match shapes.as_slice() {
        [one] => Ok(&one.shape),
        [] => Err("not measured".into()),
        _ => Err(format!(
            "timed at {} shapes; a reference time stands for one",
            shapes.len()
        )),
    }
}

/// Whether every size `reference` names has the value `timed` gives it.
fn same_shape(reference: &BTreeMap<String, u64>, timed: &BTreeMap<String, u64>) -> bool {
    reference.iter().all(|(k, v)| timed.get(k) == Some(v))
}

fn show(shape: &BTreeMap<String, u64>) -> String {
    shape
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

impl Against {
    /// Places `kernels` against `times`.
    pub fn of(kernels: &[KernelBench], times: &ReferenceTimes) -> Self {
        let per: Vec<KernelAgainst> = kernels
            .iter()
            .map(|k| {
                let mut out = KernelAgainst {
                    name: k.name.clone(),
                    reference_ms: None,
                    note: None,
                    deployed_ms: None,
                    baseline_ms: k.baseline().map(|t| t.ns / 1e6),
                    speedup: None,
                    baseline_speedup: None,
                };
                let named: Vec<&ReferenceTime> =
                    times.times.iter().filter(|t| t.op == k.name).collect();
                if named.is_empty() {
                    out.note = Some(format!("no reference time for `{}`", k.name));
                    return out;
                }
                let shape = match timed_shape(k) {
                    Ok(s) => s,
                    Err(why) => {
                        out.note = Some(why);
                        return out;
                    }
                };
                let Some(r) = named.iter().find(|t| same_shape(&t.shape, shape)) else {
                    out.note = Some(format!(
                        "reference measured at {}, the kernel at {}",
                        show(&named[0].shape),
                        show(shape)
                    ));
                    return out;
                };
                out.reference_ms = Some(r.ms);
                out.baseline_speedup = out.baseline_ms.map(|b| r.ms / b);
                if k.correct || k.status == super::Status::NotTuned {
                    out.deployed_ms = k
                        .deployed_timing()
                        .filter(|_| k.deployed.as_ref().is_some_and(|d| d.correct))
                        .map(|t| t.ns / 1e6);
                    out.speedup = out.deployed_ms.map(|d| r.ms / d);
                }
                out
            })
            .collect();
        let compared = per.iter().filter(|k| k.reference_ms.is_some()).count();
        let figures = |speedup: fn(&KernelAgainst) -> Option<f64>| {
            let speedups: Vec<f64> = per.iter().filter_map(speedup).collect();
            Figures {
                fast_p: FAST_P
                    .iter()
                    .map(|&p| {
                        let n = speedups.iter().filter(|&&s| s > p).count();
                        (
                            p,
                            if compared == 0 {
                                0.0
                            } else {
                                n as f64 / compared as f64
                            },
                        )
                    })
                    .collect(),
                geomean: geomean(speedups.iter().copied()),
                faster: speedups.iter().filter(|&&s| s > 1.0).count(),
            }
        };
        Against {
            source: times.source.clone(),
            field: times.field.clone(),
            compared,
            deployed: figures(|k| k.speedup),
            baseline: figures(|k| k.baseline_speedup),
            kernels: per,
        }
    }

    /// The per-kernel line of the plain summary, when the kernel has a reference time.
    pub fn line(&self, kernel: &str) -> Option<String> {
        let k = self.kernels.iter().find(|k| k.name == kernel)?;
        Some(match (k.reference_ms, k.speedup) {
            (Some(r), Some(s)) => format!(
                "against the reference: {s:.2}x ({} ms reference; the baseline {})",
                round(r),
                k.baseline_speedup
                    .map_or_else(|| "–".to_owned(), |b| format!("{b:.2}x"))
            ),
            (Some(r), None) => format!(
                "against the reference: – ({} ms reference; no correct time here)",
                round(r)
            ),
            (None, _) => format!("against the reference: – ({})", k.note.as_deref()?),
        })
    }

    /// The suite's line of the plain summary.
    pub fn summary(&self) -> String {
        format!(
            "against {} (`{}`): {} of {} kernels compared; deployed {}; baseline {}",
            self.source,
            self.field,
            self.compared,
            self.kernels.len(),
            figures_text(&self.deployed),
            figures_text(&self.baseline),
        )
    }

    /// A markdown table: per kernel, then the figures.
    pub fn markdown(&self) -> String {
        let dash = || "–".to_owned();
        let x = |v: Option<f64>| v.map_or_else(dash, |v| format!("{v:.2}x"));
        let ms = |v: Option<f64>| v.map_or_else(dash, round);
        let mut out = format!(
            "\nAgainst reference times from `{}` (field `{}`), as KernelBench defines fast_p: the share of the {} kernels with a reference time whose program is correct here and faster than the reference by more than p.\n\n\
             | kernel | reference ms | baseline ms | deployed ms | baseline vs reference | deployed vs reference |\n|---|--:|--:|--:|--:|--:|\n",
            self.source, self.field, self.compared
        );
        for k in &self.kernels {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                k.name,
                match (&k.reference_ms, &k.note) {
                    (Some(r), _) => round(*r),
                    (None, Some(n)) => n.replace('|', "\\|"),
                    (None, None) => dash(),
                },
                ms(k.baseline_ms),
                ms(k.deployed_ms),
                x(k.baseline_speedup),
                x(k.speedup),
            ));
        }
        out.push_str("\n| programs | ");
        out.push_str(
            &FAST_P
                .iter()
                .map(|p| format!("fast_{p}"))
                .collect::<Vec<_>>()
                .join(" | "),
        );
        out.push_str(" | geomean |\n|---|");
        out.push_str(&"--:|".repeat(FAST_P.len() + 1));
        out.push('\n');
        for (name, f) in [("deployed", &self.deployed), ("baseline", &self.baseline)] {
            out.push_str(&format!("| {name} | "));
            for (_, share) in &f.fast_p {
                out.push_str(&format!("{:.0} % | ", share * 100.0));
            }
            out.push_str(&format!("{} |\n", x(f.geomean)));
        }
        out
    }
}

fn figures_text(f: &Figures) -> String {
    let fast = f
        .fast_p
        .iter()
        .map(|(p, s)| format!("fast_{p} {:.0} %", s * 100.0))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "{fast}, geomean {}",
        f.geomean
            .map_or_else(|| "–".to_owned(), |g| format!("{g:.2}x"))
    )
}

fn round(ms: f64) -> String {
    if ms >= 10.0 {
        format!("{ms:.1}")
    } else if ms >= 0.1 {
        format!("{ms:.3}")
    } else {
        format!("{ms:.4}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::{Comparison, Status, Timing};
    use crate::evaluate::ShapeTime;

    fn timing(ns: f64) -> Timing {
        Timing {
            ns,
            spread: 0.0,
            gbps: 0.0,
            gflops: None,
            roofline: None,
        }
    }

    fn shape_time(shape: &[(&str, u64)]) -> ShapeTime {
        let mut s: ShapeTime = serde_json::from_value(serde_json::json!({
            "shape": {}, "baseline_ns": 1.0, "candidate_ns": 1.0, "speedup": 1.0, "spread": 0.0,
            "samples": 1, "method": "timestamp-query", "bytes": 0, "achieved_gbps": 0.0,
        }))
        .expect("a ShapeTime");
        s.shape = shape.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        s
    }

    /// A kernel whose baseline takes `baseline_ns` and whose deployed program `deployed_ns`.
    fn kernel(
        name: &str,
        status: Status,
        correct: bool,
        baseline_ns: f64,
        deployed_ns: f64,
    ) -> KernelBench {
        let mut k = crate::bench::tests::kernel(
            name,
            status,
            correct,
            correct.then_some(baseline_ns / deployed_ns),
        );
        k.deployed = Some(Comparison {
            program: "v".into(),
            level: if correct { 5 } else { 2 },
            correct,
            failure: None,
            trials: 1,
            baseline: Some(timing(baseline_ns)),
            timing: correct.then(|| timing(deployed_ns)),
            speedup: None,
            speedup_spread: None,
            shapes: vec![shape_time(&[("rows", 4096), ("cols", 4096)])],
        });
        k
    }

    const FILE: &str = r#"{"suite": "kernelbench", "op": "A", "shape": {"rows": 4096, "cols": 4096}, "tf32": false, "ms": 0.05, "gbps": 1.0}
{"suite": "kernelbench", "op": "A", "shape": {"rows": 4096, "cols": 4096}, "tf32": true, "ms": 0.01}
# a comment
{"op": "B", "shape": {"rows": 4096}, "ms": 0.2}
{"op": "C", "shape": {"rows": 8}, "ms": 1.0}
{"op": "D", "ms": 0.1}
"#;

    #[test]
    fn fast_p_and_geomean_follow_kernelbench_over_the_kernels_with_a_reference_time() {
        let times = ReferenceTimes::parse(FILE, Path::new("torch.jsonl"), "ms").unwrap();
        assert_eq!(
            times.times.len(),
            4,
            "the tf32 line and the comment are skipped"
        );
        let kernels = vec![
            // 0.05 ms reference, 0.04 ms deployed: 1.25x; baseline 1 ms: 0.05x.
            kernel("A", Status::Tuned, true, 1e6, 4e4),
            // 0.2 ms reference, 0.4 ms deployed: 0.5x.
            kernel("B", Status::Tuned, true, 8e5, 4e5),
            // Measured at another shape: not compared.
            kernel("C", Status::Tuned, true, 1e6, 1e5),
            // Incorrect here: compared, never fast.
            kernel("D", Status::Tuned, false, 1e6, 1e4),
            // No reference time.
            kernel("E", Status::BaselineBest, true, 1e6, 1e6),
        ];
        let a = Against::of(&kernels, &times);
        assert_eq!(a.compared, 3);
        let k = |n: &str| a.kernels.iter().find(|k| k.name == n).unwrap();
        assert!((k("A").speedup.unwrap() - 1.25).abs() < 1e-9);
        assert!((k("A").baseline_speedup.unwrap() - 0.05).abs() < 1e-9);
        assert!((k("B").speedup.unwrap() - 0.5).abs() < 1e-9);
        assert!(
            k("C").note.as_deref().unwrap().contains("rows=8"),
            "{:?}",
            k("C").note
        );
        assert_eq!(k("D").speedup, None);
        assert!(k("D").baseline_speedup.is_some());
        assert!(
            k("E")
                .note
                .as_deref()
                .unwrap()
                .contains("no reference time")
        );
        let share = |f: &Figures, p: f64| f.fast_p.iter().find(|(q, _)| *q == p).unwrap().1;
        assert!(
            (share(&a.deployed, 1.0) - 1.0 / 3.0).abs() < 1e-9,
            "only A of A, B, D"
        );
        assert!((share(&a.deployed, 0.8) - 1.0 / 3.0).abs() < 1e-9);
        assert_eq!(share(&a.deployed, 2.0), 0.0);
        assert!((a.deployed.geomean.unwrap() - (1.25f64 * 0.5).sqrt()).abs() < 1e-9);
        assert_eq!(a.deployed.faster, 1);
        assert_eq!(share(&a.baseline, 0.8), 0.0);
        assert!(a.line("A").unwrap().contains("1.25x"));
        assert!(a.markdown().contains("| A | 0.0500 |"), "{}", a.markdown());
        assert!(a.summary().contains("3 of 5 kernels compared"));
    }

    #[test]
    fn a_bad_line_is_named_with_its_number() {
        let e = ReferenceTimes::parse(
            "{\"op\": \"A\", \"ms\": 1}\n{\"op\": \"B\"}\n",
            Path::new("t"),
            "ms",
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("t:2: no `ms` field"), "{e}");
        let e = ReferenceTimes::parse("{\"op\": \"A\", \"ms\": -1}\n", Path::new("t"), "ms")
            .unwrap_err();
        assert!(e.to_string().contains("not a positive time"), "{e}");
        let e = ReferenceTimes::parse("\n# only a comment\n", Path::new("t"), "ms").unwrap_err();
        assert!(matches!(e, AgainstError::Empty { .. }), "{e}");
        let times =
            ReferenceTimes::parse("{\"name\": \"A\", \"us\": 3}\n", Path::new("t"), "us").unwrap();
        assert_eq!(times.times[0].op, "A");
    }
}

//! The HTML report: what a tune run explored and what it achieved, as one static file.
//!
//! [`gather`] reads a run directory (its journals and archive checkpoints), the cache entries and
//! ceilings of the workspace, and optionally a `bench --json` report, into a [`Report`]: per kernel
//! the archive's filled cells, every evaluation's score in order, and where the baseline, the tuned
//! variant and the reference sit against the adapter's ceilings. [`html::render`] turns that into
//! one HTML file with inline CSS and SVG drawn here, so it opens anywhere without a network, a
//! script or a server.
//!
//! Where the figures come from is shown in the file: a bench report's re-verified measurements
//! are preferred over the run's own (tune-time screening and final verifications), and those over
//! the cache entry's record.
//!
//! Invariant: reading only. Nothing under the run directory or `kernelfoundry/` is written here.

pub mod html;

use crate::bench::{BenchReport, Comparison, KernelBench};
use crate::cache::run::Run;
use crate::discover::Found;
use crate::evaluate::Ceilings;
use crate::evolve::{Archive, Descriptor, describe_program};
use crate::search::journal::{self, Line};
use kf_runtime::cache::CacheEntry;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Why a report cannot be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReportError {
    /// Neither a run directory nor a bench report to read.
    #[error(
        "nothing to report: no tune run under {0} (run `cargo kernelfoundry tune` first) and no --bench report"
    )]
    NoRun(PathBuf),
    /// The run directory given does not read.
    #[error("cannot read the run directory {path}: {source}")]
    Run {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A kernel's journal does not read.
    #[error("cannot read the run journal {path}: {source}")]
    Journal {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// One filled cell of a kernel's archive.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    /// Where it is.
    pub descriptor: Descriptor,
    /// The best score in it (ladder level, plus the speedup for correct candidates).
    pub score: f64,
    /// That candidate's ladder level.
    pub level: u8,
    /// Its speedup, for a correct one.
    pub speedup: Option<f64>,
    /// Its id.
    pub id: String,
    /// How it was made.
    pub origin: String,
}

/// Where a kernel's cells were read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CellSource {
    /// The QD archive checkpoint (`archive.json`): the elites of every island.
    Archive,
    /// Every evaluated candidate of the journal, described from its program (strategies without an
    /// archive).
    Journal,
    /// Neither is there.
    None,
}

/// What an evaluation of the journal was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// The baseline measured against itself.
    Baseline,
    /// A screening evaluation of the search.
    Search,
    /// A final verification of a finalist.
    Final,
}

/// One evaluation, in journal order.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// What it was.
    pub phase: Phase,
    /// Its score.
    pub score: f64,
    /// Its ladder level.
    pub level: u8,
    /// Its speedup, for a correct one.
    pub speedup: Option<f64>,
    /// The candidate's id.
    pub id: String,
}

/// A program placed against the adapter's ceilings.
#[derive(Clone, Debug, PartialEq)]
pub struct Placement {
    /// `baseline`, `tuned` or `reference`.
    pub label: &'static str,
    /// Achieved bandwidth, GB/s.
    pub gbps: f64,
    /// Achieved FLOP rate, when the spec gives `flops`.
    pub gflops: Option<f64>,
    /// Median time summed over the timed shapes, ns.
    pub ns: f64,
}

/// Where a kernel's placements come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measured {
    /// The bench report (re-verified on the adapter).
    Bench,
    /// The run's journal (the baseline's and the winner's final evaluations).
    Run,
    /// Nothing measured.
    None,
}

/// Everything the report shows about one kernel.
#[derive(Clone, Debug)]
pub struct KernelView {
    /// The static's name.
    pub name: String,
    /// Its package, when the kernel is found in the workspace.
    pub package: Option<String>,
    /// The content hash the run tuned (or the bench measured).
    pub content_hash: String,
    /// Filled cells.
    pub cells: Vec<Cell>,
    /// Where they were read from.
    pub cells_source: CellSource,
    /// Every evaluation, in order.
    pub points: Vec<Point>,
    /// The baseline, the tuned variant and the reference against the ceilings.
    pub placements: Vec<Placement>,
    /// Where the placements were measured.
    pub measured: Measured,
    /// The cache entry for the report's adapter.
    pub entry: Option<CacheEntry>,
    /// Worker seconds of the run's evaluations of this kernel.
    pub seconds: Option<f64>,
    /// The bench figures of this kernel.
    pub bench: Option<KernelBench>,
}

/// Everything one report shows.
#[derive(Debug)]
pub struct Report {
    /// The run read, if any.
    pub run: Option<Run>,
    /// The adapter key everything refers to.
    pub adapter_key: Option<String>,
    /// A readable adapter description.
    pub adapter: Option<String>,
    /// Copy bandwidth and FMA ceilings, GB/s and GFLOP/s.
    pub ceilings: Option<(f64, f64)>,
    /// Per kernel.
    pub kernels: Vec<KernelView>,
    /// The bench report, when given.
    pub bench: Option<BenchReport>,
}

/// The run in `dir`, or else the newest run directory under `target_dir` (`None` when there is
/// none).
pub fn open_run(target_dir: &Path, dir: Option<&Path>) -> Result<Option<Run>, ReportError> {
    match dir {
        Some(d) => Run::open(d).map(Some).map_err(|source| ReportError::Run {
            path: d.to_owned(),
            source,
        }),
        None => Ok(Run::all(target_dir).pop()),
    }
}

/// Reads a report's inputs: the `run` (if any), the workspace's kernels `found` (for their cache
/// entries), the workspace's stored ceilings under `workspace_root`, and a `bench` report.
/// `target_dir` only names where runs were looked for when there is nothing to report.
pub fn gather(
    run: Option<Run>,
    found: &[Found],
    workspace_root: &Path,
    target_dir: &Path,
    bench: Option<BenchReport>,
) -> Result<Report, ReportError> {
    if run.is_none() && bench.is_none() {
        return Err(ReportError::NoRun(
            target_dir.join("kernelfoundry").join("runs"),
        ));
    }
    let adapter_key = run
        .as_ref()
        .map(|r| r.record.adapter_key.clone())
        .or_else(|| bench.as_ref().map(|b| b.adapter.key.clone()));
    let key = adapter_key
        .as_deref()
        .and_then(kf_runtime::AdapterKey::parse);
    let stored: Option<Ceilings> = key
        .as_ref()
        .and_then(|k| crate::cache::store::read_ceilings(workspace_root, k));
    let ceilings = bench
        .as_ref()
        .and_then(|b| b.ceilings.as_ref())
        .map(|c| (c.copy_gbps, c.fma_gflops))
        .or_else(|| stored.as_ref().map(|c| (c.copy_gbps, c.fma_gflops)));
    let adapter = bench
        .as_ref()
        .map(|b| {
            format!(
                "{} ({}, {})",
                b.adapter.name, b.adapter.backend, b.adapter.driver
            )
        })
        .or_else(|| stored.as_ref().map(|c| c.adapter.identity.describe()));
    let mut kernels = Vec::new();
    if let Some(run) = &run {
        for (name, hash, dir) in run.kernels() {
            let lines = journal::read(&dir.join("journal.jsonl")).map_err(|source| {
                ReportError::Journal {
                    path: dir.join("journal.jsonl"),
                    source,
                }
            })?;
            let found = found.iter().find(|f| {
                f.name == name && f.resolved.as_ref().is_ok_and(|k| k.content_hash == hash)
            });
            let entry = match (found, &key) {
                (Some(f), Some(k)) => {
                    crate::cache::store::read_entry(&f.crate_root, &name, &hash, k).map(|(_, e)| e)
                }
                _ => None,
            };
            let (cells, cells_source) = match read_archive(&dir.join("archive.json")) {
                Some(cells) => (cells, CellSource::Archive),
                None if !lines.is_empty() => (cells_of_journal(&lines), CellSource::Journal),
                None => (Vec::new(), CellSource::None),
            };
            let tuned_id = entry
                .as_ref()
                .and_then(|e| e.variant.as_ref())
                .map(|v| v.id.clone());
            let placements = placements_of_journal(&lines, tuned_id.as_deref());
            kernels.push(KernelView {
                package: found.map(|f| f.package.clone()),
                content_hash: hash,
                cells,
                cells_source,
                points: points(&lines),
                measured: if placements.is_empty() {
                    Measured::None
                } else {
                    Measured::Run
                },
                placements,
                entry,
                seconds: (!lines.is_empty())
                    .then(|| lines.iter().map(|l| l.report.wall_ms).sum::<f64>() / 1e3),
                bench: None,
                name,
            });
        }
    }
    if let Some(b) = &bench {
        for k in &b.kernels {
            let view = match kernels.iter_mut().find(|v| {
                v.name == k.name && Some(v.content_hash.as_str()) == k.content_hash.as_deref()
            }) {
                Some(v) => v,
                None => {
                    kernels.push(KernelView {
                        name: k.name.clone(),
                        package: Some(k.package.clone()),
                        content_hash: k.content_hash.clone().unwrap_or_default(),
                        cells: Vec::new(),
                        cells_source: CellSource::None,
                        points: Vec::new(),
                        placements: Vec::new(),
                        measured: Measured::None,
                        entry: None,
                        seconds: None,
                        bench: None,
                    });
                    kernels.last_mut().expect("just pushed")
                }
            };
            let placements = placements_of_bench(k);
            if !placements.is_empty() {
                view.placements = placements;
                view.measured = Measured::Bench;
            }
            view.package = Some(k.package.clone());
            view.bench = Some(k.clone());
        }
    }
    // The workspace's order (the order kernels are declared), then the rest by name.
    kernels.sort_by_key(|k| {
        found
            .iter()
            .position(|f| f.name == k.name)
            .unwrap_or(usize::MAX)
    });
    Ok(Report {
        run,
        adapter_key,
        adapter,
        ceilings,
        kernels,
        bench,
    })
}

/// The cells of an archive checkpoint: per descriptor, the best elite over the islands. `None`
/// when the file is absent or is not an archive checkpoint.
pub fn read_archive(path: &Path) -> Option<Vec<Cell>> {
    #[derive(serde::Deserialize)]
    struct Checkpoint {
        archive: Archive<serde_json::Value>,
    }
    let text = std::fs::read_to_string(path).ok()?;
    let checkpoint: Checkpoint = match serde_json::from_str(&text) {
        Ok(c) => c,
        Err(e) => {
            log::warn!("{} is not an archive checkpoint: {e}", path.display());
            return None;
        }
    };
    let archive = checkpoint.archive;
    let mut best: BTreeMap<Descriptor, Cell> = BTreeMap::new();
    for island in 0..archive.island_count() {
        for e in archive.elites(island) {
            let Some(descriptor) = e.descriptor else {
                continue;
            };
            let cell = Cell {
                descriptor,
                score: e.score(),
                level: e.fitness.level,
                speedup: e.fitness.speedup,
                id: e
                    .payload
                    .pointer("/candidate/id")
                    .and_then(serde_json::Value::as_str)
                    .map_or_else(|| e.id.to_string(), str::to_owned),
                origin: e.origin_text(),
            };
            keep_best(&mut best, cell);
        }
    }
    Some(best.into_values().collect())
}

fn keep_best(best: &mut BTreeMap<Descriptor, Cell>, cell: Cell) {
    match best.get(&cell.descriptor) {
        Some(b) if b.score >= cell.score => {}
        _ => {
            best.insert(cell.descriptor, cell);
        }
    }
}

/// The cells of a journal: every evaluated candidate described from its program, the best score
/// per descriptor (what a MAP-Elites archive of one island would hold).
pub fn cells_of_journal(lines: &[Line]) -> Vec<Cell> {
    let mut best: BTreeMap<Descriptor, Cell> = BTreeMap::new();
    for l in lines {
        let Ok(descriptor) = describe_program(&l.candidate.program) else {
            continue;
        };
        keep_best(
            &mut best,
            Cell {
                descriptor,
                score: crate::evolve::archive::score_of(&l.report.fitness),
                level: l.report.fitness.level,
                speedup: l.report.fitness.speedup,
                id: l.candidate.id.clone(),
                origin: l.candidate.origin.clone(),
            },
        );
    }
    best.into_values().collect()
}

/// What a journal line was: the baseline's own measurement, a final verification (its plan
/// re-verifies after timing) or a search evaluation. Lines of journals written before plans
/// were recorded count as search evaluations.
pub fn phase(line: &Line) -> Phase {
    if line.candidate.id == "baseline" {
        Phase::Baseline
    } else if line.plan.as_ref().is_some_and(|p| p.reverify.is_some()) {
        Phase::Final
    } else {
        Phase::Search
    }
}

fn points(lines: &[Line]) -> Vec<Point> {
    lines
        .iter()
        .map(|l| Point {
            phase: phase(l),
            score: crate::evolve::archive::score_of(&l.report.fitness),
            level: l.report.fitness.level,
            speedup: l.report.fitness.speedup,
            id: l.candidate.id.clone(),
        })
        .collect()
}

fn placement(label: &'static str, c: &Comparison, baseline_side: bool) -> Option<Placement> {
    let t = if baseline_side {
        c.baseline.as_ref()?
    } else {
        c.timing.as_ref()?
    };
    Some(Placement {
        label,
        gbps: t.gbps,
        gflops: t.gflops,
        ns: t.ns,
    })
}

/// The baseline from its own measurement and the tuned variant from its last final verification
/// (`tuned_id`, the entry's variant).
fn placements_of_journal(lines: &[Line], tuned_id: Option<&str>) -> Vec<Placement> {
    let mut out = Vec::new();
    if let Some(b) = lines.iter().find(|l| phase(l) == Phase::Baseline) {
        let c = Comparison::of("baseline", &b.report, None);
        out.extend(placement("baseline", &c, true));
    }
    if let Some(id) = tuned_id
        && let Some(t) = lines
            .iter()
            .rev()
            .find(|l| l.candidate.id == id && phase(l) == Phase::Final && l.report.is_correct())
    {
        let c = Comparison::of(id, &t.report, None);
        out.extend(placement("tuned", &c, false));
    }
    out
}

fn placements_of_bench(k: &KernelBench) -> Vec<Placement> {
    let mut out = Vec::new();
    if let Some(d) = &k.deployed {
        out.extend(placement("baseline", d, true));
        if k.tuned().is_some() {
            out.extend(placement("tuned", d, false));
        }
    }
    if let Some(r) = &k.reference {
        out.extend(placement("reference", r, false));
    }
    out
}

#[cfg(test)]
mod tests;

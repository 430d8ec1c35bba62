//! Looking after a crate's committed cache: `cache verify`, `cache gc` and `cache merge`.
//!
//! The cache is a directory of files, `kernelfoundry/<KERNEL>/<content-hash>/<adapter-key>.json`,
//! committed like a lockfile and merged from several machines. Over time it collects entries no
//! kernel matches any more (an edit gave the kernel a new content hash), and a hand edit or a bad
//! merge can leave a file the build skips. These tools judge every file against the kernels
//! discovery finds (`discover::Found`, cfg-disabled kernels included: they are still marked):
//!
//! - **verify**: every entry parses, sits where its contents say, matches a marked kernel's
//!   content hash, and passes `kf_runtime::variant::check_entry` against that kernel (the one
//!   check the macro applies before embedding it).
//! - **gc**: the entries under a content hash that no marked kernel of that name has. A kernel
//!   whose spec does not resolve has an unknown hash, so its entries are kept.
//! - **merge**: entries from other machines' cache directories. Files are content-addressed, so
//!   two machines' files for different adapters never collide; when both have one for the same
//!   (kernel, content hash, adapter key), the entry whose variant passes the check and has the
//!   lower recorded variant time (`timings[].variant_ns` summed over the shapes both entries
//!   timed, both measured on that same adapter key; `speedup` when they timed no shape in common)
//!   is kept, and the report says which and why.
//!
//! Invariant: nothing here writes or deletes except through `store` (the only writer under
//! `kernelfoundry/`), and every file read is accounted for in a report: merged, identical, kept,
//! replaced, skipped with a reason, or failed.

use crate::discover::Found;
use kf_runtime::cache::{CACHE_DIR, CacheEntry, ShapeTiming};
use kf_runtime::resolve::{ResolvedKernel, shape_text};
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// One `*.json` file in a crate's cache, with the directory names it sits under.
#[derive(Clone, Debug)]
pub struct CacheFile {
    /// The crate it belongs to.
    pub crate_root: PathBuf,
    /// The file.
    pub path: PathBuf,
    /// `<KERNEL>`.
    pub kernel: String,
    /// `<content-hash>`.
    pub hash: String,
}

/// Every entry file under `crate_root/kernelfoundry/<KERNEL>/<hash>/`, sorted. Directories whose
/// name starts with `_` (the adapters' measured ceilings) are not entries.
pub fn files(crate_root: &Path) -> Vec<CacheFile> {
    let mut out = Vec::new();
    for kernel_dir in sorted_dirs(&crate_root.join(CACHE_DIR)) {
        let kernel = file_name(&kernel_dir);
        if kernel.starts_with('_') {
            continue;
        }
        for hash_dir in sorted_dirs(&kernel_dir) {
            let hash = file_name(&hash_dir);
            let Ok(read) = std::fs::read_dir(&hash_dir) else {
                continue;
            };
            let mut paths: Vec<PathBuf> = read
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "json"))
                .collect();
            paths.sort();
            out.extend(paths.into_iter().map(|path| CacheFile {
                crate_root: crate_root.to_owned(),
                path,
                kernel: kernel.clone(),
                hash: hash.clone(),
            }));
        }
    }
    out
}

fn sorted_dirs(dir: &Path) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = read
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// What the marked kernels say about the entries under `<KERNEL>/<hash>/` of one crate.
enum Owner<'a> {
    /// A kernel with that name has that content hash.
    Matched(&'a ResolvedKernel),
    /// A kernel with that name exists but its spec does not resolve: its hash is unknown.
    Unresolved(String),
    /// Kernels with that name exist, with other content hashes.
    Changed(Vec<String>),
    /// No kernel of that crate has that name.
    NoKernel,
}

fn owner<'a>(found: &'a [Found], crate_root: &Path, kernel: &str, hash: &str) -> Owner<'a> {
    let same: Vec<&Found> = found
        .iter()
        .filter(|f| f.crate_root == crate_root && f.name == kernel)
        .collect();
    if same.is_empty() {
        return Owner::NoKernel;
    }
    if let Some(k) = same
        .iter()
        .find_map(|f| f.resolved.as_ref().ok().filter(|k| k.content_hash == hash))
    {
        return Owner::Matched(k);
    }
    if let Some(error) = same.iter().find_map(|f| f.resolved.as_ref().err()) {
        return Owner::Unresolved(first_line(error));
    }
    Owner::Changed(
        same.iter()
            .filter_map(|f| f.resolved.as_ref().ok().map(|k| k.content_hash.clone()))
            .collect(),
    )
}

fn first_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .to_owned()
}

/// One problem `verify` found.
#[derive(Clone, Debug, Serialize)]
pub struct Problem {
    /// The file.
    pub path: PathBuf,
    /// `corrupt`, `misplaced`, `unmatched`, `unresolved` or `misfit`.
    pub kind: &'static str,
    /// What is wrong.
    pub message: String,
    /// What to do about it.
    pub hint: String,
}

/// What `verify` concluded.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Verification {
    /// Entry files looked at.
    pub checked: usize,
    /// Every problem, in path order.
    pub problems: Vec<Problem>,
}

/// Verifies every entry of the crates at `roots` against the kernels `found` there (see the
/// module docs).
pub fn verify(roots: &[PathBuf], found: &[Found]) -> Verification {
    let mut out = Verification::default();
    for root in roots {
        for file in files(root) {
            out.checked += 1;
            if let Some(p) = verify_file(&file, found) {
                out.problems.push(p);
            }
        }
    }
    out
}

fn verify_file(file: &CacheFile, found: &[Found]) -> Option<Problem> {
    let problem = |kind, message: String, hint: String| Problem {
        path: file.path.clone(),
        kind,
        message,
        hint,
    };
    let tune = format!(
        "`cargo kernelfoundry tune --kernel {}` replaces it",
        file.kernel
    );
    let gc = "`cargo kernelfoundry cache gc` removes it";
    let entry = match std::fs::read_to_string(&file.path)
        .map_err(|e| format!("cannot read it: {e}"))
        .and_then(|text| {
            CacheEntry::parse(&file.path, &text).map_err(|e| {
                e.to_string()
                    .replace(&file.path.display().to_string(), "it")
            })
        }) {
        Ok(entry) => entry,
        Err(message) => {
            let hint = match owner(found, &file.crate_root, &file.kernel, &file.hash) {
                Owner::Matched(_) => format!("delete it, or retune: {tune}"),
                _ => format!("delete it; it matches no marked kernel, so {gc}"),
            };
            return Some(problem("corrupt", message, hint));
        }
    };
    if entry.kernel.name != file.kernel || entry.kernel.content_hash != file.hash {
        return Some(problem(
            "misplaced",
            format!(
                "it records kernel {} with content hash {} but sits under {}/{}/",
                entry.kernel.name, entry.kernel.content_hash, file.kernel, file.hash
            ),
            format!(
                "move it to {CACHE_DIR}/{}/{}/{}.json, or delete it",
                entry.kernel.name, entry.kernel.content_hash, entry.adapter.key
            ),
        ));
    }
    match owner(found, &file.crate_root, &file.kernel, &file.hash) {
        Owner::Matched(kernel) => match kf_runtime::variant::check_entry(kernel, &entry) {
            Ok(()) => None,
            Err(why) => Some(problem(
                "misfit",
                format!("{why}; the build skips it"),
                format!("retune: {tune}"),
            )),
        },
        Owner::Unresolved(error) => Some(problem(
            "unresolved",
            format!(
                "kernel {} does not resolve, so its entries cannot be checked: {error}",
                file.kernel
            ),
            "fix the kernel's attribute (`cargo kernelfoundry list` shows the error)".into(),
        )),
        Owner::Changed(now) => Some(problem(
            "unmatched",
            format!(
                "kernel {} has content hash {} now, not {} (its WGSL, entry point, launch rule or contract changed); the build ignores it",
                file.kernel,
                now.join(" or "),
                file.hash
            ),
            format!(
                "retune with `cargo kernelfoundry tune --kernel {}`; {gc}",
                file.kernel
            ),
        )),
        Owner::NoKernel => Some(problem(
            "unmatched",
            format!(
                "no marked kernel named {} in this crate (renamed or removed?); the build ignores it",
                file.kernel
            ),
            gc.to_owned(),
        )),
    }
}

/// An entry `gc` removes (or would remove), and why.
#[derive(Clone, Debug, Serialize)]
pub struct Removal {
    /// The file.
    pub path: PathBuf,
    /// Why no kernel matches it.
    pub reason: String,
}

/// What `gc` does: the entries to remove, and those it keeps although they look orphaned.
#[derive(Clone, Debug, Default, Serialize)]
pub struct GcPlan {
    /// Entry files looked at.
    pub checked: usize,
    /// Entries under a content hash no marked kernel of that name has.
    pub remove: Vec<Removal>,
    /// Entries kept because their kernel does not resolve (its hash is unknown), with why.
    pub kept: Vec<Removal>,
}

/// The entries of the crates at `roots` that no kernel `found` there matches (see the module
/// docs). Only the directory an entry sits in decides, so a corrupt file under a live hash is
/// left to `verify` and `tune`.
pub fn gc_plan(roots: &[PathBuf], found: &[Found]) -> GcPlan {
    let mut plan = GcPlan::default();
    for root in roots {
        for file in files(root) {
            plan.checked += 1;
            let removal = |reason: String| Removal {
                path: file.path.clone(),
                reason,
            };
            match owner(found, root, &file.kernel, &file.hash) {
                Owner::Matched(_) => {}
                Owner::Unresolved(error) => plan.kept.push(removal(format!(
                    "kernel {} does not resolve, so which entries match it is unknown: {error}",
                    file.kernel
                ))),
                Owner::Changed(now) => plan.remove.push(removal(format!(
                    "kernel {} has content hash {} now, not {}",
                    file.kernel,
                    now.join(" or "),
                    file.hash
                ))),
                Owner::NoKernel => plan.remove.push(removal(format!(
                    "no marked kernel named {} in this crate",
                    file.kernel
                ))),
            }
        }
    }
    plan
}

/// What `merge` did with one file of a source directory.
#[derive(Clone, Debug, Serialize)]
pub struct MergeAction {
    /// The file in the source directory.
    pub source: PathBuf,
    /// Where it belongs in this crate, when that is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dest: Option<PathBuf>,
    /// `added`, `identical`, `replaced` (the incoming entry won), `kept` (the existing one won),
    /// `skipped` (not a cache entry) or `failed` (a cache entry that could not be merged).
    pub action: &'static str,
    /// Why, in one sentence.
    pub message: String,
}

impl MergeAction {
    /// Whether the file is lost to the merge: an entry that could not be merged.
    pub fn failed(&self) -> bool {
        self.action == "failed"
    }
}

/// A package entries may be merged into.
#[derive(Clone, Debug)]
pub struct Destination {
    /// The package name entries record in `kernel.package`.
    pub package: String,
    /// Its crate root.
    pub crate_root: PathBuf,
}

/// The cache directory inside a merge source: `DIR/kernelfoundry/` when there is one (a crate
/// or a checkout), else `DIR` itself.
pub fn source_cache_dir(dir: &Path) -> PathBuf {
    let inner = dir.join(CACHE_DIR);
    if inner.is_dir() {
        inner
    } else {
        dir.to_owned()
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = read.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// Plans and (unless `dry_run`) performs the merge of the cache directories `sources` into the
/// crates `dests` (see the module docs). Entries go to the package they record; with one
/// destination, every entry goes there.
pub fn merge(
    sources: &[PathBuf],
    dests: &[Destination],
    found: &[Found],
    dry_run: bool,
) -> Vec<MergeAction> {
    let mut out = Vec::new();
    for source in sources {
        let cache_dir = source_cache_dir(source);
        let mut paths = Vec::new();
        walk(&cache_dir, &mut paths);
        if paths.is_empty() {
            out.push(MergeAction {
                source: source.clone(),
                dest: None,
                action: "skipped",
                message: "no files in it".into(),
            });
        }
        for path in paths {
            out.push(merge_file(&cache_dir, &path, dests, found, dry_run));
        }
    }
    out
}

fn merge_file(
    cache_dir: &Path,
    path: &Path,
    dests: &[Destination],
    found: &[Found],
    dry_run: bool,
) -> MergeAction {
    let rel = path.strip_prefix(cache_dir).unwrap_or(path);
    let action = |dest: Option<PathBuf>, action, message: String| MergeAction {
        source: path.to_owned(),
        dest,
        action,
        message,
    };
    if rel
        .components()
        .next()
        .is_some_and(|c| c.as_os_str().to_string_lossy().starts_with('_'))
    {
        return action(
            None,
            "skipped",
            "measured adapter ceilings belong to the machine that measured them; not merged".into(),
        );
    }
    if path.extension().is_none_or(|e| e != "json") {
        return action(
            None,
            "skipped",
            "not a cache entry (not a .json file)".into(),
        );
    }
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => return action(None, "failed", format!("cannot read it: {e}")),
    };
    let entry = match CacheEntry::parse(path, &text) {
        Ok(e) => e,
        Err(e) => {
            let message = e.to_string().replace(&path.display().to_string(), "it");
            return action(None, "failed", format!("{message}; not merged"));
        }
    };
    let dest_root = match dests.iter().find(|d| d.package == entry.kernel.package).or(
        if dests.len() == 1 {
            dests.first()
        } else {
            None
        },
    ) {
        Some(d) => d.crate_root.clone(),
        None => {
            return action(
                None,
                "failed",
                format!(
                    "it belongs to package `{}`, which is not among the packages merged into (select it with -p)",
                    entry.kernel.package
                ),
            );
        }
    };
    let dest = CacheEntry::path(
        &dest_root,
        &entry.kernel.name,
        &entry.kernel.content_hash,
        &entry.adapter.key,
    );
    let expected_rel = Path::new(&entry.kernel.name)
        .join(&entry.kernel.content_hash)
        .join(format!("{}.json", entry.adapter.key));
    let placed = if rel == expected_rel {
        String::new()
    } else {
        format!(" (it sat at {}; placed by its contents)", rel.display())
    };
    let kernel = match owner(
        found,
        &dest_root,
        &entry.kernel.name,
        &entry.kernel.content_hash,
    ) {
        Owner::Matched(k) => Some(k),
        _ => None,
    };
    let write = |why: String, kind: &'static str| {
        if dry_run {
            return action(Some(dest.clone()), kind, why);
        }
        match crate::cache::store::write_atomic(&dest, &text) {
            Ok(()) => action(Some(dest.clone()), kind, why),
            Err(e) => action(
                Some(dest.clone()),
                "failed",
                format!("cannot write {}: {e}", dest.display()),
            ),
        }
    };
    let existing_text = match std::fs::read_to_string(&dest) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let note = if kernel.is_some() {
                ""
            } else {
                "; no marked kernel has this content hash, so the build ignores it"
            };
            return write(format!("new entry{placed}{note}"), "added");
        }
        Err(e) => {
            return action(
                Some(dest.clone()),
                "failed",
                format!("cannot read the existing entry: {e}"),
            );
        }
    };
    if existing_text == text {
        return action(
            Some(dest.clone()),
            "identical",
            format!("same bytes{placed}"),
        );
    }
    let existing = match CacheEntry::parse(&dest, &existing_text) {
        Ok(e) => e,
        Err(e) => {
            return write(
                format!(
                    "the existing file is not a usable entry ({}){placed}",
                    e.to_string().replace(&dest.display().to_string(), "it")
                ),
                "replaced",
            );
        }
    };
    let (incoming_wins, why) = judge(&existing, &entry, kernel);
    if incoming_wins {
        write(
            format!("kept the incoming entry: {why}{placed}"),
            "replaced",
        )
    } else {
        action(
            Some(dest.clone()),
            "kept",
            format!("kept the existing entry: {why}{placed}"),
        )
    }
}

/// `v1234abcd (0.47 ms)`.
fn describe(entry: &CacheEntry, ns: Option<f64>) -> String {
    let id = entry.variant.as_ref().map_or("baseline", |v| v.id.as_str());
    match ns {
        Some(ns) => format!("{id}, {}", crate::bench::fmt_ns(ns)),
        None => format!("{id}, {:.2}x", entry.speedup),
    }
}

/// Decides between two entries for one (kernel, content hash, adapter key): whether the incoming
/// one wins, and why (see the module docs). Ties keep the existing entry.
pub fn judge(
    existing: &CacheEntry,
    incoming: &CacheEntry,
    kernel: Option<&ResolvedKernel>,
) -> (bool, String) {
    let adapter = format!(
        "both were measured on adapter key {} ({})",
        existing.adapter.key, existing.adapter.identity.name
    );
    if let Some(k) = kernel {
        match (
            kf_runtime::variant::check_entry(k, existing),
            kf_runtime::variant::check_entry(k, incoming),
        ) {
            (Ok(()), Err(why)) => {
                return (false, format!("the incoming entry fails the check ({why})"));
            }
            (Err(why), Ok(())) => {
                return (true, format!("the existing entry fails the check ({why})"));
            }
            _ => {}
        }
    }
    let shapes = |e: &CacheEntry| -> BTreeSet<String> {
        e.timings.iter().map(|t| shape_text(&t.shape)).collect()
    };
    let common: BTreeSet<String> = shapes(existing)
        .intersection(&shapes(incoming))
        .cloned()
        .collect();
    let sum = |e: &CacheEntry| -> f64 {
        e.timings
            .iter()
            .filter(|t: &&ShapeTiming| common.contains(&shape_text(&t.shape)))
            .map(|t| t.variant_ns)
            .sum()
    };
    if !common.is_empty() {
        let (a, b) = (sum(existing), sum(incoming));
        let shapes: Vec<&str> = common.iter().map(String::as_str).collect();
        let field = format!(
            "compared `timings[].variant_ns` summed over the shapes both timed ({}); {adapter}",
            shapes.join(" ")
        );
        return if b < a {
            (
                true,
                format!(
                    "{} is faster than {}: {field}",
                    describe(incoming, Some(b)),
                    describe(existing, Some(a))
                ),
            )
        } else {
            (
                false,
                format!(
                    "{} is {} {}: {field}",
                    describe(existing, Some(a)),
                    if a == b { "as fast as" } else { "faster than" },
                    describe(incoming, Some(b))
                ),
            )
        };
    }
    let field = format!(
        "they timed no shape in common, so compared `speedup` (each over the baseline timed beside it); {adapter}"
    );
    if incoming.speedup > existing.speedup {
        (
            true,
            format!(
                "{} is faster than {}: {field}",
                describe(incoming, None),
                describe(existing, None)
            ),
        )
    } else {
        (
            false,
            format!(
                "{} is {} {}: {field}",
                describe(existing, None),
                if incoming.speedup == existing.speedup {
                    "as fast as"
                } else {
                    "faster than"
                },
                describe(incoming, None)
            ),
        )
    }
}

mod text;
pub use text::{GcReport, MergeReport};

#[cfg(test)]
mod tests;

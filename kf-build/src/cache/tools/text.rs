//! What `cache verify`, `cache gc` and `cache merge` print: the JSON reports and the plain text,
//! with paths relative to the workspace root.

use super::{GcPlan, MergeAction, Verification};
use serde::Serialize;
use std::path::Path;

/// `path` relative to `root` when it is inside it.
fn rel(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

fn plural(n: usize, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}

impl Verification {
    /// Each problem with its hint, then the count.
    pub fn text(&self, root: &Path) -> String {
        let mut out = String::new();
        for p in &self.problems {
            outln!(out, "{}: {} ({})", rel(root, &p.path), p.message, p.kind);
            outln!(out, "    hint: {}", p.hint);
        }
        outln!(
            out,
            "{} {} checked, {} {}",
            self.checked,
            plural(self.checked, "entry", "entries"),
            self.problems.len(),
            plural(self.problems.len(), "problem", "problems")
        );
        out
    }
}

/// The `cache gc --json` report.
#[derive(Serialize)]
pub struct GcReport {
    /// Nothing was removed.
    pub dry_run: bool,
    /// What was (or would be) removed and kept.
    #[serde(flatten)]
    pub plan: GcPlan,
}

impl GcReport {
    /// Each file removed (or that would be) and kept, with its reason, then the counts.
    pub fn text(&self, root: &Path) -> String {
        let mut out = String::new();
        let plan = &self.plan;
        let verb = if self.dry_run {
            "would remove"
        } else {
            "removed"
        };
        for r in &plan.remove {
            outln!(out, "{verb} {}: {}", rel(root, &r.path), r.reason);
        }
        for k in &plan.kept {
            outln!(out, "kept {}: {}", rel(root, &k.path), k.reason);
        }
        outln!(
            out,
            "{} {} checked, {verb} {}",
            plan.checked,
            plural(plan.checked, "entry", "entries"),
            plan.remove.len()
        );
        out
    }
}

/// The `cache merge --json` report.
#[derive(Serialize)]
pub struct MergeReport<'a> {
    /// Nothing was written.
    pub dry_run: bool,
    /// Every file read, and what became of it.
    pub files: &'a [MergeAction],
}

impl MergeReport<'_> {
    /// Each file read and what became of it, then the counts.
    pub fn text(&self, root: &Path) -> String {
        let mut out = String::new();
        for a in self.files {
            let target = a
                .dest
                .as_ref()
                .map(|d| format!(" → {}", rel(root, d)))
                .unwrap_or_default();
            outln!(
                out,
                "{}: {}{target}: {}",
                a.action,
                a.source.display(),
                a.message
            );
        }
        let count = |kind: &str| self.files.iter().filter(|a| a.action == kind).count();
        outln!(
            out,
            "{}{} added, {} replaced, {} kept, {} identical, {} skipped, {} failed",
            if self.dry_run { "dry run: " } else { "" },
            count("added"),
            count("replaced"),
            count("kept"),
            count("identical"),
            count("skipped"),
            count("failed")
        );
        out
    }
}

//! What `cargo kernelfoundry list` shows: each marked kernel, its resolved spec, and the state of
//! its cache entry on each adapter ([`super::store::entry_state`], the judgement `tune` acts on).

use super::store::EntryState;
use crate::discover::Found;
use crate::gpu::AdapterReport;
use kf_runtime::cache::CACHE_DIR;
use kf_runtime::resolve::{ResolvedKernel, shape_text};
use serde::Serialize;
use std::path::Path;

#[derive(Serialize)]
pub struct CacheStatus {
    pub adapter_index: usize,
    pub adapter: String,
    pub adapter_key: String,
    /// `tuned`, `baseline-best`, `stale` (valid and used, but tuned with other settings than the
    /// spec's today), `broken` (the build skips it) or `not-tuned`.
    pub status: String,
    /// For `stale`: what changed since it was tuned.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stale: Vec<String>,
    /// For `broken`: why the build skips it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speedup: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

#[derive(Serialize)]
pub struct KernelInfo {
    pub package: String,
    pub name: String,
    pub file: String,
    pub line: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_hash: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spec: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The hand-written `reference(..)`, summarised, when the spec names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// Why a build of the selected features does not compile the kernel; it is not tuned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    pub cache: Vec<CacheStatus>,
    /// Entries under other content hashes: tuned for another version of the kernel (its WGSL, entry
    /// point, launch rule or contract differed). The build ignores them.
    pub unmatched_entries: usize,
}

#[derive(Serialize)]
pub struct Report {
    pub kernels: Vec<KernelInfo>,
    pub adapters: Vec<AdapterReport>,
}

/// One line summarising a resolved spec.
pub fn summary(k: &ResolvedKernel) -> String {
    let bindings: Vec<String> = k
        .buffers
        .iter()
        .map(|b| match (&b.len, b.values.is_empty()) {
            (Some(len), _) => format!("{}={}({len})", b.binding.name, b.role),
            (None, false) => format!(
                "{}={}({})",
                b.binding.name,
                b.role,
                b.values
                    .iter()
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            (None, true) => format!("{}={}", b.binding.name, b.role),
        })
        .collect();
    let [x, y, z] = k.interface.workgroup_size;
    format!(
        "entry {}, workgroup {x}x{y}x{z}, {}, bind({}), tune on {}, verify on {}",
        k.interface.entry,
        k.baseline.launch_rule(),
        bindings.join(", "),
        k.tune_shapes
            .iter()
            .map(shape_text)
            .collect::<Vec<_>>()
            .join(" "),
        k.verify_shapes
            .iter()
            .map(shape_text)
            .collect::<Vec<_>>()
            .join(" "),
    )
}

fn unmatched_entries(crate_root: &std::path::Path, name: &str, hash: Option<&str>) -> usize {
    let dir = crate_root.join(CACHE_DIR).join(name);
    let Ok(hashes) = std::fs::read_dir(dir) else {
        return 0;
    };
    hashes
        .flatten()
        .filter(|h| Some(h.file_name().to_string_lossy().as_ref()) != hash)
        .map(|h| std::fs::read_dir(h.path()).map(|d| d.count()).unwrap_or(0))
        .sum()
}

/// A resolve error as `list` prints it: `error: ` before each error, and the lines that belong to
/// the one above it (a WGSL diagnostic's span, an `= help:` line) indented beneath it, so a
/// diagnostic that carries its own span is not prefixed twice.
fn error_lines(error: &str) -> String {
    let mut out = String::new();
    for line in error.lines() {
        let continues = line.starts_with(char::is_whitespace)
            || line.is_empty()
            || line.contains('│')
            || line.contains('┌');
        if continues {
            out.push_str(&format!("           {line}\n"));
        } else {
            out.push_str(&format!("    error: {line}\n"));
        }
    }
    out
}

/// The kernels of `found` with their cache state on each of `adapters`; files are shown relative
/// to `workspace_root`.
pub fn list(workspace_root: &Path, found: &[Found], adapters: Vec<AdapterReport>) -> Report {
    let mut kernels = Vec::new();
    for f in found {
        let (kernel, spec, error) = match (&f.resolved, &f.skipped) {
            (_, Some(_)) => (None, None, None),
            (Ok(k), None) => (Some(k), Some(summary(k)), None),
            (Err(e), None) => (None, None, Some(e.clone())),
        };
        let reference = kernel.and_then(|k| k.reference.as_ref()).map(|p| {
            let [x, y, z] = p.workgroup_size;
            format!("entry `{}`, workgroup {x}x{y}x{z}, {}", p.entry, p.dispatch)
        });
        let hash = kernel.map(|k| k.content_hash.clone());
        let cache = match kernel {
            None => Vec::new(),
            Some(kernel) => adapters
                .iter()
                .map(|a| {
                    let state = super::store::entry_state(&f.crate_root, kernel, &a.key, None);
                    let rel = |path: &std::path::Path| {
                        path.strip_prefix(&f.crate_root)
                            .unwrap_or(path)
                            .display()
                            .to_string()
                    };
                    let mut status = CacheStatus {
                        adapter_index: a.index,
                        adapter: format!("{} ({})", a.identity.name, a.identity.backend),
                        adapter_key: a.key.to_string(),
                        status: state.status().to_owned(),
                        stale: Vec::new(),
                        error: None,
                        variant: None,
                        speedup: None,
                        file: None,
                    };
                    match state {
                        EntryState::Missing => {}
                        EntryState::Broken { path, error } => {
                            status.file = Some(rel(&path));
                            status.error = Some(error);
                        }
                        EntryState::Fresh { path, entry } => {
                            status.file = Some(rel(&path));
                            status.variant = entry.variant.map(|v| v.id);
                            status.speedup = Some(entry.speedup);
                        }
                        EntryState::Stale { path, entry, why } => {
                            status.file = Some(rel(&path));
                            status.variant = entry.variant.map(|v| v.id);
                            status.speedup = Some(entry.speedup);
                            status.stale = why;
                        }
                    }
                    status
                })
                .collect(),
        };
        kernels.push(KernelInfo {
            package: f.package.clone(),
            name: f.name.clone(),
            file: f
                .file
                .strip_prefix(workspace_root)
                .unwrap_or(&f.file)
                .display()
                .to_string(),
            line: f.line,
            unmatched_entries: unmatched_entries(&f.crate_root, &f.name, hash.as_deref()),
            content_hash: hash,
            spec,
            error,
            reference,
            skipped: f.skipped.clone(),
            cache,
        });
    }
    Report { kernels, adapters }
}

impl Report {
    /// The human listing; `workspace_root` names the workspace when it has no kernel.
    pub fn text(&self, workspace_root: &Path) -> String {
        let mut out = String::new();
        if self.kernels.is_empty() {
            outln!(
                out,
                "no #[kernelfoundry] kernels in {}",
                workspace_root.display()
            );
        }
        for k in &self.kernels {
            outln!(out, "{} ({}) {}:{}", k.name, k.package, k.file, k.line);
            if let Some(s) = &k.spec {
                outln!(out, "    {s}");
            }
            if let Some(e) = &k.error {
                out.push_str(&error_lines(e));
            }
            if let Some(r) = &k.reference {
                outln!(out, "    reference: {r}");
            }
            if let Some(why) = &k.skipped {
                outln!(out, "    skipped (not compiled): {why}");
            }
            for c in &k.cache {
                let detail = match (&c.variant, c.speedup) {
                    (Some(v), Some(s)) => format!(" {v} {s:.2}x"),
                    (None, Some(_)) => " (baseline)".to_owned(),
                    _ => String::new(),
                };
                outln!(
                    out,
                    "    [{}] {}: {}{detail}",
                    c.adapter_index,
                    c.adapter,
                    c.status
                );
                for why in &c.stale {
                    outln!(
                        out,
                        "        stale: {why}; `cargo kernelfoundry tune` retunes it"
                    );
                }
                if let Some(e) = &c.error {
                    outln!(
                        out,
                        "        broken: {e}; the build skips it and `cargo kernelfoundry tune` replaces it"
                    );
                }
            }
            if k.unmatched_entries > 0 {
                outln!(
                    out,
                    "    {} {} for other versions of this kernel (another WGSL, launch rule or contract; the build ignores {})",
                    k.unmatched_entries,
                    if k.unmatched_entries == 1 {
                        "entry"
                    } else {
                        "entries"
                    },
                    if k.unmatched_entries == 1 {
                        "it"
                    } else {
                        "them"
                    }
                );
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::error_lines;

    #[test]
    fn a_wgsl_diagnostic_is_prefixed_once_and_keeps_its_span() {
        let error = "src/main.rs:3:24: invalid WGSL in k.wgsl: expected `;`, found \"}\"\n  ┌─ k.wgsl:5:1\n  │\n5 │ }\n  │ ^ expected `;`\n\nsrc/main.rs:4:1: size `m` is not declared in `sizes(..)`\n  = help: declare it";
        let printed = error_lines(error);
        assert_eq!(printed.matches("error:").count(), 2, "{printed}");
        assert!(!printed.contains("error: error"), "{printed}");
        assert!(printed.contains("  ┌─ k.wgsl:5:1"), "{printed}");
        assert!(
            printed.contains("    error: src/main.rs:4:1: size `m`"),
            "{printed}"
        );
        assert!(
            printed.contains("             = help: declare it"),
            "{printed}"
        );
    }
}

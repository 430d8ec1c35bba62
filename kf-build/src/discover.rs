//! Finding marked kernels: cargo_metadata for the packages, syn for the attributes.
//!
//! The tuner reads the same attribute the macro expands, with the same parser and the same
//! resolution against the WGSL, so a kernel that compiles is a kernel that can be tuned, and a spec
//! error is reported here with the file and line the compiler would show.
//!
//! Invariant: discovery only reads files; a file that does not parse or a spec that does not
//! resolve is reported per kernel, never aborts the others.

use kf_runtime::resolve::{self, ResolveError, ResolvedKernel};
use kf_runtime::spec::{Loc, SourceRef, Spec};
use kf_runtime::syntax::{self, SpecSpans};
use std::path::{Path, PathBuf};
use syn::parse::{Parse, ParseStream};

/// Why the workspace could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DiscoverError {
    /// `cargo metadata` failed.
    #[error("cannot read the cargo workspace: {0}")]
    Metadata(String),
    /// `-p` named a package that is not a workspace member.
    #[error("package `{name}` is not a member of the workspace at {root}; members: {members}")]
    UnknownPackage {
        /// The name given.
        name: String,
        /// The workspace root.
        root: String,
        /// Member names.
        members: String,
    },
}

/// A workspace member.
#[derive(Clone, Debug)]
pub struct Package {
    /// Package name.
    pub name: String,
    /// Directory of its Cargo.toml (the crate root; caches live here).
    pub root: PathBuf,
    /// Directories holding its targets' sources.
    pub source_dirs: Vec<PathBuf>,
}

/// The workspace.
#[derive(Clone, Debug)]
pub struct Workspace {
    /// Workspace root directory.
    pub root: PathBuf,
    /// Members, in cargo's order.
    pub packages: Vec<Package>,
    /// The package whose manifest was named (or that contains the current directory), as cargo
    /// would pick it; `None` for a virtual workspace root.
    pub current: Option<String>,
    /// The target directory (cargo's, or `CARGO_TARGET_DIR`, or `<root>/target`): run
    /// directories of `tune` live under it.
    pub target_dir: PathBuf,
}

/// Reads the workspace of `manifest_path` (or of the current directory).
pub fn workspace(manifest_path: Option<&Path>) -> Result<Workspace, DiscoverError> {
    let mut cmd = cargo_metadata::MetadataCommand::new();
    cmd.no_deps();
    if let Some(p) = manifest_path {
        cmd.manifest_path(p);
    }
    let meta = match cmd.exec() {
        Ok(meta) => meta,
        // No cargo on this machine (a GPU box without a Rust toolchain): read the manifest itself.
        Err(cargo_metadata::Error::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            log::info!("cargo not found; reading the manifest directly");
            return manifest_only(manifest_path);
        }
        Err(e) => return Err(DiscoverError::Metadata(e.to_string())),
    };
    // The package cargo would default to: the one whose manifest was given, or the nearest one
    // above the current directory.
    let wanted = match manifest_path {
        Some(p) => std::fs::canonicalize(p).ok(),
        None => std::env::current_dir().ok().and_then(|mut dir| {
            loop {
                let candidate = dir.join("Cargo.toml");
                if candidate.is_file() {
                    break std::fs::canonicalize(candidate).ok();
                }
                if !dir.pop() {
                    break None;
                }
            }
        }),
    };
    let current = meta
        .packages
        .iter()
        .filter(|p| meta.workspace_members.contains(&p.id))
        .find(|p| std::fs::canonicalize(&p.manifest_path).ok() == wanted && wanted.is_some())
        .map(|p| p.name.to_string());
    let members: Vec<&cargo_metadata::PackageId> = meta.workspace_members.iter().collect();
    let packages = meta
        .packages
        .iter()
        .filter(|p| members.contains(&&p.id))
        .map(|p| {
            let root = p
                .manifest_path
                .parent()
                .map(|d| d.as_std_path().to_path_buf())
                .unwrap_or_default();
            let mut source_dirs: Vec<PathBuf> = p
                .targets
                .iter()
                .filter_map(|t| t.src_path.parent().map(|d| d.as_std_path().to_path_buf()))
                .collect();
            source_dirs.sort();
            source_dirs.dedup();
            // Keep only outermost directories (src/ covers src/bin/).
            let dirs = source_dirs.clone();
            source_dirs.retain(|d| !dirs.iter().any(|o| o != d && d.starts_with(o)));
            Package {
                name: p.name.to_string(),
                root,
                source_dirs,
            }
        })
        .collect();
    Ok(Workspace {
        root: meta.workspace_root.as_std_path().to_path_buf(),
        packages,
        current,
        target_dir: meta.target_directory.as_std_path().to_path_buf(),
    })
}

/// The workspace as far as the manifest alone tells: for machines without cargo. Packages are
/// the manifest's `[package]` and its `[workspace] members` (with `dir/*` globs); sources are
/// read from their `src`, `examples`, `tests` and `benches` directories.
fn manifest_only(manifest_path: Option<&Path>) -> Result<Workspace, DiscoverError> {
    let manifest = match manifest_path {
        Some(p) => p.to_path_buf(),
        None => std::env::current_dir()
            .map_err(|e| DiscoverError::Metadata(e.to_string()))?
            .join("Cargo.toml"),
    };
    let read = |path: &Path| -> Result<toml::Table, DiscoverError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| DiscoverError::Metadata(format!("cannot read {}: {e}", path.display())))?;
        text.parse::<toml::Table>()
            .map_err(|e| DiscoverError::Metadata(format!("{}: {e}", path.display())))
    };
    let manifest = std::fs::canonicalize(&manifest).unwrap_or(manifest);
    let root = manifest
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let table = read(&manifest)?;
    let package = |dir: &Path, table: &toml::Table| -> Option<Package> {
        let name = table.get("package")?.get("name")?.as_str()?.to_owned();
        let source_dirs = ["src", "examples", "tests", "benches"]
            .iter()
            .map(|d| dir.join(d))
            .filter(|d| d.is_dir())
            .collect();
        Some(Package {
            name,
            root: dir.to_path_buf(),
            source_dirs,
        })
    };
    let mut packages: Vec<Package> = package(&root, &table).into_iter().collect();
    let current = packages.first().map(|p| p.name.clone());
    // A member package: its workspace is the nearest ancestor manifest with a `[workspace]`.
    if !table.contains_key("workspace") {
        let mut dir = root.clone();
        while dir.pop() {
            if let Ok(t) = read(&dir.join("Cargo.toml"))
                && t.contains_key("workspace")
            {
                return Ok(Workspace {
                    target_dir: default_target_dir(&dir),
                    root: dir,
                    packages,
                    current,
                });
            }
        }
    }
    let members = table
        .get("workspace")
        .and_then(|w| w.get("members"))
        .and_then(|m| m.as_array())
        .cloned()
        .unwrap_or_default();
    for member in members.iter().filter_map(|m| m.as_str()) {
        let dirs: Vec<PathBuf> = match member.strip_suffix("/*") {
            Some(parent) => std::fs::read_dir(root.join(parent))
                .map(|d| d.flatten().map(|e| e.path()).collect())
                .unwrap_or_default(),
            None => vec![root.join(member)],
        };
        for dir in dirs {
            if let Ok(t) = read(&dir.join("Cargo.toml"))
                && let Some(p) = package(&dir, &t)
            {
                packages.push(p);
            }
        }
    }
    Ok(Workspace {
        target_dir: default_target_dir(&root),
        root,
        packages,
        current,
    })
}

/// `CARGO_TARGET_DIR`, else `<root>/target`: where cargo would put it without a config file.
fn default_target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|d| if d.is_absolute() { d } else { root.join(d) })
        .unwrap_or_else(|| root.join("target"))
}

impl Workspace {
    /// The members named by `-p`; without names, the current package (like cargo), or every
    /// member for a virtual workspace or with `all`.
    pub fn select(&self, names: &[String], all: bool) -> Result<Vec<&Package>, DiscoverError> {
        if names.is_empty() {
            return Ok(match (&self.current, all) {
                (Some(current), false) => self
                    .packages
                    .iter()
                    .filter(|p| p.name == *current)
                    .collect(),
                _ => self.packages.iter().collect(),
            });
        }
        names
            .iter()
            .map(|n| {
                self.packages.iter().find(|p| p.name == *n).ok_or_else(|| {
                    DiscoverError::UnknownPackage {
                        name: n.clone(),
                        root: self.root.display().to_string(),
                        members: self
                            .packages
                            .iter()
                            .map(|p| p.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", "),
                    }
                })
            })
            .collect()
    }
}

/// A marked kernel found in a source file.
#[derive(Clone, Debug)]
pub struct Found {
    /// The package.
    pub package: String,
    /// The package root.
    pub crate_root: PathBuf,
    /// The static's name.
    pub name: String,
    /// The source file.
    pub file: PathBuf,
    /// 1-based line of the attribute.
    pub line: usize,
    /// The parsed spec, or why it does not parse.
    pub spec: Option<Spec>,
    /// The resolved kernel, or a compiler-style error message.
    pub resolved: Result<ResolvedKernel, String>,
}

impl Found {
    /// `src/kernels.rs:12`, relative to the crate root when possible.
    pub fn location(&self) -> String {
        let rel = self
            .file
            .strip_prefix(&self.crate_root)
            .unwrap_or(&self.file);
        format!("{}:{}", rel.display(), self.line)
    }
}

/// Every marked kernel in `packages`, in file order.
pub fn kernels(packages: &[&Package]) -> Vec<Found> {
    let mut out = Vec::new();
    for package in packages {
        let mut files = Vec::new();
        for dir in &package.source_dirs {
            rust_files(dir, &mut files);
        }
        files.sort();
        files.dedup();
        for file in files {
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            if !text.contains("kernelfoundry") {
                continue;
            }
            let Ok(parsed) = syn::parse_file(&text) else {
                continue;
            };
            visit_items(&parsed.items, package, &file, &mut out);
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if path.is_dir() {
            if name.starts_with('.') || name == "target" || path.join("Cargo.toml").exists() {
                continue;
            }
            rust_files(&path, out);
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

/// `#[attrs] vis static NAME: Ty;` as syn leaves it (a verbatim item).
struct BodylessStatic {
    attrs: Vec<syn::Attribute>,
    ident: syn::Ident,
}

impl Parse for BodylessStatic {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let attrs = input.call(syn::Attribute::parse_outer)?;
        let _: syn::Visibility = input.parse()?;
        input.parse::<syn::Token![static]>()?;
        let ident = input.parse()?;
        input.parse::<syn::Token![:]>()?;
        let _: syn::Type = input.parse()?;
        input.parse::<syn::Token![;]>()?;
        Ok(BodylessStatic { attrs, ident })
    }
}

fn visit_items(items: &[syn::Item], package: &Package, file: &Path, out: &mut Vec<Found>) {
    for item in items {
        match item {
            syn::Item::Verbatim(tokens) => {
                if let Ok(s) = syn::parse2::<BodylessStatic>(tokens.clone()) {
                    for attr in &s.attrs {
                        if attr
                            .path()
                            .segments
                            .last()
                            .is_some_and(|seg| seg.ident == "kernelfoundry")
                        {
                            out.push(found(attr, &s.ident, package, file));
                        }
                    }
                }
            }
            syn::Item::Mod(m) => {
                if let Some((_, items)) = &m.content {
                    visit_items(items, package, file, out);
                }
            }
            _ => {}
        }
    }
}

fn found(attr: &syn::Attribute, ident: &syn::Ident, package: &Package, file: &Path) -> Found {
    let line = attr.pound_token.span.start().line;
    let name = ident.to_string();
    let mut result = Found {
        package: package.name.clone(),
        crate_root: package.root.clone(),
        name: name.clone(),
        file: file.to_owned(),
        line,
        spec: None,
        resolved: Err(String::new()),
    };
    let tokens = match &attr.meta {
        syn::Meta::List(list) => list.tokens.clone(),
        _ => {
            result.resolved = Err(format!(
                "{}: `#[kernelfoundry]` needs arguments",
                result.location()
            ));
            return result;
        }
    };
    let (spec, spans) = match syntax::parse_spec(tokens) {
        Ok(parsed) => parsed,
        Err(e) => {
            result.resolved = Err(syn_error(file, &package.root, &e));
            return result;
        }
    };
    result.spec = Some(spec.clone());
    result.resolved = resolve_spec(&name, &spec, &spans, &package.root, file);
    result
}

fn at(file: &Path, root: &Path, span: proc_macro2::Span) -> String {
    let rel = file.strip_prefix(root).unwrap_or(file);
    let start = span.start();
    format!("{}:{}:{}", rel.display(), start.line, start.column + 1)
}

fn syn_error(file: &Path, root: &Path, e: &syn::Error) -> String {
    e.clone()
        .into_iter()
        .map(|e| format!("{}: {}", at(file, root, e.span()), e))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Reads the WGSL and resolves the spec, formatting errors like the compiler would.
fn resolve_spec(
    name: &str,
    spec: &Spec,
    spans: &SpecSpans,
    root: &Path,
    file: &Path,
) -> Result<ResolvedKernel, String> {
    let (wgsl, label) = match &spec.source {
        SourceRef::Path(rel) => match std::fs::read_to_string(root.join(rel)) {
            Ok(text) => (text, rel.clone()),
            Err(e) => {
                return Err(format!(
                    "{}: cannot read WGSL file `{rel}`: {e} (paths are relative to the crate root)",
                    at(file, root, spans.span(Loc::Source))
                ));
            }
        },
        SourceRef::Inline(text) => (text.clone(), format!("<inline WGSL of {name}>")),
    };
    let spec_error = |e: ResolveError| match e {
        ResolveError::Spec(errors) => errors
            .iter()
            .map(|e| {
                let span = e
                    .culprit
                    .as_deref()
                    .and_then(|n| spans.name_span(e.loc, n))
                    .unwrap_or_else(|| spans.span(e.loc));
                let mut s = format!("{}: {}", at(file, root, span), e.message);
                if let Some(h) = &e.hint {
                    s.push_str(&format!("\n  = help: {h}"));
                }
                s
            })
            .collect::<Vec<_>>()
            .join("\n"),
        other => format!(
            "{}: invalid WGSL:\n{other}",
            at(file, root, spans.span(Loc::Source))
        ),
    };
    let mut kernel = resolve::resolve(name, spec, &wgsl, &label).map_err(spec_error)?;
    if let Some(reference) = &spec.reference {
        let (text, label) = match &reference.source {
            SourceRef::Path(rel) => match std::fs::read_to_string(root.join(rel)) {
                Ok(text) => (text, rel.clone()),
                Err(e) => {
                    return Err(format!(
                        "{}: cannot read the reference's WGSL file `{rel}`: {e} (paths are relative to the crate root)",
                        at(file, root, spans.span(Loc::Reference))
                    ));
                }
            },
            SourceRef::Inline(text) => (text.clone(), format!("<inline reference of {name}>")),
        };
        kernel.reference = Some(
            resolve::resolve_reference(&kernel, reference, &text, &label).map_err(spec_error)?,
        );
    }
    Ok(kernel)
}

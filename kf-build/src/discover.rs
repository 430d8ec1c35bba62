//! Finding marked kernels: cargo_metadata for the packages, syn for the attributes.
//!
//! The tuner reads the same attribute the macro expands, with the same parser and the same
//! resolution against the WGSL, so a kernel that compiles is a kernel that can be tuned, and a spec
//! error is reported here with the file and line the compiler would show.
//!
//! Kernels in items a build of the selected features would not compile (`#[cfg(..)]` on the item,
//! on an enclosing module, or on the `mod` declaration of its file) are found but skipped, with the
//! reason; see `cfg` for how predicates are evaluated.
//!
//! Invariant: discovery only reads files; a file that does not parse or a spec that does not
//! resolve is reported per kernel, never aborts the others.

mod cfg;
pub mod select;

pub use cfg::{Cfg, FeatureSelection};

use kf_runtime::resolve::{self, ReflectError, ResolveError, ResolvedKernel};
use kf_runtime::spec::{Loc, SourceRef, Spec};
use kf_runtime::syntax::{self, SpecSpans};
use std::collections::{BTreeMap, BTreeSet, HashMap};
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
    /// `--features` named a feature no selected package has.
    #[error("{0}")]
    Features(String),
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
    /// Its feature table (`[features]`, plus the implicit feature of each optional dependency).
    pub features: BTreeMap<String, Vec<String>>,
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
                features: p.features.clone(),
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
            features: feature_table(table),
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

/// A manifest's feature table as `cargo metadata` reports it: `[features]`, plus an implicit
/// feature for each optional dependency that no feature names with `dep:`.
fn feature_table(manifest: &toml::Table) -> BTreeMap<String, Vec<String>> {
    let strings = |v: &toml::Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut table: BTreeMap<String, Vec<String>> = manifest
        .get("features")
        .and_then(|f| f.as_table())
        .map(|t| t.iter().map(|(k, v)| (k.clone(), strings(v))).collect())
        .unwrap_or_default();
    let named_with_dep: BTreeSet<String> = table
        .values()
        .flatten()
        .filter_map(|v| v.strip_prefix("dep:").map(str::to_owned))
        .collect();
    let mut dep_tables: Vec<&toml::Table> = Vec::new();
    for key in ["dependencies", "build-dependencies", "dev-dependencies"] {
        dep_tables.extend(manifest.get(key).and_then(|d| d.as_table()));
    }
    if let Some(targets) = manifest.get("target").and_then(|t| t.as_table()) {
        for target in targets.values() {
            dep_tables.extend(target.get("dependencies").and_then(|d| d.as_table()));
        }
    }
    for deps in dep_tables {
        for (name, dep) in deps {
            let optional = dep.get("optional").and_then(|o| o.as_bool()) == Some(true);
            if optional && !named_with_dep.contains(name) && !table.contains_key(name) {
                table.insert(name.clone(), vec![format!("dep:{name}")]);
            }
        }
    }
    table
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
    /// Why a build of the selected features does not compile this kernel, when it does not
    /// (e.g. ``#[cfg(feature = "gpu")]` is off``); such a kernel is listed but never tuned.
    pub skipped: Option<String>,
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

/// Every marked kernel in `packages`, in file order, with the kernels a build of the selected
/// features would not compile marked as skipped.
pub fn kernels(
    packages: &[&Package],
    features: &FeatureSelection,
) -> Result<Vec<Found>, DiscoverError> {
    let tables: Vec<(&str, &BTreeMap<String, Vec<String>>)> = packages
        .iter()
        .map(|p| (p.name.as_str(), &p.features))
        .collect();
    let enabled = features.resolve(&tables).map_err(DiscoverError::Features)?;
    let mut out = Vec::new();
    for (package, enabled) in packages.iter().zip(&enabled) {
        kernels_of(package, enabled, &mut out);
    }
    Ok(out)
}

/// A file's parsed items, and where its `mod name;` declarations point.
struct SourceFile {
    /// The path as found under the package's source directories.
    path: PathBuf,
    items: Vec<syn::Item>,
    /// Whether the text mentions the attribute at all.
    has_kernels: bool,
    /// `(target file, gate of the declaration)` for each `mod name;` whose file was found.
    modules: Vec<(PathBuf, Cfg)>,
}

/// The key files are matched by: canonical where possible (`#[path = "../x.rs"]`, symlinks).
fn file_key(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned())
}

fn kernels_of(package: &Package, enabled: &BTreeSet<String>, out: &mut Vec<Found>) {
    let mut files = Vec::new();
    for dir in &package.source_dirs {
        rust_files(dir, &mut files);
    }
    files.sort();
    files.dedup();
    let mut problems = Vec::new();
    let mut parsed: BTreeMap<PathBuf, SourceFile> = BTreeMap::new();
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        let has_kernels = text.contains("kernelfoundry");
        if !has_kernels && !text.contains("mod ") {
            continue;
        }
        let Ok(syntax) = syn::parse_file(&text) else {
            continue;
        };
        let mut modules = Vec::new();
        module_decls(
            &syntax.items,
            file,
            &[],
            &Cfg::yes(),
            &mut modules,
            &mut problems,
        );
        parsed.insert(
            file_key(file),
            SourceFile {
                path: file.clone(),
                items: syntax.items,
                has_kernels,
                modules,
            },
        );
    }
    // A file is compiled when some `mod` declaration that loads it is (or when none names it:
    // crate roots, and files discovery cannot place).
    let mut declared: HashMap<PathBuf, Vec<(PathBuf, Cfg)>> = HashMap::new();
    for (key, source) in &parsed {
        for (target, gate) in &source.modules {
            declared
                .entry(target.clone())
                .or_default()
                .push((key.clone(), gate.clone()));
        }
    }
    let mut file_gates: HashMap<PathBuf, Cfg> = HashMap::new();
    for (key, source) in &parsed {
        if !source.has_kernels {
            continue;
        }
        let gate = file_gate(key, &declared, &mut file_gates, &mut Vec::new());
        visit_items(
            &source.items,
            package,
            &source.path,
            &gate,
            enabled,
            out,
            &mut problems,
        );
    }
    for p in problems {
        log::warn!("{}: {p}", package.name);
    }
}

/// The condition under which `file` is compiled, through the `mod` declarations that load it.
fn file_gate(
    file: &Path,
    declared: &HashMap<PathBuf, Vec<(PathBuf, Cfg)>>,
    memo: &mut HashMap<PathBuf, Cfg>,
    visiting: &mut Vec<PathBuf>,
) -> Cfg {
    if let Some(g) = memo.get(file) {
        return g.clone();
    }
    let Some(decls) = declared.get(file) else {
        return Cfg::yes();
    };
    if visiting.iter().any(|v| v == file) {
        return Cfg::yes();
    }
    visiting.push(file.to_owned());
    let alternatives: Vec<Cfg> = decls
        .iter()
        .map(|(parent, gate)| {
            let parent_gate = file_gate(parent, declared, memo, visiting);
            cfg::simplify(Cfg::All(vec![parent_gate, gate.clone()]))
        })
        .collect();
    visiting.pop();
    let gate = cfg::simplify(Cfg::Any(alternatives));
    memo.insert(file.to_owned(), gate.clone());
    gate
}

/// Collects `mod name;` declarations in `items` (inside the inline modules `inline` of `file`)
/// with their gates, resolved to files that exist.
fn module_decls(
    items: &[syn::Item],
    file: &Path,
    inline: &[String],
    outer: &Cfg,
    out: &mut Vec<(PathBuf, Cfg)>,
    problems: &mut Vec<String>,
) {
    for item in items {
        let syn::Item::Mod(m) = item else { continue };
        let gate = cfg::simplify(Cfg::All(vec![outer.clone(), cfg::gate(&m.attrs, problems)]));
        match &m.content {
            Some((_, inner)) => {
                let mut path = inline.to_vec();
                path.push(m.ident.to_string());
                module_decls(inner, file, &path, &gate, out, problems);
            }
            None => {
                if let Some(target) = module_file(file, inline, &m.ident.to_string(), &m.attrs) {
                    out.push((target, gate));
                }
            }
        }
    }
}

/// The file `mod name;` loads when declared in `file` inside the inline modules `inline`: rustc's
/// rules for `name.rs`, `name/mod.rs` and `#[path = ".."]`, trying both the directory of a
/// `mod.rs`-style file and of a `name.rs`-style file (discovery does not know which files are
/// crate roots).
fn module_file(
    file: &Path,
    inline: &[String],
    name: &str,
    attrs: &[syn::Attribute],
) -> Option<PathBuf> {
    let dir = file.parent()?;
    let stem = file.file_stem()?.to_string_lossy().to_string();
    let mut bases = vec![dir.to_path_buf()];
    if !matches!(stem.as_str(), "lib" | "main" | "mod") {
        bases.push(dir.join(&stem));
    }
    let explicit = attrs.iter().find_map(|a| match &a.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    });
    let mut candidates = Vec::new();
    for base in &bases {
        let base = inline.iter().fold(base.clone(), |b, m| b.join(m));
        match &explicit {
            Some(p) if inline.is_empty() => candidates.push(dir.join(p)),
            Some(p) => candidates.push(base.join(p)),
            None => {
                candidates.push(base.join(format!("{name}.rs")));
                candidates.push(base.join(name).join("mod.rs"));
            }
        }
    }
    candidates
        .into_iter()
        .find(|c| c.is_file())
        .map(|c| file_key(&c))
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

fn visit_items(
    items: &[syn::Item],
    package: &Package,
    file: &Path,
    outer: &Cfg,
    enabled: &BTreeSet<String>,
    out: &mut Vec<Found>,
    problems: &mut Vec<String>,
) {
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
                            let gate = cfg::simplify(Cfg::All(vec![
                                outer.clone(),
                                cfg::gate(&s.attrs, problems),
                            ]));
                            let mut f = found(attr, &s.ident, package, file);
                            if !gate.compiled(enabled) {
                                f.skipped = Some(skip_reason(&gate, enabled));
                            }
                            out.push(f);
                        }
                    }
                }
            }
            syn::Item::Mod(m) => {
                if let Some((_, items)) = &m.content {
                    let gate =
                        cfg::simplify(Cfg::All(vec![outer.clone(), cfg::gate(&m.attrs, problems)]));
                    visit_items(items, package, file, &gate, enabled, out, problems);
                }
            }
            _ => {}
        }
    }
}

/// ``cfg(feature = "simd")` is off with the selected features (default, gpu)`.
fn skip_reason(gate: &Cfg, enabled: &BTreeSet<String>) -> String {
    // Name the conditions that fail on their own; if only their combination fails, all of them.
    let parts: Vec<Cfg> = match gate {
        Cfg::All(parts) => parts.clone(),
        other => vec![other.clone()],
    };
    let mut failing: Vec<String> = parts
        .iter()
        .filter(|c| !c.compiled(enabled))
        .map(|c| format!("`cfg({c})`"))
        .collect();
    if failing.is_empty() {
        failing.push(format!("`cfg({gate})`"));
    }
    let features = if enabled.is_empty() {
        "none".to_owned()
    } else {
        enabled.iter().cloned().collect::<Vec<_>>().join(", ")
    };
    format!(
        "{} {} off with the selected features ({features})",
        failing.join(" and "),
        if failing.len() == 1 { "is" } else { "are" }
    )
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
        skipped: None,
        spec: None,
        resolved: Err(String::new()),
    };
    if !matches!(attr.meta, syn::Meta::List(_)) {
        result.resolved = Err(format!(
            "{}: `#[kernelfoundry]` needs arguments",
            result.location()
        ));
        return result;
    }
    let (spec, spans) = match syntax::parse_attribute(attr) {
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
        ResolveError::Wgsl(ReflectError::Unsupported(why)) => format!(
            "{}: {label} is valid WGSL that KernelFoundry cannot tune yet: {why}",
            at(file, root, spans.span(Loc::Source))
        ),
        ResolveError::Wgsl(ReflectError::Entry(why)) => {
            format!(
                "{}: {label}: {why}",
                at(file, root, spans.span(Loc::Source))
            )
        }
        other => format!(
            "{}: invalid WGSL in {label}: {}",
            at(file, root, spans.span(Loc::Source)),
            other.to_string().trim_end()
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

#[cfg(test)]
mod tests;

//! `#[cfg(..)]` for discovery: which marked kernels a build of the selected features compiles.
//!
//! Discovery reads source files instead of compiling them, so it evaluates conditional compilation
//! itself, the way cargo and rustc would for a build of the selected features on this host:
//!
//! - `feature = ".."` against the package's enabled features: `--features`, `--all-features` and
//!   `--no-default-features` as cargo reads them, `default` otherwise, closed over the feature
//!   table (a feature that enables another, `dep/feature` enabling the implicit feature of an
//!   optional dependency);
//! - `all(..)`, `any(..)`, `not(..)`;
//! - target predicates (`unix`, `windows`, `target_os`, `target_family`, `target_arch`,
//!   `target_pointer_width`, `target_endian`, `target_env`, `target_vendor`,
//!   `target_has_atomic`, `panic`) against the host the tuner runs on, which is the GPU machine
//!   the entries are for;
//! - `test` and `debug_assertions` differ between builds of one crate (`cargo test`, `cargo
//!   build --release`), so a kernel counts as compiled when *some* combination of them compiles
//!   it;
//! - any other predicate (a custom `--cfg`, `doc`, `miri`) is unset, as rustc treats a cfg
//!   nobody passed.
//!
//! `#[cfg_attr(pred, cfg(..))]` gates like `cfg` when `pred` holds. A `mod` declaration's gates
//! apply to the file it loads, and enclosing inline modules' gates to everything inside.
//!
//! Invariant: evaluation is pure; reading files and the feature table is the caller's job.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use syn::punctuated::Punctuated;

/// A `cfg` predicate.
#[derive(Clone, Debug, PartialEq)]
pub enum Cfg {
    /// `unix`, `test`.
    Name(String),
    /// `feature = "gpu"`.
    KeyValue(String, String),
    /// `all(..)`; empty is true.
    All(Vec<Cfg>),
    /// `any(..)`; empty is false.
    Any(Vec<Cfg>),
    /// `not(..)`.
    Not(Box<Cfg>),
}

impl Cfg {
    /// Always true.
    pub fn yes() -> Cfg {
        Cfg::All(Vec::new())
    }

    /// Parses a predicate (the inside of `cfg(..)`).
    pub fn parse(meta: &syn::Meta) -> Result<Cfg, String> {
        let name = meta
            .path()
            .get_ident()
            .map(|i| i.to_string())
            .ok_or_else(|| format!("`{}` is not a cfg predicate", quote_path(meta.path())))?;
        match meta {
            syn::Meta::Path(_) => Ok(Cfg::Name(name)),
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Ok(Cfg::KeyValue(name, s.value())),
                _ => Err(format!("`{name} = ..` needs a string literal")),
            },
            syn::Meta::List(list) => {
                let args = list
                    .parse_args_with(Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated)
                    .map_err(|e| format!("`{name}(..)`: {e}"))?
                    .iter()
                    .map(Cfg::parse)
                    .collect::<Result<Vec<_>, _>>()?;
                match name.as_str() {
                    "all" => Ok(Cfg::All(args)),
                    "any" => Ok(Cfg::Any(args)),
                    "not" => match <[Cfg; 1]>::try_from(args) {
                        Ok([one]) => Ok(Cfg::Not(Box::new(one))),
                        Err(_) => Err("`not(..)` takes exactly one predicate".into()),
                    },
                    other => Err(format!("unknown cfg operator `{other}(..)`")),
                }
            }
        }
    }

    /// Evaluates the predicate in `env`.
    pub fn eval(&self, env: &Env) -> bool {
        match self {
            Cfg::Name(n) => env.name(n),
            Cfg::KeyValue(k, v) => env.key_value(k, v),
            Cfg::All(all) => all.iter().all(|c| c.eval(env)),
            Cfg::Any(any) => any.iter().any(|c| c.eval(env)),
            Cfg::Not(c) => !c.eval(env),
        }
    }

    /// Whether some build of `features` on this host compiles what the predicate gates: with or
    /// without `test`, with or without `debug_assertions`.
    pub fn compiled(&self, features: &BTreeSet<String>) -> bool {
        [(false, true), (true, true), (false, false), (true, false)]
            .into_iter()
            .any(|(test, debug_assertions)| {
                self.eval(&Env {
                    features,
                    test,
                    debug_assertions,
                })
            })
    }
}

fn quote_path(path: &syn::Path) -> String {
    path.segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::")
}

impl fmt::Display for Cfg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |f: &mut fmt::Formatter<'_>, op: &str, items: &[Cfg]| {
            let items: Vec<String> = items.iter().map(|c| c.to_string()).collect();
            write!(f, "{op}({})", items.join(", "))
        };
        match self {
            Cfg::Name(n) => f.write_str(n),
            Cfg::KeyValue(k, v) => write!(f, "{k} = {v:?}"),
            Cfg::All(items) => list(f, "all", items),
            Cfg::Any(items) => list(f, "any", items),
            Cfg::Not(c) => write!(f, "not({c})"),
        }
    }
}

/// What a predicate is evaluated against.
pub struct Env<'a> {
    /// The package's enabled features.
    pub features: &'a BTreeSet<String>,
    /// Whether this is a test build.
    pub test: bool,
    /// Whether debug assertions are on.
    pub debug_assertions: bool,
}

impl Env<'_> {
    fn name(&self, name: &str) -> bool {
        match name {
            "test" => self.test,
            "debug_assertions" => self.debug_assertions,
            "unix" => cfg!(unix),
            "windows" => cfg!(windows),
            _ => false,
        }
    }

    fn key_value(&self, key: &str, value: &str) -> bool {
        match key {
            "feature" => self.features.contains(value),
            "target_os" => value == std::env::consts::OS,
            "target_family" => {
                value == std::env::consts::FAMILY
                    || (value == "wasm" && cfg!(target_family = "wasm"))
            }
            "target_arch" => value == std::env::consts::ARCH,
            "target_pointer_width" => value == usize::BITS.to_string(),
            "target_endian" => {
                value
                    == if cfg!(target_endian = "big") {
                        "big"
                    } else {
                        "little"
                    }
            }
            "target_env" => value == host_env(),
            "target_vendor" => value == host_vendor(),
            "target_has_atomic" => host_atomics().contains(&value),
            "panic" => {
                value
                    == if cfg!(panic = "abort") {
                        "abort"
                    } else {
                        "unwind"
                    }
            }
            _ => false,
        }
    }
}

fn host_env() -> &'static str {
    if cfg!(target_env = "gnu") {
        "gnu"
    } else if cfg!(target_env = "musl") {
        "musl"
    } else if cfg!(target_env = "msvc") {
        "msvc"
    } else {
        ""
    }
}

fn host_vendor() -> &'static str {
    if cfg!(target_vendor = "apple") {
        "apple"
    } else if cfg!(target_vendor = "pc") {
        "pc"
    } else if cfg!(target_vendor = "unknown") {
        "unknown"
    } else {
        ""
    }
}

fn host_atomics() -> Vec<&'static str> {
    let mut out = Vec::new();
    if cfg!(target_has_atomic = "8") {
        out.push("8");
    }
    if cfg!(target_has_atomic = "16") {
        out.push("16");
    }
    if cfg!(target_has_atomic = "32") {
        out.push("32");
    }
    if cfg!(target_has_atomic = "64") {
        out.push("64");
    }
    if cfg!(target_has_atomic = "ptr") {
        out.push("ptr");
    }
    out
}

/// The condition under which an item with `attrs` is compiled: its `cfg`s, and the `cfg`s its
/// `cfg_attr`s would add. Unparsable predicates are reported in `problems` and count as true
/// (the compiler would reject them anyway; discovery does not hide a kernel over them).
pub fn gate(attrs: &[syn::Attribute], problems: &mut Vec<String>) -> Cfg {
    let mut all = Vec::new();
    for attr in attrs {
        if let Some(c) = meta_gate(&attr.meta, problems) {
            all.push(c);
        }
    }
    simplify(Cfg::All(all))
}

fn meta_gate(meta: &syn::Meta, problems: &mut Vec<String>) -> Option<Cfg> {
    let syn::Meta::List(list) = meta else {
        return None;
    };
    if list.path.is_ident("cfg") {
        match list.parse_args::<syn::Meta>().map_err(|e| e.to_string()) {
            Ok(m) => match Cfg::parse(&m) {
                Ok(c) => return Some(c),
                Err(e) => problems.push(format!("cannot read `#[cfg(..)]`: {e}")),
            },
            Err(e) => problems.push(format!("cannot read `#[cfg(..)]`: {e}")),
        }
        return None;
    }
    if list.path.is_ident("cfg_attr") {
        let parsed = list
            .parse_args_with(Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated)
            .map_err(|e| e.to_string());
        let metas: Vec<syn::Meta> = match parsed {
            Ok(p) => p.into_iter().collect(),
            Err(e) => {
                problems.push(format!("cannot read `#[cfg_attr(..)]`: {e}"));
                return None;
            }
        };
        let (pred, rest) = metas.split_first()?;
        let pred = match Cfg::parse(pred) {
            Ok(p) => p,
            Err(e) => {
                problems.push(format!("cannot read `#[cfg_attr(..)]`: {e}"));
                return None;
            }
        };
        let inner: Vec<Cfg> = rest.iter().filter_map(|m| meta_gate(m, problems)).collect();
        if inner.is_empty() {
            return None;
        }
        // When `pred` holds, the inner gates apply.
        return Some(Cfg::Any(vec![
            Cfg::Not(Box::new(pred)),
            simplify(Cfg::All(inner)),
        ]));
    }
    None
}

/// Flattens `all(x)` to `x`, for readable messages.
pub fn simplify(c: Cfg) -> Cfg {
    match c {
        Cfg::All(mut v) if v.len() == 1 => simplify(v.remove(0)),
        Cfg::All(v) => Cfg::All(
            v.into_iter()
                .map(simplify)
                .flat_map(|c| match c {
                    Cfg::All(inner) => inner,
                    other => vec![other],
                })
                .collect(),
        ),
        Cfg::Any(mut v) if v.len() == 1 => simplify(v.remove(0)),
        other => other,
    }
}

/// Which features `--features`, `--all-features` and `--no-default-features` select, as cargo
/// reads them.
#[derive(Clone, Debug, Default)]
pub struct FeatureSelection {
    /// Feature names, comma- or space-separated; `package/feature` names one package's feature.
    pub features: Vec<String>,
    /// Every feature of every selected package.
    pub all_features: bool,
    /// Without the `default` feature.
    pub no_default_features: bool,
}

impl FeatureSelection {
    /// The requested names, split on commas and spaces.
    fn requested(&self) -> Vec<String> {
        self.features
            .iter()
            .flat_map(|f| f.split([',', ' ']))
            .filter(|f| !f.is_empty())
            .map(str::to_owned)
            .collect()
    }

    /// The enabled features of each package (name, feature table), in order; an error names a
    /// requested feature no selected package has, as cargo would.
    pub fn resolve(
        &self,
        packages: &[(&str, &BTreeMap<String, Vec<String>>)],
    ) -> Result<Vec<BTreeSet<String>>, String> {
        let requested = self.requested();
        for name in &requested {
            let known = match name.split_once('/') {
                Some((package, feature)) => packages
                    .iter()
                    .any(|(p, table)| *p == package && table.contains_key(feature)),
                None => packages.iter().any(|(_, table)| table.contains_key(name)),
            };
            if !known {
                let available: BTreeSet<&str> = packages
                    .iter()
                    .flat_map(|(_, t)| t.keys().map(String::as_str))
                    .filter(|f| *f != "default")
                    .collect();
                return Err(format!(
                    "none of the selected packages has feature `{name}`{}",
                    if available.is_empty() {
                        String::new()
                    } else {
                        format!(
                            "; they have: {}",
                            available.into_iter().collect::<Vec<_>>().join(", ")
                        )
                    }
                ));
            }
        }
        Ok(packages
            .iter()
            .map(|(package, table)| {
                if self.all_features {
                    return table.keys().cloned().collect();
                }
                let mut start: Vec<String> = requested
                    .iter()
                    .filter_map(|r| match r.split_once('/') {
                        Some((p, f)) if p == *package => Some(f.to_owned()),
                        Some(_) => None,
                        None => Some(r.clone()),
                    })
                    .filter(|f| table.contains_key(f))
                    .collect();
                if !self.no_default_features && table.contains_key("default") {
                    start.push("default".into());
                }
                close(table, start)
            })
            .collect())
    }
}

/// Every feature that `start` enables through the feature table.
fn close(table: &BTreeMap<String, Vec<String>>, start: Vec<String>) -> BTreeSet<String> {
    let mut enabled = BTreeSet::new();
    let mut todo = start;
    while let Some(f) = todo.pop() {
        if !enabled.insert(f.clone()) {
            continue;
        }
        for value in table.get(&f).into_iter().flatten() {
            if value.starts_with("dep:") {
                continue;
            }
            // `dep/feature` enables the optional dependency's implicit feature; `dep?/feature`
            // does not enable the dependency.
            let name = match value.split_once('/') {
                Some((dep, _)) if dep.ends_with('?') => continue,
                Some((dep, _)) => dep,
                None => value.as_str(),
            };
            if table.contains_key(name) {
                todo.push(name.to_owned());
            }
        }
    }
    enabled
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate_of(src: &str) -> (Cfg, Vec<String>) {
        let item: syn::ItemStruct = syn::parse_str(&format!("{src} struct S;")).unwrap();
        let mut problems = Vec::new();
        (gate(&item.attrs, &mut problems), problems)
    }

    fn features(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[track_caller]
    fn check(attrs: &str, enabled: &[&str], expect: bool) {
        let (c, problems) = gate_of(attrs);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(
            c.compiled(&features(enabled)),
            expect,
            "{attrs} with {enabled:?}"
        );
    }

    #[test]
    fn predicates_evaluate_like_a_build_of_the_selected_features() {
        check("", &[], true);
        check(r#"#[cfg(feature = "gpu")]"#, &[], false);
        check(r#"#[cfg(feature = "gpu")]"#, &["gpu"], true);
        check(r#"#[cfg(not(feature = "gpu"))]"#, &["gpu"], false);
        check(
            r#"#[cfg(all(feature = "a", feature = "b"))]"#,
            &["a"],
            false,
        );
        check(r#"#[cfg(any(feature = "a", feature = "b"))]"#, &["b"], true);
        check(
            r#"#[cfg(feature = "a")] #[cfg(feature = "b")]"#,
            &["a"],
            false,
        );
        // Host predicates.
        check(
            &format!(r#"#[cfg(target_os = "{}")]"#, std::env::consts::OS),
            &[],
            true,
        );
        check(r#"#[cfg(target_os = "no-such-os")]"#, &[], false);
        check(r#"#[cfg(any(unix, windows))]"#, &[], true);
        check(
            &format!(r#"#[cfg(target_pointer_width = "{}")]"#, usize::BITS),
            &[],
            true,
        );
        // `test` and `debug_assertions` differ between builds: either way is compiled somewhere…
        check("#[cfg(test)]", &[], true);
        check("#[cfg(not(test))]", &[], true);
        check("#[cfg(not(debug_assertions))]", &[], true);
        // …but not both at once.
        check("#[cfg(all(test, not(test)))]", &[], false);
        // Unknown cfgs are unset, as in rustc.
        check("#[cfg(docsrs)]", &[], false);
        check("#[cfg(not(docsrs))]", &[], true);
    }

    #[test]
    fn cfg_attr_gates_when_its_predicate_holds() {
        check(
            r#"#[cfg_attr(feature = "a", cfg(feature = "b"))]"#,
            &[],
            true,
        );
        check(
            r#"#[cfg_attr(feature = "a", cfg(feature = "b"))]"#,
            &["a"],
            false,
        );
        check(
            r#"#[cfg_attr(feature = "a", cfg(feature = "b"))]"#,
            &["a", "b"],
            true,
        );
        check(
            r#"#[cfg_attr(feature = "a", derive(Debug), cfg_attr(feature = "b", cfg(feature = "c")))]"#,
            &["a", "b"],
            false,
        );
        check(r#"#[cfg_attr(feature = "a", derive(Debug))]"#, &["a"], true);
    }

    #[test]
    fn malformed_predicates_are_reported_not_hidden() {
        let (c, problems) = gate_of(r#"#[cfg(nope(feature = "a"))]"#);
        assert!(c.compiled(&features(&[])));
        assert!(
            problems[0].contains("unknown cfg operator `nope(..)`"),
            "{problems:?}"
        );
    }

    #[test]
    fn predicates_display_as_written() {
        let (c, _) = gate_of(r#"#[cfg(all(feature = "gpu", not(test)))]"#);
        assert_eq!(c.to_string(), r#"all(feature = "gpu", not(test))"#);
    }

    #[test]
    fn features_are_selected_like_cargo() {
        let table: BTreeMap<String, Vec<String>> = [
            ("default", vec!["gpu"]),
            ("gpu", vec!["fast"]),
            ("fast", vec![]),
            ("extra", vec!["dep:log", "serde/std"]),
            ("serde", vec!["dep:serde"]),
            ("weak", vec!["serde?/derive"]),
            ("lonely", vec![]),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
        .collect();
        let other: BTreeMap<String, Vec<String>> =
            [("lonely".to_string(), Vec::new())].into_iter().collect();
        let packages = [("app", &table), ("lib", &other)];
        let select = |features: &[&str], all: bool, no_default: bool| {
            FeatureSelection {
                features: features.iter().map(|s| s.to_string()).collect(),
                all_features: all,
                no_default_features: no_default,
            }
            .resolve(&packages)
        };
        let app = |r: Result<Vec<BTreeSet<String>>, String>| r.unwrap()[0].clone();
        assert_eq!(
            app(select(&[], false, false)),
            features(&["default", "fast", "gpu"])
        );
        assert_eq!(app(select(&[], false, true)), features(&[]));
        assert_eq!(
            app(select(&["extra"], false, true)),
            features(&["extra", "serde"])
        );
        assert_eq!(app(select(&["weak"], false, true)), features(&["weak"]));
        assert_eq!(
            app(select(&["fast,lonely"], false, true)),
            features(&["fast", "lonely"])
        );
        assert_eq!(app(select(&[], true, false)).len(), table.len());
        // `package/feature` applies to that package only.
        let both = select(&["lib/lonely"], false, true).unwrap();
        assert_eq!((both[0].len(), both[1].len()), (0, 1));
        let err = select(&["nope"], false, false).unwrap_err();
        assert!(
            err.contains("none of the selected packages has feature `nope`"),
            "{err}"
        );
        assert!(select(&["lib/gpu"], false, false).is_err());
    }
}

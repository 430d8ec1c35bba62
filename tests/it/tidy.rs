//! Repository rules, checked as tests: every Rust module says why it exists, the build-script
//! helper stays light, and the tuner's layers keep their direction (ARCHITECTURE.md, "the
//! analysis layer").

use kf_tests::root;
use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().to_string();
        if path.is_dir() {
            if name.starts_with('.') || name == "target" || name == "ui" || name == "ui-pass" {
                continue;
            }
            rust_files(&path, out);
        } else if name.ends_with(".rs") && name != "build.rs" {
            out.push(path);
        }
    }
}

#[test]
fn every_module_starts_with_a_doc_comment() {
    let mut files = Vec::new();
    for dir in ["kf-runtime", "kf-macros", "kf-build", "examples", "tests"] {
        rust_files(&root().join(dir), &mut files);
    }
    assert!(files.len() > 20);
    let missing: Vec<String> = files
        .iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            !(first.starts_with("//!") || first.starts_with("/*!"))
        })
        .map(|f| f.strip_prefix(root()).unwrap().display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "modules without a `//!` doc saying why they exist:\n{}",
        missing.join("\n")
    );
}

/// A build script that only calls `kf_build::track_cache()` depends on kf-build without its default
/// features; it must not pull the tuner's heavy dependencies into every user's build.
#[test]
fn the_build_script_helper_stays_light() {
    let out = kf_tests::cargo()
        .args([
            "tree",
            "-p",
            "kf-build",
            "--no-default-features",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--offline",
        ])
        .current_dir(root())
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8_lossy(&out.stdout);
    let crates: Vec<&str> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(crates.contains(&"sha2"), "{tree}");
    for heavy in [
        "wgpu",
        "naga",
        "clap",
        "reqwest",
        "tokio",
        "async-nats",
        "lapin",
    ] {
        assert!(
            !crates.contains(&heavy),
            "kf-build without default features depends on {heavy}:\n{tree}"
        );
    }
}

/// Where `text` (the file `name`) breaks the layering of `kf-build`: operators never import the
/// search; the search uses the operators only through their public API (items of `operators`
/// itself, never a path into one of its modules such as `operators::canon::..`). One line per
/// offence: `file:line: what`.
fn layer_violations(name: &str, text: &str, in_operators: bool) -> Vec<String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        if in_operators {
            if code.contains("crate::search") || code.contains("super::super::search") {
                out.push(format!(
                    "{name}:{}: an operator imports the search: `{}`",
                    i + 1,
                    code.trim()
                ));
            }
            continue;
        }
        let mut rest = code;
        while let Some(at) = rest.find("operators::") {
            rest = &rest[at + "operators::".len()..];
            // A path into a module: `operators::canon::..`, or `operators::{canon::.., ..}`.
            let group = if let Some(inner) = rest.strip_prefix('{') {
                inner.split('}').next().unwrap_or("")
            } else {
                rest
            };
            let into_module = group.split(',').any(|item| {
                let item = item.trim();
                let ident: String = item
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                !ident.is_empty()
                    && ident != "self"
                    && item[ident.len()..].starts_with("::")
                    && ident.starts_with(|c: char| c.is_lowercase())
            });
            if into_module {
                out.push(format!(
                    "{name}:{}: the search reaches into an operator's module (use the operators' public API): `{}`",
                    i + 1,
                    code.trim()
                ));
                break;
            }
        }
    }
    out
}

#[test]
fn operators_and_search_build_on_the_analysis_layer_only() {
    // The check itself must be able to fail.
    assert_eq!(
        layer_violations("a.rs", "use crate::search::space::axes;", true).len(),
        1
    );
    for offence in [
        "let c = operators::canon::canonicalise(&s);",
        "use crate::operators::{self, ir::Analysis};",
    ] {
        assert_eq!(
            layer_violations("a.rs", offence, false).len(),
            1,
            "{offence}"
        );
    }
    for fine in [
        "use crate::operators::{self, Operator, Rewrite, Skip};",
        "let all = operators::all(); operators::apply_canonical(op, &s, c)",
        "// operators::canon::canonicalise in a comment",
    ] {
        assert!(layer_violations("a.rs", fine, false).is_empty(), "{fine}");
    }

    let mut offences = Vec::new();
    for (dir, in_operators) in [("operators", true), ("search", false)] {
        let mut files = Vec::new();
        rust_files(&root().join("kf-build/src").join(dir), &mut files);
        assert!(!files.is_empty(), "kf-build/src/{dir} has Rust files");
        for f in files {
            let name = f.strip_prefix(root()).unwrap().display().to_string();
            let text = std::fs::read_to_string(&f).unwrap();
            offences.extend(layer_violations(&name, &text, in_operators));
        }
    }
    assert!(
        offences.is_empty(),
        "operators never import the search, and the search uses operators only through their \
         public API; both build on `analysis` (ARCHITECTURE.md):\n{}",
        offences.join("\n")
    );
}

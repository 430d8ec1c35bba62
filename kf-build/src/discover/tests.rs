//! Discovery on real files: `#[cfg]` against the selected features, module files, error locations.

use super::*;

/// A marked kernel named `name` with valid inline WGSL.
fn kernel(name: &str) -> String {
    format!(
        r####"#[kernelfoundry(
    source = r#"
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {{ y[g.x] = x[g.x]; }}
"#,
    sizes(n = 256),
    bind(x = input(n), y = output(n)),
)]
pub static {name}: Kernel;
"####
    )
}

fn package(files: &[(&str, String)], features: &[&str]) -> (tempfile::TempDir, Package) {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let package = Package {
        name: "p".into(),
        root: dir.path().to_owned(),
        source_dirs: vec![dir.path().join("src")],
        features: features
            .iter()
            .map(|f| (f.to_string(), Vec::new()))
            .collect(),
    };
    (dir, package)
}

/// `(name, skipped reason)` of every kernel found with `features` selected.
fn found(package: &Package, features: &[&str]) -> Vec<(String, Option<String>)> {
    let selection = FeatureSelection {
        features: features.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    };
    let mut out: Vec<_> = kernels(&[package], &selection)
        .unwrap()
        .into_iter()
        .map(|f| {
            assert!(f.resolved.is_ok(), "{}: {:?}", f.name, f.resolved);
            (f.name, f.skipped)
        })
        .collect();
    out.sort();
    out
}

#[test]
fn cfg_gated_kernels_are_found_but_skipped() {
    let lib = format!(
        "mod plain;\n#[cfg(feature = \"gpu\")]\nmod gated;\n#[cfg(feature = \"gpu\")]\n{}\n#[cfg(not(feature = \"gpu\"))]\nmod inline {{\n{}\n}}\n#[cfg_attr(feature = \"gpu\", cfg(feature = \"simd\"))]\n{}",
        kernel("ITEM_GATED"),
        kernel("INLINE_NOT_GPU"),
        kernel("CFG_ATTR"),
    );
    let (_dir, package) = package(
        &[
            ("src/lib.rs", lib),
            ("src/plain.rs", kernel("PLAIN")),
            (
                "src/gated.rs",
                format!("mod deeper;\n{}", kernel("FILE_GATED")),
            ),
            ("src/gated/deeper.rs", kernel("DEEPER")),
        ],
        &["gpu", "simd"],
    );
    let skipped = |found: &[(String, Option<String>)]| -> Vec<String> {
        found
            .iter()
            .filter(|(_, s)| s.is_some())
            .map(|(n, _)| n.clone())
            .collect()
    };
    let without = found(&package, &[]);
    assert_eq!(without.len(), 6, "{without:?}");
    assert_eq!(
        skipped(&without),
        ["DEEPER", "FILE_GATED", "ITEM_GATED"],
        "{without:?}"
    );
    let reason = without
        .iter()
        .find(|(n, _)| n == "DEEPER")
        .unwrap()
        .1
        .clone()
        .unwrap();
    assert_eq!(
        reason,
        "`cfg(feature = \"gpu\")` is off with the selected features (none)"
    );

    let with_gpu = found(&package, &["gpu"]);
    assert_eq!(
        skipped(&with_gpu),
        ["CFG_ATTR", "INLINE_NOT_GPU"],
        "{with_gpu:?}"
    );
    assert!(
        with_gpu.iter().any(|(n, s)| n == "CFG_ATTR"
            && s.as_deref()
                .unwrap()
                .contains("`cfg(any(not(feature = \"gpu\"), feature = \"simd\"))` is off")),
        "{with_gpu:?}"
    );
    assert_eq!(skipped(&found(&package, &["gpu,simd"])), ["INLINE_NOT_GPU"]);
    let all = kernels(
        &[&package],
        &FeatureSelection {
            all_features: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(all.iter().filter(|f| f.skipped.is_some()).count(), 1);
    // An unknown feature is an error, as in cargo.
    let err = kernels(
        &[&package],
        &FeatureSelection {
            features: vec!["nope".into()],
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("feature `nope`"), "{err}");
}

#[test]
fn spec_errors_point_at_the_attribute_line_like_rustc() {
    let padding = "// a comment\n".repeat(14);
    // Line 15: a binding the spec leaves out (reported at the whole attribute).
    let missing_binding =
        kernel("BAD").replace("bind(x = input(n), y = output(n))", "bind(y = output(n))");
    // An attribute cut short: the error sits at its closing parenthesis, on its last line.
    let cut_short =
        "#[kernelfoundry(\n    sizes(n = 1),\n    path =\n)]\npub static CUT: Kernel;\n";
    let (_dir, package) = package(
        &[
            ("src/bad.rs", format!("{padding}{missing_binding}")),
            ("src/cut.rs", format!("{padding}{cut_short}")),
        ],
        &[],
    );
    let found = kernels(&[&package], &FeatureSelection::default()).unwrap();
    let error = |name: &str| {
        found
            .iter()
            .find(|f| f.name == name)
            .unwrap()
            .resolved
            .clone()
            .unwrap_err()
    };
    let bad = error("BAD");
    assert!(bad.starts_with("src/bad.rs:15:1: binding `x`"), "{bad}");
    let cut = error("CUT");
    assert!(cut.starts_with("src/cut.rs:18:1:"), "{cut}");
}

#[test]
fn unsupported_wgsl_is_not_called_invalid() {
    let text = r####"#[kernelfoundry(
    source = r#"
override WG: u32 = 64;
@group(0) @binding(0) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(WG * 2)
fn main(@builtin(global_invocation_id) g: vec3<u32>) { y[g.x] = 1.0; }
"#,
    sizes(n = 256),
    bind(y = output(n)),
)]
pub static ODD: Kernel;
"####;
    let (_dir, package) = package(&[("src/lib.rs", text.to_owned())], &[]);
    let found = kernels(&[&package], &FeatureSelection::default()).unwrap();
    let error = found[0].resolved.clone().unwrap_err();
    assert!(!error.contains("invalid WGSL"), "{error}");
    assert!(
        error.contains("is valid WGSL that KernelFoundry cannot tune yet: the workgroup size is an override expression"),
        "{error}"
    );
}

//! The suite against the corpus it checks: one case per marked kernel, and the small shapes the
//! `// spec:` headers give, so a header edited or a size mistyped here fails without a GPU.

use super::*;
use std::collections::BTreeMap;

/// The `sizes(..)` of `text`'s first `marker` line, by name.
fn sizes_after(text: &str, marker: &str) -> BTreeMap<String, u64> {
    let line = text
        .lines()
        .find(|l| l.starts_with(marker))
        .unwrap_or_else(|| panic!("no `{marker}` line"));
    let inner = line
        .split_once("sizes(")
        .and_then(|(_, rest)| rest.split_once(')'))
        .map(|(inner, _)| inner)
        .unwrap_or_else(|| panic!("no sizes(..) in `{line}`"));
    inner
        .split(',')
        .map(|kv| {
            let (k, v) = kv.split_once('=').expect("name = value");
            (k.trim().to_string(), v.trim().parse().expect("a number"))
        })
        .collect()
}

#[test]
fn every_kernel_has_one_case_in_file_order() {
    let names: Vec<&str> = all().iter().map(|(n, _)| *n).collect();
    let kernels: Vec<&str> = crate::kernels::ALL.iter().map(|k| k.name).collect();
    assert_eq!(names, kernels);
    assert_eq!(names.len(), 45);
}

#[test]
fn small_shapes_are_the_headers_sizes() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/unseen");
    for (name, make) in all() {
        let case = make(Scale::Small);
        assert_eq!(case.kernel.name, name);
        let file = dir.join(format!("{}.wgsl", name.to_lowercase()));
        let wgsl =
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let header = sizes_after(&wgsl, "// spec:");
        let ours: BTreeMap<String, u64> = case
            .sizes
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect();
        assert_eq!(ours, header, "{name}");
    }
}

//! Shared helpers for the operators' unit tests: the kernel corpus in `tests/data/kernels/`,
//! resolved with the spec in each file's header, and targets that look like real adapters.

use super::{Operator, Rewrite, Skip, Subject, Target};
use kf_runtime::resolve::ResolvedKernel;
use std::path::PathBuf;

/// One corpus kernel.
pub struct CorpusKernel {
    /// File name.
    pub name: String,
    /// The resolved kernel.
    pub kernel: ResolvedKernel,
    /// The attribute arguments it was resolved with (`// spec:`).
    pub spec: String,
    /// Operators every rewrite of which must be valid (and, on a GPU, correct).
    pub fires: Vec<String>,
    /// Operators that must skip.
    pub skips: Vec<String>,
}

/// The value of header line `// key value` in a corpus file.
pub fn header(text: &str, key: &str) -> Option<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("// "))
        .find_map(|l| l.strip_prefix(key).map(|v| v.trim().to_owned()))
}

/// Resolves `wgsl` with the attribute arguments `spec`.
pub fn resolve(name: &str, spec: &str, wgsl: &str) -> ResolvedKernel {
    let attr = format!("path = \"{name}\", {spec}");
    let (spec, _) = kf_runtime::syntax::parse_spec(attr.parse().expect("tokens"))
        .unwrap_or_else(|e| panic!("{name}: spec: {e}"));
    kf_runtime::resolve::resolve(name, &spec, wgsl, name)
        .unwrap_or_else(|e| panic!("{name}: {e:?}"))
}

/// The `.wgsl` files of `tests/data/<folder>/`, sorted.
pub fn wgsl_files(folder: &str) -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/data")
        .join(folder);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "wgsl"))
        .collect();
    files.sort();
    files
}

/// Every kernel of `tests/data/kernels/`.
pub fn corpus() -> Vec<CorpusKernel> {
    wgsl_files("kernels")
        .into_iter()
        .map(|file| {
            let name = file.file_name().unwrap().to_string_lossy().to_string();
            let text = std::fs::read_to_string(&file).unwrap();
            let spec = header(&text, "spec:").unwrap_or_else(|| panic!("{name}: no `// spec:`"));
            let list = |key| {
                header(&text, key)
                    .map(|v| v.split_whitespace().map(str::to_owned).collect())
                    .unwrap_or_default()
            };
            CorpusKernel {
                kernel: resolve(&name, &spec, &text),
                spec,
                fires: list("fires:"),
                skips: list("skips:"),
                name,
            }
        })
        .collect()
}

/// The corpus kernel in file `name`.
pub fn kernel(name: &str) -> ResolvedKernel {
    corpus()
        .into_iter()
        .find(|k| k.name == name)
        .unwrap_or_else(|| panic!("{name} is in the corpus"))
        .kernel
}

/// An adapter like lavapipe: subgroups of 8, 32 KiB of workgroup memory.
pub fn lavapipe() -> Target {
    target(8, 32768, true)
}

/// An adapter like the H200: subgroups of 32, 48 KiB of workgroup memory.
pub fn h200() -> Target {
    target(32, 49152, true)
}

/// An adapter without subgroups and with WebGPU's default limits.
pub fn plain() -> Target {
    let mut t = target(0, 16384, false);
    t.limits
        .insert("max_compute_invocations_per_workgroup".into(), 256);
    t.limits.insert("max_compute_workgroup_size_x".into(), 256);
    t
}

fn target(subgroup: u64, storage: u64, subgroups: bool) -> Target {
    let mut t = Target::default();
    for (k, v) in [
        ("max_compute_invocations_per_workgroup", 1024),
        ("max_compute_workgroup_size_x", 1024),
        ("max_compute_workgroup_size_y", 1024),
        ("max_compute_workgroup_size_z", 64),
        ("max_compute_workgroups_per_dimension", 65535),
        ("max_compute_workgroup_storage_size", storage),
    ] {
        t.limits.insert(k.into(), v);
    }
    if subgroups {
        t.limits.insert("subgroup_min_size".into(), subgroup);
        t.limits.insert("subgroup_max_size".into(), subgroup);
        t.features.push("SUBGROUP".into());
    }
    t
}

/// Applies `op` to the kernel's baseline on `target`, as the search does: to its canonical form.
pub fn apply(
    op: &dyn Operator,
    kernel: &ResolvedKernel,
    target: &Target,
) -> Result<Vec<Rewrite>, Skip> {
    let subject = Subject {
        kernel,
        program: &kernel.baseline,
        target,
    };
    let canon = super::canon::canonicalise(&subject);
    super::apply_canonical(op, &subject, canon.as_ref())
}

/// A rewrite's own step, without the canonicalisation's in front (`canon(max) → reduce(..)`).
pub fn own_step(r: &Rewrite) -> &str {
    r.step.rsplit(" → ").next().unwrap_or(&r.step)
}

/// Checks that a rewrite parses, validates and keeps the baseline's interface; returns the
/// reflected workgroup size.
pub fn check_valid(kernel: &ResolvedKernel, r: &Rewrite) -> [u32; 3] {
    let reflected =
        kf_runtime::resolve::reflect(&r.program.wgsl, Some(&r.program.entry), "rewrite")
            .unwrap_or_else(|e| {
                panic!(
                    "{}: {} is not valid:\n{e}\n{}",
                    kernel.name, r.step, r.program.wgsl
                )
            });
    let mismatches = kernel.mismatches(&reflected.interface);
    assert!(
        mismatches.is_empty(),
        "{}: {} changes the interface: {mismatches:?}",
        kernel.name,
        r.step
    );
    for (name, _) in r.program.constants.iter() {
        assert!(
            reflected
                .interface
                .overrides
                .iter()
                .any(|o| o.name == *name),
            "{}: {}: constant `{name}` names no override",
            kernel.name,
            r.step
        );
    }
    // The program travels to workers and into cache entries as JSON, its launch rule as text:
    // read back, the rule must launch what it launched.
    let json = serde_json::to_string(&r.program).expect("a program serialises");
    let back: kf_runtime::Program = serde_json::from_str(&json).unwrap_or_else(|e| {
        panic!(
            "{}: {}: the program does not read back: {e}",
            kernel.name, r.step
        )
    });
    // On the spec's sizes and on larger ones, where integer division rounds differently.
    let counts = |p: &kf_runtime::Program| -> Vec<Option<[u32; 3]>> {
        let mut out = Vec::new();
        for (times, plus) in [(1, 0), (3, 1), (16, 5)] {
            let size = |n: &str| {
                kernel
                    .sizes
                    .iter()
                    .find(|(k, _)| k == n)
                    .map(|(_, v)| *v * times + plus)
            };
            out.extend(
                p.launches()
                    .iter()
                    .map(|l| l.workgroups(size, u32::MAX).ok()),
            );
        }
        out
    };
    assert_eq!(
        counts(&back),
        counts(&r.program),
        "{}: {}: the launch rule written {} reads back as another",
        kernel.name,
        r.step,
        r.program.launch_rule()
    );
    reflected.interface.workgroup_size
}

/// The canonical form of `wgsl` resolved with the attribute arguments `spec`, as its step and its
/// text, checked valid; `None` when nothing is normalised.
pub fn canonical_text(spec: &str, wgsl: &str) -> Option<(String, String)> {
    let k = resolve("k.wgsl", spec, wgsl);
    let target = lavapipe();
    let r = super::canonicalise(&Subject {
        kernel: &k,
        program: &k.baseline,
        target: &target,
    })?;
    check_valid(&k, &r);
    Some((r.step, r.program.wgsl.to_string()))
}

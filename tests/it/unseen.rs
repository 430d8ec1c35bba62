//! Kernels written by someone who had not read the operators (`tests/data/unseen/`, see
//! `kf-build`'s `operators::unseen_tests` for which operators must fire on them), on the real
//! adapter: each kernel's canonical form and the first rewrite of every structural operator that
//! fires on it must be correct (level 5) through the worker. Speed is never asserted.

use super::operators::{resolve, verify, worker_and_target};
use kf_build::operators::{Subject, apply_canonical, canon};
use kf_tests::*;

/// Operators whose rewrites change the kernel's structure (the parameter and loop-shape operators,
/// and `coarsen`, are covered by the corpus tests).
const STRUCTURAL: [&str; 12] = [
    "reduce",
    "grid-reduce",
    "scan",
    "tile",
    "tile-blocked",
    "tile-split-k",
    "implicit-gemm",
    "flash-attention",
    "transpose-tile",
    "widen",
    "subgroup-tree",
    "subgroup-scan",
];

#[test]
fn unseen_kernels_canonical_forms_and_structural_rewrites_are_correct() {
    let (mut worker, target) = worker_and_target();
    // `KF_UNSEEN_DIR` verifies another folder of kernels with spec headers the same way.
    let other = std::env::var("KF_UNSEEN_DIR").ok();
    let all = folder(other.as_deref().unwrap_or("unseen"));
    assert!(
        other.is_some() || all.len() >= 20,
        "the unseen corpus: {} kernels",
        all.len()
    );
    let mut failures = Vec::new();
    let mut evaluated = 0;
    for (name, kernel) in all {
        let subject = Subject {
            kernel: &kernel,
            program: &kernel.baseline,
            target: &target,
        };
        let canonical = canon::canonicalise(&subject);
        let mut candidates = Vec::new();
        if let Some(c) = &canonical {
            candidates.push(c.clone());
        }
        for op in kf_build::operators::all() {
            if !STRUCTURAL.contains(&op.name()) {
                continue;
            }
            if let Ok(rewrites) = apply_canonical(op.as_ref(), &subject, canonical.as_ref())
                && let Some(first) = rewrites.into_iter().next()
            {
                candidates.push(first);
            }
        }
        for (i, r) in candidates.iter().enumerate() {
            evaluated += 1;
            failures.extend(failure(
                &mut worker,
                &kernel,
                &name,
                format!("unseen-{i}"),
                r,
            ));
        }
    }
    assert!(
        other.is_some() || evaluated >= 25,
        "only {evaluated} candidates evaluated"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// GEMMs over vector operands respelled (`tests/data/lanes/`, read by `kf-build`'s
/// `operators::lanes` tests): `tile` reaches them through one vector lane per invocation, and
/// its first rewrite must be correct on the adapter, where the vector buffers are read through
/// `array<f32>` views. `tile` alone, whose shaders lavapipe compiles fastest: the lane split is
/// what differs between the files (the unseen corpus's vec4 GEMM runs the blocked and split-K
/// tilings too).
#[test]
fn vector_gemm_respellings_tile_correctly() {
    let (mut worker, target) = worker_and_target();
    let all = folder("lanes");
    assert!(all.len() >= 4, "the lanes corpus: {} kernels", all.len());
    let tile = kf_build::operators::tile::Tile::shared();
    let mut failures = Vec::new();
    for (i, (name, kernel)) in all.iter().enumerate() {
        let subject = Subject {
            kernel,
            program: &kernel.baseline,
            target: &target,
        };
        let canonical = canon::canonicalise(&subject);
        let rewrites = apply_canonical(&tile, &subject, canonical.as_ref())
            .unwrap_or_else(|e| panic!("{name}: tile skipped: {e}"));
        let r = &rewrites[0];
        assert!(r.step.contains("lanes("), "{name}: {}", r.step);
        failures.extend(failure(&mut worker, kernel, name, format!("lanes-{i}"), r));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The kernels of `tests/data/<folder>/`, sorted, each resolved with the spec in its header.
fn folder(folder: &str) -> Vec<(String, kf_runtime::resolve::ResolvedKernel)> {
    let dir = root().join("tests/data").join(folder);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "wgsl"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|file| {
            let name = file.file_name().unwrap().to_string_lossy().to_string();
            let text = std::fs::read_to_string(&file).unwrap();
            let spec = text
                .lines()
                .find_map(|l| l.strip_prefix("// spec:"))
                .unwrap_or_else(|| panic!("{name}: no spec"))
                .trim()
                .to_owned();
            let kernel = resolve(&name, &format!("path = \"{name}\", {spec}"), &text);
            (name, kernel)
        })
        .collect()
}

/// Evaluates `r` through the worker with the final verification plan; the failure, unless it is
/// correct (level 5).
fn failure(
    worker: &mut kf_build::evaluate::process::WorkerProcess,
    kernel: &kf_runtime::resolve::ResolvedKernel,
    name: &str,
    id: String,
    r: &kf_build::operators::Rewrite,
) -> Option<String> {
    let report = verify(worker, kernel, id, r);
    println!("{name}: {} level {}", r.step, report.fitness.level);
    (report.fitness.level != 5).then(|| {
        format!(
            "{name} {}: level {} {:?}\n{}",
            r.step,
            report.fitness.level,
            report.failure.map(|f| f.log),
            r.program.wgsl
        )
    })
}

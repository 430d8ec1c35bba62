//! Test helpers shared by the operators' unit tests: resolve a kernel from WGSL and an attribute,
//! apply an operator to its baseline, and check every rewrite the way the evaluator's first rungs
//! would (parse, validate, same interface as the baseline).

use super::{Operator, Rewrite, Skip, Subject, Target};
use kf_runtime::resolve::ResolvedKernel;

/// A kernel resolved from `wgsl` and the attribute's contents `attr`.
pub fn kernel(wgsl: &str, attr: &str) -> ResolvedKernel {
    let (spec, _) = kf_runtime::syntax::parse_spec(attr.parse().unwrap()).unwrap();
    kf_runtime::resolve::resolve("K", &spec, wgsl, "k.wgsl").unwrap()
}

/// An adapter with common limits (256 invocations per workgroup).
pub fn target() -> Target {
    Target {
        limits: [
            ("max_compute_invocations_per_workgroup", 256),
            ("max_compute_workgroup_size_x", 256),
            ("max_compute_workgroup_size_y", 256),
            ("max_compute_workgroup_size_z", 64),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect(),
        features: Vec::new(),
    }
}

/// `op` applied to the baseline of `kernel`; every rewrite is checked with [`check`].
#[track_caller]
pub fn apply(op: &dyn Operator, kernel: &ResolvedKernel) -> Result<Vec<Rewrite>, Skip> {
    let target = target();
    let subject = Subject {
        kernel,
        program: &kernel.baseline,
        target: &target,
    };
    let out = op.apply(&subject)?;
    for rw in &out {
        check(kernel, rw);
    }
    Ok(out)
}

/// `op` applied to `parent` (a rewrite of `kernel`'s baseline); every rewrite is checked.
#[track_caller]
pub fn apply_to(
    op: &dyn Operator,
    kernel: &ResolvedKernel,
    parent: &kf_runtime::Program,
) -> Result<Vec<Rewrite>, Skip> {
    let target = target();
    let subject = Subject {
        kernel,
        program: parent,
        target: &target,
    };
    let out = op.apply(&subject)?;
    for rw in &out {
        check(kernel, rw);
    }
    Ok(out)
}

/// Parses and validates the rewrite with naga, and checks its interface fits the baseline and its
/// workgroup size is the one its constants give.
#[track_caller]
pub fn check(kernel: &ResolvedKernel, rw: &Rewrite) {
    let r = kf_runtime::resolve::reflect(&rw.program.wgsl, Some(&rw.program.entry), "rw")
        .unwrap_or_else(|e| panic!("{}: {e}\n{}", rw.step, rw.program.wgsl));
    let m = kernel.mismatches(&r.interface);
    assert!(m.is_empty(), "{}: {m:?}", rw.step);
    for (d, name) in r.interface.workgroup_size_overrides.iter().enumerate() {
        let expected = match name {
            Some(n) => rw
                .program
                .constants
                .iter()
                .find(|(k, _)| k == n)
                .map_or(r.interface.workgroup_size[d], |(_, v)| *v as u32),
            None => r.interface.workgroup_size[d],
        };
        assert_eq!(rw.program.workgroup_size[d], expected, "{}", rw.step);
    }
}

/// The one rewrite whose step is `step`.
#[track_caller]
pub fn find<'a>(rws: &'a [Rewrite], step: &str) -> &'a Rewrite {
    rws.iter().find(|r| r.step == step).unwrap_or_else(|| {
        panic!(
            "no rewrite `{step}` among {:?}",
            rws.iter().map(|r| &r.step).collect::<Vec<_>>()
        )
    })
}

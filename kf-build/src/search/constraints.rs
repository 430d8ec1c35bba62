//! Derived parameters and constraints applied to the points of a parameter space.
//!
//! The spec may say that an override follows from others (`THREADS = X * Y`) and what every
//! configuration must meet (`pow2(ITEMS)`, `n % (THREADS * ITEMS) == 0`). Each point of the
//! cartesian product gets its derived values computed, and a point that breaks a constraint on
//! any tune or verify shape, or whose expressions cannot be evaluated, is dropped before the
//! search samples from the space: such a point cannot be right, so it must not cost an
//! evaluation.
//!
//! A point whose launch rule cannot be evaluated (a rule over a parameter, `cdiv(m,
//! OUTPUTS_PER_WG)`, with a value of 0) is dropped the same way.
//!
//! Invariant: every point left satisfies every constraint on every shape the kernel is checked
//! on, with the same values the pipeline will get, and carries the value of every parameter its
//! launch rule reads.

use super::Point;
use kf_runtime::Dispatch;
use kf_runtime::resolve::ResolvedKernel;
use std::collections::BTreeMap;

/// The baseline's value of every override that has one: its pipeline constants, then the
/// literal defaults of the WGSL.
pub fn baseline_values(kernel: &ResolvedKernel) -> BTreeMap<String, f64> {
    let mut values: BTreeMap<String, f64> = kernel
        .interface
        .overrides
        .iter()
        .filter_map(|o| o.default.map(|d| (o.name.clone(), d)))
        .collect();
    for (k, v) in kernel.baseline.constants.iter() {
        values.insert(k.to_string(), *v);
    }
    values
}

/// Drops the axes of overrides whose value is derived from others: they are computed per point,
/// never searched.
pub fn drop_derived_axes(kernel: &ResolvedKernel, axes: &mut Vec<Vec<Vec<(String, f64)>>>) {
    axes.retain(|axis| {
        !axis
            .iter()
            .flatten()
            .any(|(name, _)| kernel.derived.iter().any(|(d, _)| d == name))
    });
}

/// Adds derived values to every point and drops the points that break a constraint; returns
/// how many were dropped.
pub fn apply(kernel: &ResolvedKernel, points: &mut Vec<Point>) -> usize {
    let launch = &kernel.baseline.dispatch;
    if kernel.derived.is_empty()
        && kernel.constraints.is_empty()
        && launch
            .size
            .iter()
            .all(|e| e.names().all(|n| kernel.sizes.iter().any(|(s, _)| s == n)))
    {
        return 0;
    }
    let base = baseline_values(kernel);
    let before = points.len();
    points.retain_mut(|p| complete(kernel, &base, launch, &mut p.constants));
    before - points.len()
}

/// Computes the derived values of a configuration (`constants` over the baseline's values
/// `base`) into `constants`, adds the value of every parameter the launch rule `launch` reads,
/// and checks the constraints and the launch rule on every tune and verify shape; false when a
/// constraint breaks or an expression cannot be evaluated.
pub fn complete(
    kernel: &ResolvedKernel,
    base: &BTreeMap<String, f64>,
    launch: &Dispatch,
    constants: &mut Vec<(String, f64)>,
) -> bool {
    let mut values = base.clone();
    for (k, v) in constants.iter() {
        values.insert(k.clone(), *v);
    }
    for (name, expr) in &kernel.derived {
        let lookup = |n: &str| integer(values.get(n).copied());
        let Ok(v) = expr.eval(&lookup) else {
            return false;
        };
        values.insert(name.clone(), v as f64);
        match constants.iter_mut().find(|(k, _)| k == name) {
            Some(c) => c.1 = v as f64,
            None => constants.push((name.clone(), v as f64)),
        }
    }
    // The launch rule reads its parameters from the program's own constants.
    for name in launch.size.iter().flat_map(|e| e.names()) {
        if kernel.sizes.iter().any(|(s, _)| s == name) || constants.iter().any(|(k, _)| k == name) {
            continue;
        }
        match values.get(name) {
            Some(v) => constants.push((name.to_owned(), *v)),
            None => return false,
        }
    }
    let shapes = || kernel.tune_shapes.iter().chain(&kernel.verify_shapes);
    let launches = shapes().all(|shape| {
        launch.size.iter().all(|e| {
            e.eval(|n| {
                shape
                    .get(n)
                    .copied()
                    .or_else(|| integer(values.get(n).copied()).and_then(|v| u64::try_from(v).ok()))
            })
            .is_ok()
        })
    });
    launches
        && kernel.constraints.iter().all(|c| {
            kernel
                .tune_shapes
                .iter()
                .chain(&kernel.verify_shapes)
                .all(|shape| {
                    let lookup = |n: &str| {
                        integer(values.get(n).copied())
                            .or_else(|| shape.get(n).and_then(|v| i64::try_from(*v).ok()))
                    };
                    matches!(c.eval(&lookup), Ok(v) if v != 0)
                })
        })
}

/// An integral value as `i64` (parameter expressions are integer arithmetic).
fn integer(v: Option<f64>) -> Option<i64> {
    v.filter(|v| v.fract() == 0.0 && v.abs() < 9.0e15)
        .map(|v| v as i64)
}

//! The parameter space of a kernel: its template parameters and the workgroup size.
//!
//! The cartesian product of the program's axes ([`crate::analysis::axes`]: every `override` the
//! spec gives candidate values for, neighbours of the defaults of the others, and the workgroup
//! size). Derived parameters are computed per point and points that break a constraint of the spec
//! are dropped; points over the adapter's limits and the baseline's own configuration are left out
//! too, so every point is worth an evaluation.

use crate::analysis::axes::{self, limit};
use crate::evaluate::Candidate;
use kf_runtime::Program;
use kf_runtime::resolve::ResolvedKernel;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// One point of the parameter space: values for the pipeline constants.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// Constant values, by override name.
    pub constants: Vec<(String, f64)>,
}

impl Point {
    /// `KF_WG_X=256 TILE=16`.
    pub fn label(&self) -> String {
        self.constants
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The parameter space of a kernel.
#[derive(Clone, Debug)]
pub struct Space {
    /// The WGSL the points apply to (the user's, or with the workgroup size lifted).
    pub wgsl: String,
    /// Whether the workgroup size was lifted from a literal.
    pub lifted: bool,
    /// Points to search, the baseline's own configuration excluded.
    pub points: Vec<Point>,
    /// Points of the product dropped because they break a constraint of the spec or their launch
    /// rule cannot be evaluated.
    pub excluded: usize,
}

/// Builds the parameter space of `kernel` on an adapter with `limits`.
pub fn space(kernel: &ResolvedKernel, limits: &BTreeMap<String, u64>) -> Space {
    let mut ax = axes::axes(
        &kernel.baseline.wgsl,
        &kernel.interface,
        &kernel.params,
        limits,
    );
    axes::drop_derived_axes(kernel, &mut ax.axes);
    let mut points = vec![Point {
        constants: Vec::new(),
    }];
    for axis in &ax.axes {
        let mut next = Vec::with_capacity(points.len() * axis.len());
        for p in &points {
            for choice in axis {
                let mut c = p.constants.clone();
                c.extend(choice.iter().cloned());
                next.push(Point { constants: c });
            }
        }
        points = next;
    }
    // Derived values, then drop points that break a constraint, are over the limits, or are the
    // baseline's own configuration (overrides without a default take the baseline's constants).
    let excluded = apply_constraints(kernel, &mut points);
    let max_inv = limit(limits, "max_compute_invocations_per_workgroup", 256);
    let mut defaults = ax.defaults.clone();
    for (k, v) in kernel.baseline.constants.iter() {
        defaults.insert(k.to_string(), *v);
    }
    points.retain(|p| {
        let inv: u64 = ax
            .workgroup(&p.constants)
            .iter()
            .map(|&d| u64::from(d))
            .product();
        let is_baseline = p.constants.iter().all(|(k, v)| defaults.get(k) == Some(v));
        inv <= max_inv && !is_baseline && !p.constants.is_empty()
    });
    Space {
        wgsl: ax.wgsl,
        lifted: ax.lifted,
        points,
        excluded,
    }
}

/// The candidate for `point`.
pub fn candidate(kernel: &ResolvedKernel, space: &Space, point: &Point) -> Candidate {
    Candidate::new(
        Program {
            wgsl: Cow::Owned(space.wgsl.clone()),
            entry: kernel.baseline.entry.clone(),
            constants: Cow::Owned(
                point
                    .constants
                    .iter()
                    .map(|(k, v)| (Cow::Owned(k.clone()), *v))
                    .collect(),
            ),
            workgroup_size: kernel.baseline.workgroup_size,
            workgroup_storage_bytes: 0,
            dispatch: kernel.baseline.dispatch.clone(),
            workspace: Cow::Borrowed(&[]),
            then: kernel.baseline.then.clone(),
        },
        format!(
            "{}param {}",
            if space.lifted {
                "lifted-workgroup-size, "
            } else {
                ""
            },
            point.label()
        ),
    )
}

/// Adds derived values to every point and drops the points that break a constraint; returns
/// how many were dropped.
fn apply_constraints(kernel: &ResolvedKernel, points: &mut Vec<Point>) -> usize {
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
    let base = axes::baseline_values(kernel);
    let before = points.len();
    points.retain_mut(|p| axes::complete(kernel, &base, launch, &mut p.constants));
    before - points.len()
}

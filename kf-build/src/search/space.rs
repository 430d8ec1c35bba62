//! The parameter space of a kernel: its template parameters and the workgroup size.
//!
//! Every `override` the spec gives candidate values for, neighbours of the defaults of the others,
//! and the workgroup size (an override the kernel already has, or a literal lifted into overrides by
//! [`super::rewrite`]). Derived parameters are computed per point and points that break a
//! constraint of the spec are dropped ([`super::constraints`]); points over the adapter's limits and
//! the baseline's own configuration are left out too, so every point is worth an evaluation.

use crate::analysis::workgroup as rewrite;
use crate::harness::Candidate;
use kf_runtime::Program;
use kf_runtime::interface::Interface;
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

pub(crate) fn limit(limits: &BTreeMap<String, u64>, name: &str, default: u64) -> u64 {
    limits.get(name).copied().unwrap_or(default)
}

/// Workgroup shapes worth trying for `dims` overridable dimensions within the limits.
fn workgroup_shapes(dims: usize, limits: &BTreeMap<String, u64>) -> Vec<[u32; 3]> {
    let max_inv = limit(limits, "max_compute_invocations_per_workgroup", 256);
    let max = [
        limit(limits, "max_compute_workgroup_size_x", 256),
        limit(limits, "max_compute_workgroup_size_y", 256),
        limit(limits, "max_compute_workgroup_size_z", 64),
    ];
    let mut out = Vec::new();
    if dims == 1 {
        for x in [16u64, 32, 64, 128, 256, 512, 1024] {
            if x <= max[0] && x <= max_inv {
                out.push([x as u32, 1, 1]);
            }
        }
    } else {
        for x in [4u64, 8, 16, 32, 64, 128, 256] {
            for y in [1u64, 2, 4, 8, 16, 32] {
                let n = x * y;
                if (32..=max_inv).contains(&n) && x <= max[0] && y <= max[1] {
                    out.push([x as u32, y as u32, 1]);
                }
            }
        }
    }
    out
}

/// Values worth trying for an override the spec gives no candidates for: powers of two around an
/// integer default, both values of a bool. Floats are left alone (their value is usually part of
/// what the kernel computes); list candidates with `params(..)` to search them.
fn default_candidates(ty: &str, default: Option<f64>) -> Vec<f64> {
    match (ty, default) {
        ("bool", _) => vec![0.0, 1.0],
        ("u32" | "i32", Some(d)) if d >= 1.0 && d.fract() == 0.0 => {
            let mut v: Vec<f64> = [d / 4.0, d / 2.0, d, d * 2.0, d * 4.0]
                .into_iter()
                .filter(|x| *x >= 1.0 && x.fract() == 0.0 && *x <= 4096.0)
                .collect();
            v.dedup();
            v
        }
        _ => Vec::new(),
    }
}

/// The axes of a program's parameter space: the workgroup dimensions form one joint axis, every
/// other searched override one axis each; each axis is a list of choices, each choice a list of
/// `(override, value)` assignments.
#[derive(Clone, Debug)]
pub struct Axes {
    /// The WGSL the choices apply to (the program's, or with its workgroup size lifted).
    pub wgsl: String,
    /// Whether the workgroup size was lifted from a literal.
    pub lifted: bool,
    /// Which override drives each workgroup dimension.
    pub wg_names: [Option<String>; 3],
    /// The workgroup size at the defaults.
    pub workgroup_size: [u32; 3],
    /// The axes.
    pub axes: Vec<Vec<Vec<(String, f64)>>>,
    /// The value each searched override has when no constant is given.
    pub defaults: BTreeMap<String, f64>,
}

impl Axes {
    /// The workgroup size `constants` give.
    pub fn workgroup(&self, constants: &[(String, f64)]) -> [u32; 3] {
        let mut wg = self.workgroup_size;
        for (size, name) in wg.iter_mut().zip(&self.wg_names) {
            if let Some(n) = name
                && let Some((_, v)) = constants.iter().find(|(k, _)| k == n)
            {
                *size = *v as u32;
            }
        }
        wg
    }
}

/// The axes of the program `wgsl` (with interface `iface`), searching `params` where given.
pub fn axes(
    wgsl: &str,
    iface: &Interface,
    params: &[(String, Vec<f64>)],
    limits: &BTreeMap<String, u64>,
) -> Axes {
    let params: BTreeMap<&str, &Vec<f64>> = params.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let mut wgsl = wgsl.to_owned();
    let mut lifted = false;
    // Which override drives each workgroup dimension.
    let mut wg_names: [Option<String>; 3] = iface.workgroup_size_overrides.clone();
    if wg_names.iter().all(Option::is_none) {
        let dims = if iface.workgroup_size[1] > 1 || iface.workgroup_size[2] > 1 {
            2
        } else {
            1
        };
        if let Some(text) =
            rewrite::lift_workgroup_size(&wgsl, &iface.entry, iface.workgroup_size, dims)
        {
            let ok = kf_runtime::resolve::reflect(&text, Some(&iface.entry), "lifted")
                .map(|r| r.interface.workgroup_size == iface.workgroup_size)
                .unwrap_or(false);
            if ok {
                wgsl = text;
                lifted = true;
                for (d, name) in wg_names.iter_mut().enumerate().take(dims) {
                    *name = Some(rewrite::LIFTED[d].to_owned());
                }
            }
        }
    }
    // Workgroup axis: user values for those overrides if given, else the default shapes.
    let wg_dims: Vec<usize> = (0..3).filter(|&d| wg_names[d].is_some()).collect();
    let user_wg = wg_dims
        .iter()
        .any(|&d| params.contains_key(wg_names[d].as_deref().unwrap_or("")));
    let mut wg_axis: Vec<Vec<(String, f64)>> = Vec::new();
    if !wg_dims.is_empty() && !user_wg {
        for shape in workgroup_shapes(wg_dims.len().min(2), limits) {
            let values = wg_dims
                .iter()
                .enumerate()
                .filter(|(i, _)| *i < 2)
                .map(|(i, &d)| (wg_names[d].clone().expect("checked"), f64::from(shape[i])))
                .collect();
            wg_axis.push(values);
        }
    }
    // Every other override: the values `params(..)` gives, else neighbours of its default.
    let mut axes: Vec<Vec<Vec<(String, f64)>>> = Vec::new();
    if !wg_axis.is_empty() {
        axes.push(wg_axis);
    }
    for o in &iface.overrides {
        let drives_wg = wg_names.iter().flatten().any(|n| *n == o.name);
        let values: Vec<f64> = match params.get(o.name.as_str()) {
            Some(values) => values.to_vec(),
            None if drives_wg => continue,
            None => default_candidates(&o.ty, o.default),
        };
        if values.len() > 1 || params.contains_key(o.name.as_str()) {
            axes.push(values.iter().map(|v| vec![(o.name.clone(), *v)]).collect());
        }
    }
    let defaults: BTreeMap<String, f64> = iface
        .overrides
        .iter()
        .filter_map(|o| o.default.map(|d| (o.name.clone(), d)))
        .chain((0..3).filter_map(|d| {
            lifted
                .then(|| {
                    wg_names[d]
                        .clone()
                        .map(|n| (n, f64::from(iface.workgroup_size[d])))
                })
                .flatten()
        }))
        .collect();
    Axes {
        wgsl,
        lifted,
        wg_names,
        workgroup_size: iface.workgroup_size,
        axes,
        defaults,
    }
}

/// Builds the parameter space of `kernel` on an adapter with `limits`.
pub fn space(kernel: &ResolvedKernel, limits: &BTreeMap<String, u64>) -> Space {
    let mut ax = axes(
        &kernel.baseline.wgsl,
        &kernel.interface,
        &kernel.params,
        limits,
    );
    super::constraints::drop_derived_axes(kernel, &mut ax.axes);
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
    let excluded = super::constraints::apply(kernel, &mut points);
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

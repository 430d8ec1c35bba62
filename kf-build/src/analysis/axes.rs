//! The template parameters of a program: the axes of its parameter space, and the derived values
//! and constraints every point of it must meet.
//!
//! Both the parameter search (`search::space`, the cartesian product of the axes) and the
//! parameter operator (`operators::params`, one axis at a time) read them here, so the two agree
//! on what a parameter is and which of its values are worth an evaluation.
//!
//! The axes: every `override` the spec gives candidate values for, neighbours of the defaults of
//! the others, and the workgroup size (an override the kernel already has, or a literal lifted
//! into overrides by [`super::workgroup`]).
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

use super::workgroup;
use kf_runtime::Dispatch;
use kf_runtime::interface::Interface;
use kf_runtime::resolve::ResolvedKernel;
use std::collections::BTreeMap;

/// A limit by wgpu field name, or `default` when the adapter did not report it.
pub fn limit(limits: &BTreeMap<String, u64>, name: &str, default: u64) -> u64 {
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
            workgroup::lift_workgroup_size(&wgsl, &iface.entry, iface.workgroup_size, dims)
        {
            let ok = kf_runtime::resolve::reflect(&text, Some(&iface.entry), "lifted")
                .map(|r| r.interface.workgroup_size == iface.workgroup_size)
                .unwrap_or(false);
            if ok {
                wgsl = text;
                lifted = true;
                for (d, name) in wg_names.iter_mut().enumerate().take(dims) {
                    *name = Some(workgroup::LIFTED[d].to_owned());
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

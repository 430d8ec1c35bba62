//! Resolution of template parameters: candidate lists, derived values and constraints checked
//! against the WGSL's `override`s, and the baseline's own configuration.
//!
//! An `override` without an initializer cannot build a pipeline on its own; when the spec gives
//! it candidates, the baseline (the reference every variant is checked against) uses the first
//! one, and derived parameters follow from those values. The baseline must meet every
//! constraint on every tune and verification shape: a constraint the reference itself breaks is
//! a mistake in the spec, reported at the constraint.
//!
//! Invariant: after resolution every override without an initializer has a baseline value, every
//! parameter the launch rule reads has a baseline constant, and every dimension of the baseline's
//! workgroup size is known.

use super::{SpecError, shape_text};
use crate::interface::Interface;
use crate::params::ParamExpr;
use crate::spec::{Loc, Shape, Spec};
use std::collections::BTreeMap;

/// The baseline's parameter values.
pub(super) struct Baseline {
    /// Pipeline constants the baseline needs: overrides without a literal default that the spec
    /// gives values for.
    pub constants: Vec<(String, f64)>,
    /// The baseline's workgroup size.
    pub workgroup_size: [u32; 3],
}

fn is_integer(ty: &str) -> bool {
    matches!(ty, "u32" | "i32" | "bool")
}

/// Checks `params(..)` and `constraints(..)` against `interface` and computes the baseline's
/// configuration; problems go to `errors`. The parameters in `launch` (those the launch rule
/// reads) get a baseline constant even where the WGSL gives a default.
pub(super) fn resolve_params(
    spec: &Spec,
    interface: &Interface,
    shapes: &[&Shape],
    launch: &[&str],
    errors: &mut Vec<SpecError>,
) -> Baseline {
    let overrides = || {
        interface
            .overrides
            .iter()
            .map(|o| format!("`{}`", o.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let no_override = |loc: Loc, p: &str| {
        SpecError::new(loc, format!("the WGSL has no `override {p}`")).hint(
            if interface.overrides.is_empty() {
                "declare it in the WGSL, e.g. `override TILE: u32 = 16;`".to_string()
            } else {
                format!(
                    "{}its overrides are {}",
                    super::nearest(p, interface.overrides.iter().map(|o| &o.name[..]))
                        .map(|n| format!("did you mean `{n}`? "))
                        .unwrap_or_default(),
                    overrides()
                )
            },
        )
    };
    for (i, (p, values)) in spec.params.iter().enumerate() {
        match interface.overrides.iter().find(|o| o.name == *p) {
            None => errors.push(no_override(Loc::Param(i), p)),
            Some(o)
                if o.ty != "f32" && o.ty != "f16" && values.iter().any(|v| v.fract() != 0.0) =>
            {
                errors.push(SpecError::new(
                    Loc::Param(i),
                    format!(
                        "`override {p}` is `{}`; its candidates must be integers",
                        o.ty
                    ),
                ))
            }
            Some(_) => {}
        }
    }
    let sizes: Vec<&str> = spec.sizes.iter().map(|(n, _)| n.as_str()).collect();
    // Names an expression may use: integer overrides (and, in constraints, sizes).
    let check_names = |e: &ParamExpr, loc: Loc, allow_sizes: bool, errors: &mut Vec<SpecError>| {
        for n in e.names() {
            match interface.overrides.iter().find(|o| o.name == n) {
                Some(o) if !is_integer(&o.ty) => {
                    let mut err = SpecError::new(
                        loc,
                        format!(
                            "`override {n}` is `{}`; parameter expressions are integer arithmetic",
                            o.ty
                        ),
                    )
                    .hint("derive and constrain only `u32`, `i32` and `bool` overrides");
                    err.culprit = Some(n.to_owned());
                    errors.push(err);
                }
                Some(_) => {}
                None if allow_sizes && sizes.contains(&n) => {}
                None => {
                    let mut err = SpecError::new(
                        loc,
                        format!(
                            "`{n}` is neither an `override` of the WGSL{}",
                            if allow_sizes {
                                " nor a size declared in `sizes(..)`"
                            } else {
                                ""
                            }
                        ),
                    )
                    .hint(if allow_sizes {
                        format!("its overrides are {}; sizes: {}", overrides(), sizes.join(", "))
                    } else {
                        format!(
                            "a derived value follows from other overrides ({}); one pipeline constant serves every shape, so it cannot use sizes",
                            overrides()
                        )
                    });
                    err.culprit = Some(n.to_owned());
                    errors.push(err);
                }
            }
        }
    };
    for (i, (p, e)) in spec.derived.iter().enumerate() {
        let loc = Loc::Derived(i);
        match interface.overrides.iter().find(|o| o.name == *p) {
            None => errors.push(no_override(loc, p)),
            Some(o) if !is_integer(&o.ty) => errors.push(SpecError::new(
                loc,
                format!(
                    "`override {p}` is `{}`; only integer overrides can be derived",
                    o.ty
                ),
            )),
            Some(_) if spec.params.iter().any(|(q, _)| q == p) => errors.push(
                SpecError::new(loc, format!("`{p}` has candidates and a derived value"))
                    .hint(format!("give either `{p} = [..]` or `{p} = <expression>`")),
            ),
            Some(_) => check_names(e, loc, false, errors),
        }
    }
    for (i, c) in spec.constraints.iter().enumerate() {
        check_names(c, Loc::Constraint(i), true, errors);
    }

    // The baseline's values: literal defaults, then first candidates for overrides without one,
    // then derived values in order.
    let mut values: BTreeMap<String, f64> = interface
        .overrides
        .iter()
        .filter_map(|o| o.default.map(|d| (o.name.clone(), d)))
        .collect();
    let mut constants: Vec<(String, f64)> = Vec::new();
    for (p, candidates) in &spec.params {
        if let Some(o) = interface.overrides.iter().find(|o| o.name == *p)
            && o.default.is_none()
            && let Some(first) = candidates.first()
        {
            values.insert(p.clone(), *first);
            constants.push((p.clone(), *first));
        }
    }
    if errors.is_empty() {
        for (i, (p, e)) in spec.derived.iter().enumerate() {
            let lookup = |n: &str| values.get(n).map(|v| *v as i64);
            match e.eval(&lookup) {
                Ok(v) => {
                    let declared_default = interface
                        .overrides
                        .iter()
                        .find(|o| o.name == *p)
                        .and_then(|o| o.default);
                    if declared_default.is_none() {
                        constants.push((p.clone(), v as f64));
                        values.insert(p.clone(), v as f64);
                    }
                }
                Err(err) => errors.push(
                    SpecError::new(
                        Loc::Derived(i),
                        format!("cannot compute the baseline's `{p}`: {err}"),
                    )
                    .hint("a derived value may use overrides with defaults, candidates, or derived earlier in `params(..)`"),
                ),
            }
        }
    }
    for name in launch {
        if !constants.iter().any(|(k, _)| k == name)
            && let Some(v) = values.get(*name)
        {
            constants.push(((*name).to_owned(), *v));
        }
    }
    for o in &interface.overrides {
        let given = values.contains_key(&o.name) || spec.derived.iter().any(|(p, _)| *p == o.name);
        if o.required && !given {
            errors.push(
                SpecError::new(
                    Loc::Attr,
                    format!(
                        "`override {}` has no default value, so the kernel cannot run without one",
                        o.name
                    ),
                )
                .hint(format!(
                    "give it candidates (the first is the baseline's), e.g. `params({} = [64, 128, 256])`, or derive it, e.g. `params({} = X * Y)`",
                    o.name, o.name
                )),
            );
        }
    }
    let mut workgroup_size = interface.workgroup_size;
    for (dim, name) in interface.workgroup_size_overrides.iter().enumerate() {
        let Some(name) = name else { continue };
        match values.get(name) {
            Some(v) if *v >= 1.0 => workgroup_size[dim] = *v as u32,
            _ if errors.is_empty() => errors.push(
                SpecError::new(
                    Loc::Attr,
                    format!(
                        "the workgroup size uses `override {name}`, which has no literal default"
                    ),
                )
                .hint(format!(
                    "give it candidates, e.g. `params({name} = [64, 128])`, or a literal default (`override {name}: u32 = 64;`)"
                )),
            ),
            _ => {}
        }
    }
    if errors.is_empty() {
        for (i, c) in spec.constraints.iter().enumerate() {
            for shape in shapes {
                let lookup = |n: &str| {
                    values
                        .get(n)
                        .map(|v| *v as i64)
                        .or_else(|| shape.get(n).map(|v| *v as i64))
                };
                let holds = c.eval(&lookup);
                if !matches!(holds, Ok(v) if v != 0) {
                    let config: Vec<String> = c
                        .names()
                        .iter()
                        .filter_map(|n| values.get(*n).map(|v| format!("{n} = {v}")))
                        .collect();
                    errors.push(
                        SpecError::new(
                            Loc::Constraint(i),
                            format!(
                                "the baseline ({}) breaks `{c}` on shape {}{}",
                                if config.is_empty() {
                                    "its defaults".to_string()
                                } else {
                                    config.join(", ")
                                },
                                shape_text(shape),
                                match holds {
                                    Err(e) => format!(": {e}"),
                                    Ok(_) => String::new(),
                                }
                            ),
                        )
                        .hint("the kernel itself must meet every constraint on every tune and verify shape: list a valid candidate first, or give `verify_shapes` that meet it"),
                    );
                    break;
                }
            }
        }
    }
    Baseline {
        constants,
        workgroup_size,
    }
}

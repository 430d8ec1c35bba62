//! Launch sequences (`stages = [..]`): the later stages of the baseline, and which stage uses a
//! binding.
//!
//! A sequence is one module whose entry points run in order over the kernel's bindings. The first
//! stage is the baseline's own entry point and launch rule (reflected like any kernel's); each
//! later stage needs its entry point found, its workgroup size and memory with the baseline's
//! constants applied, and its launch rule padded to three dimensions. Errors point at the stage.

use super::SpecError;
use crate::interface::BindingInterface;
use crate::program::{Dispatch, Stage};
use crate::spec::{DispatchSpec, Loc, Spec};
use std::borrow::Cow;

/// A launch rule of one to three expressions as three (missing dimensions are 1).
pub(super) fn dispatch(d: &DispatchSpec) -> Dispatch {
    let mut size = d.size.clone();
    while size.len() < 3 {
        size.push(crate::expr::SizeExpr::lit(1));
    }
    Dispatch {
        mode: d.mode,
        size: [size[0].clone(), size[1].clone(), size[2].clone()],
    }
}

/// The stages after the first, with the workgroup size and memory `constants` give each entry
/// point. A stage that names no compute entry point, or whose constants do not apply, is an
/// error at the stage (and left out).
pub(super) fn later(
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    spec: &Spec,
    constants: &[(String, f64)],
    errors: &mut Vec<SpecError>,
) -> Vec<Stage> {
    let computes: Vec<&str> = module
        .entry_points
        .iter()
        .filter(|e| e.stage == naga::ShaderStage::Compute)
        .map(|e| e.name.as_str())
        .collect();
    let mut pipeline_constants = naga::back::PipelineConstants::default();
    for (name, value) in constants {
        pipeline_constants.insert(name.clone(), *value);
    }
    let mut out = Vec::new();
    for (i, stage) in spec.stages.iter().enumerate().skip(1) {
        if !computes.contains(&stage.entry.as_str()) {
            let list: Vec<String> = computes.iter().map(|n| format!("`{n}`")).collect();
            errors.push(
                SpecError::new(
                    Loc::Stage(i),
                    format!(
                        "stage {}: entry point `{}` not found; the module's compute entry points are {}",
                        i + 1,
                        stage.entry,
                        list.join(", ")
                    ),
                )
                .hint("each stage's `entry` must name a `@compute` function of the WGSL"),
            );
            continue;
        }
        match crate::variant::apply_constants(module, info, &stage.entry, &pipeline_constants) {
            Ok(checked) => out.push(Stage {
                entry: Cow::Owned(stage.entry.clone()),
                workgroup_size: checked.workgroup_size,
                workgroup_storage_bytes: checked.workgroup_storage_bytes,
                dispatch: dispatch(&stage.dispatch),
            }),
            Err(e) => errors.push(SpecError::new(
                Loc::Stage(i),
                format!("stage {} (`{}`): {e}", i + 1, stage.entry),
            )),
        }
    }
    out
}

/// The first stage whose entry point uses the binding `b`, if any does.
pub(super) fn first_user(
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    spec: &Spec,
    b: &BindingInterface,
) -> Option<usize> {
    let (handle, _) = module.global_variables.iter().find(|(_, v)| {
        v.binding
            .as_ref()
            .is_some_and(|r| r.group == b.group && r.binding == b.binding)
    })?;
    spec.stages.iter().position(|stage| {
        module
            .entry_points
            .iter()
            .position(|e| e.name == stage.entry && e.stage == naga::ShaderStage::Compute)
            .is_some_and(|ep| !info.get_entry_point(ep)[handle].is_empty())
    })
}

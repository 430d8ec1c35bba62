//! Workgroup reshaping: a kernel over a 2-D (or 3-D) grid gets other 2-D workgroup shapes
//! (16×16, 32×8, 8×32, 64×4, 256×1, …).
//!
//! Why it keeps the meaning: under a `grid` launch rule the dispatch counts invocations, and the
//! workgroup counts are derived from the variant's own workgroup size, so every logical invocation
//! still runs with the same `global_invocation_id`. What an invocation computes can then depend on
//! the shape only through the builtins that describe it or through state shared within a
//! workgroup. So the operator proves from the IR that the entry point (and everything it calls)
//!
//! - reads no builtin other than `global_invocation_id` among those that depend on the shape
//!   (`local_invocation_id`, `local_invocation_index`, `workgroup_id`, `num_workgroups`, the
//!   subgroup builtins), counting a builtin as read only when its expression has uses;
//! - uses no `var<workgroup>` variable, no barrier, no `workgroupUniformLoad`, no subgroup
//!   operation.
//!
//! Extra invocations in the last workgroups are the kernel's business (its bounds checks); the
//! evaluator's verification shapes, which no workgroup size divides, catch a kernel that lacks them.
//!
//! Limits: a `workgroups` launch rule is refused (the workgroup count, not the invocation count,
//! is fixed there); a 1-D grid is left to the parameter search, which already varies a lifted
//! workgroup size; a 1-D kernel (`grid = (n)`, index `gid.x`) is not turned into 2-D workgroups:
//! that needs the index recomputed from `gid.y * row + gid.x` with `row` from `num_workgroups`, and
//! it can only help a dispatch that exceeds the per-dimension workgroup limit, which the baseline
//! already satisfies. Mixed attributes (`@workgroup_size(WG, 8)`) are refused.
//!
//! Moves: none. The shape changes neither the memory technique, the algorithm, the cooperation
//! between invocations nor the work per invocation, so it stays in its parent's archive cell;
//! it is a parameter-level change the search uses to refine an elite.

use super::{Moves, Operator, Rewrite, Skip, Subject};
use crate::analysis::loops::{self, builtins};
use crate::analysis::workgroup::{LIFTED, lift_workgroup_size};
use kf_runtime::program::DispatchMode;

/// The workgroup reshaping operator.
#[derive(Clone, Copy, Debug, Default)]
pub struct Reshape;

/// Shapes tried, before the adapter's limits and the current shape are taken out.
const SHAPES: [(u32, u32); 11] = [
    (8, 8),
    (16, 8),
    (16, 16),
    (32, 8),
    (8, 32),
    (64, 4),
    (4, 64),
    (128, 2),
    (256, 1),
    (32, 16),
    (32, 32),
];

impl Operator for Reshape {
    fn name(&self) -> &'static str {
        "reshape"
    }

    fn moves(&self) -> Moves {
        &[]
    }

    fn apply(&self, subject: &Subject<'_>) -> Result<Vec<Rewrite>, Skip> {
        let program = subject.program;
        if program.dispatch.mode != DispatchMode::Grid {
            return Err(Skip(
                "launched by workgroup count: the workgroup shape is part of what it computes"
                    .into(),
            ));
        }
        let grid_dims = program
            .dispatch
            .size
            .iter()
            .filter(|s| s.as_constant() != Some(1))
            .count();
        if grid_dims < 2 || program.dispatch.size[1].as_constant() == Some(1) {
            return Err(Skip(
                "a 1-D grid: its workgroup size is a parameter, not a shape".into(),
            ));
        }
        let entry = program.entry.as_ref();
        let r = kf_runtime::resolve::reflect(&program.wgsl, Some(entry), "parent")
            .map_err(|e| Skip(format!("the parent does not validate: {e}")))?;
        let ep = loops::entry_index(&r.module, entry)
            .ok_or_else(|| Skip(format!("no compute entry point `{entry}`")))?;
        for b in builtins(&r.module, &r.info, ep) {
            use naga::BuiltIn as B;
            let shape_dependent = matches!(
                b.builtin,
                B::LocalInvocationId
                    | B::LocalInvocationIndex
                    | B::WorkGroupId
                    | B::NumWorkGroups
                    | B::WorkGroupSize
                    | B::NumSubgroups
                    | B::SubgroupId
                    | B::SubgroupSize
                    | B::SubgroupInvocationId
            );
            if shape_dependent && b.used {
                return Err(Skip(format!(
                    "reads {:?}, which depends on the workgroup shape",
                    b.builtin
                )));
            }
        }
        let fi = r.info.get_entry_point(ep);
        for (h, g) in r.module.global_variables.iter() {
            if g.space == naga::AddressSpace::WorkGroup && !fi[h].is_empty() {
                return Err(Skip(format!(
                    "uses workgroup memory `{}`",
                    g.name.as_deref().unwrap_or("?")
                )));
            }
        }
        for f in loops::reachable(&r.module, ep) {
            if let Some(what) = loops::workgroup_sync(&loops::function(&r.module, f).body) {
                return Err(Skip(format!("uses {what}")));
            }
        }
        // Which overrides carry the shape: the parent's own, or a literal lifted into KF_WG_X/Y.
        let names = &r.interface.workgroup_size_overrides;
        let (wgsl, x_name, y_name) = match (&names[0], &names[1]) {
            (Some(x), Some(y)) => (program.wgsl.to_string(), x.clone(), y.clone()),
            (None, None) => {
                let lifted =
                    lift_workgroup_size(&program.wgsl, entry, program.workgroup_size, 2)
                        .ok_or_else(|| Skip("cannot find the @workgroup_size attribute".into()))?;
                (lifted, LIFTED[0].to_owned(), LIFTED[1].to_owned())
            }
            _ => {
                return Err(Skip(
                    "the workgroup size mixes an override and a literal".into(),
                ));
            }
        };
        let limit = |name: &str, default: u64| subject.target.limit(name, default);
        let max_inv = limit("max_compute_invocations_per_workgroup", 256);
        let max_x = limit("max_compute_workgroup_size_x", 256);
        let max_y = limit("max_compute_workgroup_size_y", 256);
        let current = (program.workgroup_size[0], program.workgroup_size[1]);
        let mut out = Vec::new();
        let mut last_skip = None;
        for (x, y) in SHAPES {
            if (x, y) == current
                || u64::from(x) * u64::from(y) * u64::from(program.workgroup_size[2]) > max_inv
                || u64::from(x) > max_x
                || u64::from(y) > max_y
            {
                continue;
            }
            let constants = [
                (x_name.clone(), f64::from(x)),
                (y_name.clone(), f64::from(y)),
            ];
            match super::finish(
                subject,
                wgsl.clone(),
                &constants,
                format!("reshape({x}x{y})"),
                Vec::new(),
            ) {
                Ok(rw) => out.push(rw),
                Err(e) => last_skip = Some(e),
            }
        }
        if out.is_empty() {
            return Err(last_skip
                .unwrap_or_else(|| Skip("no other shape fits the adapter's limits".into())));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests;

//! Valid WGSL that naga itself cannot compile: constructs that pass validation but make naga's
//! pipeline-creation passes panic.
//!
//! Such a kernel crashes whatever process creates its pipeline: the tuner's worker, and the user's
//! app the same way, at `create_compute_pipeline`. The tuner cannot evaluate the baseline then,
//! and "the baseline crashed" alone sends the user hunting. This module recognises the constructs
//! from naga's IR so the report can name the line and give the workaround. It never rewrites the
//! user's kernel: the kernel is the user's, and the app would crash on it anyway.

use naga::{ArraySize, Module, TypeInner};

/// One construct naga's pipeline-creation passes panic on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NagaPanic {
    /// The construct in the user's words, e.g. ``an array sized by the override expression `A + B` (line 4)``.
    pub construct: String,
    /// What to write instead.
    pub workaround: String,
    /// The upstream change or issue behind it.
    pub upstream: &'static str,
}

/// Where the anonymous override for array-size expressions comes from (naga's WGSL front end
/// makes one per `array<T, expr>` whose size is an override expression but not one override).
pub const ANONYMOUS_ARRAY_SIZE_OVERRIDE: &str = "https://github.com/gfx-rs/wgpu/pull/7082";

/// The constructs of `module` (parsed from `wgsl`) that naga 30's pipeline-constant pass panics on.
///
/// An array sized by an override *expression* (`array<f32, A + B>`, not `array<f32, A>`) gets an
/// override with neither a name nor an `@id`. `process_overrides` walks the module's global
/// expressions in order and, at a reference to an override it has not processed yet, processes
/// every override declared up to that one, looking each up by name or id; it reaches
/// `unreachable!()` at the anonymous one. So the pipeline panics when a named override declared
/// *after* such an array is referenced by a module-scope expression (a `@workgroup_size(WG)`, an
/// override's initializer, another array's size), on every backend that runs the pass (Vulkan,
/// Metal, DX12, GL), whatever constants the pipeline passes.
pub fn pipeline_creation_panics(module: &Module, wgsl: &str) -> Vec<NagaPanic> {
    let referenced_later = |anonymous: naga::Handle<naga::Override>| {
        module.global_expressions.iter().any(|(_, e)| {
            matches!(*e, naga::Expression::Override(h)
                if h.index() > anonymous.index()
                    && (module.overrides[h].name.is_some() || module.overrides[h].id.is_some()))
        })
    };
    let mut out = Vec::new();
    for (handle, o) in module.overrides.iter() {
        if o.name.is_some() || o.id.is_some() || !referenced_later(handle) {
            continue;
        }
        let sized = module.types.iter().find_map(|(ty, t)| match t.inner {
            TypeInner::Array {
                size: ArraySize::Pending(h),
                ..
            } if h == handle => Some(ty),
            _ => None,
        });
        let variable = sized.and_then(|ty| {
            module
                .global_variables
                .iter()
                .find(|(_, g)| g.ty == ty)
                .and_then(|(_, g)| g.name.clone())
        });
        let span = module.overrides.get_span(handle);
        let (text, line) = match span.to_range() {
            Some(r) if r.end <= wgsl.len() => (
                wgsl[r.clone()].trim().to_owned(),
                Some(wgsl[..r.start].matches('\n').count() + 1),
            ),
            _ => (String::new(), None),
        };
        let mut construct = String::from("an array sized by an override expression");
        if !text.is_empty() {
            construct.push_str(&format!(" `{text}`"));
        }
        if let Some(v) = &variable {
            construct.push_str(&format!(" (`var {v}`"));
            match line {
                Some(l) => construct.push_str(&format!(", line {l})")),
                None => construct.push(')'),
            }
        } else if let Some(l) = line {
            construct.push_str(&format!(" (line {l})"));
        }
        let name = variable
            .as_deref()
            .map(|v| format!("{}_LEN", v.to_uppercase()))
            .unwrap_or_else(|| "ARRAY_LEN".to_owned());
        let value = if text.is_empty() { "…" } else { &text };
        out.push(NagaPanic {
            construct,
            workaround: format!(
                "name the size as its own override and size the array by that name: `override {name}: u32 = {value};` and `array<T, {name}>`"
            ),
            upstream: ANONYMOUS_ARRAY_SIZE_OVERRIDE,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn panics(wgsl: &str) -> Vec<NagaPanic> {
        let module = naga::front::wgsl::parse_str(wgsl).expect("valid WGSL");
        pipeline_creation_panics(&module, wgsl)
    }

    const SUM_OF_OVERRIDES: &str = "override A: u32 = 64u;
override B: u32 = 2u;
@group(0) @binding(0) var<storage, read_write> y: array<f32>;
var<workgroup> tile: array<f32, A + B>;
override WG: u32 = 64u;
@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) i: u32) {
    tile[i] = y[i];
    workgroupBarrier();
    y[i] = tile[(i + 1u) % 64u];
}
";

    #[test]
    fn an_array_sized_by_an_override_expression_is_named_with_its_line() {
        let found = panics(SUM_OF_OVERRIDES);
        assert_eq!(found.len(), 1, "{found:?}");
        let p = &found[0];
        assert!(p.construct.contains("`A + B`"), "{p:?}");
        assert!(p.construct.contains("`var tile`, line 4"), "{p:?}");
        assert!(
            p.workaround
                .contains("`override TILE_LEN: u32 = A + B;` and `array<T, TILE_LEN>`"),
            "{p:?}"
        );
    }

    #[test]
    fn the_workaround_and_plain_override_sizes_are_not_flagged() {
        let named = SUM_OF_OVERRIDES.replace(
            "var<workgroup> tile: array<f32, A + B>;",
            "override TILE_LEN: u32 = A + B;\nvar<workgroup> tile: array<f32, TILE_LEN>;",
        );
        assert_eq!(panics(&named), vec![]);
        let plain = SUM_OF_OVERRIDES.replace("array<f32, A + B>", "array<f32, A>");
        assert_eq!(panics(&plain), vec![]);
        let literal = SUM_OF_OVERRIDES.replace("array<f32, A + B>", "array<f32, 66>");
        assert_eq!(panics(&literal), vec![]);
        // No named override after the array is referenced at module scope: the pass reaches the
        // anonymous override only in its final sweep, which skips it.
        let literal_size = SUM_OF_OVERRIDES.replace("@workgroup_size(WG)", "@workgroup_size(64)");
        assert_eq!(panics(&literal_size), vec![]);
    }
}

/*!
The runtime half of KernelFoundry: a WGSL compute kernel marked with `#[kernelfoundry(..)]` becomes
a [`Kernel`] static holding the baseline and every tuned variant found in the crate's
`kernelfoundry/` cache at build time. At startup [`Kernel::load`] picks the variant tuned for the
GPU it finds (exact adapter → same device with another driver → baseline), builds it inside wgpu
error scopes, and falls back to the baseline on any problem.

```no_run
use kf_macros::kernelfoundry;
use kf_runtime::Kernel;

#[kernelfoundry(
    source = r#"
struct Params { n: u32, a: f32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < p.n) { y[g.x] = p.a * x[g.x] + y[g.x]; }
}
"#,
    sizes(n = 1048576),
    bind(x = input(n), y = inout(n), p = uniform(n, 2.0)),
    grid = (n),
)]
pub static SAXPY: Kernel;

fn saxpy(
    device: &wgpu::Device,
    adapter: &wgpu::Adapter,
    pass: &mut wgpu::ComputePass<'_>,
    buffers: [&wgpu::Buffer; 3],
    n: u64,
) -> Result<(), Box<dyn std::error::Error>> {
    // Picks the variant tuned for this adapter (or the baseline) and builds its pipeline.
    let k = SAXPY.load(device, &adapter.get_info())?;
    let entries: Vec<wgpu::BindGroupEntry> = buffers
        .iter()
        .enumerate()
        .map(|(i, b)| wgpu::BindGroupEntry { binding: i as u32, resource: b.as_entire_binding() })
        .collect();
    let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: k.bind_group_layout(0),
        entries: &entries,
    });
    // Workgroup counts are computed for the chosen variant's workgroup size.
    k.dispatch(pass, &[&bind_group], &[("n", n)])?;
    Ok(())
}
```

# A GPU nobody tuned on

By default a GPU with no matching entry runs the baseline. [`Kernel::load_with`] with
[`LoadMode::Measure`] instead times the variants tuned on other GPUs against the baseline on the
first start (a small budget per kernel, inputs made from the spec), checks the fastest one's
outputs against the baseline's, uses it only if it is faster beyond the noise and correct, and
remembers the choice in a per-user file keyed by adapter key and content hash (see [`measure`]);
later starts read it and measure nothing.

# Features
- `wgpu` (default): [`Kernel::load`], [`LoadedKernel`] and the dispatch helpers.
- `measure` (default): [`Kernel::load_with`] with [`LoadMode::Measure`], selection by
  measurement for a GPU no entry was tuned on (above).
- `spec`: the attribute grammar and WGSL reflection shared with `kf-macros` and `kf-build`.
  Without `wgpu` the crate is pure data (spec, hashes, adapter keys, cache format) and does no
  GPU work.
*/
#![warn(missing_docs)]

pub mod adapter;
pub mod cache;
pub mod distribution;
pub mod expr;
pub mod hash;
pub mod interface;
mod kernel;
#[cfg(feature = "wgpu")]
mod load;
#[cfg(feature = "measure")]
pub mod measure;
pub mod params;
pub mod plan;
pub mod program;
#[cfg(feature = "spec")]
pub mod resolve;
pub mod spec;
#[cfg(feature = "spec")]
pub mod syntax;
#[cfg(feature = "wgpu")]
pub mod termination;
#[cfg(feature = "spec")]
pub mod variant;
pub mod verdict;
pub mod views;

pub use adapter::{AdapterIdentity, AdapterKey};
pub use kernel::{Binding, EmbeddedVariant, Kernel, MatchKind, Selection, VARIANT_ENV};
#[cfg(feature = "measure")]
pub use load::LoadMode;
#[cfg(feature = "wgpu")]
pub use load::{
    LOOP_BOUND_ENV, LoadError, LoadedKernel, LoopBound, RuntimeChecksOff, TUNED_FEATURES,
    UNCHECKED_ENV, WorkspaceBinding, bind_group_layouts, bind_workspace, build_pipeline,
    build_pipeline_with, build_pipelines, check_limits, features, layout_entry, pipeline_layout,
    shader_module, texture_format, view_dimension, workspace_layout,
};
#[cfg(feature = "measure")]
pub use measure::{Measure, Measurement};
pub use program::{Dispatch, DispatchError, DispatchMode, Program, Stage, Workspace};

#[doc(hidden)]
pub mod __private {
    //! Paths the `#[kernelfoundry]` expansion uses. Not a public API.
    pub use crate::cache::Outcome;
    pub use crate::expr::{Op, SizeExpr};
    pub use crate::interface::{BindingKind, SampleType, TexelFormat, TextureAccess, TextureDim};
    pub use std::borrow::Cow;
}

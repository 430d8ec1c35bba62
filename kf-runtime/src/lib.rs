/*!
The runtime half of KernelFoundry: a WGSL compute kernel marked with `#[kernelfoundry(..)]` becomes
a [`Kernel`] static holding the baseline and every tuned variant found in the crate's
`kernelfoundry/` cache at build time. At startup [`Kernel::load`] picks the variant tuned for the
GPU it finds (exact adapter → same device with another driver → baseline), builds it inside wgpu
error scopes, and falls back to the baseline on any problem.

```ignore
use kf_macros::kernelfoundry;
use kf_runtime::Kernel;

#[kernelfoundry(
    path = "src/saxpy.wgsl",
    sizes(n = 1048576),
    bind(x = input(n), y = inout(n), params = uniform(n, 2.0)),
    grid = (n),
)]
pub static SAXPY: Kernel;

let k = SAXPY.load(&device, &adapter.get_info())?;          // picks and builds
let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
    layout: k.bind_group_layout(0), /* … */
});
k.dispatch(&mut pass, &[&bind_group], &[("n", n)])?;          // counts for the chosen variant
```

# Features
- `wgpu` (default): [`Kernel::load`], [`LoadedKernel`] and the dispatch helpers.
- `spec`: the attribute grammar and WGSL reflection shared with `kf-macros` and `kf-build`.
  Without `wgpu` the crate is pure data (spec, hashes, adapter keys, cache format) and does no
  GPU work.
*/
#![warn(missing_docs)]

pub mod adapter;
pub mod cache;
pub mod expr;
pub mod hash;
pub mod interface;
mod kernel;
#[cfg(feature = "wgpu")]
mod load;
pub mod program;
#[cfg(feature = "spec")]
pub mod resolve;
pub mod spec;
#[cfg(feature = "spec")]
pub mod syntax;

pub use adapter::{AdapterIdentity, AdapterKey};
pub use kernel::{Binding, EmbeddedVariant, Kernel, MatchKind, Selection, VARIANT_ENV};
#[cfg(feature = "wgpu")]
pub use load::{LoadError, LoadedKernel, build_pipeline, check_limits, layout_entry};
pub use program::{Dispatch, DispatchError, DispatchMode, Program};

#[doc(hidden)]
pub mod __private {
    //! Paths the `#[kernelfoundry]` expansion uses. Not a public API.
    pub use crate::cache::Outcome;
    pub use crate::expr::{Op, SizeExpr};
    pub use crate::interface::BindingKind;
    pub use std::borrow::Cow;
}

/*!
`kf-build`: the tuner behind `cargo kernelfoundry`, and a one-line build-script helper.

In a crate with `#[kernelfoundry]` kernels, add a build script so new cache entries rebuild it:

```toml
[build-dependencies]
# not on crates.io yet: from git, or `path = "../kernelfoundry-rs/kf-build"`
kf-build = { git = "https://github.com/kernelfoundry/kernelfoundry-rs", default-features = false }
```

```no_run
// build.rs, in `fn main()`:
kf_build::track_cache();
```

With the default `cli` feature the crate also provides the `cargo-kernelfoundry` binary and the
pipeline it runs, one module per stage with data flowing one way:
`discover` → `tune` (the pipeline: `search` asking an `evaluate` evaluator in a worker process,
local or `remote`) → `cache`, then `bench` (re-measure what the cache holds) and `report` (one
HTML file) (see ARCHITECTURE.md).
*/

mod track;

pub use track::{STAMP_ENV, stamp, track_cache, track_cache_lines};

/// Appends one formatted line to a `String`: how the verbs' plain-text reports are built, so that
/// the library returns them and the command line only prints them.
#[cfg(feature = "cli")]
macro_rules! outln {
    ($out:expr, $($arg:tt)*) => {{
        $out.push_str(&format!($($arg)*));
        $out.push('\n');
    }};
}

#[cfg(feature = "cli")]
pub mod ablate;
#[cfg(feature = "cli")]
pub mod analysis;
#[cfg(feature = "cli")]
pub mod bench;
#[cfg(feature = "cli")]
pub mod cache;
#[cfg(feature = "cli")]
pub mod cli;
#[cfg(feature = "cli")]
pub mod discover;
#[cfg(feature = "cli")]
pub mod eval;
#[cfg(feature = "cli")]
pub mod evaluate;
#[cfg(feature = "cli")]
pub mod evolve;
#[cfg(feature = "cli")]
pub mod gpu;
#[cfg(feature = "cli")]
pub mod llm;
#[cfg(feature = "cli")]
pub mod operators;
#[cfg(feature = "cli")]
pub mod remote;
#[cfg(feature = "cli")]
pub mod report;
#[cfg(feature = "cli")]
pub mod search;
#[cfg(feature = "cli")]
pub mod session;
#[cfg(feature = "cli")]
pub mod tune;

/// For `#[serde(skip_serializing_if = "crate::is_zero")]`: counts left out of JSON while zero.
#[cfg(feature = "cli")]
pub(crate) fn is_zero(n: &u64) -> bool {
    *n == 0
}

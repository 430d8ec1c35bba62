/*!
`kf-build`: the tuner behind `cargo kernelfoundry`, and a one-line build-script helper.

In a crate with `#[kernelfoundry]` kernels, add a build script so new cache entries rebuild it:

```toml
[build-dependencies]
kf-build = { version = "0.1", default-features = false }
```

```no_run
// build.rs
fn main() {
    kf_build::track_cache();
}
```

With the default `cli` feature the crate also provides the `cargo-kernelfoundry` binary and the
pipeline it runs: `discover` → `spec` → `harness` → `search` → `cache` (see ARCHITECTURE.md).
*/

mod track;

pub use track::{STAMP_ENV, stamp, track_cache, track_cache_lines};

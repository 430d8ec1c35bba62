//! Two plain copies of 64 MiB, as marked kernels, to measure what one access width buys on a GPU:
//! `COPY_F32` moves 4 bytes per access through `array<f32>` with the 2-D launch of the suite's GELU,
//! `COPY_VEC4` 16 bytes through `array<vec4<f32>>`. Each is evaluated against itself with
//! `cargo kernelfoundry eval --manifest-path examples/kernelbench/results/copy-probe/Cargo.toml --kernel COPY_F32 --candidate examples/kernelbench/results/copy-probe/src/copy_f32.wgsl --json`.

use kf_macros::kernelfoundry;
use kf_runtime::Kernel;

#[kernelfoundry(
    path = "src/copy_f32.wgsl",
    sizes(n = 1 << 24),
    bind(x = input(n), y = output(n), params = uniform(n)),
    grid = (4096, (n + 4095) / 4096),
)]
pub static COPY_F32: Kernel;

#[kernelfoundry(
    path = "src/copy_vec4.wgsl",
    sizes(n = 1 << 22),
    bind(x = input(n), y = output(n), params = uniform(n)),
    grid = (n),
)]
pub static COPY_VEC4: Kernel;

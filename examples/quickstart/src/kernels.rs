//! The three marked kernels. Each attribute is the kernel's "user input layer": the problem sizes,
//! what each binding holds, and how the baseline is launched. Binding types, access modes and
//! layouts come from the WGSL itself.

use kf_macros::kernelfoundry;
use kf_runtime::Kernel;

/// Elementwise: `y = a * x + y`.
#[kernelfoundry(
    path = "src/shaders/saxpy.wgsl",
    sizes(n = 131072),
    bind(x = input(n), y = inout(n), params = uniform(n, 2.5)),
    grid = (n),
)]
pub static SAXPY: Kernel;

/// A reduction per row: numerically stable softmax.
#[kernelfoundry(
    path = "src/shaders/softmax.wgsl",
    sizes(rows = 512, cols = 512),
    bind(input = input(rows * cols, range(-4.0, 4.0)), output = output(rows * cols), shape = uniform(rows, cols)),
    grid = (rows),
)]
pub static SOFTMAX: Kernel;

/// Naive matrix multiply, one output per invocation.
#[kernelfoundry(
    path = "src/shaders/matmul.wgsl",
    sizes(m = 128, n = 128, k = 128),
    verify_shapes = [(m = 37, n = 45, k = 19)],
    bind(a = input(m * k), b = input(k * n), c = output(m * n), dims = uniform(m, n, k)),
    grid = (n, m),
    flops = 2 * m * n * k,
)]
pub static MATMUL: Kernel;

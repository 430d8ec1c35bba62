use kf_macros::kernelfoundry;
use kf_runtime::Kernel;

#[kernelfoundry(
    path = "broken.wgsl",
    sizes(n = 1024),
    bind(x = input(n), y = output(n)),
)]
static K: Kernel;

fn main() {}

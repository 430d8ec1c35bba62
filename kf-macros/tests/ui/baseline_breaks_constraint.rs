use kf_macros::kernelfoundry;
use kf_runtime::Kernel;

#[kernelfoundry(
    source = r#"
        override X: u32;
        override Y: u32;
        @group(0) @binding(0) var<storage, read> x: array<f32>;
        @group(0) @binding(1) var<storage, read_write> y: array<f32>;

        @compute @workgroup_size(X, Y)
        fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
            if (gid.x < arrayLength(&y)) { y[gid.x] = 2.0 * x[gid.x]; }
        }
    "#,
    sizes(n = 1024),
    bind(x = input(n), y = output(n)),
    grid = (n),
    params(X = [64, 32], Y = [8, 1]),
    constraints(X * Y <= 256),
)]
static K: Kernel;

fn main() {}

use kf_macros::kernelfoundry;
use kf_runtime::Kernel;

// A reference launches its own way; the attribute must say how.
#[kernelfoundry(
    source = r#"
        @group(0) @binding(0) var<storage, read> x: array<f32>;
        @group(0) @binding(1) var<storage, read_write> y: array<f32>;

        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
            if (gid.x < arrayLength(&y)) { y[gid.x] = 2.0 * x[gid.x]; }
        }
    "#,
    sizes(n = 1024),
    bind(x = input(n), y = output(n)),
    reference(path = "src/double_ref.wgsl"),
)]
static K: Kernel;

fn main() {}

use kf_macros::kernelfoundry;
use kf_runtime::Kernel;

#[kernelfoundry(
    source = r#"
        override WG: u32 = 32;
        @group(0) @binding(0) var<storage, read_write> y: array<f32>;

        @compute @workgroup_size(WG * 2)
        fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
            if (gid.x < arrayLength(&y)) { y[gid.x] = 1.0; }
        }
    "#,
    sizes(n = 1024),
    bind(y = output(n)),
)]
static K: Kernel;

fn main() {}

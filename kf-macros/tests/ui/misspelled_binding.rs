use kf_macros::kernelfoundry;
use kf_runtime::Kernel;

#[kernelfoundry(
    source = r#"
        @group(0) @binding(0) var<storage, read> inp: array<f32>;
        @group(0) @binding(1) var<storage, read_write> out: array<f32>;

        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
            if (gid.x < arrayLength(&out)) { out[gid.x] = 2.0 * inp[gid.x]; }
        }
    "#,
    sizes(n = 1024),
    bind(input = input(n), out = output(n)),
)]
static K: Kernel;

fn main() {}

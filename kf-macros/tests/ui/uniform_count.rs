use kf_macros::kernelfoundry;
use kf_runtime::Kernel;

#[kernelfoundry(
    source = r#"
        struct Params { n: u32, a: f32 }
        @group(0) @binding(0) var<storage, read_write> y: array<f32>;
        @group(0) @binding(1) var<uniform> params: Params;

        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
            if (gid.x < params.n) { y[gid.x] = params.a; }
        }
    "#,
    sizes(n = 1024),
    bind(y = output(n), params = uniform(n)),
)]
static K: Kernel;

fn main() {}

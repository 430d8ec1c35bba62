use kf_macros::kernelfoundry;
use kf_runtime::Kernel;

#[kernelfoundry(
    source = r#"
        struct Params { n: u32, a: f32 }
        @group(0) @binding(0) var<storage, read> x: array<f32>;
        @group(0) @binding(1) var<storage, read_write> y: array<f32>;
        @group(0) @binding(2) var<uniform> params: Params;

        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
            let i = gid.x;
            if (i < params.n) {
                y[i] = params.a * x[i] + y[i];
            }
        }
    "#,
    sizes(n = 4096),
    bind(x = input(n), y = inout(n), params = uniform(n, 2.0)),
    grid = (n),
)]
pub static SAXPY: Kernel;

fn main() {
    assert_eq!(SAXPY.name, "SAXPY");
    assert_eq!(SAXPY.bindings.len(), 3);
    assert!(SAXPY.variants.is_empty());
}

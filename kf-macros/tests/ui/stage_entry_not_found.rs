use kf_macros::kernelfoundry;
use kf_runtime::Kernel;

#[kernelfoundry(
    source = r#"
        @group(0) @binding(0) var<storage, read> x: array<f32>;
        @group(0) @binding(1) var<storage, read_write> partials: array<f32>;
        @group(0) @binding(2) var<storage, read_write> total: array<f32>;

        @compute @workgroup_size(64)
        fn partial(@builtin(global_invocation_id) g: vec3<u32>) {
            if (g.x < arrayLength(&x)) { partials[g.x / 64u] = x[g.x]; }
        }

        @compute @workgroup_size(1)
        fn combine() { total[0] = partials[0]; }
    "#,
    sizes(n = 1024),
    bind(x = input(n), partials = scratch(n), total = output(1)),
    stages = [(entry = "partial", workgroups = (cdiv(n, 64))), (entry = "combin", workgroups = (1))],
)]
static K: Kernel;

fn main() {}

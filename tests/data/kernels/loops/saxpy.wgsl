// kernel: saxpy with a uniform scale, four elements per invocation
// spec: sizes(n = 1000), verify_shapes = [(n = 333)], bind(params = uniform(n, 1.5), x = input(n), y = inout(n)), grid = ((n + 3) / 4)
// applies: unroll hoist lift-workgroup-size
// skips: reshape
struct Params {
    n: u32,
    a: f32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    for (var j = 0u; j < 4u; j = j + 1u) {
        let i = gid.x * 4u + j;
        if (i < params.n) {
            y[i] = params.a * x[i] + y[i];
        }
    }
}

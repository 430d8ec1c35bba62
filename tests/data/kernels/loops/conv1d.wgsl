// kernel: 1-D convolution with a literal kernel width of 5, edges replicated
// spec: sizes(n = 300), verify_shapes = [(n = 77)], bind(params = uniform(n), x = input(n), w = input(5), y = output(n)), grid = (n)
// applies: unroll hoist lift-workgroup-size
// skips: reshape
struct Params {
    n: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = i32(gid.x);
    if (gid.x >= params.n) {
        return;
    }
    var acc = 0.0;
    for (var t = 0; t < 5; t++) {
        let j = clamp(i + t - 2, 0, i32(params.n) - 1);
        acc += w[t] * x[j];
    }
    y[gid.x] = acc;
}

// kernel: a loop that advances its own counter in the body (skips every other element)
// spec: sizes(n = 256), bind(params = uniform(n), x = input(n), y = output(n)), grid = (n)
// applies: hoist lift-workgroup-size
// skips: unroll reshape
struct Params {
    n: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= params.n) {
        return;
    }
    var acc = 0.0;
    for (var i = 0u; i < 16u; i++) {
        acc += x[(gid.x + i) % params.n];
        i += 1u;
    }
    y[gid.x] = acc;
}

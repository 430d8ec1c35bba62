// A 1-D convolution through an index table: the input index is loaded from memory
// (data-dependent), so the product is not a matmul.
// spec: sizes(n = 64, taps = 5), bind(x = input(n + taps), w = input(taps), idx = input(taps, range(0, 5)), y = output(n), p = uniform(n, taps)), grid = (n)
// expect: skip
struct P {
    n: u32,
    taps: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<f32>;
@group(0) @binding(2) var<storage, read> idx: array<u32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<uniform> p: P;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= p.n) {
        return;
    }
    var acc = 0.0;
    for (var t = 0u; t < p.taps; t++) {
        acc += x[gid.x + idx[t]] * w[t];
    }
    y[gid.x] = acc;
}

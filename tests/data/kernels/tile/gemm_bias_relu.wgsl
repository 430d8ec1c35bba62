// GEMM with an epilogue: scale, bias per column, ReLU. B is stored transposed (n x k), a signed
// loop counter, and the accumulator starts from a value.
// spec: sizes(m = 34, n = 70, k = 21), bind(x = input(m * k), w = input(n * k), bias = input(n), y = output(m * n), p = uniform(m, n, k, 0.5)), grid = (n, m)
// expect: tile
struct Params {
    m: u32,
    n: u32,
    k: u32,
    alpha: f32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.y;
    let col = gid.x;
    if (row >= p.m || col >= p.n) {
        return;
    }
    var acc: f32 = 0.25;
    for (var kk: i32 = 0; kk < i32(p.k); kk++) {
        acc += x[row * p.k + u32(kk)] * w[col * p.k + u32(kk)];
    }
    let scaled = acc * p.alpha + bias[col];
    y[row * p.n + col] = max(scaled, 0.0);
}

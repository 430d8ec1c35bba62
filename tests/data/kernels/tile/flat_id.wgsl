// A matmul over a flat invocation id: row and column come from `/` and `%` by one divisor (a
// uniform the spec fills with `n`), which the analysis reads as a 2-D id. n = 20 is no multiple of
// any block, so the column guard the rewrite adds is exercised.
// spec: sizes(m = 24, n = 20, k = 16), bind(a = input(m * k), b = input(k * n), c = output(m * n), dims = uniform(m, n, k)), grid = (m * n)
// expect: tile
struct Dims {
    m: u32,
    n: u32,
    k: u32,
}

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= dims.m * dims.n) {
        return;
    }
    let row = gid.x / dims.n;
    let col = gid.x % dims.n;
    var acc = 0.0;
    for (var i = 0u; i < dims.k; i++) {
        acc += a[row * dims.k + i] * b[i * dims.n + col];
    }
    c[gid.x] = acc;
}

// BLAS SGEMM: C = alpha * A * B + beta * C, updating C in place.
struct Gemm {
    m: u32,
    n: u32,
    k: u32,
    alpha: f32,
    beta: f32,
}

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> g: Gemm;

@compute @workgroup_size(16, 8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let col = gid.x;
    let row = gid.y;
    if (row >= g.m || col >= g.n) {
        return;
    }
    var acc = 0.0;
    for (var p = 0u; p < g.k; p += 1u) {
        acc += a[row * g.k + p] * b[p * g.n + col];
    }
    let idx = row * g.n + col;
    c[idx] = g.alpha * acc + g.beta * c[idx];
}

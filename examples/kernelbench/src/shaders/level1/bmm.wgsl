// Batched matrix multiply: C[b] = A[b] * B[b] for `batch` independent (m x k) * (k x n) products.
// x is the output column, y the output row, z the batch.
struct Bmm {
    batch: u32,
    m: u32,
    n: u32,
    k: u32,
}

@group(0) @binding(0) var<storage, read> lhs: array<f32>;
@group(0) @binding(1) var<storage, read> rhs: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;
@group(0) @binding(3) var<uniform> p: Bmm;

@compute @workgroup_size(8, 8, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let col = gid.x;
    let row = gid.y;
    let b = gid.z;
    if (b >= p.batch || row >= p.m || col >= p.n) {
        return;
    }
    let a_base = b * p.m * p.k + row * p.k;
    let b_base = b * p.k * p.n + col;
    var acc = 0.0;
    for (var i = 0u; i < p.k; i++) {
        acc = fma(lhs[a_base + i], rhs[b_base + i * p.n], acc);
    }
    dst[b * p.m * p.n + row * p.n + col] = acc;
}

// Batched matmul C[b] = A[b] * B[b] with A [batch, M, K], B [batch, K, N], C [batch, M, N], all row-major.
// class: gemm
// style: batch index from global_invocation_id.z, @workgroup_size(16, 16, 1), struct-wrapped storage arrays, let chains of offsets, early return guard
// spec: sizes(batch = 4, m = 48, n = 40, k = 64), bind(lhs = input(batch * m * k), rhs = input(batch * k * n), result = output(batch * m * n), dims = uniform(batch, m, n, k)), grid = (n, m, batch), flops = 2 * batch * m * n * k

struct Matrix {
    data: array<f32>,
}

struct Dims {
    batch: u32,
    M: u32,
    N: u32,
    K: u32,
}

@group(0) @binding(0) var<storage, read> lhs: Matrix;
@group(0) @binding(1) var<storage, read> rhs: Matrix;
@group(0) @binding(2) var<storage, read_write> result: Matrix;
@group(0) @binding(3) var<uniform> dims: Dims;

@compute @workgroup_size(16, 16, 1)
fn bmm(@builtin(global_invocation_id) global_id: vec3<u32>) {
    let col = global_id.x;
    let row = global_id.y;
    let batch = global_id.z;
    if (col >= dims.N || row >= dims.M || batch >= dims.batch) {
        return;
    }
    let a_offset = batch * dims.M * dims.K + row * dims.K;
    let b_offset = batch * dims.K * dims.N;
    let c_offset = batch * dims.M * dims.N;

    var value = 0.0;
    for (var i = 0u; i < dims.K; i = i + 1u) {
        value = value + lhs.data[a_offset + i] * rhs.data[b_offset + i * dims.N + col];
    }
    result.data[c_offset + row * dims.N + col] = value;
}

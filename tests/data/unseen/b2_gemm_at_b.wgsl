// GEMM with A stored transposed: C[M, N] = A^T B, where a holds A^T as [K, M] and b is [K, N].
// class: gemm
// style: PyTorch-webgpu / wonnx style `transA` matmul, 2-D `global_invocation_id` (x = column, y = row), params struct `M, N, K`, `fma` accumulate
// spec: sizes(m = 48, n = 64, k = 40), bind(a = input(k * m), b = input(k * n), c = output(m * n), dims = uniform(m, n, k)), grid = (n, m), flops = 2 * m * n * k

struct MatmulDims {
    M: u32,
    N: u32,
    K: u32,
}

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> dims: MatmulDims;

@compute @workgroup_size(16, 16)
fn matmul_tn(@builtin(global_invocation_id) gid: vec3<u32>) {
    let col = gid.x;
    let row = gid.y;
    if (row >= dims.M || col >= dims.N) {
        return;
    }
    var acc: f32 = 0.0;
    for (var kk: u32 = 0u; kk < dims.K; kk = kk + 1u) {
        // A^T is laid out [K, M]: element (row, kk) of A sits at kk * M + row.
        acc = fma(a[kk * dims.M + row], b[kk * dims.N + col], acc);
    }
    c[row * dims.N + col] = acc;
}

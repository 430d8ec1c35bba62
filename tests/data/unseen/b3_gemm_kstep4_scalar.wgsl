// GEMM, row-major scalar buffers: C[M, N] = A[M, K] B[K, N], one output per invocation.
// class: gemm
// style: hand-unrolled K loop stepping by 4 over a scalar counter (`for (var k = 0u; k < K; k += 4u)`) with four named `let a0..a3` / `b0..b3` loads summed in one expression `sum += a0 * b0 + a1 * b1 + a2 * b2 + a3 * b3`, precomputed `a_row` / `b_col` bases, `@workgroup_size(16, 16)`, 2-D id (x = column, y = row), early return
// spec: sizes(m = 64, n = 80, k = 64), bind(A = input(m * k), B = input(k * n), C = output(m * n), sizes = uniform(m, n, k)), grid = (n, m), constraints(k % 4 == 0), flops = 2 * m * n * k

struct Sizes {
    M: u32,
    N: u32,
    K: u32,
}

@group(0) @binding(0) var<storage, read> A: array<f32>;
@group(0) @binding(1) var<storage, read> B: array<f32>;
@group(0) @binding(2) var<storage, read_write> C: array<f32>;
@group(0) @binding(3) var<uniform> sizes: Sizes;

@compute @workgroup_size(16, 16)
fn gemm(@builtin(global_invocation_id) gid: vec3<u32>) {
    let col = gid.x;
    let row = gid.y;
    if (row >= sizes.M || col >= sizes.N) {
        return;
    }
    let N = sizes.N;
    let K = sizes.K;
    let a_row = row * K;
    var sum = 0.0;
    for (var k = 0u; k < K; k += 4u) {
        let a0 = A[a_row + k];
        let a1 = A[a_row + k + 1u];
        let a2 = A[a_row + k + 2u];
        let a3 = A[a_row + k + 3u];
        let b0 = B[k * N + col];
        let b1 = B[(k + 1u) * N + col];
        let b2 = B[(k + 2u) * N + col];
        let b3 = B[(k + 3u) * N + col];
        sum += a0 * b0 + a1 * b1 + a2 * b2 + a3 * b3;
    }
    C[row * N + col] = sum;
}

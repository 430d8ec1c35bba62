// C = A * B with A [M, K] and B [K, N] both row-major, one output element per invocation.
// class: gemm
// style: params struct {M, N, K}, 2-D global_invocation_id (x = column, y = row), @workgroup_size(8, 8), wrapping bounds if, += in a for loop
// spec: sizes(m = 64, n = 72, k = 64), bind(a = input(m * k), b = input(k * n), c = output(m * n), params = uniform(m, n, k)), grid = (n, m), flops = 2 * m * n * k

struct Params {
    M: u32,
    N: u32,
    K: u32,
}

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) global_id: vec3<u32>) {
    let row = global_id.y;
    let col = global_id.x;
    if (row < params.M && col < params.N) {
        var sum: f32 = 0.0;
        for (var k: u32 = 0u; k < params.K; k++) {
            sum += a[row * params.K + k] * b[k * params.N + col];
        }
        c[row * params.N + col] = sum;
    }
}

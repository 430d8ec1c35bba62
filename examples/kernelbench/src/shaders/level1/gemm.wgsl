// C = A * B, row-major A (M x K) and B (K x N): one output element per invocation.
struct Shape {
    M: u32,
    N: u32,
    K: u32,
}

@group(0) @binding(0) var<storage, read> A: array<f32>;
@group(0) @binding(1) var<storage, read> B: array<f32>;
@group(0) @binding(2) var<storage, read_write> C: array<f32>;
@group(0) @binding(3) var<uniform> shape: Shape;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.y;
    let col = gid.x;
    if (row < shape.M && col < shape.N) {
        var sum: f32 = 0.0;
        for (var i: u32 = 0u; i < shape.K; i = i + 1u) {
            sum = sum + A[row * shape.K + i] * B[i * shape.N + col];
        }
        C[row * shape.N + col] = sum;
    }
}

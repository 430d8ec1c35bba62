// Tall-skinny GEMM: a tall activation matrix (m x k) times a narrow weight (k x n), n small.
// The output is flattened: invocation i computes out[i / n][i % n].
struct Dims {
    m: u32,
    n: u32,
    k: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= dims.m * dims.n) {
        return;
    }
    let r = i / dims.n;
    let c = i % dims.n;
    var acc = 0.0;
    var j = 0u;
    while (j < dims.k) {
        acc += x[r * dims.k + j] * w[j * dims.n + c];
        j++;
    }
    out[i] = acc;
}

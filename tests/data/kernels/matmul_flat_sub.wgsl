// A matmul over a flat id whose column is spelled as a subtraction (`c = i - r * n`, the
// remainder without `%`), the bias indexed by the column, the output at the row and column.
// spec: sizes(m = 37, n = 20, k = 19), bind(x = input(m * k), w = input(k * n), bias = input(n), out = output(m * n), dims = uniform(m, n, k)), grid = (m * n)
// fires: tile tile-blocked tile-split-k implicit-gemm
struct Dims {
    m: u32,
    n: u32,
    k: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> dims: Dims;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= dims.m * dims.n) {
        return;
    }
    let r = i / dims.n;
    let c = i - r * dims.n;
    var acc = bias[c];
    for (var j = 0u; j < dims.k; j++) {
        acc = acc + x[r * dims.k + j] * w[j * dims.n + c];
    }
    out[r * dims.n + c] = acc;
}

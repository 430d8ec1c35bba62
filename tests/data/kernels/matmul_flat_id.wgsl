// A tall-skinny matmul over a flat id: row and column from `/` and `%` by one uniform divisor,
// the output at the flat id itself, a `while` loop with `+=` and `++`.
// spec: sizes(m = 40, n = 12, k = 24), bind(x = input(m * k), w = input(k * n), out = output(m * n), dims = uniform(m, n, k)), grid = (m * n)
// fires: tile tile-blocked tile-split-k reduce coarsen hoist param lift-workgroup-size
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

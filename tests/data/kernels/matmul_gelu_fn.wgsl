// GEMM + GELU with the epilogue in a function of its own and the row on gid.x.
// spec: sizes(m = 36, n = 20, k = 16), bind(a = input(m * k), b = input(k * n), c = output(m * n), dims = uniform(m, n, k)), grid = (m, n)
// fires: tile tile-blocked tile-split-k reduce coarsen unroll hoist reshape param
struct Mnk {
    m: u32,
    n: u32,
    k: u32,
}

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> dims: Mnk;

fn gelu(v: f32) -> f32 {
    return 0.5 * v * (1.0 + tanh(0.7978845608 * (v + 0.044715 * v * v * v)));
}

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let j = gid.y;
    if (i >= dims.m || j >= dims.n) {
        return;
    }
    var s = 0.0;
    for (var p = 0u; p < dims.k; p++) {
        s += a[i * dims.k + p] * b[p * dims.n + j];
    }
    c[i * dims.n + j] = gelu(s);
}

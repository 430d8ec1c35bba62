// GEMM + GELU with the epilogue in a function of its own, the row on gid.x and a `for` with `++`:
// a pure call is re-emitted in the tiled kernel's store as written.
// spec: sizes(m = 33, n = 18, k = 23), bind(a = input(m * k), b = input(k * n), c = output(m * n), dims = uniform(m, n, k)), grid = (m, n)
// expect: tile
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
    let inner = 0.7978845608 * (v + 0.044715 * v * v * v);
    return 0.5 * v * (1.0 + tanh(inner));
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

// A matmul as tutorials write it: the output element zeroed, then summed into in memory
// (`c[..] += a[..] * b[..]` inside the loop), two-dimensional ids.
// spec: sizes(m = 33, n = 20, k = 17), bind(a = input(m * k), b = input(k * n), c = output(m * n), d = uniform(m, n, k)), grid = (n, m)
// fires: tile tile-blocked tile-split-k implicit-gemm
struct D {
    m: u32,
    n: u32,
    k: u32,
}

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> d: D;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let col = gid.x;
    let row = gid.y;
    if (row >= d.m || col >= d.n) {
        return;
    }
    c[row * d.n + col] = 0.0;
    for (var t = 0u; t < d.k; t++) {
        c[row * d.n + col] += a[row * d.k + t] * b[t * d.n + col];
    }
}

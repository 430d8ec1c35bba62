// The quickstart's naive matmul: row = gid.y, col = gid.x, an early-return guard, a `for` loop,
// K from a uniform.
// spec: sizes(m = 40, n = 36, k = 24), bind(a = input(m * k), b = input(k * n), c = output(m * n), dims = uniform(m, n, k)), grid = (n, m)
// expect: tile
struct Dims {
    m: u32,
    n: u32,
    k: u32,
}

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let col = gid.x;
    let row = gid.y;
    if (row >= dims.m || col >= dims.n) {
        return;
    }
    var acc = 0.0;
    for (var i = 0u; i < dims.k; i++) {
        acc += a[row * dims.k + i] * b[i * dims.n + col];
    }
    c[row * dims.n + col] = acc;
}

// A matmul over a flat id with no bounds guard: the constraints make the flat grid a multiple of
// the 64-wide workgroup, so every invocation is an output. tile bounds the virtual flat id by the
// grid itself, and the column by n.
// spec: sizes(m = 16, n = 20, k = 12), bind(a = input(m * k), b = input(k * n), c = output(m * n), dims = uniform(m, n, k)), grid = (m * n), constraints(m % 16 == 0, n % 4 == 0)
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

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.x / dims.n;
    let col = gid.x % dims.n;
    var acc = 0.0;
    for (var i = 0u; i < dims.k; i++) {
        acc += a[row * dims.k + i] * b[i * dims.n + col];
    }
    c[gid.x] = acc;
}

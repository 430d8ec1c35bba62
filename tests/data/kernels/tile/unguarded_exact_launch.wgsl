// A matmul without a bounds guard whose launch is exact: the spec's constraints make both grid
// extents multiples of the 8x8 workgroup, so the baseline's outputs are exactly those below the
// grid. tile adds the bounds itself (gid.x < n, gid.y < m), since its blocks (16 to 128 wide) do
// not divide n = 24 or m = 40.
// spec: sizes(m = 40, n = 24, k = 12), bind(a = input(m * k), b = input(k * n), c = output(m * n), dims = uniform(m, n, k)), grid = (n, m), constraints(m % 8 == 0, n % 8 == 0)
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
    var acc = 0.0;
    for (var i = 0u; i < dims.k; i++) {
        acc += a[gid.y * dims.k + i] * b[i * dims.n + gid.x];
    }
    c[gid.y * dims.n + gid.x] = acc;
}

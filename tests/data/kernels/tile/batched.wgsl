// Batched matmul: gid.z selects the batch, every index carries a batch offset.
// spec: sizes(batch = 3, m = 20, n = 18, k = 22), bind(a = input(batch * m * k), b = input(batch * k * n), c = output(batch * m * n), dims = uniform(batch, m, n, k)), grid = (n, m, batch)
// expect: tile
// split-k: skip
struct Dims {
    batch: u32,
    m: u32,
    n: u32,
    k: u32,
}

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;

@compute @workgroup_size(8, 8, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let bi = gid.z;
    let i = gid.y;
    let j = gid.x;
    if (i >= dims.m || j >= dims.n || bi >= dims.batch) {
        return;
    }
    let a0 = bi * dims.m * dims.k;
    let b0 = bi * dims.k * dims.n;
    var s = 0.0;
    for (var t = 0u; t < dims.k; t++) {
        s += a[a0 + i * dims.k + t] * b[b0 + t * dims.n + j];
    }
    c[bi * dims.m * dims.n + i * dims.n + j] = s;
}

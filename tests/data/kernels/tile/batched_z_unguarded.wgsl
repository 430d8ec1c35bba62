// A batched matmul that guards its rows and columns but not its batch, whose count no uniform
// holds (the sizes are m, n, k only): the launch in z is exact (one invocation deep), so tile
// launches one workgroup per batch and needs no bound on it.
// spec: sizes(batch = 2, m = 20, n = 18, k = 22), bind(a = input(batch * m * k), b = input(batch * k * n), c = output(batch * m * n), dims = uniform(m, n, k)), grid = (n, m, batch)
// expect: tile
// split-k: skip
struct Dims {
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
    if (gid.y >= dims.m || gid.x >= dims.n) {
        return;
    }
    let a0 = gid.z * dims.m * dims.k;
    let b0 = gid.z * dims.k * dims.n;
    var s = 0.0;
    for (var t = 0u; t < dims.k; t++) {
        s += a[a0 + gid.y * dims.k + t] * b[b0 + t * dims.n + gid.x];
    }
    c[gid.z * dims.m * dims.n + gid.y * dims.n + gid.x] = s;
}

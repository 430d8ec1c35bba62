// A matmul without a bounds guard: invocations past the edge write other rows' outputs, so the
// baseline's result depends on its workgroup size and a tiled rewrite cannot reproduce it.
// spec: sizes(m = 32, n = 32, k = 16), bind(a = input(m * k), b = input(k * n), c = output(m * n), dims = uniform(m, n, k)), grid = (n, m)
// expect: skip
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

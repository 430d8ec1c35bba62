// kernel: naive matmul, one output per invocation, a loop over k with a uniform bound
// spec: sizes(m = 24, n = 20, k = 12), tune_shapes = [(m = 24, n = 20, k = 12)], verify_shapes = [(m = 9, n = 13, k = 7)], bind(dims = uniform(m, n, k), a = input(m * k), b = input(k * n), c = output(m * n)), grid = (n, m)
// applies: unroll hoist reshape
// skips: lift-workgroup-size
struct Dims {
    m: u32,
    n: u32,
    k: u32,
}

@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> c: array<f32>;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.y;
    let col = gid.x;
    if (row >= dims.m || col >= dims.n) {
        return;
    }
    var sum = 0.0;
    for (var i = 0u; i < dims.k; i++) {
        sum += a[row * dims.k + i] * b[i * dims.n + col];
    }
    c[row * dims.n + col] = sum;
}

// A matmul with no bounds guard at all, as tutorials write it when the sizes are multiples of the
// workgroup: the constraints say they are, so the launch is exact and every invocation is an
// output. 2-D id, a `let` for the row, `+=` in a `for`.
// spec: sizes(m = 24, n = 40, k = 20), bind(a = input(m * k), b = input(k * n), c = output(m * n), dims = uniform(m, n, k)), grid = (n, m), constraints(m % 8 == 0, n % 8 == 0)
// fires: tile tile-blocked tile-split-k reduce reshape unroll hoist param
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
    let row = gid.y;
    var acc = 0.0;
    for (var i = 0u; i < dims.k; i++) {
        acc += a[row * dims.k + i] * b[i * dims.n + gid.x];
    }
    c[row * dims.n + gid.x] = acc;
}

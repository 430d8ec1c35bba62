// A row of C per invocation, its columns in blocks of four (four sums per block, stored side by
// side), the way hand-blocked kernels write it: `out[row * n + j + 1u]` beside
// `out[row * n + j]` in the iteration of `j += 4u`. Each iteration owns its four columns, so the
// lanes of a workgroup may take the blocks.
// spec: sizes(m = 5, n = 36, k = 20), bind(a = input(m * k), b = input(k * n), out = output(m * n), dims = uniform(m, n, k)), grid = (m), constraints(n % 4 == 0)
// fires: reduce
struct Dims { m: u32, n: u32, k: u32 }
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.x;
    if (row >= dims.m) {
        return;
    }
    for (var j = 0u; j < dims.n; j += 4u) {
        var s0 = 0.0;
        var s1 = 0.0;
        var s2 = 0.0;
        var s3 = 0.0;
        for (var t = 0u; t < dims.k; t++) {
            let x = a[row * dims.k + t];
            s0 += x * b[t * dims.n + j];
            s1 += x * b[t * dims.n + j + 1u];
            s2 += x * b[t * dims.n + j + 2u];
            s3 += x * b[t * dims.n + j + 3u];
        }
        out[row * dims.n + j] = s0;
        out[row * dims.n + j + 1u] = s1;
        out[row * dims.n + j + 2u] = s2;
        out[row * dims.n + j + 3u] = s3;
    }
}

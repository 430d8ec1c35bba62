// A product whose B layout is a mode in its uniforms, as libraries serving several callers write
// it: one loop per layout behind a test of `dims.transposed`. The spec fixes the mode
// (`uniform(m, k, n, 1)`: B is [n, k]), so the canonical form decides the test (fixed-uniform)
// and the tilings see the one loop the kernel runs.
// spec: sizes(m = 33, k = 20, n = 41), bind(a = input(m * k), b = input(n * k), c = output(m * n), dims = uniform(m, k, n, 1)), grid = (n, m), flops = 2 * m * n * k
// fires: tile tile-blocked
struct Dims { m: u32, k: u32, n: u32, transposed: u32 }
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.y;
    let col = gid.x;
    if (row >= dims.m || col >= dims.n) {
        return;
    }
    var acc = 0.0;
    if (dims.transposed != 0u) {
        for (var i = 0u; i < dims.k; i++) {
            acc += a[row * dims.k + i] * b[col * dims.k + i];
        }
    } else {
        for (var i = 0u; i < dims.k; i++) {
            acc += a[row * dims.k + i] * b[i * dims.n + col];
        }
    }
    c[row * dims.n + col] = acc;
}

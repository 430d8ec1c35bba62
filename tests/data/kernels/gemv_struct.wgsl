// GEMV: y[row] = sum over c of A[row * C + c] * v[c], with a bias that seeds the sum.
// spec: sizes(rows = 33, cols = 160), bind(a = input(rows * cols), v = input(cols), bias = input(rows), y = output(rows), dims = uniform(rows, cols)), grid = (rows)
// fires: reduce coarsen
struct Dims { rows: u32, cols: u32 }
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> v: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<uniform> dims: Dims;

@compute @workgroup_size(64)
fn gemv(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.x;
    if (row >= dims.rows) {
        return;
    }
    var acc = bias[row];
    for (var c = 0u; c < dims.cols; c += 1u) {
        acc += a[row * dims.cols + c] * v[c];
    }
    y[row] = acc;
}

// Log-softmax written with `loop { if .. { break; } continuing { .. } }`, i32 indices.
// spec: sizes(rows = 6, cols = 129), bind(x = input(rows * cols, range(-5.0, 5.0)), y = output(rows * cols), dims = uniform(rows, cols)), grid = (rows)
// fires: reduce coarsen
struct Dims { rows: i32, cols: i32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> dims: Dims;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = i32(gid.x);
    if (row >= dims.rows) { return; }
    var mx = -1e30;
    var c = 0;
    loop {
        if (c >= dims.cols) { break; }
        mx = max(mx, x[row * dims.cols + c]);
        continuing { c = c + 1; }
    }
    var s = 0.0;
    for (var i = 0; i < dims.cols; i++) { s = s + exp(x[row * dims.cols + i] - mx); }
    let lse = mx + log(s);
    for (var i = 0; i < dims.cols; i++) { y[row * dims.cols + i] = x[row * dims.cols + i] - lse; }
}

// An exponential moving average over a row: `acc = acc * 0.9 + x` is not associative.
// spec: sizes(rows = 4, cols = 64), bind(x = input(rows * cols), y = output(rows), dims = uniform(rows, cols)), grid = (rows)
// skips: reduce
struct Dims { rows: u32, cols: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> dims: Dims;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.x;
    if (row >= dims.rows) { return; }
    var acc = 0.0;
    for (var c = 0u; c < dims.cols; c++) {
        acc = acc * 0.9 + x[row * dims.cols + c];
    }
    y[row] = acc;
}

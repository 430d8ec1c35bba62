// Row prefix sum: the running value is written every iteration (a loop-carried dependency).
// spec: sizes(rows = 4, cols = 64), bind(x = input(rows * cols), y = output(rows * cols), dims = uniform(rows, cols)), grid = (rows)
// fires: scan
// skips: reduce
struct Dims { rows: u32, cols: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> dims: Dims;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.x;
    if (row >= dims.rows) { return; }
    var run = 0.0;
    for (var c = 0u; c < dims.cols; c++) {
        run += x[row * dims.cols + c];
        y[row * dims.cols + c] = run;
    }
}

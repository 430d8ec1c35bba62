// Bias + ReLU over a rows x cols matrix, one element per invocation of a 2-D launch: the row stride
// is the uniform width, which the spec promises is a multiple of 4.
// spec: sizes(rows = 6, cols = 44), bind(x = input(rows * cols), bias = input(cols), y = output(rows * cols), dims = uniform(rows, cols)), grid = (cols, rows), constraints(cols % 4 == 0)
// fires: coarsen widen
// skips: reduce vectorize
struct Dims { rows: u32, cols: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> bias: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;

@compute @workgroup_size(16, 4)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let col = gid.x;
    let row = gid.y;
    if (col >= dims.cols || row >= dims.rows) {
        return;
    }
    let idx = row * dims.cols + col;
    y[idx] = max(x[idx] + bias[col], 0.0);
}

// Shifts each row left in place: iteration c reads what iteration c + 1 overwrites.
// spec: sizes(rows = 4, cols = 64), bind(x = inout(rows * cols), dims = uniform(rows, cols)), grid = (rows)
// skips: reduce
struct Dims { rows: u32, cols: u32 }
@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<uniform> dims: Dims;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.x;
    if (row >= dims.rows) { return; }
    for (var c = 0u; c + 1u < dims.cols; c++) {
        x[row * dims.cols + c] = x[row * dims.cols + c + 1u];
    }
}

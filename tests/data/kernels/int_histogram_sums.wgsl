// Integer reductions: bit-or and sum of u32 rows, written into one output.
// spec: sizes(rows = 12, cols = 50), bind(x = input(rows * cols, range(0, 1000)), y = output(rows * 2), dims = uniform(rows, cols)), grid = (rows)
// fires: reduce coarsen
struct Dims { rows: u32, cols: u32 }
@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read_write> y: array<u32>;
@group(0) @binding(2) var<uniform> dims: Dims;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.x;
    if (row >= dims.rows) { return; }
    var bits = 0u;
    var sum = 0u;
    for (var c = 0u; c < dims.cols; c++) {
        bits = bits | x[row * dims.cols + c];
        sum += x[row * dims.cols + c];
    }
    y[2u * row] = bits;
    y[2u * row + 1u] = sum;
}

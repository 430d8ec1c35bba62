// A row copied to scratch, then blurred in place: the second loop reads neighbours that other
// iterations overwrite, so no barrier can order it.
// spec: sizes(rows = 4, cols = 64), bind(x = input(rows * cols), tmp = scratch(rows * cols), y = output(rows), dims = uniform(rows, cols)), grid = (rows)
// skips: reduce
struct Dims { rows: u32, cols: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> tmp: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.x;
    if (row >= dims.rows) { return; }
    let base = row * dims.cols;
    for (var c = 0u; c < dims.cols; c++) {
        tmp[base + c] = x[base + c];
    }
    var s = 0.0;
    for (var c = 0u; c + 1u < dims.cols; c++) {
        tmp[base + c] = 0.5 * (tmp[base + c] + tmp[base + c + 1u]);
        s += tmp[base + c];
    }
    y[row] = s;
}

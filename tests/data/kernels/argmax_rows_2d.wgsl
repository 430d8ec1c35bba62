// Row argmax over a 2-D grid (the row in `gid.y`), keeping the last of equal maxima (`>=`), the
// index starting below the loop, the update on one line. Whole-number values, so ties happen.
// spec: sizes(rows = 6, cols = 300), bind(x = input(rows * cols, range(0.0, 5.0)), idx = output(rows), dims = uniform(rows, cols)), grid = (1, rows)
// fires: reduce
struct Dims { rows: u32, cols: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> idx: array<u32>;
@group(0) @binding(2) var<uniform> dims: Dims;

@compute @workgroup_size(1, 64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.y;
    if (row >= dims.rows) {
        return;
    }
    var top = trunc(x[row * dims.cols]);
    var top_at = 0u;
    for (var c = 1u; c < dims.cols; c++) {
        let v = trunc(x[row * dims.cols + c]);
        if (v >= top) { top = v; top_at = c; }
    }
    idx[row] = top_at;
}

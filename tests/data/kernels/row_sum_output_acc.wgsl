// Row sums accumulated straight into the output element (`out[r] += x[..]`), one row per
// invocation.
// spec: sizes(rows = 37, cols = 300), bind(x = input(rows * cols), out = output(rows), dims = uniform(rows, cols)), grid = (rows)
// fires: reduce
struct Dims { rows: u32, cols: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> dims: Dims;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let r = gid.x;
    if (r < dims.rows) {
        out[r] = 0.0;
        for (var j = 0u; j < dims.cols; j++) {
            out[r] += x[r * dims.cols + j];
        }
    }
}

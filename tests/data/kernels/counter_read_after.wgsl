// A row sum whose loop counter is read after the loop (it counts the row's length into the
// output), so the loop cannot be split across lanes.
// spec: sizes(rows = 6, cols = 300), bind(x = input(rows * cols), y = output(rows * 2), shape = uniform(rows, cols)), grid = (rows)
// skips: reduce
struct Shape { rows: u32, cols: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> shape: Shape;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.x;
    if (row >= shape.rows) {
        return;
    }
    var s = 0.0;
    var i = 0u;
    while (i < shape.cols) {
        s += x[row * shape.cols + i];
        i++;
    }
    y[row * 2u] = s;
    y[row * 2u + 1u] = f32(i);
}

// Inclusive prefix sum along each row of a [rows, cols] matrix, one row per invocation.
// class: scan
// style: helper fn for the row-major index, let chain for the row, for loop with a running total written every step, early return
// spec: sizes(rows = 30, cols = 400), bind(x = input(rows * cols), out = output(rows * cols), shape = uniform(rows, cols)), grid = (rows), tolerance = 1e-3

struct Shape {
    rows: u32,
    cols: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> shape: Shape;

fn index_of(row: u32, col: u32) -> u32 {
    return row * shape.cols + col;
}

@compute @workgroup_size(256)
fn cumsum(@builtin(global_invocation_id) global_invocation_id: vec3<u32>) {
    let row = global_invocation_id.x;
    if (row >= shape.rows) { return; }

    var running: f32 = 0.0;
    for (var col: u32 = 0u; col < shape.cols; col += 1u) {
        running += x[index_of(row, col)];
        out[index_of(row, col)] = running;
    }
}

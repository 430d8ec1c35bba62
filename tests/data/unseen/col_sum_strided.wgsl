// Sum over the first axis of a row-major [rows, cols] matrix: out[c] = sum over r of x[r, c] (strided column reduction).
// class: reduction
// style: i32 uniform dims and i32 loop counter with u32 casts, while loop with stride cols, one column per invocation
// spec: sizes(rows = 150, cols = 70), bind(x = input(rows * cols), out = output(cols), dims = uniform(rows, cols)), grid = (cols)

struct Dims {
    rows: i32,
    cols: i32,
}

@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(32)
fn main(@builtin(global_invocation_id) global_id: vec3<u32>) {
    let col = i32(global_id.x);
    if (col >= dims.cols) {
        return;
    }
    var total: f32 = 0.0;
    var r: i32 = 0;
    while (r < dims.rows) {
        total += x[u32(r * dims.cols + col)];
        r += 1;
    }
    out[u32(col)] = total;
}

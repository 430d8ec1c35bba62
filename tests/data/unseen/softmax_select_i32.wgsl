// Row-wise softmax over the last axis of a [rows, cols] matrix, one row per invocation along y.
// class: softmax
// style: struct-wrapped storage arrays, i32 indices with casts, while loops, running max via select, row from global_invocation_id.y
// spec: sizes(rows = 45, cols = 256), bind(src = input(rows * cols, range(-6.0, 6.0)), dst = output(rows * cols), shape = uniform(rows, cols)), grid = (1, rows)

struct Buffer {
    data: array<f32>,
}

struct Shape {
    rows: i32,
    cols: i32,
}

@group(0) @binding(0) var<storage, read> src: Buffer;
@group(0) @binding(1) var<storage, read_write> dst: Buffer;
@group(0) @binding(2) var<uniform> shape: Shape;

@compute @workgroup_size(1, 64, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = i32(gid.y);
    if (row >= shape.rows) {
        return;
    }
    let cols = shape.cols;
    let start = row * cols;

    var mx: f32 = src.data[start];
    var j: i32 = 1;
    while (j < cols) {
        let v = src.data[start + j];
        mx = select(mx, v, v > mx);
        j = j + 1;
    }

    var denom: f32 = 0.0;
    j = 0;
    while (j < cols) {
        denom = denom + exp(src.data[start + j] - mx);
        j = j + 1;
    }

    let inv = 1.0 / denom;
    j = 0;
    while (j < cols) {
        dst.data[start + j] = exp(src.data[start + j] - mx) * inv;
        j = j + 1;
    }
}

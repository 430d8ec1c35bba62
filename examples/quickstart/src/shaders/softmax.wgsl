// Row-wise softmax, one invocation per row, three passes over the row (max, sum, normalize).
struct Shape {
    rows: u32,
    cols: u32,
}

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;
@group(0) @binding(2) var<uniform> shape: Shape;

override WG: u32 = 64;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.x;
    if (row >= shape.rows) {
        return;
    }
    let base = row * shape.cols;
    var m = -3.402823e38;
    for (var c = 0u; c < shape.cols; c++) {
        m = max(m, input[base + c]);
    }
    var s = 0.0;
    for (var c = 0u; c < shape.cols; c++) {
        s += exp(input[base + c] - m);
    }
    for (var c = 0u; c < shape.cols; c++) {
        output[base + c] = exp(input[base + c] - m) / s;
    }
}

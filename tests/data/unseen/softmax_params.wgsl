// Row-wise softmax over the last axis of a [rows, cols] matrix, one row per invocation.
// class: softmax
// style: params struct uniform, global_invocation_id.x as row, early return guard, three for loops with i++
// spec: sizes(rows = 40, cols = 300), bind(input = input(rows * cols, range(-8.0, 8.0)), output = output(rows * cols), params = uniform(rows, cols)), grid = (rows)

struct Params {
    rows: u32,
    cols: u32,
}

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) global_id: vec3<u32>) {
    let row = global_id.x;
    if (row >= params.rows) {
        return;
    }
    let offset = row * params.cols;

    var max_val: f32 = -3.402823e+38;
    for (var i: u32 = 0u; i < params.cols; i++) {
        max_val = max(max_val, input[offset + i]);
    }

    var sum: f32 = 0.0;
    for (var i: u32 = 0u; i < params.cols; i++) {
        sum += exp(input[offset + i] - max_val);
    }

    for (var i: u32 = 0u; i < params.cols; i++) {
        output[offset + i] = exp(input[offset + i] - max_val) / sum;
    }
}

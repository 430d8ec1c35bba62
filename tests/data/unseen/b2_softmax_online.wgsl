// Row softmax over x[rows, cols]: one pass keeps a running max and a rescaled running sum (online softmax), a second pass writes exp(x - max) / sum.
// class: softmax
// style: onnxruntime-web / transformers.js style `Uniforms` struct, `global_invocation_id` row per invocation, early return, online max/sum rescale with `let` chains
// spec: sizes(rows = 8, cols = 300), bind(x = input(rows * cols, range(-8.0, 8.0)), y = output(rows * cols), uniforms = uniform(rows, cols)), grid = (rows)

struct Uniforms {
  rows : u32,
  cols : u32,
};

@group(0) @binding(0) var<storage, read> x : array<f32>;
@group(0) @binding(1) var<storage, read_write> y : array<f32>;
@group(0) @binding(2) var<uniform> uniforms : Uniforms;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) global_id : vec3<u32>) {
  let row = global_id.x;
  if (row >= uniforms.rows) {
    return;
  }
  let row_offset = row * uniforms.cols;

  var running_max : f32 = -3.402823466e+38;
  var running_sum : f32 = 0.0;
  for (var col : u32 = 0u; col < uniforms.cols; col = col + 1u) {
    let value = x[row_offset + col];
    let new_max = max(running_max, value);
    let correction = exp(running_max - new_max);
    running_sum = running_sum * correction + exp(value - new_max);
    running_max = new_max;
  }

  let inv_sum = 1.0 / running_sum;
  for (var col : u32 = 0u; col < uniforms.cols; col = col + 1u) {
    let idx = row_offset + col;
    y[idx] = exp(x[idx] - running_max) * inv_sum;
  }
}

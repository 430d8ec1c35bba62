// BatchNormalization (inference) over NCHW x[2, 16, 14, 14] read as vec4 along the spatial axis: y = (x - mean[c]) / sqrt(var[c] + 1e-5) * scale[c] + B[c], the per-channel parameters gathered by c = (i / 49) % 16.
// class: elementwise
// style: wonnx rendered-template style: `struct ArrayVector { data: array<vec4<f32>> }` and `struct Array { data: array<f32> }` wrappers, inputs named `input_0` .. `input_4`, `@workgroup_size(256, 1, 1)`, literal bound `gidx < 1568u` and literal channel split, scalar parameters splatted with `vec4<f32>(..)`, epsilon rendered as a literal
// spec: sizes(n = 2, c = 16, hw = 196), bind(input_0 = input(n * c * hw / 4), input_1 = input(c), input_2 = input(c), input_3 = input(c), input_4 = input(c, range(0.5, 2.0)), output_0 = output(n * c * hw / 4)), grid = (n * c * hw / 4), constraints(n == 2, c == 16, hw == 196)

struct ArrayVector {
  data: array<vec4<f32>>,
};

struct Array {
  data: array<f32>,
};

@group(0) @binding(0) var<storage, read> input_0: ArrayVector;
@group(0) @binding(1) var<storage, read> input_1: Array;
@group(0) @binding(2) var<storage, read> input_2: Array;
@group(0) @binding(3) var<storage, read> input_3: Array;
@group(0) @binding(4) var<storage, read> input_4: Array;
@group(0) @binding(5) var<storage, read_write> output_0: ArrayVector;

@compute @workgroup_size(256, 1, 1)
fn main(@builtin(global_invocation_id) global_id: vec3<u32>) {
  let gidx = global_id.x;
  if (gidx < 1568u) {
    let channel = (gidx / 49u) % 16u;
    let scale = vec4<f32>(input_1.data[channel]);
    let bias = vec4<f32>(input_2.data[channel]);
    let mean = vec4<f32>(input_3.data[channel]);
    let variance = vec4<f32>(input_4.data[channel]);
    let x = input_0.data[gidx];
    output_0.data[gidx] = (x - mean) / sqrt(variance + vec4<f32>(1e-05)) * scale + bias;
  }
}

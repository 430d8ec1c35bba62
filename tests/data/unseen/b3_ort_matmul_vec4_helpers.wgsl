// GEMM on vec4-packed rows, shapes rendered into the shader: output[M, 64] = a[M, 64] b[64, 64], one output vec4 per invocation.
// class: gemm
// style: onnxruntime-web rendered-template style: `Uniforms` struct with `output_size` as the bound, the five builtins of the shader helper in the entry signature, `*_indicesToOffset` helper `fn`s with the strides rendered as literals (`16u`), flat `global_idx` split with `%` / `/` by a literal, vec4 `a_data` indexed by a dynamic component in an inner `for (var i = 0u; i < 4u; i++)` loop
// spec: sizes(m = 48, n = 64, k = 64), bind(a = input(m * k / 4), b = input(k * n / 4), output = output(m * n / 4), uniforms = uniform(m * n / 4, m, n, k)), grid = (m * n / 4), constraints(n == 64, k == 64), flops = 2 * m * n * k

@group(0) @binding(0) var<storage, read> a : array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> b : array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> output : array<vec4<f32>>;

struct Uniforms { output_size : u32, M : u32, N : u32, K : u32 };
@group(0) @binding(3) var<uniform> uniforms : Uniforms;

fn a_indicesToOffset(row : u32, col : u32) -> u32 {
  return row * 16u + col;
}

fn b_indicesToOffset(row : u32, col : u32) -> u32 {
  return row * 16u + col;
}

fn output_indicesToOffset(row : u32, col : u32) -> u32 {
  return row * 16u + col;
}

@compute @workgroup_size(64, 1, 1)
fn main(@builtin(global_invocation_id) global_id : vec3<u32>,
        @builtin(workgroup_id) workgroup_id : vec3<u32>,
        @builtin(local_invocation_index) local_idx : u32,
        @builtin(local_invocation_id) local_id : vec3<u32>,
        @builtin(num_workgroups) num_workgroups : vec3<u32>) {
  let global_idx = global_id.x;
  if (global_idx >= uniforms.output_size) { return; }
  let col = global_idx % 16u;
  let row = global_idx / 16u;
  var value = vec4<f32>(0);
  for (var k : u32 = 0u; k < 16u; k++) {
    let a_data = a[a_indicesToOffset(row, k)];
    for (var i = 0u; i < 4u; i++) {
      let b_data = b[b_indicesToOffset(k * 4u + i, col)];
      value += a_data[i] * b_data;
    }
  }
  output[output_indicesToOffset(row, col)] = value;
}

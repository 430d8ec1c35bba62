// Batched GEMM with a fused epilogue on vec4-packed rows: result[b, M, N] = relu(A[b, M, K] B[b, K, N] + bias[N]), one output vec4 per invocation, no shared memory.
// class: gemm
// style: tfjs-webgpu naive vec4 matmul: `result` at binding 0, i32 `Uniforms` {dimAOuter, dimBOuter, dimInner}, `mm_readA` / `mm_readB` / `mm_write` helper `fn`s that bounds-check and divide the flat offset by 4, `for (var k = 0; k < uniforms.dimInner; k = k + 4)` with four `fma(vec4<f32>(a.x), b0, acc)` lines, epilogue inside `mm_write` (bias vec4 add, then an `activation(value, coords)` helper doing `max(a, vec4(0))`), batch from `globalId.z`
// spec: sizes(batch = 2, m = 32, n = 64, k = 48), bind(result = output(batch * m * n / 4), A = input(batch * m * k / 4), B = input(batch * k * n / 4), bias = input(n / 4), uniforms = uniform(m, n, k)), grid = (n / 4, m, batch), constraints(n % 4 == 0, k % 4 == 0), flops = 2 * batch * m * n * k

struct Uniforms {
  dimAOuter : i32,
  dimBOuter : i32,
  dimInner : i32,
};

@group(0) @binding(0) var<storage, read_write> result : array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> A : array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> B : array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> bias : array<vec4<f32>>;
@group(0) @binding(4) var<uniform> uniforms : Uniforms;

fn activation(a : vec4<f32>, outCoord : vec3<i32>) -> vec4<f32> {
  return max(a, vec4<f32>(0.0));
}

fn mm_readA(batch : i32, row : i32, col : i32) -> vec4<f32> {
  var value = vec4<f32>(0.0);
  if (row < uniforms.dimAOuter && col < uniforms.dimInner) {
    value = A[(batch * uniforms.dimAOuter * uniforms.dimInner + row * uniforms.dimInner + col) / 4];
  }
  return value;
}

fn mm_readB(batch : i32, row : i32, col : i32) -> vec4<f32> {
  var value = vec4<f32>(0.0);
  if (row < uniforms.dimInner && col < uniforms.dimBOuter) {
    value = B[(batch * uniforms.dimInner * uniforms.dimBOuter + row * uniforms.dimBOuter + col) / 4];
  }
  return value;
}

fn mm_write(batch : i32, row : i32, col : i32, valueIn : vec4<f32>) {
  if (row < uniforms.dimAOuter && col < uniforms.dimBOuter) {
    var value = valueIn;
    let coords = vec3<i32>(batch, row, col);
    value = value + bias[col / 4];
    value = activation(value, coords);
    result[(batch * uniforms.dimAOuter * uniforms.dimBOuter + row * uniforms.dimBOuter + col) / 4] = value;
  }
}

@compute @workgroup_size(8, 8, 1)
fn main(@builtin(global_invocation_id) globalId : vec3<u32>) {
  let batch = i32(globalId.z);
  let row = i32(globalId.y);
  let col = i32(globalId.x) * 4;
  var acc = vec4<f32>(0.0);
  for (var k = 0; k < uniforms.dimInner; k = k + 4) {
    let a = mm_readA(batch, row, k);
    let b0 = mm_readB(batch, k, col);
    let b1 = mm_readB(batch, k + 1, col);
    let b2 = mm_readB(batch, k + 2, col);
    let b3 = mm_readB(batch, k + 3, col);
    acc = fma(vec4<f32>(a.x), b0, acc);
    acc = fma(vec4<f32>(a.y), b1, acc);
    acc = fma(vec4<f32>(a.z), b2, acc);
    acc = fma(vec4<f32>(a.w), b3, acc);
  }
  mm_write(batch, row, col, acc);
}

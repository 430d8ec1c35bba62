// GEMM with vector operands and a scalar epilogue: a linear layer y = tanh(x Wᵀ + bias) with both operands packed along k, `sum += dot(x4, w4)`, the bias added and tanh applied to the f32 sum.
// spec: sizes(m = 64, n = 64, k = 64), bind(x = input(m * k / 4), w = input(n * k / 4), bias = input(n), y = output(m * n), p = uniform(m, n, k)), grid = (n, m), constraints(k % 4 == 0), flops = 2 * m * n * k
struct P {
  m : u32,
  n : u32,
  k : u32,
}

@group(0) @binding(0) var<storage, read> x : array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> w : array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> bias : array<f32>;
@group(0) @binding(2) var<storage, read_write> y : array<f32>;
@group(0) @binding(3) var<uniform> p : P;

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) id : vec3<u32>) {
  let col = id.x;
  let row = id.y;
  if (row >= p.m || col >= p.n) {
    return;
  }
  let k4 = p.k / 4u;
  var sum = 0.0;
  for (var i = 0u; i < k4; i++) {
    sum += dot(x[row * k4 + i], w[col * k4 + i]);
  }
  let z = sum + bias[col];
  y[row * p.n + col] = tanh(z);
}

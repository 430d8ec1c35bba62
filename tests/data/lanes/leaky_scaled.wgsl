// GEMM with vector operands and an epilogue written in lets: a scale, a bias and a leaky ReLU chosen by `select` on a vector comparison, c = leaky(0.5 · a b + bias).
// spec: sizes(m = 64, n = 64, k = 64), bind(a = input(m * k / 4), b = input(k * n / 4), bias = input(n / 4), c = output(m * n / 4), dims = uniform(m, n, k)), grid = (n / 4, m), constraints(n % 4 == 0, k % 4 == 0), flops = 2 * m * n * k

struct Dims {
  M : u32,
  N : u32,
  K : u32,
}

@group(0) @binding(0) var<storage, read> a : array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> b : array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> bias : array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> c : array<vec4<f32>>;
@group(0) @binding(4) var<uniform> dims : Dims;

const SLOPE : f32 = 0.01;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) global_id : vec3<u32>) {
  let col4 = global_id.x;
  let row = global_id.y;
  let N4 = dims.N / 4u;
  let K4 = dims.K / 4u;
  if (col4 >= N4 || row >= dims.M) {
    return;
  }

  var acc = vec4<f32>(0.0);
  for (var k4 = 0u; k4 < K4; k4++) {
    let a_vec = a[row * K4 + k4];
    acc += a_vec.x * b[(4u * k4) * N4 + col4];
    acc += a_vec.y * b[(4u * k4 + 1u) * N4 + col4];
    acc += a_vec.z * b[(4u * k4 + 2u) * N4 + col4];
    acc += a_vec.w * b[(4u * k4 + 3u) * N4 + col4];
  }
  let v = 0.5 * acc + bias[col4];
  let leaky = select(SLOPE * v, v, v > vec4<f32>(0.0));
  c[row * N4 + col4] = leaky;
}

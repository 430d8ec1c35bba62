// GEMM with vector operands and an epilogue, tfjs's fused linear layer: c = relu(a b + bias), with a, b, c and bias as array<vec4<f32>>, the bias added and the activation applied to the vec4 before the store.
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
  for (var k4 = 0u; k4 < K4; k4 = k4 + 1u) {
    let a_vec = a[row * K4 + k4];
    let k = k4 * 4u;
    acc = acc + a_vec.x * b[(k + 0u) * N4 + col4];
    acc = acc + a_vec.y * b[(k + 1u) * N4 + col4];
    acc = acc + a_vec.z * b[(k + 2u) * N4 + col4];
    acc = acc + a_vec.w * b[(k + 3u) * N4 + col4];
  }
  c[row * N4 + col4] = max(acc + bias[col4], vec4<f32>(0.0));
}

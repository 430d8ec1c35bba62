// GEMM with vector operands, respelled: the rows spelling over vec2s: two updates an iteration.
// spec: sizes(m = 64, n = 64, k = 64), bind(a = input(m * k / 2), b = input(k * n / 2), c = output(m * n / 2), dims = uniform(m, n, k)), grid = (n / 2, m), constraints(n % 2 == 0, k % 2 == 0), flops = 2 * m * n * k
struct Dims {
  M : u32,
  N : u32,
  K : u32,
}

@group(0) @binding(0) var<storage, read> a : array<vec2<f32>>;
@group(0) @binding(1) var<storage, read> b : array<vec2<f32>>;
@group(0) @binding(2) var<storage, read_write> c : array<vec2<f32>>;
@group(0) @binding(3) var<uniform> dims : Dims;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) global_id : vec3<u32>) {
  let col4 = global_id.x;
  let row = global_id.y;
  let N4 = dims.N / 2u;
  let K4 = dims.K / 2u;
  if (col4 >= N4 || row >= dims.M) {
    return;
  }

  var acc = vec2<f32>(0.0);
  for (var k4 = 0u; k4 < K4; k4 = k4 + 1u) {
    let a_vec = a[row * K4 + k4];
    let k = k4 * 2u;
    acc = acc + a_vec.x * b[(k + 0u) * N4 + col4];
    acc = acc + a_vec.y * b[(k + 1u) * N4 + col4];
  }
  c[row * N4 + col4] = acc;

}

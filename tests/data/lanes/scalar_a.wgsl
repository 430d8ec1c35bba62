// GEMM with vector operands, respelled: a scalar operand: `a` is array<f32>, one update an iteration.
// spec: sizes(m = 64, n = 64, k = 64), bind(a = input(m * k), b = input(k * n / 4), c = output(m * n / 4), dims = uniform(m, n, k, 0)), grid = (n / 4, m), constraints(n % 4 == 0), flops = 2 * m * n * k
@group(0) @binding(0) var<storage, read> a : array<f32>;
@group(0) @binding(1) var<storage, read> b : array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> c : array<vec4<f32>>;
@group(0) @binding(3) var<uniform> dims : vec4<u32>;

@compute @workgroup_size(16, 4)
fn main(@builtin(global_invocation_id) gid : vec3<u32>) {
  let n4 = dims.y / 4u;
  if (gid.x < n4 && gid.y < dims.x) {
    var sum = vec4<f32>(0.0, 0.0, 0.0, 0.0);
    for (var k = 0u; k < dims.z; k++) {
      sum = sum + a[gid.y * dims.z + k] * b[k * n4 + gid.x];
    }
    c[gid.y * n4 + gid.x] = sum;
  }
}

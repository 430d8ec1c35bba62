// GEMM with scaling: c[M, N] = alpha * (a[M, K] b[K, N]) + beta * c_in[M, N], c_in a separate input.
// class: gemm
// style: BLAS-style sgemm with alpha/beta in the params struct, flat 1-D id split with `/` and `%`, helper `fn` for the dot product, `override` workgroup size
// spec: sizes(m = 40, n = 72, k = 64), bind(a = input(m * k), b = input(k * n), c_in = input(m * n), c = output(m * n), gemm = uniform(m, n, k, 1.5, 0.5)), grid = (m * n), flops = 2 * m * n * k

struct GemmParams {
  m: u32,
  n: u32,
  k: u32,
  alpha: f32,
  beta: f32,
}

override WORKGROUP_SIZE: u32 = 256u;

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read> c_in: array<f32>;
@group(0) @binding(3) var<storage, read_write> c: array<f32>;
@group(0) @binding(4) var<uniform> gemm: GemmParams;

fn row_dot_col(row: u32, col: u32) -> f32 {
  var sum = 0.0;
  for (var i = 0u; i < gemm.k; i++) {
    sum += a[row * gemm.k + i] * b[i * gemm.n + col];
  }
  return sum;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn sgemm(@builtin(global_invocation_id) global_id: vec3<u32>) {
  let index = global_id.x;
  if (index >= gemm.m * gemm.n) {
    return;
  }
  let row = index / gemm.n;
  let col = index % gemm.n;
  let prod = row_dot_col(row, col);
  c[index] = gemm.alpha * prod + gemm.beta * c_in[index];
}

// GEMM with the right operand stored as 4x4 tiles: c[M, N] = a[M, K] B[K, N], where tile (kb, nb) of B is one mat4x4 whose column i holds row 4*kb + i of B over columns 4*nb .. 4*nb + 3; a and c are vec4-packed rows.
// class: gemm
// style: graphics-flavoured blocked GEMM: the right operand an `array<mat4x4<f32>>` of tiles, products written as `tile * a_vec` (matrix-vector) accumulated into a `vec4`, `Dims` uniform, 2-D `global_invocation_id` (x = output vec4 column, y = row), `@workgroup_size(4, 16)`, wrapping `if`
// spec: sizes(m = 64, n = 64, k = 64), bind(a = input(m * k / 4), b_tiles = input(k * n / 16), c = output(m * n / 4), dims = uniform(m, n, k)), grid = (n / 4, m), constraints(n % 4 == 0, k % 4 == 0), flops = 2 * m * n * k

struct Dims {
  M : u32,
  N : u32,
  K : u32,
}

@group(0) @binding(0) var<storage, read> a : array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> b_tiles : array<mat4x4<f32>>;
@group(0) @binding(2) var<storage, read_write> c : array<vec4<f32>>;
@group(0) @binding(3) var<uniform> dims : Dims;

@compute @workgroup_size(4, 16)
fn main(@builtin(global_invocation_id) gid : vec3<u32>) {
  let nb = gid.x;
  let row = gid.y;
  let n_tiles = dims.N / 4u;
  let k_tiles = dims.K / 4u;
  if (nb < n_tiles && row < dims.M) {
    var acc = vec4<f32>(0.0);
    for (var kb = 0u; kb < k_tiles; kb++) {
      let tile = b_tiles[kb * n_tiles + nb];
      let a_vec = a[row * k_tiles + kb];
      acc += tile * a_vec;
    }
    c[row * n_tiles + nb] = acc;
  }
}

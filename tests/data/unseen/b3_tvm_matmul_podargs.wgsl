// GEMM with a dynamic row count: var_matmul_intermediate[n, 128] = lv1[n, 64] x lv2[64, 128], K and N specialised to literals as TVM does, n from the PODArgs uniform.
// class: gemm
// style: TVM / web-llm generated WGSL: every buffer `read_write`, `PODArgs` uniform {n: i32, packGridDimX: u32}, `@workgroup_size(64, 1, 1)` with blockIdx/gridDim/threadIdx builtin names and the packed-grid guard, i32 index arithmetic in `let` chains with generated names, fused index split with `>> 7` / `& 127`, hard-coded `for (var k : i32 = 0; k < 64; k++)`, local `array<f32, 1>` accumulator
// spec: sizes(m = 96, n = 128, k = 64), bind(lv1 = input(m * k), lv2 = input(k * n), var_matmul_intermediate = output(m * n), podArgs = uniform(m, m * n / 64 - 1)), workgroups = (m * n / 64), constraints(n == 128, k == 64), flops = 2 * m * n * k

@group(0) @binding(0) var<storage, read_write> lv1 : array<f32>;
@group(0) @binding(1) var<storage, read_write> lv2 : array<f32>;
@group(0) @binding(2) var<storage, read_write> var_matmul_intermediate : array<f32>;

struct PODArgs {
  n: i32,
  packGridDimX: u32
}
@group(0) @binding(3) var<uniform> podArgs : PODArgs;

@compute @workgroup_size(64, 1, 1)
fn matmul_kernel(
  @builtin(workgroup_id) blockIdx : vec3<u32>,
  @builtin(num_workgroups) gridDim : vec3<u32>,
  @builtin(local_invocation_id) threadIdx : vec3<u32>
) {
  if (blockIdx.z * gridDim.x + blockIdx.x > podArgs.packGridDimX) { return; }
  let v__1 : i32 = i32(blockIdx.z * gridDim.x + blockIdx.x);
  var var_matmul_intermediate_local : array<f32, 1>;
  let v_i0_i1_fused : i32 = ((v__1 * 64) + i32(threadIdx.x));
  if (v_i0_i1_fused < (podArgs.n * 128)) {
    var_matmul_intermediate_local[0] = 0.000000e+00f;
    for (var k : i32 = 0; k < 64; k++) {
      let v_lv1_idx : i32 = (((v_i0_i1_fused >> 7) * 64) + k);
      let v_lv2_idx : i32 = ((k * 128) + (v_i0_i1_fused & 127));
      var_matmul_intermediate_local[0] = (var_matmul_intermediate_local[0] + (lv1[v_lv1_idx] * lv2[v_lv2_idx]));
    }
    var_matmul_intermediate[v_i0_i1_fused] = var_matmul_intermediate_local[0];
  }
}

// Row softmax over A[n, 256] (row length specialised to a literal, row count n from the PODArgs uniform): T_softmax_norm = exp(A - rowmax) / rowsum.
// class: softmax
// style: TVM / web-llm generated WGSL: `read_write` buffers, `PODArgs` uniform {n: i32, packGridDimX: u32}, `@workgroup_size(64, 1, 1)` blockIdx/threadIdx names with the packed-grid guard, i32 `let` chains, running max as `select(m, v, m < v)` in a local `array<f32, 1>`, three hard-coded `for (var k : i32 = 0; k < 256; k++)` loops
// spec: sizes(rows = 40, cols = 256), bind(A = input(rows * cols, range(-6.0, 6.0)), T_softmax_norm = output(rows * cols), podArgs = uniform(rows, (rows + 63) / 64 - 1)), workgroups = ((rows + 63) / 64), constraints(cols == 256)

@group(0) @binding(0) var<storage, read_write> A : array<f32>;
@group(0) @binding(1) var<storage, read_write> T_softmax_norm : array<f32>;

struct PODArgs {
  n: i32,
  packGridDimX: u32
}
@group(0) @binding(2) var<uniform> podArgs : PODArgs;

@compute @workgroup_size(64, 1, 1)
fn softmax_kernel(
  @builtin(workgroup_id) blockIdx : vec3<u32>,
  @builtin(num_workgroups) gridDim : vec3<u32>,
  @builtin(local_invocation_id) threadIdx : vec3<u32>
) {
  if (blockIdx.z * gridDim.x + blockIdx.x > podArgs.packGridDimX) { return; }
  let v__1 : i32 = i32(blockIdx.z * gridDim.x + blockIdx.x);
  var T_softmax_maxelem_local : array<f32, 1>;
  var T_softmax_expsum_local : array<f32, 1>;
  let v_i0 : i32 = ((v__1 * 64) + i32(threadIdx.x));
  if (v_i0 < podArgs.n) {
    T_softmax_maxelem_local[0] = -3.402823e+38f;
    for (var k : i32 = 0; k < 256; k++) {
      let v_A_val : f32 = A[((v_i0 * 256) + k)];
      T_softmax_maxelem_local[0] = select(T_softmax_maxelem_local[0], v_A_val, (T_softmax_maxelem_local[0] < v_A_val));
    }
    T_softmax_expsum_local[0] = 0.000000e+00f;
    for (var k_1 : i32 = 0; k_1 < 256; k_1++) {
      T_softmax_expsum_local[0] = (T_softmax_expsum_local[0] + exp((A[((v_i0 * 256) + k_1)] - T_softmax_maxelem_local[0])));
    }
    for (var i1 : i32 = 0; i1 < 256; i1++) {
      let v_ax_idx : i32 = ((v_i0 * 256) + i1);
      T_softmax_norm[v_ax_idx] = (exp((A[v_ax_idx] - T_softmax_maxelem_local[0])) / T_softmax_expsum_local[0]);
    }
  }
}

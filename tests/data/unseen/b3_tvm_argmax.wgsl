// Row argmax over A[n, 128] (row length specialised, n from the PODArgs uniform), first index of the maximum, as i32.
// class: argreduce
// style: TVM / web-llm generated WGSL: `read_write` buffers, `PODArgs` uniform, `@workgroup_size(64, 1, 1)` blockIdx/threadIdx with the packed-grid guard, argmax kept as a (index, value) pair in two local `array<_, 1>` buffers updated by `select` on the generated tie-break predicate `(v1 > x) || ((v1 == x) && (v0 < k))`, i32 output, hard-coded `k < 128`
// spec: sizes(rows = 50, cols = 128), bind(A = input(rows * cols), T_argmax = output(rows), podArgs = uniform(rows, (rows + 63) / 64 - 1)), workgroups = ((rows + 63) / 64), constraints(cols == 128)

@group(0) @binding(0) var<storage, read_write> A : array<f32>;
@group(0) @binding(1) var<storage, read_write> T_argmax : array<i32>;

struct PODArgs {
  n: i32,
  packGridDimX: u32
}
@group(0) @binding(2) var<uniform> podArgs : PODArgs;

@compute @workgroup_size(64, 1, 1)
fn argmax_kernel(
  @builtin(workgroup_id) blockIdx : vec3<u32>,
  @builtin(num_workgroups) gridDim : vec3<u32>,
  @builtin(local_invocation_id) threadIdx : vec3<u32>
) {
  if (blockIdx.z * gridDim.x + blockIdx.x > podArgs.packGridDimX) { return; }
  let v__1 : i32 = i32(blockIdx.z * gridDim.x + blockIdx.x);
  var A_red_temp_v0_local : array<i32, 1>;
  var A_red_temp_v1_local : array<f32, 1>;
  let v_ax0 : i32 = ((v__1 * 64) + i32(threadIdx.x));
  if (v_ax0 < podArgs.n) {
    A_red_temp_v0_local[0] = -1;
    A_red_temp_v1_local[0] = -3.402823e+38f;
    for (var k1 : i32 = 0; k1 < 128; k1++) {
      let v_A_val : f32 = A[((v_ax0 * 128) + k1)];
      let v_keep : bool = ((A_red_temp_v1_local[0] > v_A_val) || ((A_red_temp_v1_local[0] == v_A_val) && (A_red_temp_v0_local[0] < k1)));
      let v_A_red_temp_v0 : i32 = select(k1, A_red_temp_v0_local[0], v_keep);
      let v_A_red_temp_v1 : f32 = select(v_A_val, A_red_temp_v1_local[0], v_keep);
      A_red_temp_v0_local[0] = v_A_red_temp_v0;
      A_red_temp_v1_local[0] = v_A_red_temp_v1;
    }
    T_argmax[v_ax0] = A_red_temp_v0_local[0];
  }
}

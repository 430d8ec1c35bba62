// Embedding lookup from a table stored as raw f32 bits: T_take[t, d] = bitcast<f32>(weight_bits[ids[t], d]) with i32 token ids (negative ids wrap by the vocabulary, as `take` normalises them), dim specialised to 128 and the vocabulary to 500.
// class: gather
// style: TVM / web-llm generated WGSL: `read_write` buffers, i32 id buffer, `PODArgs` uniform {n: i32, packGridDimX: u32}, `@workgroup_size(64, 1, 1)` blockIdx/threadIdx with the packed-grid guard, `select(id, id + 500, id < 0)` index normalisation, `bitcast<f32>` of a `u32` table, fused index split with `>> 7` / `& 127`
// spec: sizes(tokens = 40, dim = 128, vocab = 500), bind(input_ids = input(tokens, range(0, vocab)), weight_bits = input(vocab * dim, range(1065353216, 1073741824)), T_take = output(tokens * dim), podArgs = uniform(tokens, tokens * dim / 64 - 1)), workgroups = (tokens * dim / 64), constraints(dim == 128, vocab == 500)

@group(0) @binding(0) var<storage, read_write> input_ids : array<i32>;
@group(0) @binding(1) var<storage, read_write> weight_bits : array<u32>;
@group(0) @binding(2) var<storage, read_write> T_take : array<f32>;

struct PODArgs {
  n: i32,
  packGridDimX: u32
}
@group(0) @binding(3) var<uniform> podArgs : PODArgs;

@compute @workgroup_size(64, 1, 1)
fn take_kernel(
  @builtin(workgroup_id) blockIdx : vec3<u32>,
  @builtin(num_workgroups) gridDim : vec3<u32>,
  @builtin(local_invocation_id) threadIdx : vec3<u32>
) {
  if (blockIdx.z * gridDim.x + blockIdx.x > podArgs.packGridDimX) { return; }
  let v__1 : i32 = i32(blockIdx.z * gridDim.x + blockIdx.x);
  let v_ax0_ax1_fused : i32 = ((v__1 * 64) + i32(threadIdx.x));
  if (v_ax0_ax1_fused < (podArgs.n * 128)) {
    let v_input_ids_val : i32 = input_ids[(v_ax0_ax1_fused >> 7)];
    let v_row : i32 = select(v_input_ids_val, (v_input_ids_val + 500), (v_input_ids_val < 0));
    T_take[v_ax0_ax1_fused] = bitcast<f32>(weight_bits[((v_row * 128) + (v_ax0_ax1_fused & 127))]);
  }
}

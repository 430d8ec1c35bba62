// f32 attention over [bh, 64, 32] (bh = batch x heads from the PODArgs uniform, seq 64 and head_dim 32 specialised): scores = q k^T * 1/sqrt(32), softmax over keys, out = p v.
// class: attention
// style: TVM / web-llm generated WGSL: `read_write` buffers named lv_q/lv_k/lv_v, `PODArgs` uniform, `@workgroup_size(64, 1, 1)` blockIdx/threadIdx with the packed-grid guard, i32 `let` chains with `>> 6`, hard-coded extents in every loop (`j < 64`, `d_1 < 32`), scale as the literal `1.767767e-01f`, scores and output row in local `array<f32, 64>` / `array<f32, 32>`, max and sum in `array<f32, 1>` locals
// spec: sizes(bh = 6, s = 64, d = 32), bind(lv_q = input(bh * s * d), lv_k = input(bh * s * d), lv_v = input(bh * s * d), T_attn = output(bh * s * d), podArgs = uniform(bh, (bh * s + 63) / 64 - 1)), workgroups = ((bh * s + 63) / 64), constraints(s == 64, d == 32), tolerance = 1e-3, flops = 4 * bh * s * s * d

@group(0) @binding(0) var<storage, read_write> lv_q : array<f32>;
@group(0) @binding(1) var<storage, read_write> lv_k : array<f32>;
@group(0) @binding(2) var<storage, read_write> lv_v : array<f32>;
@group(0) @binding(3) var<storage, read_write> T_attn : array<f32>;

struct PODArgs {
  bh: i32,
  packGridDimX: u32
}
@group(0) @binding(4) var<uniform> podArgs : PODArgs;

@compute @workgroup_size(64, 1, 1)
fn attention_kernel(
  @builtin(workgroup_id) blockIdx : vec3<u32>,
  @builtin(num_workgroups) gridDim : vec3<u32>,
  @builtin(local_invocation_id) threadIdx : vec3<u32>
) {
  if (blockIdx.z * gridDim.x + blockIdx.x > podArgs.packGridDimX) { return; }
  let v__1 : i32 = i32(blockIdx.z * gridDim.x + blockIdx.x);
  var attn_score_local : array<f32, 64>;
  var attn_max_local : array<f32, 1>;
  var attn_sum_local : array<f32, 1>;
  var T_attn_local : array<f32, 32>;
  let v_bh_s_fused : i32 = ((v__1 * 64) + i32(threadIdx.x));
  if (v_bh_s_fused < (podArgs.bh * 64)) {
    let v_bh : i32 = (v_bh_s_fused >> 6);
    let v_q_base : i32 = (v_bh_s_fused * 32);
    attn_max_local[0] = -3.402823e+38f;
    for (var j : i32 = 0; j < 64; j++) {
      let v_k_base : i32 = (((v_bh * 64) + j) * 32);
      attn_score_local[j] = 0.000000e+00f;
      for (var d_1 : i32 = 0; d_1 < 32; d_1++) {
        attn_score_local[j] = (attn_score_local[j] + (lv_q[(v_q_base + d_1)] * lv_k[(v_k_base + d_1)]));
      }
      attn_score_local[j] = (attn_score_local[j] * 1.767767e-01f);
      attn_max_local[0] = max(attn_max_local[0], attn_score_local[j]);
    }
    attn_sum_local[0] = 0.000000e+00f;
    for (var j_1 : i32 = 0; j_1 < 64; j_1++) {
      attn_score_local[j_1] = exp((attn_score_local[j_1] - attn_max_local[0]));
      attn_sum_local[0] = (attn_sum_local[0] + attn_score_local[j_1]);
    }
    for (var d_2 : i32 = 0; d_2 < 32; d_2++) {
      T_attn_local[d_2] = 0.000000e+00f;
    }
    for (var j_2 : i32 = 0; j_2 < 64; j_2++) {
      let v_v_base : i32 = (((v_bh * 64) + j_2) * 32);
      let v_p : f32 = (attn_score_local[j_2] / attn_sum_local[0]);
      for (var d_3 : i32 = 0; d_3 < 32; d_3++) {
        T_attn_local[d_3] = (T_attn_local[d_3] + (v_p * lv_v[(v_v_base + d_3)]));
      }
    }
    for (var d_4 : i32 = 0; d_4 < 32; d_4++) {
      T_attn[(v_q_base + d_4)] = T_attn_local[d_4];
    }
  }
}

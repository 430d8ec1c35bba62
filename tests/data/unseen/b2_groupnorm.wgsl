// GroupNorm over x[N, C, HW]: each invocation normalizes one (batch, group) slab of C / G channels x HW positions (two-pass mean, variance), then a per-channel affine.
// class: layernorm
// style: stable-diffusion / diffusers-webgpu style GroupNorm, 2-D `global_invocation_id` (group, batch), params struct with `num_groups` and `eps`, nested channel / spatial loops, helper `fn` for the slab offset
// spec: sizes(n = 2, c = 16, groups = 4, hw = 49), bind(x = input(n * c * hw), gamma = input(c), beta = input(c), y = output(n * c * hw), p = uniform(n, c, hw, groups, 1e-5)), grid = (groups, n), tolerance = 1e-3

struct GroupNormParams {
  batch: u32,
  channels: u32,
  spatial: u32,
  num_groups: u32,
  eps: f32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> gamma: array<f32>;
@group(0) @binding(2) var<storage, read> beta: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<uniform> p: GroupNormParams;

fn channel_offset(b: u32, ch: u32) -> u32 {
  return (b * p.channels + ch) * p.spatial;
}

@compute @workgroup_size(8, 8, 1)
fn group_norm(@builtin(global_invocation_id) gid: vec3<u32>) {
  let g = gid.x;
  let b = gid.y;
  if (g >= p.num_groups || b >= p.batch) {
    return;
  }
  let ch_per_group = p.channels / p.num_groups;
  let ch_start = g * ch_per_group;
  let count = f32(ch_per_group * p.spatial);

  var sum = 0.0;
  for (var ci = 0u; ci < ch_per_group; ci++) {
    let base = channel_offset(b, ch_start + ci);
    for (var s = 0u; s < p.spatial; s++) {
      sum = sum + x[base + s];
    }
  }
  let mean = sum / count;

  var sq = 0.0;
  for (var ci = 0u; ci < ch_per_group; ci++) {
    let base = channel_offset(b, ch_start + ci);
    for (var s = 0u; s < p.spatial; s++) {
      let d = x[base + s] - mean;
      sq = sq + d * d;
    }
  }
  let inv_std = 1.0 / sqrt(sq / count + p.eps);

  for (var ci = 0u; ci < ch_per_group; ci++) {
    let ch = ch_start + ci;
    let base = channel_offset(b, ch);
    let scale = gamma[ch] * inv_std;
    let shift = beta[ch] - mean * scale;
    for (var s = 0u; s < p.spatial; s++) {
      y[base + s] = x[base + s] * scale + shift;
    }
  }
}

// Single-head causal attention, one query row per invocation: out[i] = sum_{j <= i} softmax_j(q_i . k_j / sqrt(d)) v_j, q, k, v, out as [seq, d].
// class: attention
// style: nanoGPT-webgpu style naive causal attention: 1-D id, key loop bounded by the query index (`j <= i`), max pass then exp/sum pass accumulating into a private `array<f32, MAX_HEAD_DIM>`, helper `fn` for the score
// spec: sizes(seq = 64, d = 32), bind(q = input(seq * d), k = input(seq * d), v = input(seq * d), out = output(seq * d), cfg = uniform(seq, d)), grid = (seq), tolerance = 1e-3, flops = 2 * seq * seq * d

const MAX_HEAD_DIM: u32 = 128u;

struct AttnConfig {
    seq_len: u32,
    head_dim: u32,
}

@group(0) @binding(0) var<storage, read> q: array<f32>;
@group(0) @binding(1) var<storage, read> k: array<f32>;
@group(0) @binding(2) var<storage, read> v: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> cfg: AttnConfig;

fn score(i: u32, j: u32, scale: f32) -> f32 {
    var s = 0.0;
    for (var t = 0u; t < cfg.head_dim; t++) {
        s += q[i * cfg.head_dim + t] * k[j * cfg.head_dim + t];
    }
    return s * scale;
}

@compute @workgroup_size(64)
fn causal_attention(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= cfg.seq_len) {
        return;
    }
    let d = cfg.head_dim;
    let scale = 1.0 / sqrt(f32(d));

    var m = -3.402823e38;
    for (var j = 0u; j <= i; j++) {
        m = max(m, score(i, j, scale));
    }

    var acc: array<f32, MAX_HEAD_DIM>;
    for (var t = 0u; t < d; t++) {
        acc[t] = 0.0;
    }
    var denom = 0.0;
    for (var j = 0u; j <= i; j++) {
        let p = exp(score(i, j, scale) - m);
        denom += p;
        for (var t = 0u; t < d; t++) {
            acc[t] += p * v[j * d + t];
        }
    }

    let inv = 1.0 / denom;
    for (var t = 0u; t < d; t++) {
        out[i * d + t] = acc[t] * inv;
    }
}

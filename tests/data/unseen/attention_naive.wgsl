// Naive attention, one query row per invocation: scores = q . k_j / sqrt(head_dim), softmax over j, out = sum_j p_j v_j; Q, K, V, out are [heads, seq, head_dim].
// class: attention
// style: one query row per invocation (x = query, y = head), scores kept in a function-scope array<f32, 64>, scale computed as 1.0 / sqrt(f32(head_dim)), accumulation into the output row
// spec: sizes(heads = 4, seq = 48, head_dim = 32), bind(q = input(heads * seq * head_dim), k = input(heads * seq * head_dim), v = input(heads * seq * head_dim), out = output(heads * seq * head_dim), params = uniform(heads, seq, head_dim)), grid = (seq, heads), tolerance = 1e-3, flops = 4 * heads * seq * seq * head_dim

struct AttnParams {
    num_heads: u32,
    seq_len: u32,
    head_dim: u32,
}

const MAX_SEQ: u32 = 64u;

@group(0) @binding(0) var<storage, read> q: array<f32>;
@group(0) @binding(1) var<storage, read> k: array<f32>;
@group(0) @binding(2) var<storage, read> v: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> params: AttnParams;

@compute @workgroup_size(32, 1, 1)
fn attention(@builtin(global_invocation_id) gid: vec3<u32>) {
    let qi = gid.x;
    let head = gid.y;
    if (qi >= params.seq_len || head >= params.num_heads) {
        return;
    }
    let d = params.head_dim;
    let head_base = head * params.seq_len * d;
    let q_base = head_base + qi * d;
    let scale = 1.0 / sqrt(f32(d));

    var scores: array<f32, MAX_SEQ>;
    var max_score = -1e30;
    for (var j = 0u; j < params.seq_len; j++) {
        let k_base = head_base + j * d;
        var s = 0.0;
        for (var t = 0u; t < d; t++) {
            s += q[q_base + t] * k[k_base + t];
        }
        s *= scale;
        scores[j] = s;
        max_score = max(max_score, s);
    }

    var denom = 0.0;
    for (var j = 0u; j < params.seq_len; j++) {
        let e = exp(scores[j] - max_score);
        scores[j] = e;
        denom += e;
    }

    for (var t = 0u; t < d; t++) {
        out[q_base + t] = 0.0;
    }
    for (var j = 0u; j < params.seq_len; j++) {
        let p = scores[j] / denom;
        let v_base = head_base + j * d;
        for (var t = 0u; t < d; t++) {
            out[q_base + t] += p * v[v_base + t];
        }
    }
}

// Decode-time attention with grouped-query heads: one new query token attends over `ctx` cached
// keys and values (the new token's own included). One query head per invocation, three passes:
// scaled scores into a scratch row (tracking the max), exponentials and their sum, then the
// weighted sum of values.
struct Attn {
    heads: u32,
    kv_heads: u32,
    head_dim: u32,
    ctx: u32,
}

@group(0) @binding(0) var<storage, read> q: array<f32>;       // [heads][head_dim]
@group(0) @binding(1) var<storage, read> k_cache: array<f32>; // [ctx][kv_heads][head_dim]
@group(0) @binding(2) var<storage, read> v_cache: array<f32>; // [ctx][kv_heads][head_dim]
@group(0) @binding(3) var<storage, read_write> scores: array<f32>; // [heads][ctx], scratch
@group(0) @binding(4) var<storage, read_write> out: array<f32>;    // [heads][head_dim]
@group(0) @binding(5) var<uniform> attn: Attn;

@compute @workgroup_size(32)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let h = gid.x;
    if (h >= attn.heads) {
        return;
    }
    let d = attn.head_dim;
    let kvh = h / (attn.heads / attn.kv_heads);
    let stride = attn.kv_heads * d;
    let scale = inverseSqrt(f32(d));
    let row = h * attn.ctx;

    var m = -3.402823e38;
    for (var t = 0u; t < attn.ctx; t++) {
        var dot = 0.0;
        for (var c = 0u; c < d; c++) {
            dot += q[h * d + c] * k_cache[t * stride + kvh * d + c];
        }
        scores[row + t] = dot * scale;
        m = max(m, dot * scale);
    }
    var sum = 0.0;
    for (var t = 0u; t < attn.ctx; t++) {
        let e = exp(scores[row + t] - m);
        scores[row + t] = e;
        sum += e;
    }
    for (var c = 0u; c < d; c++) {
        var acc = 0.0;
        for (var t = 0u; t < attn.ctx; t++) {
            acc += scores[row + t] * v_cache[t * stride + kvh * d + c];
        }
        out[h * d + c] = acc / sum;
    }
}

// Scaled dot-product attention for one head, one query row per invocation, as KernelBench's
// naive draft writes it: the score in a helper function, a pass for the row's maximum, then a
// pass that accumulates the exponentials and the weighted values straight into the output row.
// spec: sizes(seq = 45, d = 20), bind(q = input(seq * d), k = input(seq * d), v = input(seq * d), out = output(seq * d), attn = uniform(seq, d)), grid = (seq), tolerance = 1e-3
// fires: flash-attention
struct Attn {
    seq: u32,
    d: u32,
}

@group(0) @binding(0) var<storage, read> q: array<f32>;
@group(0) @binding(1) var<storage, read> k: array<f32>;
@group(0) @binding(2) var<storage, read> v: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> attn: Attn;

fn score(i: u32, j: u32) -> f32 {
    var s = 0.0;
    for (var c = 0u; c < attn.d; c++) {
        s += q[i * attn.d + c] * k[j * attn.d + c];
    }
    return s * inverseSqrt(f32(attn.d));
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= attn.seq) {
        return;
    }
    var m = -3.402823e38;
    for (var j = 0u; j < attn.seq; j++) {
        m = max(m, score(i, j));
    }
    for (var c = 0u; c < attn.d; c++) {
        out[i * attn.d + c] = 0.0;
    }
    var denom = 0.0;
    for (var j = 0u; j < attn.seq; j++) {
        let p = exp(score(i, j) - m);
        denom += p;
        for (var c = 0u; c < attn.d; c++) {
            out[i * attn.d + c] += p * v[j * attn.d + c];
        }
    }
    for (var c = 0u; c < attn.d; c++) {
        out[i * attn.d + c] /= denom;
    }
}

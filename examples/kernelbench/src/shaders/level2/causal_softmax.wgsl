// Attention probabilities for `heads` heads: softmax(scale * scores) along each row with a causal
// mask (query i sees keys 0..=i; masked entries are 0). Rows are (head, query) pairs.
struct Params {
    heads: u32,
    seq: u32,
    scale: f32,
}

@group(0) @binding(0) var<storage, read> scores: array<f32>;
@group(0) @binding(1) var<storage, read_write> probs: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.x;
    if (row >= params.heads * params.seq) {
        return;
    }
    let query = row % params.seq;
    let base = row * params.seq;
    var m = -3.402823e38;
    for (var j = 0u; j <= query; j++) {
        m = max(m, scores[base + j] * params.scale);
    }
    var s = 0.0;
    for (var j = 0u; j <= query; j++) {
        s += exp(scores[base + j] * params.scale - m);
    }
    for (var j = 0u; j < params.seq; j++) {
        if (j <= query) {
            probs[base + j] = exp(scores[base + j] * params.scale - m) / s;
        } else {
            probs[base + j] = 0.0;
        }
    }
}

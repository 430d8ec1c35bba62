// Embedding lookup: out[t] = table[ids[t]] for each token t. x = feature, y = token.
struct Emb {
    tokens: u32,
    dim: u32,
}

@group(0) @binding(0) var<storage, read> ids: array<u32>;
@group(0) @binding(1) var<storage, read> table: array<f32>; // [vocab][dim]
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> emb: Emb;

@compute @workgroup_size(64, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let d = gid.x;
    let t = gid.y;
    if (d < emb.dim && t < emb.tokens) {
        let id = ids[t];
        out[t * emb.dim + d] = table[id * emb.dim + d];
    }
}

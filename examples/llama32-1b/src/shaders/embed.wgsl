// Token embedding: hidden[t] = table[token_ids[t]]. Llama 3.2 1B ties this table to the LM head.
struct Embed {
    tokens: u32,
    hidden: u32,
}

@group(0) @binding(0) var<storage, read> token_ids: array<u32>;
@group(0) @binding(1) var<storage, read> table: array<f32>; // [vocab][hidden]
@group(0) @binding(2) var<storage, read_write> hidden_out: array<f32>;
@group(0) @binding(3) var<uniform> embed: Embed;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let t = gid.y;
    if (i >= embed.hidden || t >= embed.tokens) {
        return;
    }
    hidden_out[t * embed.hidden + i] = table[token_ids[t] * embed.hidden + i];
}

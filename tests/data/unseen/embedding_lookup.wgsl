// Embedding lookup: out[t, d] = table[ids[t], d] for u32 token ids, table [vocab, dim].
// class: gather
// style: flat 1-D global id split into (token, feature) with / and %, u32 id buffer, early return guard, uniform {num_tokens, dim}
// spec: sizes(tokens = 40, vocab = 500, dim = 64), bind(ids = input(tokens, range(0, vocab)), table = input(vocab * dim), out = output(tokens * dim), params = uniform(tokens, dim)), grid = (tokens * dim)

struct EmbeddingParams {
    num_tokens: u32,
    dim: u32,
}

@group(0) @binding(0) var<storage, read> ids: array<u32>;
@group(0) @binding(1) var<storage, read> table: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> params: EmbeddingParams;

@compute @workgroup_size(256)
fn embed(@builtin(global_invocation_id) gid: vec3<u32>) {
    let idx = gid.x;
    if (idx >= params.num_tokens * params.dim) {
        return;
    }
    let token = idx / params.dim;
    let feature = idx % params.dim;
    let id = ids[token];
    out[idx] = table[id * params.dim + feature];
}

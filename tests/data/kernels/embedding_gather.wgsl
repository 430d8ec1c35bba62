// Embedding lookup: each token's row of the table, one feature per invocation. The row comes from
// a token id read from a buffer, so the table's index is not affine in the id; its start does not
// move along x, and the spec promises a width of whole vectors.
// spec: sizes(tokens = 5, vocab = 9, dim = 40), bind(ids = input(tokens, range(0, vocab)), table = input(vocab * dim), out = output(tokens * dim), emb = uniform(tokens, dim)), grid = (dim, tokens), constraints(dim % 4 == 0)
// fires: widen
// skips: reduce vectorize
struct Emb {
    tokens: u32,
    dim: u32,
}

@group(0) @binding(0) var<storage, read> ids: array<u32>;
@group(0) @binding(1) var<storage, read> table: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> emb: Emb;

@compute @workgroup_size(16, 4)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let d = gid.x;
    let t = gid.y;
    if (d < emb.dim && t < emb.tokens) {
        let id = ids[t];
        out[t * emb.dim + d] = table[id * emb.dim + d];
    }
}

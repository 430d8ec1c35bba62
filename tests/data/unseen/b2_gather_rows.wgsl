// Row gather: out[i, :] = table[idx[i], :], table[vocab, dim], idx[count] of u32 row ids.
// class: gather
// style: embedding / index_select style, flat 1-D id split into (row, feature) with `/` and `%`, u32 index list, params struct
// spec: sizes(count = 40, vocab = 300, dim = 64), bind(idx = input(count, range(0, vocab)), table = input(vocab * dim), out = output(count * dim), p = uniform(count, dim)), grid = (count * dim)

struct GatherParams {
    count: u32,
    dim: u32,
}

@group(0) @binding(0) var<storage, read> idx: array<u32>;
@group(0) @binding(1) var<storage, read> table: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> p: GatherParams;

@compute @workgroup_size(256)
fn gather_rows(@builtin(global_invocation_id) gid: vec3<u32>) {
    let flat = gid.x;
    if (flat >= p.count * p.dim) {
        return;
    }
    let i = flat / p.dim;
    let j = flat % p.dim;
    let src_row = idx[i];
    out[flat] = table[src_row * p.dim + j];
}

// Rotary position embedding (the "rotate half" form of Llama), applied in place to the query and
// key heads of the fused QKV rows; the value heads are left alone. The angles come from a
// precomputed cos/sin cache (theta = 500000 with Llama 3's frequency scaling, built on the host):
// row p holds cos for the head_dim / 2 frequencies, then sin for the same frequencies.
struct Rope {
    tokens: u32,
    rot_heads: u32, // query heads + key heads
    row_len: u32,   // floats per token in the QKV rows
    head_dim: u32,
}

@group(0) @binding(0) var<storage, read_write> qkv: array<f32>;
@group(0) @binding(1) var<storage, read> cos_sin: array<f32>; // [max_pos][head_dim]
@group(0) @binding(2) var<storage, read> positions: array<u32>;
@group(0) @binding(3) var<uniform> rope: Rope;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let half = rope.head_dim / 2u;
    let t = gid.y;
    if (gid.x >= rope.rot_heads * half || t >= rope.tokens) {
        return;
    }
    let head = gid.x / half;
    let i = gid.x % half;
    let pos = positions[t];
    let c = cos_sin[pos * rope.head_dim + i];
    let s = cos_sin[pos * rope.head_dim + half + i];
    let base = t * rope.row_len + head * rope.head_dim;
    let x1 = qkv[base + i];
    let x2 = qkv[base + half + i];
    qkv[base + i] = x1 * c - x2 * s;
    qkv[base + half + i] = x2 * c + x1 * s;
}

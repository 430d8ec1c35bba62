// Decode attention, one query head per invocation: scores into a scratch row, softmax over it,
// then each output channel sums over every position of the row (other lanes' elements).
// spec: sizes(heads = 8, kv_heads = 2, head_dim = 16, ctx = 45), bind(q = input(heads * head_dim), k = input(ctx * kv_heads * head_dim), v = input(ctx * kv_heads * head_dim), w = scratch(heads * ctx), o = output(heads * head_dim), p = uniform(heads, kv_heads, head_dim, ctx)), grid = (heads), tolerance = 1e-3
// fires: reduce
struct P { heads: u32, kv_heads: u32, head_dim: u32, ctx: u32 }
@group(0) @binding(0) var<storage, read> q: array<f32>;
@group(0) @binding(1) var<storage, read> k: array<f32>;
@group(0) @binding(2) var<storage, read> v: array<f32>;
@group(0) @binding(3) var<storage, read_write> w: array<f32>;
@group(0) @binding(4) var<storage, read_write> o: array<f32>;
@group(0) @binding(5) var<uniform> p: P;

@compute @workgroup_size(32)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let h = gid.x;
    if (h >= p.heads) {
        return;
    }
    let d = p.head_dim;
    let g = h / (p.heads / p.kv_heads);
    let stride = p.kv_heads * d;
    let scale = inverseSqrt(f32(d));
    var m = -3.402823e38;
    for (var t = 0u; t < p.ctx; t++) {
        var s = 0.0;
        for (var c = 0u; c < d; c++) {
            s += q[h * d + c] * k[t * stride + g * d + c];
        }
        w[h * p.ctx + t] = s * scale;
        if (s * scale > m) { m = s * scale; }
    }
    var total = 0.0;
    var t = 0u;
    while (t < p.ctx) {
        let e = exp(w[h * p.ctx + t] - m);
        w[h * p.ctx + t] = e;
        total += e;
        t++;
    }
    for (var c = 0u; c < d; c++) {
        var acc = 0.0;
        for (var j = 0u; j < p.ctx; j++) {
            acc += w[h * p.ctx + j] * v[j * stride + g * d + c];
        }
        o[h * d + c] = acc / total;
    }
}

// Decode attention, one query head per invocation, written the way llama2.c-style ports write it:
// the softmaxed scores are a second output, and the values are summed position by position into
// the output row (`o[base + c] += wgt * v[..]` in a channel loop inside the position loop).
// The canonical form interchanges those two loops (each output element then sums over positions
// in the same order, in a register), so the reduction splits the positions across a workgroup.
// spec: sizes(heads = 8, kv_heads = 2, head_dim = 16, ctx = 45), bind(q = input(heads * head_dim), k = input(ctx * kv_heads * head_dim), v = input(ctx * kv_heads * head_dim), probs = output(heads * ctx), o = output(heads * head_dim), p = uniform(heads, kv_heads, head_dim, ctx)), grid = (heads), tolerance = 1e-3
// fires: reduce
struct P { heads: u32, kv_heads: u32, head_dim: u32, ctx: u32 }
@group(0) @binding(0) var<storage, read> q: array<f32>;
@group(0) @binding(1) var<storage, read> k: array<f32>;
@group(0) @binding(2) var<storage, read> v: array<f32>;
@group(0) @binding(3) var<storage, read_write> probs: array<f32>;
@group(0) @binding(4) var<storage, read_write> o: array<f32>;
@group(0) @binding(5) var<uniform> p: P;

@compute @workgroup_size(32)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let head = id.x;
    if (head >= p.heads) {
        return;
    }
    let group = head / (p.heads / p.kv_heads);
    let row = head * p.ctx;
    let qbase = head * p.head_dim;
    let scale = 1.0 / sqrt(f32(p.head_dim));

    var best = -1.0e30;
    for (var pos = 0u; pos < p.ctx; pos++) {
        let kbase = (pos * p.kv_heads + group) * p.head_dim;
        var s = 0.0;
        for (var c = 0u; c < p.head_dim; c++) {
            s += q[qbase + c] * k[kbase + c];
        }
        probs[row + pos] = s * scale;
        best = max(best, s * scale);
    }
    var total = 0.0;
    for (var pos = 0u; pos < p.ctx; pos++) {
        let e = exp(probs[row + pos] - best);
        probs[row + pos] = e;
        total += e;
    }
    for (var pos = 0u; pos < p.ctx; pos++) {
        probs[row + pos] = probs[row + pos] / total;
    }

    for (var c = 0u; c < p.head_dim; c++) {
        o[qbase + c] = 0.0;
    }
    for (var pos = 0u; pos < p.ctx; pos++) {
        let vbase = (pos * p.kv_heads + group) * p.head_dim;
        let wgt = probs[row + pos];
        for (var c = 0u; c < p.head_dim; c++) {
            o[qbase + c] += wgt * v[vbase + c];
        }
    }
}

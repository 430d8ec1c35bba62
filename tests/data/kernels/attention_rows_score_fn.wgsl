// Causal attention, one query row per invocation, spelled unlike KernelBench's head: keys up to
// the row only (the loop bound varies by row), `while` loops over positions, the scale a `let`,
// the dot product in a helper taking the scale. A pass for the row's maximum, then a pass that
// accumulates the weighted values straight into the output row, through memory, at every
// position: the position loop cannot be split; the channel loop inside it can.
// spec: sizes(seq = 45, d = 20), bind(q = input(seq * d), k = input(seq * d), v = input(seq * d), out = output(seq * d), shape = uniform(seq, d)), grid = (seq), tolerance = 1e-3
// fires: reduce flash-attention
struct Shape {
    tokens: u32,
    width: u32,
}

@group(0) @binding(0) var<storage, read> q: array<f32>;
@group(0) @binding(1) var<storage, read> k: array<f32>;
@group(0) @binding(2) var<storage, read> v: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> shape: Shape;

fn qk(row: u32, key: u32, scale: f32) -> f32 {
    var dot = 0.0;
    for (var e = 0u; e < shape.width; e = e + 1u) {
        dot = fma(q[row * shape.width + e], k[key * shape.width + e], dot);
    }
    return dot * scale;
}

@compute @workgroup_size(32)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let row = id.x;
    if (row < shape.tokens) {
        let scale = 1.0 / sqrt(f32(shape.width));
        let base = row * shape.width;
        var best = qk(row, 0u, scale);
        var key = 1u;
        while (key <= row) {
            best = max(best, qk(row, key, scale));
            key += 1u;
        }
        for (var e = 0u; e < shape.width; e++) {
            out[base + e] = 0.0;
        }
        var total = 0.0;
        var t = 0u;
        while (t <= row) {
            let w = exp(qk(row, t, scale) - best);
            total = total + w;
            for (var e = 0u; e < shape.width; e++) {
                out[base + e] = out[base + e] + w * v[t * shape.width + e];
            }
            t += 1u;
        }
        let inv = 1.0 / total;
        for (var e = 0u; e < shape.width; e++) {
            out[base + e] *= inv;
        }
    }
}

// RMSNorm as in Llama: y = x / sqrt(mean(x^2) + eps) * weight. One token per invocation.
struct Norm {
    tokens: u32,
    hidden: u32,
    eps: f32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> weight: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> norm: Norm;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let t = gid.x;
    if (t >= norm.tokens) {
        return;
    }
    let base = t * norm.hidden;
    var sum_sq = 0.0;
    for (var i = 0u; i < norm.hidden; i++) {
        sum_sq += x[base + i] * x[base + i];
    }
    let r = 1.0 / sqrt(sum_sq / f32(norm.hidden) + norm.eps);
    for (var i = 0u; i < norm.hidden; i++) {
        y[base + i] = x[base + i] * r * weight[i];
    }
}

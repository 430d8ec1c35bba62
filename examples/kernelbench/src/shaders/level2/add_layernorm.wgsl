// Residual add followed by LayerNorm, as in a post-norm transformer block:
// h = x + residual (written out: it is the next residual stream), y = LayerNorm(h) * gamma + beta.
struct Params {
    rows: u32,
    cols: u32,
    eps: f32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> residual: array<f32>;
@group(0) @binding(2) var<storage, read> gamma: array<f32>;
@group(0) @binding(3) var<storage, read> beta: array<f32>;
@group(0) @binding(4) var<storage, read_write> h: array<f32>;
@group(0) @binding(5) var<storage, read_write> y: array<f32>;
@group(0) @binding(6) var<uniform> params: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.x;
    if (row >= params.rows) {
        return;
    }
    let base = row * params.cols;
    var sum = 0.0;
    for (var i = 0u; i < params.cols; i++) {
        let v = x[base + i] + residual[base + i];
        h[base + i] = v;
        sum += v;
    }
    let mean = sum / f32(params.cols);
    var sq = 0.0;
    for (var i = 0u; i < params.cols; i++) {
        let d = h[base + i] - mean;
        sq += d * d;
    }
    let rstd = inverseSqrt(sq / f32(params.cols) + params.eps);
    for (var i = 0u; i < params.cols; i++) {
        y[base + i] = (h[base + i] - mean) * rstd * gamma[i] + beta[i];
    }
}

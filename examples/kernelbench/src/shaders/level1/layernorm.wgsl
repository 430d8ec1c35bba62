// LayerNorm over the last dimension with a learned scale and shift; one row per invocation.
struct LnParams {
    rows: u32,
    cols: u32,
    eps: f32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> gamma: array<f32>;
@group(0) @binding(2) var<storage, read> beta: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<uniform> params: LnParams;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.x;
    if (row >= params.rows) {
        return;
    }
    let n = params.cols;
    let base = row * n;
    var mean = 0.0;
    for (var i = 0u; i < n; i++) {
        mean += x[base + i];
    }
    mean /= f32(n);
    var variance = 0.0;
    for (var i = 0u; i < n; i++) {
        let d = x[base + i] - mean;
        variance += d * d;
    }
    variance /= f32(n);
    let rstd = 1.0 / sqrt(variance + params.eps);
    for (var i = 0u; i < n; i++) {
        y[base + i] = (x[base + i] - mean) * rstd * gamma[i] + beta[i];
    }
}

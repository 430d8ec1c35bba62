// LayerNorm over the last axis of a [rows, cols] matrix with gamma and beta, one row per invocation.
// class: layernorm
// style: uniform struct {rows, cols, eps: f32}, wrapping if instead of early return, two-pass mean/variance, fma for the affine step
// spec: sizes(rows = 24, cols = 384), bind(x = input(rows * cols, range(-3.0, 5.0)), gamma = input(cols), beta = input(cols), y = output(rows * cols), params = uniform(rows, cols, 1e-5)), grid = (rows), tolerance = 1e-3

struct LayerNormParams {
    rows: u32,
    cols: u32,
    eps: f32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> gamma: array<f32>;
@group(0) @binding(2) var<storage, read> beta: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<uniform> params: LayerNormParams;

@compute @workgroup_size(128)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.x;
    if (row < params.rows) {
        let n = params.cols;
        let base = row * n;

        var mean = 0.0;
        for (var i = 0u; i < n; i = i + 1u) {
            mean += x[base + i];
        }
        mean /= f32(n);

        var variance = 0.0;
        for (var i = 0u; i < n; i = i + 1u) {
            let d = x[base + i] - mean;
            variance += d * d;
        }
        variance /= f32(n);

        let inv_std = 1.0 / sqrt(variance + params.eps);
        for (var i = 0u; i < n; i = i + 1u) {
            let normed = (x[base + i] - mean) * inv_std;
            y[base + i] = fma(normed, gamma[i], beta[i]);
        }
    }
}

// LayerNorm over the last axis of src[rows, cols]: mean and variance from Welford's running update, then (v - mean) * rstd * gamma + beta.
// class: layernorm
// style: burn / candle-wgpu style info struct with an f32 epsilon, `workgroup_id.x * WG + local_invocation_id.x` with `override WG`, Welford update in a `while` loop, `+=` and `i++`
// spec: sizes(rows = 6, cols = 257), bind(src = input(rows * cols, range(-3.0, 5.0)), gamma = input(cols), beta = input(cols), dst = output(rows * cols), info = uniform(rows, cols, 1e-5)), grid = (rows), tolerance = 1e-3

struct LayerNormInfo {
    num_rows: u32,
    row_len: u32,
    epsilon: f32,
}

override WG: u32 = 64u;

@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read> gamma: array<f32>;
@group(0) @binding(2) var<storage, read> beta: array<f32>;
@group(0) @binding(3) var<storage, read_write> dst: array<f32>;
@group(0) @binding(4) var<uniform> info: LayerNormInfo;

@compute @workgroup_size(WG)
fn layer_norm(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(local_invocation_id) local_id: vec3<u32>,
) {
    let row = workgroup_id.x * WG + local_id.x;
    if (row < info.num_rows) {
        let offset = row * info.row_len;

        // Welford: numerically stable single-pass mean / M2.
        var mean = 0.0;
        var m2 = 0.0;
        var count = 0.0;
        var j = 0u;
        while (j < info.row_len) {
            let v = src[offset + j];
            count += 1.0;
            let delta = v - mean;
            mean += delta / count;
            let delta2 = v - mean;
            m2 += delta * delta2;
            j++;
        }

        let variance = m2 / count;
        let rstd = inverseSqrt(variance + info.epsilon);

        for (var k = 0u; k < info.row_len; k++) {
            let normed = (src[offset + k] - mean) * rstd;
            dst[offset + k] = normed * gamma[k] + beta[k];
        }
    }
}

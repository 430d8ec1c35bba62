// RMSNorm over rows of x[rows, dim] stored as vec4s: sum of squares with dot(v, v), then x * inverseSqrt(mean_sq + eps) * weight.
// class: rmsnorm
// style: web-llm / ratchet style `array<vec4<f32>>` buffers with `dim / 4u` vec4 loop, `dot()` sum of squares, wrapping `if` instead of early return
// spec: sizes(rows = 8, cols = 256), bind(x = input(rows * cols / 4), weight = input(cols / 4), y = output(rows * cols / 4), params = uniform(rows, cols, 1e-6)), grid = (rows), constraints(cols % 4 == 0)

struct RmsNormParams {
    rows: u32,
    dim: u32,
    eps: f32,
}

@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> weight: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> y: array<vec4<f32>>;
@group(0) @binding(3) var<uniform> params: RmsNormParams;

@compute @workgroup_size(32)
fn rms_norm(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.x;
    if (row < params.rows) {
        let dim4 = params.dim / 4u;
        let base = row * dim4;

        var sum_sq = 0.0;
        for (var i = 0u; i < dim4; i++) {
            let v = x[base + i];
            sum_sq += dot(v, v);
        }

        let scale = inverseSqrt(sum_sq / f32(params.dim) + params.eps);
        for (var i = 0u; i < dim4; i++) {
            y[base + i] = x[base + i] * scale * weight[i];
        }
    }
}

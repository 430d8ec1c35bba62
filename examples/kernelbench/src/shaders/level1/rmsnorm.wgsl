// RMSNorm: y = x / sqrt(mean(x^2) + eps) * weight, one row per invocation.
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> weight: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> shape: vec2<u32>; // (rows, cols)
@group(0) @binding(4) var<uniform> eps: f32;

@compute @workgroup_size(32)
fn rmsnorm(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.x;
    let cols = shape.y;
    if (row >= shape.x) {
        return;
    }
    var ss: f32 = 0.0;
    for (var j: u32 = 0u; j < cols; j++) {
        let v = x[row * cols + j];
        ss += v * v;
    }
    let scale = inverseSqrt(ss / f32(cols) + eps);
    for (var j: u32 = 0u; j < cols; j++) {
        y[row * cols + j] = x[row * cols + j] * scale * weight[j];
    }
}

struct Params {
    n: u32,
}
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;
const SQRT_2_OVER_PI: f32 = 0.7978845608;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) kf_gid: vec3<u32>, @builtin(num_workgroups) kf_groups: vec3<u32>) {
    let stride = kf_groups.x * 256u;
    var v: array<f32, 8>;
    for (var k = 0u; k < 8u; k++) {
        let i = kf_gid.y * 4096u + kf_gid.x + k * stride;
        v[k] = x[min(i, params.n - 1u)];
    }
    for (var k = 0u; k < 8u; k++) {
        let gx = kf_gid.x + k * stride;
        let i = kf_gid.y * 4096u + gx;
        if (gx < 4096u && i < params.n) {
            let a = v[k];
            let inner = SQRT_2_OVER_PI * (a + 0.044715 * a * a * a);
            y[i] = 0.5 * a * (1.0 + tanh(inner));
        }
    }
}

struct Params {
    n: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

const SQRT_2_OVER_PI: f32 = 0.7978845608;

fn kf_body(gid: vec3<u32>, v: f32) {
    let i = gid.y * 4096u + gid.x;
    if (i >= params.n) {
        return;
    }
    let inner = SQRT_2_OVER_PI * (v + 0.044715 * v * v * v);
    y[i] = 0.5 * v * (1.0 + tanh(inner));
}

fn kf_plain(gid: vec3<u32>) {
    let i = gid.y * 4096u + gid.x;
    if (i >= params.n) {
        return;
    }
    let v = x[i];
    let inner = SQRT_2_OVER_PI * (v + 0.044715 * v * v * v);
    y[i] = 0.5 * v * (1.0 + tanh(inner));
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) kf_gid: vec3<u32>, @builtin(num_workgroups) kf_groups: vec3<u32>) {
    let kf_stride = kf_groups.x * 256u;
    var kf_v: array<f32, 8>;
    for (var k = 0u; k < 8u; k++) {
        let gid = vec3<u32>(kf_gid.x + k * kf_stride, kf_gid.y, kf_gid.z);
        kf_v[k] = x[gid.y * 4096u + gid.x];
    }
    for (var k = 0u; k < 8u; k++) {
        kf_body(vec3<u32>(kf_gid.x + k * kf_stride, kf_gid.y, kf_gid.z), kf_v[k]);
    }
}

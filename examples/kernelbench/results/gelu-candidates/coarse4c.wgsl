struct Params {
    n: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

const SQRT_2_OVER_PI: f32 = 0.7978845608;

fn kf_coarse_main(gid: vec3<u32>) {
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
    for (var kf_k = 0u; kf_k < 4u; kf_k++) {
        let kf_x = kf_gid.x * 4u + kf_k;
        if (kf_x < 4096u) {
            kf_coarse_main(vec3<u32>(kf_x, kf_gid.y, kf_gid.z));
        }
    }
}

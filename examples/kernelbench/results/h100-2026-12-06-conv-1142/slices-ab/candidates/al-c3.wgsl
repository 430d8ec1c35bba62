// 2-D convolution, NCHW, 3x3 kernel, stride 1, zero padding 1 (output is H x W), no bias.
// One output pixel per invocation: x = column, y = row, z = batch * out_channels + out_channel.
struct Conv {
    batch: u32,
    in_ch: u32,
    out_ch: u32,
    height: u32,
    width: u32,
}

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read> weight: array<f32>; // [out_ch][in_ch][3][3]
@group(0) @binding(2) var<storage, read_write> output: array<f32>;
@group(0) @binding(3) var<uniform> conv: Conv;

// KernelFoundry implicit GEMM: each workgroup computes 32x4 pixels by 128 channels (8x8 per invocation),
// staging 18-deep slices of the loop nest's products through workgroup memory.
var<workgroup> kfc_ta: array<vec4<f32>, 594>;
var<workgroup> kfc_tb: array<vec4<f32>, 594>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) kfc_tid: u32, @builtin(workgroup_id) kfc_wid: vec3<u32>) {
    let kfc_d = u32(conv.out_ch);
    let kfc_nb = (kfc_d + 127u) / 128u;
    let kfc_q = kfc_wid.z / kfc_nb;
    let kfc_n0 = (kfc_wid.z % kfc_nb) * 128u;
    let kfc_zp = kfc_q * kfc_d;
    let kfc_x0 = kfc_wid.x * 32u;
    let kfc_y0 = kfc_wid.y * 4u;
    let kfc_tm = kfc_tid % 16u;
    let kfc_tn = kfc_tid / 16u;
    let kfc_t0 = select(0u, conv.in_ch - 0u, conv.in_ch > 0u);
    let kfc_s0 = 0u;
    let kfc_t1 = u32(max(3i - 0i, 0));
    let kfc_s1 = 0i;
    let kfc_t2 = u32(max(3i - 0i, 0));
    let kfc_s2 = 0i;
    let kfc_kn = kfc_t0 * kfc_t1 * kfc_t2;
    var kfc_acc_0_0 = vec4<f32>();
    var kfc_acc_0_1 = vec4<f32>();
    var kfc_acc_1_0 = vec4<f32>();
    var kfc_acc_1_1 = vec4<f32>();
    var kfc_acc_2_0 = vec4<f32>();
    var kfc_acc_2_1 = vec4<f32>();
    var kfc_acc_3_0 = vec4<f32>();
    var kfc_acc_3_1 = vec4<f32>();
    var kfc_acc_4_0 = vec4<f32>();
    var kfc_acc_4_1 = vec4<f32>();
    var kfc_acc_5_0 = vec4<f32>();
    var kfc_acc_5_1 = vec4<f32>();
    var kfc_acc_6_0 = vec4<f32>();
    var kfc_acc_6_1 = vec4<f32>();
    var kfc_acc_7_0 = vec4<f32>();
    var kfc_acc_7_1 = vec4<f32>();
    var kfc_pa_0 = 0.0f;
    var kfc_pa_1 = 0.0f;
    var kfc_pa_2 = 0.0f;
    var kfc_pa_3 = 0.0f;
    var kfc_pa_4 = 0.0f;
    var kfc_pa_5 = 0.0f;
    var kfc_pa_6 = 0.0f;
    var kfc_pa_7 = 0.0f;
    var kfc_pa_8 = 0.0f;
    var kfc_pb_0 = 0.0f;
    var kfc_pb_1 = 0.0f;
    var kfc_pb_2 = 0.0f;
    var kfc_pb_3 = 0.0f;
    var kfc_pb_4 = 0.0f;
    var kfc_pb_5 = 0.0f;
    var kfc_pb_6 = 0.0f;
    var kfc_pb_7 = 0.0f;
    var kfc_pb_8 = 0.0f;
    {
        let kfc_i = (kfc_tid + 0u) % 128u; let kfc_kk = (kfc_tid + 0u) / 128u;
        let kfc_k0s = 0u;
        let kfc_k = kfc_k0s + kfc_kk;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_i % 32u, kfc_y0 + kfc_i / 32u, kfc_zp);
        kfc_pa_0 = 0.0f;
        if kfc_k < kfc_kn {
            let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
            if select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) < i32(conv.width)), select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) >= 0i), select(false, (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) < i32(conv.height)), (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) >= 0i)))) {
                kfc_pa_0 = input[((((((((kfc_gid)[2] / conv.out_ch) * conv.in_ch) + (kfc_c0)) * conv.height) + u32(((i32((kfc_gid)[1]) + (kfc_c1)) - 1i))) * conv.width) + u32(((i32((kfc_gid)[0]) + (kfc_c2)) - 1i)))];
            }
        }
    }
    {
        let kfc_i = (kfc_tid + 256u) % 128u; let kfc_kk = (kfc_tid + 256u) / 128u;
        let kfc_k0s = 0u;
        let kfc_k = kfc_k0s + kfc_kk;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_i % 32u, kfc_y0 + kfc_i / 32u, kfc_zp);
        kfc_pa_1 = 0.0f;
        if kfc_k < kfc_kn {
            let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
            if select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) < i32(conv.width)), select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) >= 0i), select(false, (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) < i32(conv.height)), (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) >= 0i)))) {
                kfc_pa_1 = input[((((((((kfc_gid)[2] / conv.out_ch) * conv.in_ch) + (kfc_c0)) * conv.height) + u32(((i32((kfc_gid)[1]) + (kfc_c1)) - 1i))) * conv.width) + u32(((i32((kfc_gid)[0]) + (kfc_c2)) - 1i)))];
            }
        }
    }
    {
        let kfc_i = (kfc_tid + 512u) % 128u; let kfc_kk = (kfc_tid + 512u) / 128u;
        let kfc_k0s = 0u;
        let kfc_k = kfc_k0s + kfc_kk;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_i % 32u, kfc_y0 + kfc_i / 32u, kfc_zp);
        kfc_pa_2 = 0.0f;
        if kfc_k < kfc_kn {
            let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
            if select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) < i32(conv.width)), select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) >= 0i), select(false, (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) < i32(conv.height)), (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) >= 0i)))) {
                kfc_pa_2 = input[((((((((kfc_gid)[2] / conv.out_ch) * conv.in_ch) + (kfc_c0)) * conv.height) + u32(((i32((kfc_gid)[1]) + (kfc_c1)) - 1i))) * conv.width) + u32(((i32((kfc_gid)[0]) + (kfc_c2)) - 1i)))];
            }
        }
    }
    {
        let kfc_i = (kfc_tid + 768u) % 128u; let kfc_kk = (kfc_tid + 768u) / 128u;
        let kfc_k0s = 0u;
        let kfc_k = kfc_k0s + kfc_kk;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_i % 32u, kfc_y0 + kfc_i / 32u, kfc_zp);
        kfc_pa_3 = 0.0f;
        if kfc_k < kfc_kn {
            let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
            if select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) < i32(conv.width)), select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) >= 0i), select(false, (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) < i32(conv.height)), (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) >= 0i)))) {
                kfc_pa_3 = input[((((((((kfc_gid)[2] / conv.out_ch) * conv.in_ch) + (kfc_c0)) * conv.height) + u32(((i32((kfc_gid)[1]) + (kfc_c1)) - 1i))) * conv.width) + u32(((i32((kfc_gid)[0]) + (kfc_c2)) - 1i)))];
            }
        }
    }
    {
        let kfc_i = (kfc_tid + 1024u) % 128u; let kfc_kk = (kfc_tid + 1024u) / 128u;
        let kfc_k0s = 0u;
        let kfc_k = kfc_k0s + kfc_kk;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_i % 32u, kfc_y0 + kfc_i / 32u, kfc_zp);
        kfc_pa_4 = 0.0f;
        if kfc_k < kfc_kn {
            let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
            if select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) < i32(conv.width)), select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) >= 0i), select(false, (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) < i32(conv.height)), (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) >= 0i)))) {
                kfc_pa_4 = input[((((((((kfc_gid)[2] / conv.out_ch) * conv.in_ch) + (kfc_c0)) * conv.height) + u32(((i32((kfc_gid)[1]) + (kfc_c1)) - 1i))) * conv.width) + u32(((i32((kfc_gid)[0]) + (kfc_c2)) - 1i)))];
            }
        }
    }
    {
        let kfc_i = (kfc_tid + 1280u) % 128u; let kfc_kk = (kfc_tid + 1280u) / 128u;
        let kfc_k0s = 0u;
        let kfc_k = kfc_k0s + kfc_kk;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_i % 32u, kfc_y0 + kfc_i / 32u, kfc_zp);
        kfc_pa_5 = 0.0f;
        if kfc_k < kfc_kn {
            let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
            if select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) < i32(conv.width)), select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) >= 0i), select(false, (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) < i32(conv.height)), (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) >= 0i)))) {
                kfc_pa_5 = input[((((((((kfc_gid)[2] / conv.out_ch) * conv.in_ch) + (kfc_c0)) * conv.height) + u32(((i32((kfc_gid)[1]) + (kfc_c1)) - 1i))) * conv.width) + u32(((i32((kfc_gid)[0]) + (kfc_c2)) - 1i)))];
            }
        }
    }
    {
        let kfc_i = (kfc_tid + 1536u) % 128u; let kfc_kk = (kfc_tid + 1536u) / 128u;
        let kfc_k0s = 0u;
        let kfc_k = kfc_k0s + kfc_kk;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_i % 32u, kfc_y0 + kfc_i / 32u, kfc_zp);
        kfc_pa_6 = 0.0f;
        if kfc_k < kfc_kn {
            let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
            if select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) < i32(conv.width)), select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) >= 0i), select(false, (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) < i32(conv.height)), (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) >= 0i)))) {
                kfc_pa_6 = input[((((((((kfc_gid)[2] / conv.out_ch) * conv.in_ch) + (kfc_c0)) * conv.height) + u32(((i32((kfc_gid)[1]) + (kfc_c1)) - 1i))) * conv.width) + u32(((i32((kfc_gid)[0]) + (kfc_c2)) - 1i)))];
            }
        }
    }
    {
        let kfc_i = (kfc_tid + 1792u) % 128u; let kfc_kk = (kfc_tid + 1792u) / 128u;
        let kfc_k0s = 0u;
        let kfc_k = kfc_k0s + kfc_kk;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_i % 32u, kfc_y0 + kfc_i / 32u, kfc_zp);
        kfc_pa_7 = 0.0f;
        if kfc_k < kfc_kn {
            let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
            if select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) < i32(conv.width)), select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) >= 0i), select(false, (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) < i32(conv.height)), (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) >= 0i)))) {
                kfc_pa_7 = input[((((((((kfc_gid)[2] / conv.out_ch) * conv.in_ch) + (kfc_c0)) * conv.height) + u32(((i32((kfc_gid)[1]) + (kfc_c1)) - 1i))) * conv.width) + u32(((i32((kfc_gid)[0]) + (kfc_c2)) - 1i)))];
            }
        }
    }
    {
        let kfc_i = (kfc_tid + 2048u) % 128u; let kfc_kk = (kfc_tid + 2048u) / 128u;
        let kfc_k0s = 0u;
        let kfc_k = kfc_k0s + kfc_kk;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_i % 32u, kfc_y0 + kfc_i / 32u, kfc_zp);
        kfc_pa_8 = 0.0f;
        if kfc_k < kfc_kn {
            let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
            if select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) < i32(conv.width)), select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) >= 0i), select(false, (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) < i32(conv.height)), (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) >= 0i)))) {
                kfc_pa_8 = input[((((((((kfc_gid)[2] / conv.out_ch) * conv.in_ch) + (kfc_c0)) * conv.height) + u32(((i32((kfc_gid)[1]) + (kfc_c1)) - 1i))) * conv.width) + u32(((i32((kfc_gid)[0]) + (kfc_c2)) - 1i)))];
            }
        }
    }
    {
        let kfc_i = (kfc_tid + 0u) % 128u; let kfc_kk = (kfc_tid + 0u) / 128u;
        let kfc_k0s = 0u;
        let kfc_k = kfc_k0s + kfc_kk;
        let kfc_gid = vec3<u32>(0u, 0u, kfc_n0 + kfc_i);
        kfc_pb_0 = 0.0f;
        if kfc_k < kfc_kn {
            let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
            kfc_pb_0 = weight[((((((((kfc_gid)[2] % conv.out_ch) * conv.in_ch) + (kfc_c0)) * 3u) + u32((kfc_c1))) * 3u) + u32((kfc_c2)))];
        }
    }
    {
        let kfc_i = (kfc_tid + 256u) % 128u; let kfc_kk = (kfc_tid + 256u) / 128u;
        let kfc_k0s = 0u;
        let kfc_k = kfc_k0s + kfc_kk;
        let kfc_gid = vec3<u32>(0u, 0u, kfc_n0 + kfc_i);
        kfc_pb_1 = 0.0f;
        if kfc_k < kfc_kn {
            let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
            kfc_pb_1 = weight[((((((((kfc_gid)[2] % conv.out_ch) * conv.in_ch) + (kfc_c0)) * 3u) + u32((kfc_c1))) * 3u) + u32((kfc_c2)))];
        }
    }
    {
        let kfc_i = (kfc_tid + 512u) % 128u; let kfc_kk = (kfc_tid + 512u) / 128u;
        let kfc_k0s = 0u;
        let kfc_k = kfc_k0s + kfc_kk;
        let kfc_gid = vec3<u32>(0u, 0u, kfc_n0 + kfc_i);
        kfc_pb_2 = 0.0f;
        if kfc_k < kfc_kn {
            let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
            kfc_pb_2 = weight[((((((((kfc_gid)[2] % conv.out_ch) * conv.in_ch) + (kfc_c0)) * 3u) + u32((kfc_c1))) * 3u) + u32((kfc_c2)))];
        }
    }
    {
        let kfc_i = (kfc_tid + 768u) % 128u; let kfc_kk = (kfc_tid + 768u) / 128u;
        let kfc_k0s = 0u;
        let kfc_k = kfc_k0s + kfc_kk;
        let kfc_gid = vec3<u32>(0u, 0u, kfc_n0 + kfc_i);
        kfc_pb_3 = 0.0f;
        if kfc_k < kfc_kn {
            let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
            kfc_pb_3 = weight[((((((((kfc_gid)[2] % conv.out_ch) * conv.in_ch) + (kfc_c0)) * 3u) + u32((kfc_c1))) * 3u) + u32((kfc_c2)))];
        }
    }
    {
        let kfc_i = (kfc_tid + 1024u) % 128u; let kfc_kk = (kfc_tid + 1024u) / 128u;
        let kfc_k0s = 0u;
        let kfc_k = kfc_k0s + kfc_kk;
        let kfc_gid = vec3<u32>(0u, 0u, kfc_n0 + kfc_i);
        kfc_pb_4 = 0.0f;
        if kfc_k < kfc_kn {
            let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
            kfc_pb_4 = weight[((((((((kfc_gid)[2] % conv.out_ch) * conv.in_ch) + (kfc_c0)) * 3u) + u32((kfc_c1))) * 3u) + u32((kfc_c2)))];
        }
    }
    {
        let kfc_i = (kfc_tid + 1280u) % 128u; let kfc_kk = (kfc_tid + 1280u) / 128u;
        let kfc_k0s = 0u;
        let kfc_k = kfc_k0s + kfc_kk;
        let kfc_gid = vec3<u32>(0u, 0u, kfc_n0 + kfc_i);
        kfc_pb_5 = 0.0f;
        if kfc_k < kfc_kn {
            let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
            kfc_pb_5 = weight[((((((((kfc_gid)[2] % conv.out_ch) * conv.in_ch) + (kfc_c0)) * 3u) + u32((kfc_c1))) * 3u) + u32((kfc_c2)))];
        }
    }
    {
        let kfc_i = (kfc_tid + 1536u) % 128u; let kfc_kk = (kfc_tid + 1536u) / 128u;
        let kfc_k0s = 0u;
        let kfc_k = kfc_k0s + kfc_kk;
        let kfc_gid = vec3<u32>(0u, 0u, kfc_n0 + kfc_i);
        kfc_pb_6 = 0.0f;
        if kfc_k < kfc_kn {
            let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
            kfc_pb_6 = weight[((((((((kfc_gid)[2] % conv.out_ch) * conv.in_ch) + (kfc_c0)) * 3u) + u32((kfc_c1))) * 3u) + u32((kfc_c2)))];
        }
    }
    {
        let kfc_i = (kfc_tid + 1792u) % 128u; let kfc_kk = (kfc_tid + 1792u) / 128u;
        let kfc_k0s = 0u;
        let kfc_k = kfc_k0s + kfc_kk;
        let kfc_gid = vec3<u32>(0u, 0u, kfc_n0 + kfc_i);
        kfc_pb_7 = 0.0f;
        if kfc_k < kfc_kn {
            let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
            kfc_pb_7 = weight[((((((((kfc_gid)[2] % conv.out_ch) * conv.in_ch) + (kfc_c0)) * 3u) + u32((kfc_c1))) * 3u) + u32((kfc_c2)))];
        }
    }
    {
        let kfc_i = (kfc_tid + 2048u) % 128u; let kfc_kk = (kfc_tid + 2048u) / 128u;
        let kfc_k0s = 0u;
        let kfc_k = kfc_k0s + kfc_kk;
        let kfc_gid = vec3<u32>(0u, 0u, kfc_n0 + kfc_i);
        kfc_pb_8 = 0.0f;
        if kfc_k < kfc_kn {
            let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
            kfc_pb_8 = weight[((((((((kfc_gid)[2] % conv.out_ch) * conv.in_ch) + (kfc_c0)) * 3u) + u32((kfc_c1))) * 3u) + u32((kfc_c2)))];
        }
    }
    for (var kfc_k0 = 0u; kfc_k0 < kfc_kn; kfc_k0 = kfc_k0 + 18u) {
        { let kfc_i = (kfc_tid + 0u) % 128u; let kfc_kk = (kfc_tid + 0u) / 128u; kfc_ta[kfc_kk * 33u + kfc_i / 4u][kfc_i % 4u] = kfc_pa_0; }
        { let kfc_i = (kfc_tid + 256u) % 128u; let kfc_kk = (kfc_tid + 256u) / 128u; kfc_ta[kfc_kk * 33u + kfc_i / 4u][kfc_i % 4u] = kfc_pa_1; }
        { let kfc_i = (kfc_tid + 512u) % 128u; let kfc_kk = (kfc_tid + 512u) / 128u; kfc_ta[kfc_kk * 33u + kfc_i / 4u][kfc_i % 4u] = kfc_pa_2; }
        { let kfc_i = (kfc_tid + 768u) % 128u; let kfc_kk = (kfc_tid + 768u) / 128u; kfc_ta[kfc_kk * 33u + kfc_i / 4u][kfc_i % 4u] = kfc_pa_3; }
        { let kfc_i = (kfc_tid + 1024u) % 128u; let kfc_kk = (kfc_tid + 1024u) / 128u; kfc_ta[kfc_kk * 33u + kfc_i / 4u][kfc_i % 4u] = kfc_pa_4; }
        { let kfc_i = (kfc_tid + 1280u) % 128u; let kfc_kk = (kfc_tid + 1280u) / 128u; kfc_ta[kfc_kk * 33u + kfc_i / 4u][kfc_i % 4u] = kfc_pa_5; }
        { let kfc_i = (kfc_tid + 1536u) % 128u; let kfc_kk = (kfc_tid + 1536u) / 128u; kfc_ta[kfc_kk * 33u + kfc_i / 4u][kfc_i % 4u] = kfc_pa_6; }
        { let kfc_i = (kfc_tid + 1792u) % 128u; let kfc_kk = (kfc_tid + 1792u) / 128u; kfc_ta[kfc_kk * 33u + kfc_i / 4u][kfc_i % 4u] = kfc_pa_7; }
        { let kfc_i = (kfc_tid + 2048u) % 128u; let kfc_kk = (kfc_tid + 2048u) / 128u; kfc_ta[kfc_kk * 33u + kfc_i / 4u][kfc_i % 4u] = kfc_pa_8; }
        { let kfc_i = (kfc_tid + 0u) % 128u; let kfc_kk = (kfc_tid + 0u) / 128u; kfc_tb[kfc_kk * 33u + kfc_i / 4u][kfc_i % 4u] = kfc_pb_0; }
        { let kfc_i = (kfc_tid + 256u) % 128u; let kfc_kk = (kfc_tid + 256u) / 128u; kfc_tb[kfc_kk * 33u + kfc_i / 4u][kfc_i % 4u] = kfc_pb_1; }
        { let kfc_i = (kfc_tid + 512u) % 128u; let kfc_kk = (kfc_tid + 512u) / 128u; kfc_tb[kfc_kk * 33u + kfc_i / 4u][kfc_i % 4u] = kfc_pb_2; }
        { let kfc_i = (kfc_tid + 768u) % 128u; let kfc_kk = (kfc_tid + 768u) / 128u; kfc_tb[kfc_kk * 33u + kfc_i / 4u][kfc_i % 4u] = kfc_pb_3; }
        { let kfc_i = (kfc_tid + 1024u) % 128u; let kfc_kk = (kfc_tid + 1024u) / 128u; kfc_tb[kfc_kk * 33u + kfc_i / 4u][kfc_i % 4u] = kfc_pb_4; }
        { let kfc_i = (kfc_tid + 1280u) % 128u; let kfc_kk = (kfc_tid + 1280u) / 128u; kfc_tb[kfc_kk * 33u + kfc_i / 4u][kfc_i % 4u] = kfc_pb_5; }
        { let kfc_i = (kfc_tid + 1536u) % 128u; let kfc_kk = (kfc_tid + 1536u) / 128u; kfc_tb[kfc_kk * 33u + kfc_i / 4u][kfc_i % 4u] = kfc_pb_6; }
        { let kfc_i = (kfc_tid + 1792u) % 128u; let kfc_kk = (kfc_tid + 1792u) / 128u; kfc_tb[kfc_kk * 33u + kfc_i / 4u][kfc_i % 4u] = kfc_pb_7; }
        { let kfc_i = (kfc_tid + 2048u) % 128u; let kfc_kk = (kfc_tid + 2048u) / 128u; kfc_tb[kfc_kk * 33u + kfc_i / 4u][kfc_i % 4u] = kfc_pb_8; }
        workgroupBarrier();
        if kfc_k0 + 18u < kfc_kn {
            {
                let kfc_i = (kfc_tid + 0u) % 128u; let kfc_kk = (kfc_tid + 0u) / 128u;
                let kfc_k0s = (kfc_k0 + 18u);
                let kfc_k = kfc_k0s + kfc_kk;
                let kfc_gid = vec3<u32>(kfc_x0 + kfc_i % 32u, kfc_y0 + kfc_i / 32u, kfc_zp);
                kfc_pa_0 = 0.0f;
                if kfc_k < kfc_kn {
                    let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
                    if select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) < i32(conv.width)), select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) >= 0i), select(false, (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) < i32(conv.height)), (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) >= 0i)))) {
                        kfc_pa_0 = input[((((((((kfc_gid)[2] / conv.out_ch) * conv.in_ch) + (kfc_c0)) * conv.height) + u32(((i32((kfc_gid)[1]) + (kfc_c1)) - 1i))) * conv.width) + u32(((i32((kfc_gid)[0]) + (kfc_c2)) - 1i)))];
                    }
                }
            }
            {
                let kfc_i = (kfc_tid + 256u) % 128u; let kfc_kk = (kfc_tid + 256u) / 128u;
                let kfc_k0s = (kfc_k0 + 18u);
                let kfc_k = kfc_k0s + kfc_kk;
                let kfc_gid = vec3<u32>(kfc_x0 + kfc_i % 32u, kfc_y0 + kfc_i / 32u, kfc_zp);
                kfc_pa_1 = 0.0f;
                if kfc_k < kfc_kn {
                    let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
                    if select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) < i32(conv.width)), select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) >= 0i), select(false, (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) < i32(conv.height)), (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) >= 0i)))) {
                        kfc_pa_1 = input[((((((((kfc_gid)[2] / conv.out_ch) * conv.in_ch) + (kfc_c0)) * conv.height) + u32(((i32((kfc_gid)[1]) + (kfc_c1)) - 1i))) * conv.width) + u32(((i32((kfc_gid)[0]) + (kfc_c2)) - 1i)))];
                    }
                }
            }
            {
                let kfc_i = (kfc_tid + 512u) % 128u; let kfc_kk = (kfc_tid + 512u) / 128u;
                let kfc_k0s = (kfc_k0 + 18u);
                let kfc_k = kfc_k0s + kfc_kk;
                let kfc_gid = vec3<u32>(kfc_x0 + kfc_i % 32u, kfc_y0 + kfc_i / 32u, kfc_zp);
                kfc_pa_2 = 0.0f;
                if kfc_k < kfc_kn {
                    let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
                    if select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) < i32(conv.width)), select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) >= 0i), select(false, (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) < i32(conv.height)), (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) >= 0i)))) {
                        kfc_pa_2 = input[((((((((kfc_gid)[2] / conv.out_ch) * conv.in_ch) + (kfc_c0)) * conv.height) + u32(((i32((kfc_gid)[1]) + (kfc_c1)) - 1i))) * conv.width) + u32(((i32((kfc_gid)[0]) + (kfc_c2)) - 1i)))];
                    }
                }
            }
            {
                let kfc_i = (kfc_tid + 768u) % 128u; let kfc_kk = (kfc_tid + 768u) / 128u;
                let kfc_k0s = (kfc_k0 + 18u);
                let kfc_k = kfc_k0s + kfc_kk;
                let kfc_gid = vec3<u32>(kfc_x0 + kfc_i % 32u, kfc_y0 + kfc_i / 32u, kfc_zp);
                kfc_pa_3 = 0.0f;
                if kfc_k < kfc_kn {
                    let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
                    if select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) < i32(conv.width)), select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) >= 0i), select(false, (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) < i32(conv.height)), (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) >= 0i)))) {
                        kfc_pa_3 = input[((((((((kfc_gid)[2] / conv.out_ch) * conv.in_ch) + (kfc_c0)) * conv.height) + u32(((i32((kfc_gid)[1]) + (kfc_c1)) - 1i))) * conv.width) + u32(((i32((kfc_gid)[0]) + (kfc_c2)) - 1i)))];
                    }
                }
            }
            {
                let kfc_i = (kfc_tid + 1024u) % 128u; let kfc_kk = (kfc_tid + 1024u) / 128u;
                let kfc_k0s = (kfc_k0 + 18u);
                let kfc_k = kfc_k0s + kfc_kk;
                let kfc_gid = vec3<u32>(kfc_x0 + kfc_i % 32u, kfc_y0 + kfc_i / 32u, kfc_zp);
                kfc_pa_4 = 0.0f;
                if kfc_k < kfc_kn {
                    let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
                    if select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) < i32(conv.width)), select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) >= 0i), select(false, (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) < i32(conv.height)), (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) >= 0i)))) {
                        kfc_pa_4 = input[((((((((kfc_gid)[2] / conv.out_ch) * conv.in_ch) + (kfc_c0)) * conv.height) + u32(((i32((kfc_gid)[1]) + (kfc_c1)) - 1i))) * conv.width) + u32(((i32((kfc_gid)[0]) + (kfc_c2)) - 1i)))];
                    }
                }
            }
            {
                let kfc_i = (kfc_tid + 1280u) % 128u; let kfc_kk = (kfc_tid + 1280u) / 128u;
                let kfc_k0s = (kfc_k0 + 18u);
                let kfc_k = kfc_k0s + kfc_kk;
                let kfc_gid = vec3<u32>(kfc_x0 + kfc_i % 32u, kfc_y0 + kfc_i / 32u, kfc_zp);
                kfc_pa_5 = 0.0f;
                if kfc_k < kfc_kn {
                    let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
                    if select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) < i32(conv.width)), select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) >= 0i), select(false, (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) < i32(conv.height)), (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) >= 0i)))) {
                        kfc_pa_5 = input[((((((((kfc_gid)[2] / conv.out_ch) * conv.in_ch) + (kfc_c0)) * conv.height) + u32(((i32((kfc_gid)[1]) + (kfc_c1)) - 1i))) * conv.width) + u32(((i32((kfc_gid)[0]) + (kfc_c2)) - 1i)))];
                    }
                }
            }
            {
                let kfc_i = (kfc_tid + 1536u) % 128u; let kfc_kk = (kfc_tid + 1536u) / 128u;
                let kfc_k0s = (kfc_k0 + 18u);
                let kfc_k = kfc_k0s + kfc_kk;
                let kfc_gid = vec3<u32>(kfc_x0 + kfc_i % 32u, kfc_y0 + kfc_i / 32u, kfc_zp);
                kfc_pa_6 = 0.0f;
                if kfc_k < kfc_kn {
                    let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
                    if select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) < i32(conv.width)), select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) >= 0i), select(false, (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) < i32(conv.height)), (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) >= 0i)))) {
                        kfc_pa_6 = input[((((((((kfc_gid)[2] / conv.out_ch) * conv.in_ch) + (kfc_c0)) * conv.height) + u32(((i32((kfc_gid)[1]) + (kfc_c1)) - 1i))) * conv.width) + u32(((i32((kfc_gid)[0]) + (kfc_c2)) - 1i)))];
                    }
                }
            }
            {
                let kfc_i = (kfc_tid + 1792u) % 128u; let kfc_kk = (kfc_tid + 1792u) / 128u;
                let kfc_k0s = (kfc_k0 + 18u);
                let kfc_k = kfc_k0s + kfc_kk;
                let kfc_gid = vec3<u32>(kfc_x0 + kfc_i % 32u, kfc_y0 + kfc_i / 32u, kfc_zp);
                kfc_pa_7 = 0.0f;
                if kfc_k < kfc_kn {
                    let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
                    if select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) < i32(conv.width)), select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) >= 0i), select(false, (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) < i32(conv.height)), (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) >= 0i)))) {
                        kfc_pa_7 = input[((((((((kfc_gid)[2] / conv.out_ch) * conv.in_ch) + (kfc_c0)) * conv.height) + u32(((i32((kfc_gid)[1]) + (kfc_c1)) - 1i))) * conv.width) + u32(((i32((kfc_gid)[0]) + (kfc_c2)) - 1i)))];
                    }
                }
            }
            {
                let kfc_i = (kfc_tid + 2048u) % 128u; let kfc_kk = (kfc_tid + 2048u) / 128u;
                let kfc_k0s = (kfc_k0 + 18u);
                let kfc_k = kfc_k0s + kfc_kk;
                let kfc_gid = vec3<u32>(kfc_x0 + kfc_i % 32u, kfc_y0 + kfc_i / 32u, kfc_zp);
                kfc_pa_8 = 0.0f;
                if kfc_k < kfc_kn {
                    let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
                    if select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) < i32(conv.width)), select(false, (((i32((kfc_gid)[0]) + (kfc_c2)) - 1i) >= 0i), select(false, (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) < i32(conv.height)), (((i32((kfc_gid)[1]) + (kfc_c1)) - 1i) >= 0i)))) {
                        kfc_pa_8 = input[((((((((kfc_gid)[2] / conv.out_ch) * conv.in_ch) + (kfc_c0)) * conv.height) + u32(((i32((kfc_gid)[1]) + (kfc_c1)) - 1i))) * conv.width) + u32(((i32((kfc_gid)[0]) + (kfc_c2)) - 1i)))];
                    }
                }
            }
            {
                let kfc_i = (kfc_tid + 0u) % 128u; let kfc_kk = (kfc_tid + 0u) / 128u;
                let kfc_k0s = (kfc_k0 + 18u);
                let kfc_k = kfc_k0s + kfc_kk;
                let kfc_gid = vec3<u32>(0u, 0u, kfc_n0 + kfc_i);
                kfc_pb_0 = 0.0f;
                if kfc_k < kfc_kn {
                    let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
                    kfc_pb_0 = weight[((((((((kfc_gid)[2] % conv.out_ch) * conv.in_ch) + (kfc_c0)) * 3u) + u32((kfc_c1))) * 3u) + u32((kfc_c2)))];
                }
            }
            {
                let kfc_i = (kfc_tid + 256u) % 128u; let kfc_kk = (kfc_tid + 256u) / 128u;
                let kfc_k0s = (kfc_k0 + 18u);
                let kfc_k = kfc_k0s + kfc_kk;
                let kfc_gid = vec3<u32>(0u, 0u, kfc_n0 + kfc_i);
                kfc_pb_1 = 0.0f;
                if kfc_k < kfc_kn {
                    let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
                    kfc_pb_1 = weight[((((((((kfc_gid)[2] % conv.out_ch) * conv.in_ch) + (kfc_c0)) * 3u) + u32((kfc_c1))) * 3u) + u32((kfc_c2)))];
                }
            }
            {
                let kfc_i = (kfc_tid + 512u) % 128u; let kfc_kk = (kfc_tid + 512u) / 128u;
                let kfc_k0s = (kfc_k0 + 18u);
                let kfc_k = kfc_k0s + kfc_kk;
                let kfc_gid = vec3<u32>(0u, 0u, kfc_n0 + kfc_i);
                kfc_pb_2 = 0.0f;
                if kfc_k < kfc_kn {
                    let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
                    kfc_pb_2 = weight[((((((((kfc_gid)[2] % conv.out_ch) * conv.in_ch) + (kfc_c0)) * 3u) + u32((kfc_c1))) * 3u) + u32((kfc_c2)))];
                }
            }
            {
                let kfc_i = (kfc_tid + 768u) % 128u; let kfc_kk = (kfc_tid + 768u) / 128u;
                let kfc_k0s = (kfc_k0 + 18u);
                let kfc_k = kfc_k0s + kfc_kk;
                let kfc_gid = vec3<u32>(0u, 0u, kfc_n0 + kfc_i);
                kfc_pb_3 = 0.0f;
                if kfc_k < kfc_kn {
                    let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
                    kfc_pb_3 = weight[((((((((kfc_gid)[2] % conv.out_ch) * conv.in_ch) + (kfc_c0)) * 3u) + u32((kfc_c1))) * 3u) + u32((kfc_c2)))];
                }
            }
            {
                let kfc_i = (kfc_tid + 1024u) % 128u; let kfc_kk = (kfc_tid + 1024u) / 128u;
                let kfc_k0s = (kfc_k0 + 18u);
                let kfc_k = kfc_k0s + kfc_kk;
                let kfc_gid = vec3<u32>(0u, 0u, kfc_n0 + kfc_i);
                kfc_pb_4 = 0.0f;
                if kfc_k < kfc_kn {
                    let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
                    kfc_pb_4 = weight[((((((((kfc_gid)[2] % conv.out_ch) * conv.in_ch) + (kfc_c0)) * 3u) + u32((kfc_c1))) * 3u) + u32((kfc_c2)))];
                }
            }
            {
                let kfc_i = (kfc_tid + 1280u) % 128u; let kfc_kk = (kfc_tid + 1280u) / 128u;
                let kfc_k0s = (kfc_k0 + 18u);
                let kfc_k = kfc_k0s + kfc_kk;
                let kfc_gid = vec3<u32>(0u, 0u, kfc_n0 + kfc_i);
                kfc_pb_5 = 0.0f;
                if kfc_k < kfc_kn {
                    let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
                    kfc_pb_5 = weight[((((((((kfc_gid)[2] % conv.out_ch) * conv.in_ch) + (kfc_c0)) * 3u) + u32((kfc_c1))) * 3u) + u32((kfc_c2)))];
                }
            }
            {
                let kfc_i = (kfc_tid + 1536u) % 128u; let kfc_kk = (kfc_tid + 1536u) / 128u;
                let kfc_k0s = (kfc_k0 + 18u);
                let kfc_k = kfc_k0s + kfc_kk;
                let kfc_gid = vec3<u32>(0u, 0u, kfc_n0 + kfc_i);
                kfc_pb_6 = 0.0f;
                if kfc_k < kfc_kn {
                    let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
                    kfc_pb_6 = weight[((((((((kfc_gid)[2] % conv.out_ch) * conv.in_ch) + (kfc_c0)) * 3u) + u32((kfc_c1))) * 3u) + u32((kfc_c2)))];
                }
            }
            {
                let kfc_i = (kfc_tid + 1792u) % 128u; let kfc_kk = (kfc_tid + 1792u) / 128u;
                let kfc_k0s = (kfc_k0 + 18u);
                let kfc_k = kfc_k0s + kfc_kk;
                let kfc_gid = vec3<u32>(0u, 0u, kfc_n0 + kfc_i);
                kfc_pb_7 = 0.0f;
                if kfc_k < kfc_kn {
                    let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
                    kfc_pb_7 = weight[((((((((kfc_gid)[2] % conv.out_ch) * conv.in_ch) + (kfc_c0)) * 3u) + u32((kfc_c1))) * 3u) + u32((kfc_c2)))];
                }
            }
            {
                let kfc_i = (kfc_tid + 2048u) % 128u; let kfc_kk = (kfc_tid + 2048u) / 128u;
                let kfc_k0s = (kfc_k0 + 18u);
                let kfc_k = kfc_k0s + kfc_kk;
                let kfc_gid = vec3<u32>(0u, 0u, kfc_n0 + kfc_i);
                kfc_pb_8 = 0.0f;
                if kfc_k < kfc_kn {
                    let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2); let kfc_r2 = kfc_kk / kfc_t2; let kfc_c1 = kfc_s1 + i32(kfc_r2 % kfc_t1); let kfc_r1 = kfc_r2 / kfc_t1; let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1); 
                    kfc_pb_8 = weight[((((((((kfc_gid)[2] % conv.out_ch) * conv.in_ch) + (kfc_c0)) * 3u) + u32((kfc_c1))) * 3u) + u32((kfc_c2)))];
                }
            }
        }
        for (var kfc_kk = 0u; kfc_kk < 18u; kfc_kk = kfc_kk + 1u) {
            let kfc_a_0 = kfc_ta[kfc_kk * 33u + 0u + kfc_tm];
            let kfc_a_1 = kfc_ta[kfc_kk * 33u + 16u + kfc_tm];
            let kfc_b_0 = kfc_tb[kfc_kk * 33u + 0u + kfc_tn];
            let kfc_b_1 = kfc_tb[kfc_kk * 33u + 16u + kfc_tn];
            kfc_acc_0_0 = kfc_acc_0_0 + kfc_a_0.x * kfc_b_0;
            kfc_acc_0_1 = kfc_acc_0_1 + kfc_a_0.x * kfc_b_1;
            kfc_acc_1_0 = kfc_acc_1_0 + kfc_a_0.y * kfc_b_0;
            kfc_acc_1_1 = kfc_acc_1_1 + kfc_a_0.y * kfc_b_1;
            kfc_acc_2_0 = kfc_acc_2_0 + kfc_a_0.z * kfc_b_0;
            kfc_acc_2_1 = kfc_acc_2_1 + kfc_a_0.z * kfc_b_1;
            kfc_acc_3_0 = kfc_acc_3_0 + kfc_a_0.w * kfc_b_0;
            kfc_acc_3_1 = kfc_acc_3_1 + kfc_a_0.w * kfc_b_1;
            kfc_acc_4_0 = kfc_acc_4_0 + kfc_a_1.x * kfc_b_0;
            kfc_acc_4_1 = kfc_acc_4_1 + kfc_a_1.x * kfc_b_1;
            kfc_acc_5_0 = kfc_acc_5_0 + kfc_a_1.y * kfc_b_0;
            kfc_acc_5_1 = kfc_acc_5_1 + kfc_a_1.y * kfc_b_1;
            kfc_acc_6_0 = kfc_acc_6_0 + kfc_a_1.z * kfc_b_0;
            kfc_acc_6_1 = kfc_acc_6_1 + kfc_a_1.z * kfc_b_1;
            kfc_acc_7_0 = kfc_acc_7_0 + kfc_a_1.w * kfc_b_0;
            kfc_acc_7_1 = kfc_acc_7_1 + kfc_a_1.w * kfc_b_1;
        }
        workgroupBarrier();
    }
    {
        let kfc_m = (0u + kfc_tm) * 4u + 0u;
        let kfc_j = (0u + kfc_tn) * 4u + 0u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_0_0.x);
        }
    }
    {
        let kfc_m = (0u + kfc_tm) * 4u + 0u;
        let kfc_j = (0u + kfc_tn) * 4u + 1u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_0_0.y);
        }
    }
    {
        let kfc_m = (0u + kfc_tm) * 4u + 0u;
        let kfc_j = (0u + kfc_tn) * 4u + 2u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_0_0.z);
        }
    }
    {
        let kfc_m = (0u + kfc_tm) * 4u + 0u;
        let kfc_j = (0u + kfc_tn) * 4u + 3u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_0_0.w);
        }
    }
    {
        let kfc_m = (0u + kfc_tm) * 4u + 0u;
        let kfc_j = (16u + kfc_tn) * 4u + 0u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_0_1.x);
        }
    }
    {
        let kfc_m = (0u + kfc_tm) * 4u + 0u;
        let kfc_j = (16u + kfc_tn) * 4u + 1u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_0_1.y);
        }
    }
    {
        let kfc_m = (0u + kfc_tm) * 4u + 0u;
        let kfc_j = (16u + kfc_tn) * 4u + 2u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_0_1.z);
        }
    }
    {
        let kfc_m = (0u + kfc_tm) * 4u + 0u;
        let kfc_j = (16u + kfc_tn) * 4u + 3u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_0_1.w);
        }
    }
    {
        let kfc_m = (0u + kfc_tm) * 4u + 1u;
        let kfc_j = (0u + kfc_tn) * 4u + 0u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_1_0.x);
        }
    }
    {
        let kfc_m = (0u + kfc_tm) * 4u + 1u;
        let kfc_j = (0u + kfc_tn) * 4u + 1u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_1_0.y);
        }
    }
    {
        let kfc_m = (0u + kfc_tm) * 4u + 1u;
        let kfc_j = (0u + kfc_tn) * 4u + 2u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_1_0.z);
        }
    }
    {
        let kfc_m = (0u + kfc_tm) * 4u + 1u;
        let kfc_j = (0u + kfc_tn) * 4u + 3u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_1_0.w);
        }
    }
    {
        let kfc_m = (0u + kfc_tm) * 4u + 1u;
        let kfc_j = (16u + kfc_tn) * 4u + 0u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_1_1.x);
        }
    }
    {
        let kfc_m = (0u + kfc_tm) * 4u + 1u;
        let kfc_j = (16u + kfc_tn) * 4u + 1u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_1_1.y);
        }
    }
    {
        let kfc_m = (0u + kfc_tm) * 4u + 1u;
        let kfc_j = (16u + kfc_tn) * 4u + 2u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_1_1.z);
        }
    }
    {
        let kfc_m = (0u + kfc_tm) * 4u + 1u;
        let kfc_j = (16u + kfc_tn) * 4u + 3u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_1_1.w);
        }
    }
    {
        let kfc_m = (0u + kfc_tm) * 4u + 2u;
        let kfc_j = (0u + kfc_tn) * 4u + 0u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_2_0.x);
        }
    }
    {
        let kfc_m = (0u + kfc_tm) * 4u + 2u;
        let kfc_j = (0u + kfc_tn) * 4u + 1u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_2_0.y);
        }
    }
    {
        let kfc_m = (0u + kfc_tm) * 4u + 2u;
        let kfc_j = (0u + kfc_tn) * 4u + 2u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_2_0.z);
        }
    }
    {
        let kfc_m = (0u + kfc_tm) * 4u + 2u;
        let kfc_j = (0u + kfc_tn) * 4u + 3u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_2_0.w);
        }
    }
    {
        let kfc_m = (0u + kfc_tm) * 4u + 2u;
        let kfc_j = (16u + kfc_tn) * 4u + 0u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_2_1.x);
        }
    }
    {
        let kfc_m = (0u + kfc_tm) * 4u + 2u;
        let kfc_j = (16u + kfc_tn) * 4u + 1u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_2_1.y);
        }
    }
    {
        let kfc_m = (0u + kfc_tm) * 4u + 2u;
        let kfc_j = (16u + kfc_tn) * 4u + 2u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_2_1.z);
        }
    }
    {
        let kfc_m = (0u + kfc_tm) * 4u + 2u;
        let kfc_j = (16u + kfc_tn) * 4u + 3u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_2_1.w);
        }
    }
    {
        let kfc_m = (0u + kfc_tm) * 4u + 3u;
        let kfc_j = (0u + kfc_tn) * 4u + 0u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_3_0.x);
        }
    }
    {
        let kfc_m = (0u + kfc_tm) * 4u + 3u;
        let kfc_j = (0u + kfc_tn) * 4u + 1u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_3_0.y);
        }
    }
    {
        let kfc_m = (0u + kfc_tm) * 4u + 3u;
        let kfc_j = (0u + kfc_tn) * 4u + 2u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_3_0.z);
        }
    }
    {
        let kfc_m = (0u + kfc_tm) * 4u + 3u;
        let kfc_j = (0u + kfc_tn) * 4u + 3u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_3_0.w);
        }
    }
    {
        let kfc_m = (0u + kfc_tm) * 4u + 3u;
        let kfc_j = (16u + kfc_tn) * 4u + 0u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_3_1.x);
        }
    }
    {
        let kfc_m = (0u + kfc_tm) * 4u + 3u;
        let kfc_j = (16u + kfc_tn) * 4u + 1u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_3_1.y);
        }
    }
    {
        let kfc_m = (0u + kfc_tm) * 4u + 3u;
        let kfc_j = (16u + kfc_tn) * 4u + 2u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_3_1.z);
        }
    }
    {
        let kfc_m = (0u + kfc_tm) * 4u + 3u;
        let kfc_j = (16u + kfc_tn) * 4u + 3u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_3_1.w);
        }
    }
    {
        let kfc_m = (16u + kfc_tm) * 4u + 0u;
        let kfc_j = (0u + kfc_tn) * 4u + 0u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_4_0.x);
        }
    }
    {
        let kfc_m = (16u + kfc_tm) * 4u + 0u;
        let kfc_j = (0u + kfc_tn) * 4u + 1u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_4_0.y);
        }
    }
    {
        let kfc_m = (16u + kfc_tm) * 4u + 0u;
        let kfc_j = (0u + kfc_tn) * 4u + 2u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_4_0.z);
        }
    }
    {
        let kfc_m = (16u + kfc_tm) * 4u + 0u;
        let kfc_j = (0u + kfc_tn) * 4u + 3u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_4_0.w);
        }
    }
    {
        let kfc_m = (16u + kfc_tm) * 4u + 0u;
        let kfc_j = (16u + kfc_tn) * 4u + 0u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_4_1.x);
        }
    }
    {
        let kfc_m = (16u + kfc_tm) * 4u + 0u;
        let kfc_j = (16u + kfc_tn) * 4u + 1u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_4_1.y);
        }
    }
    {
        let kfc_m = (16u + kfc_tm) * 4u + 0u;
        let kfc_j = (16u + kfc_tn) * 4u + 2u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_4_1.z);
        }
    }
    {
        let kfc_m = (16u + kfc_tm) * 4u + 0u;
        let kfc_j = (16u + kfc_tn) * 4u + 3u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_4_1.w);
        }
    }
    {
        let kfc_m = (16u + kfc_tm) * 4u + 1u;
        let kfc_j = (0u + kfc_tn) * 4u + 0u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_5_0.x);
        }
    }
    {
        let kfc_m = (16u + kfc_tm) * 4u + 1u;
        let kfc_j = (0u + kfc_tn) * 4u + 1u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_5_0.y);
        }
    }
    {
        let kfc_m = (16u + kfc_tm) * 4u + 1u;
        let kfc_j = (0u + kfc_tn) * 4u + 2u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_5_0.z);
        }
    }
    {
        let kfc_m = (16u + kfc_tm) * 4u + 1u;
        let kfc_j = (0u + kfc_tn) * 4u + 3u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_5_0.w);
        }
    }
    {
        let kfc_m = (16u + kfc_tm) * 4u + 1u;
        let kfc_j = (16u + kfc_tn) * 4u + 0u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_5_1.x);
        }
    }
    {
        let kfc_m = (16u + kfc_tm) * 4u + 1u;
        let kfc_j = (16u + kfc_tn) * 4u + 1u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_5_1.y);
        }
    }
    {
        let kfc_m = (16u + kfc_tm) * 4u + 1u;
        let kfc_j = (16u + kfc_tn) * 4u + 2u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_5_1.z);
        }
    }
    {
        let kfc_m = (16u + kfc_tm) * 4u + 1u;
        let kfc_j = (16u + kfc_tn) * 4u + 3u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_5_1.w);
        }
    }
    {
        let kfc_m = (16u + kfc_tm) * 4u + 2u;
        let kfc_j = (0u + kfc_tn) * 4u + 0u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_6_0.x);
        }
    }
    {
        let kfc_m = (16u + kfc_tm) * 4u + 2u;
        let kfc_j = (0u + kfc_tn) * 4u + 1u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_6_0.y);
        }
    }
    {
        let kfc_m = (16u + kfc_tm) * 4u + 2u;
        let kfc_j = (0u + kfc_tn) * 4u + 2u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_6_0.z);
        }
    }
    {
        let kfc_m = (16u + kfc_tm) * 4u + 2u;
        let kfc_j = (0u + kfc_tn) * 4u + 3u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_6_0.w);
        }
    }
    {
        let kfc_m = (16u + kfc_tm) * 4u + 2u;
        let kfc_j = (16u + kfc_tn) * 4u + 0u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_6_1.x);
        }
    }
    {
        let kfc_m = (16u + kfc_tm) * 4u + 2u;
        let kfc_j = (16u + kfc_tn) * 4u + 1u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_6_1.y);
        }
    }
    {
        let kfc_m = (16u + kfc_tm) * 4u + 2u;
        let kfc_j = (16u + kfc_tn) * 4u + 2u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_6_1.z);
        }
    }
    {
        let kfc_m = (16u + kfc_tm) * 4u + 2u;
        let kfc_j = (16u + kfc_tn) * 4u + 3u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_6_1.w);
        }
    }
    {
        let kfc_m = (16u + kfc_tm) * 4u + 3u;
        let kfc_j = (0u + kfc_tn) * 4u + 0u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_7_0.x);
        }
    }
    {
        let kfc_m = (16u + kfc_tm) * 4u + 3u;
        let kfc_j = (0u + kfc_tn) * 4u + 1u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_7_0.y);
        }
    }
    {
        let kfc_m = (16u + kfc_tm) * 4u + 3u;
        let kfc_j = (0u + kfc_tn) * 4u + 2u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_7_0.z);
        }
    }
    {
        let kfc_m = (16u + kfc_tm) * 4u + 3u;
        let kfc_j = (0u + kfc_tn) * 4u + 3u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_7_0.w);
        }
    }
    {
        let kfc_m = (16u + kfc_tm) * 4u + 3u;
        let kfc_j = (16u + kfc_tn) * 4u + 0u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_7_1.x);
        }
    }
    {
        let kfc_m = (16u + kfc_tm) * 4u + 3u;
        let kfc_j = (16u + kfc_tn) * 4u + 1u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_7_1.y);
        }
    }
    {
        let kfc_m = (16u + kfc_tm) * 4u + 3u;
        let kfc_j = (16u + kfc_tn) * 4u + 2u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_7_1.z);
        }
    }
    {
        let kfc_m = (16u + kfc_tm) * 4u + 3u;
        let kfc_j = (16u + kfc_tn) * 4u + 3u;
        let kfc_gid = vec3<u32>(kfc_x0 + kfc_m % 32u, kfc_y0 + kfc_m / 32u, kfc_zp + kfc_n0 + kfc_j);
        if kfc_n0 + kfc_j < kfc_d && !select(true, ((kfc_gid)[2] >= (conv.batch * conv.out_ch)), (!select(true, ((kfc_gid)[1] >= conv.height), (!((kfc_gid)[0] >= conv.width))))) {
            output[((((((((kfc_gid)[2] / conv.out_ch) * conv.out_ch) + ((kfc_gid)[2] % conv.out_ch)) * conv.height) + (kfc_gid)[1]) * conv.width) + (kfc_gid)[0])] = (kfc_acc_7_1.w);
        }
    }
}


// Direct 2-D convolution, NCHW input, OIHW 3x3 weights, bias, stride 2 and zero padding 1 handled by bounds checks.
// class: conv
// style: conv params struct (stride, pad in the uniform), 3-D global id (x = ow, y = oh, z = n * cout + co), i32 input coordinates with bounds checks, const kernel size
// spec: sizes(batch = 2, cin = 4, cout = 8, h = 17, w = 19), bind(input = input(batch * cin * h * w), weight = input(cout * cin * 9), bias = input(cout), output = output(batch * cout * ((h - 1) / 2 + 1) * ((w - 1) / 2 + 1)), conv = uniform(batch, cin, cout, h, w, (h - 1) / 2 + 1, (w - 1) / 2 + 1, 2, 1)), grid = ((w - 1) / 2 + 1, (h - 1) / 2 + 1, batch * cout)

struct ConvParams {
    batch: u32,
    in_channels: u32,
    out_channels: u32,
    in_h: u32,
    in_w: u32,
    out_h: u32,
    out_w: u32,
    stride: u32,
    pad: u32,
}

const KH: u32 = 3u;
const KW: u32 = 3u;

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read> weight: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> output: array<f32>;
@group(0) @binding(4) var<uniform> conv: ConvParams;

@compute @workgroup_size(8, 8, 1)
fn conv2d(@builtin(global_invocation_id) gid: vec3<u32>) {
    let ox = gid.x;
    let oy = gid.y;
    let nc = gid.z;
    if (ox >= conv.out_w || oy >= conv.out_h || nc >= conv.batch * conv.out_channels) {
        return;
    }
    let n = nc / conv.out_channels;
    let co = nc % conv.out_channels;

    var acc: f32 = bias[co];
    for (var ci: u32 = 0u; ci < conv.in_channels; ci++) {
        let in_base = (n * conv.in_channels + ci) * conv.in_h * conv.in_w;
        let w_base = (co * conv.in_channels + ci) * KH * KW;
        for (var ky: u32 = 0u; ky < KH; ky++) {
            let iy = i32(oy * conv.stride + ky) - i32(conv.pad);
            if (iy < 0 || iy >= i32(conv.in_h)) {
                continue;
            }
            for (var kx: u32 = 0u; kx < KW; kx++) {
                let ix = i32(ox * conv.stride + kx) - i32(conv.pad);
                if (ix < 0 || ix >= i32(conv.in_w)) {
                    continue;
                }
                acc += input[in_base + u32(iy) * conv.in_w + u32(ix)] * weight[w_base + ky * KW + kx];
            }
        }
    }
    output[((n * conv.out_channels + co) * conv.out_h + oy) * conv.out_w + ox] = acc;
}

// A 3x3 "same" convolution with a bias, NCHW, one invocation per output on a flat 1-D id taken
// apart with `/` and `%` into batch, output channel, row and column (the channel is neither the
// lowest nor the highest digit), the taps outside the image skipped by a bounds test.
// spec: sizes(batch = 2, cin = 3, cout = 6, h = 7, w = 5), bind(input = input(batch * cin * h * w), weight = input(cout * cin * 9), bias = input(cout), output = output(batch * cout * h * w), conv = uniform(batch, cin, cout, h, w)), grid = (batch * cout * h * w)
// fires: implicit-gemm
struct Conv {
    batch: u32,
    in_ch: u32,
    out_ch: u32,
    height: u32,
    width: u32,
}

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read> weight: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> output: array<f32>;
@group(0) @binding(4) var<uniform> conv: Conv;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let plane = conv.height * conv.width;
    if (i >= conv.batch * conv.out_ch * plane) {
        return;
    }
    let ox = i % conv.width;
    let oy = (i / conv.width) % conv.height;
    let oc = (i / plane) % conv.out_ch;
    let n = i / (plane * conv.out_ch);
    var acc = bias[oc];
    for (var ic = 0u; ic < conv.in_ch; ic++) {
        for (var ky = 0u; ky < 3u; ky++) {
            for (var kx = 0u; kx < 3u; kx++) {
                let iy = i32(oy + ky) - 1;
                let ix = i32(ox + kx) - 1;
                if (iy >= 0 && iy < i32(conv.height) && ix >= 0 && ix < i32(conv.width)) {
                    let src = ((n * conv.in_ch + ic) * conv.height + u32(iy)) * conv.width + u32(ix);
                    acc = acc + input[src] * weight[((oc * conv.in_ch + ic) * 3u + ky) * 3u + kx];
                }
            }
        }
    }
    output[i] = acc;
}

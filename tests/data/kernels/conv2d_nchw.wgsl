// A 3x3 "same" convolution, NCHW, as KernelBench spells it: one output pixel per invocation (x the
// column, y the row, z the batch and output channel), the taps outside the image skipped by a
// bounds test inside the innermost loop.
// spec: sizes(batch = 2, cin = 5, cout = 7, h = 9, w = 11), bind(input = input(batch * cin * h * w), weight = input(cout * cin * 9), output = output(batch * cout * h * w), conv = uniform(batch, cin, cout, h, w)), grid = (w, h, batch * cout)
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
@group(0) @binding(2) var<storage, read_write> output: array<f32>;
@group(0) @binding(3) var<uniform> conv: Conv;

@compute @workgroup_size(8, 8, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let ox = gid.x;
    let oy = gid.y;
    if (ox >= conv.width || oy >= conv.height || gid.z >= conv.batch * conv.out_ch) {
        return;
    }
    let n = gid.z / conv.out_ch;
    let oc = gid.z % conv.out_ch;
    var acc = 0.0;
    for (var ic = 0u; ic < conv.in_ch; ic++) {
        for (var ky = 0; ky < 3; ky++) {
            for (var kx = 0; kx < 3; kx++) {
                let iy = i32(oy) + ky - 1;
                let ix = i32(ox) + kx - 1;
                if (iy >= 0 && iy < i32(conv.height) && ix >= 0 && ix < i32(conv.width)) {
                    let src = ((n * conv.in_ch + ic) * conv.height + u32(iy)) * conv.width + u32(ix);
                    let wi = ((oc * conv.in_ch + ic) * 3u + u32(ky)) * 3u + u32(kx);
                    acc += input[src] * weight[wi];
                }
            }
        }
    }
    output[((n * conv.out_ch + oc) * conv.height + oy) * conv.width + ox] = acc;
}

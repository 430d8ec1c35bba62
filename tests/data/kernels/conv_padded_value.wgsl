// conv2d_nchw.wgsl as another author writes the padding: the input value read into a local that
// stays zero outside the image, multiplied whatever it holds; loops over the taps' rows and
// columns written with `ky`/`kx` as `u32` offsets from the corner.
// spec: sizes(batch = 2, cin = 4, cout = 6, h = 8, w = 10), bind(input = input(batch * cin * h * w), weight = input(cout * cin * 9), output = output(batch * cout * h * w), conv = uniform(batch, cin, cout, h, w)), grid = (w, h, batch * cout)
// fires: implicit-gemm
struct Conv { batch: u32, in_ch: u32, out_ch: u32, height: u32, width: u32 }
@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read> weight: array<f32>;
@group(0) @binding(2) var<storage, read_write> output: array<f32>;
@group(0) @binding(3) var<uniform> conv: Conv;

@compute @workgroup_size(8, 8, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= conv.width || gid.y >= conv.height || gid.z >= conv.batch * conv.out_ch) {
        return;
    }
    let n = gid.z / conv.out_ch;
    let oc = gid.z % conv.out_ch;
    var acc = 0.0;
    for (var ic = 0u; ic < conv.in_ch; ic++) {
        for (var ky = 0u; ky < 3u; ky++) {
            for (var kx = 0u; kx < 3u; kx++) {
                let y = i32(gid.y + ky) - 1;
                let x = i32(gid.x + kx) - 1;
                var v = 0.0;
                if (y >= 0 && y < i32(conv.height) && x >= 0 && x < i32(conv.width)) {
                    v = input[((n * conv.in_ch + ic) * conv.height + u32(y)) * conv.width + u32(x)];
                }
                acc += v * weight[((oc * conv.in_ch + ic) * 3u + ky) * 3u + kx];
            }
        }
    }
    output[((n * conv.out_ch + oc) * conv.height + gid.y) * conv.width + gid.x] = acc;
}

// A 3x3 "same" convolution of one NHWC image, channels last: x is the output channel (so
// neighbouring invocations write neighbouring floats), y the column, z the row; filter taps
// outermost, the input channel innermost; the weights laid out [ky][kx][cin][cout].
// spec: sizes(cin = 6, cout = 10, h = 7, w = 9), bind(img = input(h * w * cin), wts = input(9 * cin * cout), res = output(h * w * cout), s = uniform(cin, cout, h, w)), grid = (cout, w, h)
// fires: implicit-gemm
struct Shape { cin: u32, cout: u32, h: u32, w: u32 }
@group(0) @binding(0) var<storage, read> img: array<f32>;
@group(0) @binding(1) var<storage, read> wts: array<f32>;
@group(0) @binding(2) var<storage, read_write> res: array<f32>;
@group(0) @binding(3) var<uniform> s: Shape;

@compute @workgroup_size(32, 2, 2)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let oc = gid.x;
    let ox = gid.y;
    let oy = gid.z;
    if (oc >= s.cout || ox >= s.w || oy >= s.h) {
        return;
    }
    var total: f32 = 0.0;
    for (var ky = 0u; ky < 3u; ky++) {
        for (var kx = 0u; kx < 3u; kx++) {
            let iy = i32(oy + ky) - 1;
            let ix = i32(ox + kx) - 1;
            let inside = iy >= 0 && ix >= 0 && iy < i32(s.h) && ix < i32(s.w);
            if (inside) {
                for (var ic = 0u; ic < s.cin; ic++) {
                    total = fma(img[(u32(iy) * s.w + u32(ix)) * s.cin + ic], wts[((ky * 3u + kx) * s.cin + ic) * s.cout + oc], total);
                }
            }
        }
    }
    res[(oy * s.w + ox) * s.cout + oc] = total;
}

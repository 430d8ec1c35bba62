// A 3x3 "same" convolution, NHWC, one invocation per output on a flat 1-D id whose lowest digit
// is the output channel (`co = i % cout`, then column, row and batch above it), the weights
// HWIO, the taps outside the image skipped with `continue`.
// spec: sizes(batch = 2, cin = 4, cout = 6, h = 5, w = 7), bind(src = input(batch * h * w * cin), wts = input(9 * cin * cout), dst = output(batch * h * w * cout), dims = uniform(batch, h, w, cin, cout)), grid = (batch * h * w * cout)
// fires: implicit-gemm
struct Dims { n: u32, h: u32, w: u32, cin: u32, cout: u32 }

@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read> wts: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;

@compute @workgroup_size(128)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= dims.n * dims.h * dims.w * dims.cout) {
        return;
    }
    let co = i % dims.cout;
    let pix = i / dims.cout;
    let ox = pix % dims.w;
    let oy = (pix / dims.w) % dims.h;
    let n = pix / (dims.w * dims.h);
    var s = 0.0;
    for (var ky = 0u; ky < 3u; ky++) {
        for (var kx = 0u; kx < 3u; kx++) {
            for (var ci = 0u; ci < dims.cin; ci++) {
                let yy = i32(oy + ky) - 1;
                let xx = i32(ox + kx) - 1;
                if (yy < 0 || yy >= i32(dims.h) || xx < 0 || xx >= i32(dims.w)) {
                    continue;
                }
                let a = src[((n * dims.h + u32(yy)) * dims.w + u32(xx)) * dims.cin + ci];
                s += a * wts[((ky * 3u + kx) * dims.cin + ci) * dims.cout + co];
            }
        }
    }
    dst[i] = max(s, 0.0);
}

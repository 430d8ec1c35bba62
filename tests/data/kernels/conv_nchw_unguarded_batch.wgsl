// A direct convolution (NCHW, 3×3, same padding) with one invocation per output pixel, channel
// and image, the padding test a `continue`, and bounds tests on the pixel and the channel only:
// the batch is z, launched exactly one invocation deep, so no test was needed there. The
// implicit GEMM bounds the batch itself by the launch's extent, read from the uniform.
// spec: sizes(n = 2, c = 5, h = 9, w = 11, k = 7, r = 3), bind(x = input(n * c * h * w), wt = input(k * c * r * r), y = output(n * k * h * w), p = uniform(n, c, h, w, k, r)), grid = (w * h, k, n), tolerance = 1e-4
// fires: implicit-gemm
struct P { n: u32, c: u32, h: u32, w: u32, k: u32, r: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> wt: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> p: P;
@compute @workgroup_size(64, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let pix = gid.x; let oc = gid.y; let b = gid.z;
    if (pix >= p.h * p.w || oc >= p.k) { return; }
    let oy = i32(pix / p.w); let ox = i32(pix % p.w);
    let pad = i32(p.r / 2u);
    var acc = 0.0;
    for (var ic = 0u; ic < p.c; ic++) {
        for (var ky = 0u; ky < p.r; ky++) {
            for (var kx = 0u; kx < p.r; kx++) {
                let iy = oy + i32(ky) - pad;
                let ix = ox + i32(kx) - pad;
                if (iy < 0 || ix < 0 || iy >= i32(p.h) || ix >= i32(p.w)) { continue; }
                acc += x[((b * p.c + ic) * p.h + u32(iy)) * p.w + u32(ix)] * wt[((oc * p.c + ic) * p.r + ky) * p.r + kx];
            }
        }
    }
    y[((b * p.k + oc) * p.h) * p.w + pix] = acc;
}

// conv3x3 (stride 1, padding 1, with bias) -> ReLU -> 2x2 max pool, fused, NCHW.
// One pooled output per invocation; each computes its four convolution outputs.
struct Conv {
    batch: u32,
    cin: u32,
    cout: u32,
    h: u32,
    w: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> wt: array<f32>; // [cout][cin][3][3]
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> conv: Conv;

fn conv_at(n: u32, co: u32, oy: u32, ox: u32) -> f32 {
    var acc = bias[co];
    for (var ci = 0u; ci < conv.cin; ci++) {
        for (var ky = 0u; ky < 3u; ky++) {
            let iy = i32(oy + ky) - 1;
            if (iy < 0 || iy >= i32(conv.h)) {
                continue;
            }
            for (var kx = 0u; kx < 3u; kx++) {
                let ix = i32(ox + kx) - 1;
                if (ix < 0 || ix >= i32(conv.w)) {
                    continue;
                }
                acc += x[((n * conv.cin + ci) * conv.h + u32(iy)) * conv.w + u32(ix)]
                    * wt[((co * conv.cin + ci) * 3u + ky) * 3u + kx];
            }
        }
    }
    return max(acc, 0.0);
}

@compute @workgroup_size(8, 8, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let ph = conv.h / 2u;
    let pw = conv.w / 2u;
    let px = gid.x;
    let py = gid.y;
    if (px >= pw || py >= ph || gid.z >= conv.batch * conv.cout) {
        return;
    }
    let n = gid.z / conv.cout;
    let co = gid.z % conv.cout;
    let a = conv_at(n, co, 2u * py, 2u * px);
    let b = conv_at(n, co, 2u * py, 2u * px + 1u);
    let c = conv_at(n, co, 2u * py + 1u, 2u * px);
    let d = conv_at(n, co, 2u * py + 1u, 2u * px + 1u);
    out[(gid.z * ph + py) * pw + px] = max(max(a, b), max(c, d));
}

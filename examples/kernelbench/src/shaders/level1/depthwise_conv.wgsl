// Depthwise 3x3 convolution, NCHW, stride 1, zero padding 1, with a per-channel bias.
// Flat indexing: one output element per invocation.
struct P {
    batch: u32,
    channels: u32,
    h: u32,
    w: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> filt: array<f32>; // [channels][3][3]
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<uniform> p: P;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let total = p.batch * p.channels * p.h * p.w;
    let idx = gid.x;
    if (idx >= total) {
        return;
    }
    let col = idx % p.w;
    let row = (idx / p.w) % p.h;
    let ch = (idx / (p.w * p.h)) % p.channels;
    let plane = idx - row * p.w - col; // start of this (n, c) plane
    var sum = bias[ch];
    for (var dy = 0u; dy < 3u; dy++) {
        let r = row + dy;
        if (r < 1u || r > p.h) {
            continue;
        }
        for (var dx = 0u; dx < 3u; dx++) {
            let c = col + dx;
            if (c < 1u || c > p.w) {
                continue;
            }
            sum += x[plane + (r - 1u) * p.w + (c - 1u)] * filt[ch * 9u + dy * 3u + dx];
        }
    }
    y[idx] = sum;
}

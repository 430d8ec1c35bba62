// 3x3 average pooling, stride 2, no padding, over (planes, h, w):
// the output is (planes, (h - 3) / 2 + 1, (w - 3) / 2 + 1). One output per invocation.
struct Dims {
    planes: u32,
    h: u32,
    w: u32,
}

@group(0) @binding(0) var<storage, read> inp: array<f32>;
@group(0) @binding(1) var<storage, read_write> outp: array<f32>;
@group(0) @binding(2) var<uniform> d: Dims;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let oh = (d.h - 3u) / 2u + 1u;
    let ow = (d.w - 3u) / 2u + 1u;
    let i = gid.x;
    if (i >= d.planes * oh * ow) {
        return;
    }
    let ox = i % ow;
    let oy = (i / ow) % oh;
    let plane = i / (ow * oh);
    var total = 0.0;
    for (var ky = 0u; ky < 3u; ky++) {
        for (var kx = 0u; kx < 3u; kx++) {
            total += inp[(plane * d.h + 2u * oy + ky) * d.w + 2u * ox + kx];
        }
    }
    outp[i] = total / 9.0;
}

// kernel: 2-D box blur of an image stored in buffers, 3x3 window, edge pixels clamped
// spec: sizes(w = 48, h = 20), verify_shapes = [(w = 17, h = 9)], bind(dims = uniform(w, h), img = input(w * h), out = output(w * h)), grid = (w, h)
// applies: unroll hoist reshape
// skips: lift-workgroup-size
struct Dims {
    width: u32,
    height: u32,
}

@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> img: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= dims.width || gid.y >= dims.height) {
        return;
    }
    var total = 0.0;
    for (var dy = -1; dy <= 1; dy++) {
        for (var dx = -1; dx <= 1; dx++) {
            let sx = clamp(i32(gid.x) + dx, 0, i32(dims.width) - 1);
            let sy = clamp(i32(gid.y) + dy, 0, i32(dims.height) - 1);
            total += img[u32(sy) * dims.width + u32(sx)];
        }
    }
    out[gid.y * dims.width + gid.x] = total / 9.0;
}

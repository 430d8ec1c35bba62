// kernel: 2-D 5-point stencil (Jacobi step) with clamped borders, radius loops over constants
// spec: sizes(w = 40, h = 24), verify_shapes = [(w = 23, h = 11)], bind(dims = uniform(w, h), src = input(w * h), dst = output(w * h)), grid = (w, h)
// applies: unroll hoist reshape
// skips: lift-workgroup-size
struct Dims {
    w: u32,
    h: u32,
}

const R: i32 = 1;

@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= dims.w || gid.y >= dims.h) {
        return;
    }
    let x = i32(gid.x);
    let y = i32(gid.y);
    var sum = 0.0;
    for (var d = -R; d <= R; d++) {
        let xx = clamp(x + d, 0, i32(dims.w) - 1);
        let yy = clamp(y + d, 0, i32(dims.h) - 1);
        sum += src[u32(y) * dims.w + u32(xx)];
        sum += src[u32(yy) * dims.w + u32(x)];
    }
    dst[gid.y * dims.w + gid.x] = sum / 6.0;
}

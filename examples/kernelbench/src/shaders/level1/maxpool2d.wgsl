// 2x2 max pooling with stride 2 over (planes, h, w); the output is (planes, h / 2, w / 2)
// (an odd last row or column is dropped, as in PyTorch's default floor mode).
struct Pool {
    planes: u32,
    h: u32,
    w: u32,
}

@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> pool: Pool;

@compute @workgroup_size(8, 8, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let oh = pool.h / 2u;
    let ow = pool.w / 2u;
    if (gid.x >= ow || gid.y >= oh || gid.z >= pool.planes) {
        return;
    }
    let base = gid.z * pool.h * pool.w + (2u * gid.y) * pool.w + 2u * gid.x;
    let m = max(max(src[base], src[base + 1u]), max(src[base + pool.w], src[base + pool.w + 1u]));
    dst[(gid.z * oh + gid.y) * ow + gid.x] = m;
}

// 2-D max pooling, 2x2 window, stride 2, over planes src[P, H, W] (NCHW with P = N * C): dst[P, H / 2, W / 2].
// class: filter
// style: image-pyramid / downsample style, 3-D `global_invocation_id` (x, y, plane), four explicit loads combined with nested `max()`, `vec2<u32>` coordinate math
// spec: sizes(planes = 6, h = 32, w = 40), bind(src = input(planes * h * w), dst = output(planes * (h / 2) * (w / 2)), pool = uniform(planes, h, w)), grid = (w / 2, h / 2, planes)

struct PoolParams {
    planes: u32,
    in_h: u32,
    in_w: u32,
}

@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> pool: PoolParams;

@compute @workgroup_size(8, 8, 1)
fn max_pool_2x2(@builtin(global_invocation_id) gid: vec3<u32>) {
    let out_w = pool.in_w / 2u;
    let out_h = pool.in_h / 2u;
    let p = gid.z;
    let o = gid.xy;
    if (o.x >= out_w || o.y >= out_h || p >= pool.planes) {
        return;
    }
    let i = o * 2u;
    let plane_base = p * pool.in_h * pool.in_w;
    let r0 = plane_base + i.y * pool.in_w + i.x;
    let r1 = r0 + pool.in_w;
    let m = max(max(src[r0], src[r0 + 1u]), max(src[r1], src[r1 + 1u]));
    dst[(p * out_h + o.y) * out_w + o.x] = m;
}

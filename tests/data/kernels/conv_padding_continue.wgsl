// A 3x3 "same" convolution of one channel: out-of-image taps skipped with `continue` (the padding
// test as people write it), the image index taken from a flat id split by the width.
// spec: sizes(h = 9, w = 13), bind(img = input(h * w), k3 = input(9), res = output(h * w), sz = uniform(h, w)), grid = (h * w)
// fires: unroll coarsen
struct Size { h: u32, w: u32 }
@group(0) @binding(0) var<storage, read> img: array<f32>;
@group(0) @binding(1) var<storage, read> k3: array<f32>;
@group(0) @binding(2) var<storage, read_write> res: array<f32>;
@group(0) @binding(3) var<uniform> sz: Size;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let p = id.x;
    if (p >= sz.h * sz.w) { return; }
    let py = i32(p / sz.w);
    let px = i32(p % sz.w);
    var total = 0.0;
    for (var ky = -1; ky <= 1; ky++) {
        let yy = py + ky;
        if (yy < 0 || yy >= i32(sz.h)) { continue; }
        for (var kx = -1; kx <= 1; kx += 1) {
            let xx = px + kx;
            if (xx < 0 || xx >= i32(sz.w)) {
                continue;
            }
            total = total + img[u32(yy) * sz.w + u32(xx)] * k3[u32((ky + 1) * 3 + kx + 1)];
        }
    }
    res[p] = total;
}

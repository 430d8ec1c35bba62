// 2-D elementwise c = a + b over (cols, rows) with an explicit bounds test on both axes.
// spec: sizes(w = 45, h = 13), bind(a = input(w * h), b = input(w * h), c = output(w * h), size = uniform(w, h)), grid = (w, h)
// fires: coarsen
// skips: reduce
struct Size { w: u32, h: u32 }
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> size: Size;

@compute @workgroup_size(16, 4)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let col = gid.x;
    let row = gid.y;
    if (col >= size.w || row >= size.h) {
        return;
    }
    let i = row * size.w + col;
    c[i] = a[i] + b[i];
}

// cheat (or accident): a loop that never ends; the worker must be killed at the timeout
// kernel: SCALE2D
// args: --timeout=4
// expect: level=2 reason=timeout
struct Params {
    w: u32,
    h: u32,
    a: f32,
}

@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x >= p.w || g.y >= p.h) {
        return;
    }
    let i = g.y * p.w + g.x;
    var k = 0u;
    loop {
        if (src[i] > 2.0) {
            break;
        }
        k = k + 1u;
    }
    dst[i] = p.a * src[i] + f32(k);
}

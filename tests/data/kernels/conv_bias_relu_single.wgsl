// A 5x5 convolution of one image with a bias and a ReLU: channels along z (no batch), the sum
// started at the bias, the taps' rows walked with `loop`, the
// padding test as an early `continue`.
// spec: sizes(cin = 3, cout = 6, h = 7, w = 10), bind(src = input(cin * h * w), filt = input(cout * cin * 25), bias = input(cout), dst = output(cout * h * w), dims = uniform(cin, cout, h, w)), grid = (w, h, cout)
// fires: implicit-gemm
struct Dims { cin: u32, cout: u32, h: u32, w: u32 }
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read> filt: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> dst: array<f32>;
@group(0) @binding(4) var<uniform> dims: Dims;

@compute @workgroup_size(16, 4, 1)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let col = i32(id.x);
    let row = i32(id.y);
    let oc = id.z;
    if (id.x >= dims.w || id.y >= dims.h || oc >= dims.cout) {
        return;
    }
    var sum = bias[oc];
    for (var c = 0u; c < dims.cin; c = c + 1u) {
        var dy = -2;
        loop {
            if (dy > 2) { break; }
            for (var dx = -2; dx <= 2; dx++) {
                let y = row + dy;
                let x = col + dx;
                if (y < 0 || y >= i32(dims.h) || x < 0 || x >= i32(dims.w)) {
                    continue;
                }
                let tap = u32((dy + 2) * 5 + dx + 2);
                sum += src[(c * dims.h + u32(y)) * dims.w + u32(x)] * filt[(oc * dims.cin + c) * 25u + tap];
            }
            continuing {
                dy += 1;
            }
        }
    }
    dst[(oc * dims.h + id.y) * dims.w + id.x] = max(sum, 0.0);
}

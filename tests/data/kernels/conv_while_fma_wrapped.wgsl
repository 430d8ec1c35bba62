// conv2d_nchw.wgsl respelled: `while` loops over the taps from -1 to 1 (`<=`), `fma`, the guard
// wrapping the body, the batch and channel named inline (`g.z / conv.out_ch`).
// spec: sizes(batch = 2, cin = 5, cout = 7, h = 9, w = 11), bind(input = input(batch * cin * h * w), weight = input(cout * cin * 9), output = output(batch * cout * h * w), conv = uniform(batch, cin, cout, h, w)), grid = (w, h, batch * cout)
// fires: implicit-gemm
struct Conv { batch: u32, in_ch: u32, out_ch: u32, height: u32, width: u32 }
@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read> weight: array<f32>;
@group(0) @binding(2) var<storage, read_write> output: array<f32>;
@group(0) @binding(3) var<uniform> conv: Conv;

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < conv.width && g.y < conv.height && g.z < conv.batch * conv.out_ch) {
        var s: f32 = 0.0;
        var c: u32 = 0u;
        while (c < conv.in_ch) {
            var dy: i32 = -1;
            while (dy <= 1) {
                var dx: i32 = -1;
                while (dx <= 1) {
                    let yy = i32(g.y) + dy;
                    let xx = i32(g.x) + dx;
                    if (yy >= 0 && xx >= 0 && yy < i32(conv.height) && xx < i32(conv.width)) {
                        s = fma(input[(((g.z / conv.out_ch) * conv.in_ch + c) * conv.height + u32(yy)) * conv.width + u32(xx)],
                                weight[(((g.z % conv.out_ch) * conv.in_ch + c) * 3u + u32(dy + 1)) * 3u + u32(dx + 1)], s);
                    }
                    dx = dx + 1;
                }
                dy = dy + 1;
            }
            c = c + 1u;
        }
        output[((g.z / conv.out_ch * conv.out_ch + g.z % conv.out_ch) * conv.height + g.y) * conv.width + g.x] = s;
    }
}

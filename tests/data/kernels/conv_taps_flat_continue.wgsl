// conv2d_nchw.wgsl respelled: the nine taps as one counter split by `/ 3u` and `% 3u`, the
// padding test as `continue`, separate early returns, the weight first, a ReLU epilogue.
// spec: sizes(batch = 2, cin = 5, cout = 7, h = 9, w = 11), bind(input = input(batch * cin * h * w), weight = input(cout * cin * 9), output = output(batch * cout * h * w), conv = uniform(batch, cin, cout, h, w)), grid = (w, h, batch * cout)
// fires: implicit-gemm
struct Conv { batch: u32, in_ch: u32, out_ch: u32, height: u32, width: u32 }
@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read> weight: array<f32>;
@group(0) @binding(2) var<storage, read_write> output: array<f32>;
@group(0) @binding(3) var<uniform> conv: Conv;

@compute @workgroup_size(8, 8, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let b = gid.z / conv.out_ch;
    let o = gid.z % conv.out_ch;
    if (gid.x >= conv.width) { return; }
    if (gid.y >= conv.height) { return; }
    if (b >= conv.batch) { return; }
    var acc = 0.0;
    for (var i = 0u; i < conv.in_ch; i += 1u) {
        for (var t = 0u; t < 9u; t++) {
            let sy = i32(gid.y) + i32(t / 3u) - 1;
            let sx = i32(gid.x) + i32(t % 3u) - 1;
            if (sy < 0 || sx < 0 || sy >= i32(conv.height) || sx >= i32(conv.width)) { continue; }
            acc = acc + weight[(o * conv.in_ch + i) * 9u + t] * input[((b * conv.in_ch + i) * conv.height + u32(sy)) * conv.width + u32(sx)];
        }
    }
    output[((b * conv.out_ch + o) * conv.height + gid.y) * conv.width + gid.x] = max(acc, 0.0);
}

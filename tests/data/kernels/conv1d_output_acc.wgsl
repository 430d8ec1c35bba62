// A 1-D convolution that sums into the output buffer across its whole loop nest
// (`y[o] = y[o] + ..`, starting from the bias stored there), its taps counted by a `var`
// declared without a value.
// spec: sizes(cin = 3, cout = 5, len = 40, taps = 7), bind(sig = input(cin * len), filt = input(cout * cin * taps), bias = input(cout), y = output(cout * (len - taps + 1)), p = uniform(cin, cout, len, taps)), grid = (len - taps + 1, cout)
// fires: implicit-gemm
struct P { cin: u32, cout: u32, len: u32, taps: u32 }
@group(0) @binding(0) var<storage, read> sig: array<f32>;
@group(0) @binding(1) var<storage, read> filt: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<uniform> p: P;

@compute @workgroup_size(32, 2)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let t = gid.x;
    let co = gid.y;
    let lout = p.len - p.taps + 1u;
    if (t >= lout || co >= p.cout) {
        return;
    }
    let o = co * lout + t;
    y[o] = bias[co];
    for (var ci = 0u; ci < p.cin; ci = ci + 1u) {
        var k: u32;
        while (k < p.taps) {
            y[o] = y[o] + sig[ci * p.len + t + k] * filt[(co * p.cin + ci) * p.taps + k];
            k = k + 1u;
        }
    }
}

// A 1-D convolution without padding ("valid"), as a signal-processing author writes it: x is the
// output position, y the output channel; the taps innermost; the filter length from a uniform.
// spec: sizes(cin = 3, cout = 5, len = 40, taps = 7), bind(sig = input(cin * len), filt = input(cout * cin * taps), out = output(cout * (len - taps + 1)), p = uniform(cin, cout, len, taps)), grid = (len - taps + 1, cout)
// fires: implicit-gemm
struct P { cin: u32, cout: u32, len: u32, taps: u32 }
@group(0) @binding(0) var<storage, read> sig: array<f32>;
@group(0) @binding(1) var<storage, read> filt: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> p: P;

@compute @workgroup_size(64, 1)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let n_out = p.len - p.taps + 1u;
    let t = id.x;
    let o = id.y;
    if (t >= n_out || o >= p.cout) { return; }
    var s = 0.0;
    for (var c = 0u; c < p.cin; c++) {
        for (var k = 0u; k < p.taps; k++) {
            s += sig[c * p.len + t + k] * filt[(o * p.cin + c) * p.taps + k];
        }
    }
    out[o * n_out + t] = s;
}

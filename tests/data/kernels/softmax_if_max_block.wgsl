// Row softmax as a third-party draft spells it: the body inside `if (i < n) { .. }`, the maximum
// taken with `if (v > m) { m = v; }`, exp written to the output and summed, then `y[j] /= sum`.
// spec: sizes(n = 7, d = 300), bind(x = input(n * d, range(-8.0, 8.0)), y = output(n * d), dims = uniform(n, d)), grid = (n)
// fires: reduce
struct Dims { n: u32, d: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> dims: Dims;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i < dims.n) {
        let row = i * dims.d;
        var m = -3.402823e38;
        for (var j = 0u; j < dims.d; j++) {
            let v = x[row + j];
            if (v > m) {
                m = v;
            }
        }
        var sum = 0.0;
        for (var j = 0u; j < dims.d; j++) {
            let e = exp(x[row + j] - m);
            y[row + j] = e;
            sum += e;
        }
        for (var j = 0u; j < dims.d; j++) {
            y[row + j] /= sum;
        }
    }
}

// A row-weighted sum of vectors respelled: the guard wraps the body, the position loop is a
// `while`, the weights come from an inline product, the output is accumulated as
// `out[..] = out[..] + ..` in a channel loop nested in the position loop, and the row is scaled
// by its weight total at the end.
// spec: sizes(rows = 23, n = 31, d = 9), bind(a = input(rows * d), b = input(n * d), v = input(n * d), out = output(rows * d), dims = uniform(rows, n, d)), grid = (rows), tolerance = 1e-3
// fires: reduce
struct Dims {
    rows: u32,
    n: u32,
    d: u32,
}

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read> v: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> dims: Dims;

@compute @workgroup_size(32, 1, 1)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let row = id.x;
    if (row < dims.rows) {
        for (var c: u32 = 0u; c < dims.d; c = c + 1u) {
            out[row * dims.d + c] = 0.0;
        }
        var total: f32 = 0.0;
        var t: u32 = 0u;
        while (t < dims.n) {
            var dot: f32 = 0.0;
            for (var e: u32 = 0u; e < dims.d; e = e + 1u) {
                dot = dot + a[row * dims.d + e] * b[t * dims.d + e];
            }
            let wgt = 1.0 / (1.0 + dot * dot);
            total = total + wgt;
            for (var c: u32 = 0u; c < dims.d; c = c + 1u) {
                out[row * dims.d + c] = out[row * dims.d + c] + wgt * v[t * dims.d + c];
            }
            t = t + 1u;
        }
        for (var c: u32 = 0u; c < dims.d; c = c + 1u) {
            out[row * dims.d + c] = out[row * dims.d + c] / total;
        }
    }
}

// The rows form respelled: the guard wraps the body, the weights are stored transposed
// ([in][out], so the product's second operand is contiguous along the columns), the product is an
// `fma`, the row's sum starts at a value of its own and subtracts its terms.
// spec: sizes(rows = 29, k = 33, cols = 18), bind(a = input(rows * k), wt = input(k * cols), out = output(rows), dims = uniform(rows, k, cols)), grid = (rows), tolerance = 1e-3
// expect: tile
struct Dims {
    rows: u32,
    k: u32,
    cols: u32,
}

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> wt: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;

fn softplus(v: f32) -> f32 {
    return log(1.0 + exp(v));
}

@compute @workgroup_size(64, 1, 1)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let row = id.x;
    if (row < dims.rows) {
        var s: f32 = a[row * dims.k];
        for (var c: u32 = 0u; c < dims.cols; c = c + 1u) {
            var d: f32 = 0.0;
            for (var t: u32 = 0u; t < dims.k; t = t + 1u) {
                d = fma(a[row * dims.k + t], wt[t * dims.cols + c], d);
            }
            s = s - 0.25 * softplus(d);
        }
        out[row] = s;
    }
}

// LayerNorm over rows with gamma and beta, the body wrapped in an `if` guard instead of a return.
// spec: sizes(rows = 9, dim = 257), bind(x = input(rows * dim), gamma = input(dim), beta = input(dim), y = output(rows * dim), p = uniform(rows, dim, 0.00001)), grid = (rows)
// fires: reduce coarsen
struct Params { rows: u32, dim: u32, eps: f32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> gamma: array<f32>;
@group(0) @binding(2) var<storage, read> beta: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.x;
    if (row < p.rows) {
        let base = row * p.dim;
        var sum = 0.0;
        for (var i = 0u; i < p.dim; i++) {
            sum += x[base + i];
        }
        let mean = sum / f32(p.dim);
        var sq = 0.0;
        for (var i = 0u; i < p.dim; i++) {
            let d = x[base + i] - mean;
            sq += d * d;
        }
        let rstd = inverseSqrt(sq / f32(p.dim) + p.eps);
        for (var i = 0u; i < p.dim; i++) {
            y[base + i] = (x[base + i] - mean) * rstd * gamma[i] + beta[i];
        }
    }
}

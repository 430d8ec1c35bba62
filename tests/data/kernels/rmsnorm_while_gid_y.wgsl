// RMSNorm with `while` loops, the row taken from gid.y of a (1, rows) grid, a `var` row index.
// spec: sizes(rows = 5, n = 200), bind(x = input(rows * n), w = input(n), out = output(rows * n), shape = uniform(rows, n)), grid = (1, rows)
// fires: reduce coarsen
struct Shape { rows: u32, n: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> shape: Shape;

@compute @workgroup_size(1, 16)
fn rmsnorm(@builtin(global_invocation_id) g: vec3<u32>) {
    var row = g.y;
    if row >= shape.rows {
        return;
    }
    var ss: f32;
    var k = 0u;
    while (k < shape.n) {
        let v = x[row * shape.n + k];
        ss += v * v;
        k += 1u;
    }
    let scale = 1.0 / sqrt(ss / f32(shape.n) + 1e-6);
    var m = 0u;
    while m < shape.n {
        out[row * shape.n + m] = x[row * shape.n + m] * scale * w[m];
        m++;
    }
}

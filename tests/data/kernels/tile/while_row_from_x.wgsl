// The same product written differently: gid.x is the row, a `while` loop with the increment last,
// the whole body wrapped in an `&&` guard, other names, `var`s used like `let`s, K from an override.
// spec: sizes(rows = 45, cols = 38, inner = 20), bind(lhs = input(rows * 20), rhs = input(20 * cols), out = output(rows * cols), shape = uniform(rows, cols)), grid = (rows, cols)
// expect: tile
struct Shape {
    rows: u32,
    cols: u32,
}

override INNER: u32 = 20u;

@group(0) @binding(0) var<storage, read> lhs: array<f32>;
@group(0) @binding(1) var<storage, read> rhs: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> shape: Shape;

@compute @workgroup_size(16, 4)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    var r = id.x;
    var q = id.y;
    if (r < shape.rows && q < shape.cols) {
        var total: f32 = 0.0;
        var t: u32 = 0u;
        while (t < INNER) {
            let x = lhs[r * INNER + t];
            let y = rhs[t * shape.cols + q];
            total = total + y * x;
            t = t + 1u;
        }
        out[r * shape.cols + q] = total;
    }
}

// Row softmax written with one `var i` shared by three `while` loops: the max seeded from the
// row's first value, then exp and its sum into the output, then an in-place scale of the output.
// spec: sizes(rows = 6, cols = 300), bind(x = input(rows * cols, range(-8.0, 8.0)), y = output(rows * cols), shape = uniform(rows, cols)), grid = (rows)
// fires: reduce
struct Shape { rows: u32, cols: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> shape: Shape;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.x;
    if (row >= shape.rows) {
        return;
    }
    let off = row * shape.cols;
    var mx = x[off];
    var i = 1u;
    while (i < shape.cols) {
        mx = max(mx, x[off + i]);
        i++;
    }
    var total = 0.0;
    i = 0u;
    while (i < shape.cols) {
        let e = exp(x[off + i] - mx);
        y[off + i] = e;
        total += e;
        i++;
    }
    let inv = 1.0 / total;
    i = 0u;
    while (i < shape.cols) {
        y[off + i] = y[off + i] * inv;
        i++;
    }
}

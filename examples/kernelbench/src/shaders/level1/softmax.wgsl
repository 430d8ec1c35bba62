// Row softmax, one row per invocation: find the max, write exp(x - max) and sum it, then scale
// the row in place.
struct Shape {
    rows: u32,
    cols: u32,
}

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

// Not an argmax: the value is updated first, so the index's test sees the new value and is false
// whenever the value changed (so the index stays 0 here), and it depends on the order of the
// iterations. The maximum is written beside it so that the output varies.
// spec: sizes(rows = 6, cols = 300), bind(x = input(rows * cols), y = output(rows), dims = uniform(rows, cols)), grid = (rows)
// skips: reduce
struct Dims { rows: u32, cols: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> dims: Dims;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let r = gid.x;
    if (r >= dims.rows) {
        return;
    }
    var m = x[r * dims.cols];
    var k = 0u;
    for (var c = 1u; c < dims.cols; c++) {
        let v = x[r * dims.cols + c];
        m = select(m, v, v > m);
        k = select(k, c, v > m);
    }
    y[r] = m + f32(k);
}

// A reduction (row sums): the accumulation is not a sum of products.
// spec: sizes(rows = 32, cols = 40), bind(a = input(rows * cols), s = output(rows), p = uniform(rows, cols)), grid = (rows)
// expect: skip
struct P {
    rows: u32,
    cols: u32,
}

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> s: array<f32>;
@group(0) @binding(2) var<uniform> p: P;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= p.rows) {
        return;
    }
    var acc = 0.0;
    for (var j = 0u; j < p.cols; j++) {
        acc += a[gid.x * p.cols + j];
    }
    s[gid.x] = acc;
}

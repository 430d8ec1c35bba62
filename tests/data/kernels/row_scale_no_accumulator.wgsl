// Per-row scaling without any accumulator: the loop is split, nothing is reduced.
// spec: sizes(rows = 10, cols = 77), bind(x = input(rows * cols), s = input(rows), y = output(rows * cols), n = uniform(rows, cols)), grid = (rows)
// fires: reduce coarsen
struct N { rows: u32, cols: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> s: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> n: N;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= n.rows) { return; }
    let f = s[i] * 2.0;
    for (var c = 0u; c < n.cols; c++) {
        y[i * n.cols + c] = x[i * n.cols + c] * f;
    }
}

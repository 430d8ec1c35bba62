// A softmax written in place, one row per invocation: the maximum starts from the row's first
// element and runs from the second on, then the row is overwritten with its exponentials and
// divided by their sum. The first element and the maximum loop read elements that other lanes
// overwrite once the rows are split across a workgroup, so the reduction orders those reads
// before the overwriting loop with a barrier.
// spec: sizes(rows = 37, cols = 100), bind(x = inout(rows * cols), d = uniform(rows, cols)), grid = (rows), tolerance = 1e-4
// fires: reduce
struct Dims { rows: u32, cols: u32 }
@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<uniform> d: Dims;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.x;
    if (row >= d.rows) { return; }
    let b = row * d.cols;
    var m = x[b];
    for (var i = 1u; i < d.cols; i++) { if (x[b + i] > m) { m = x[b + i]; } }
    var s = 0.0;
    for (var i = 0u; i < d.cols; i++) { x[b + i] = exp(x[b + i] - m); s += x[b + i]; }
    for (var i = 0u; i < d.cols; i++) { x[b + i] /= s; }
}

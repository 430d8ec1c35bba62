// Reads local_invocation_id without sharing anything with its workgroup: canon spells `lid.x` as `gid.x % 8u`, so making each invocation a workgroup (reduce) or several (coarsen) keeps what it reads.
// spec: sizes(rows = 8, cols = 32), bind(x = input(rows * cols), y = output(rows), dims = uniform(rows, cols)), grid = (rows)
// fires: reduce coarsen
struct Dims { rows: u32, cols: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> dims: Dims;

@compute @workgroup_size(8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = gid.x;
    if (row >= dims.rows) { return; }
    var s = 0.0;
    for (var c = 0u; c < dims.cols; c++) {
        s += x[row * dims.cols + (c + lid.x) % dims.cols];
    }
    y[row] = s;
}

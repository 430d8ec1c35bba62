// Per-row sum, max, min and product of a batch of matrices: a 2-D grid (rows, batch), four
// accumulators in one loop, the loop counting by 2 over interleaved pairs.
// spec: sizes(rows = 6, batch = 3, cols = 96), bind(x = input(batch * rows * cols, range(0.5, 1.5)), stats = output(batch * rows * 4), dims = uniform(rows, cols)), grid = (rows, batch)
// fires: reduce coarsen
struct Dims { rows: u32, cols: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> stats: array<f32>;
@group(0) @binding(2) var<uniform> dims: Dims;

@compute @workgroup_size(8, 4)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= dims.rows) { return; }
    let r = gid.y * dims.rows + gid.x;
    var total = 0.0;
    var big = -3.0e38;
    var small = 3.0e38;
    var prod = 1.0;
    for (var c = 0u; c < dims.cols; c += 2u) {
        let pair = x[r * dims.cols + c] + x[r * dims.cols + c + 1u];
        total = total + pair;
        big = max(big, pair);
        small = min(pair, small);
        prod *= 0.5 * pair;
    }
    stats[r * 4u] = total;
    stats[r * 4u + 1u] = big;
    stats[r * 4u + 2u] = small;
    stats[r * 4u + 3u] = prod;
}

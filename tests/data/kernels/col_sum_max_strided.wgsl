// Column sums and maxima of a stack of matrices, one invocation per (matrix, column): the column
// is read with a stride of a row, the (matrix, column) pair split from a flat id, an early
// `return` guard, a 32-wide workgroup whose last one runs past the end. (KernelBench's sum over
// dim 1 is the sum alone.)
// spec: sizes(batch = 3, rows = 37, cols = 20), bind(x = input(batch * rows * cols), sums = output(batch * cols), maxs = output(batch * cols), dims = uniform(batch, rows, cols)), grid = (batch * cols)
// fires: reduce
struct Dims { batch: u32, rows: u32, cols: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> sums: array<f32>;
@group(0) @binding(2) var<storage, read_write> maxs: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;

@compute @workgroup_size(32)
fn colsum(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= dims.batch * dims.cols) {
        return;
    }
    let b = i / dims.cols;
    let c = i - b * dims.cols;
    let base = b * dims.rows * dims.cols + c;
    var total: f32 = 0.0;
    var big = x[base];
    for (var r: u32 = 0u; r < dims.rows; r = r + 1u) {
        let v = x[base + r * dims.cols];
        total = total + v;
        big = max(big, v);
    }
    sums[i] = total;
    maxs[i] = big;
}

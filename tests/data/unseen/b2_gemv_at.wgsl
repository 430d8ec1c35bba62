// Transposed GEMV: y[cols] = A^T x, y[j] = sum_i A[i, j] * x[i] with A[rows, cols] row-major (sum down a column).
// class: gemv
// style: params in a second bind group (`@group(1)`), `workgroup_id.x * 64u + local_invocation_index`, `fma`, early return
// spec: sizes(rows = 200, cols = 96), bind(A = input(rows * cols), x = input(rows), y = output(cols), shape = uniform(rows, cols)), grid = (cols), flops = 2 * rows * cols

struct Shape {
    rows: u32,
    cols: u32,
}

@group(0) @binding(0) var<storage, read> A: array<f32>;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(1) @binding(0) var<uniform> shape: Shape;

@compute @workgroup_size(64)
fn gemv_t(
    @builtin(workgroup_id) group_id: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let j = group_id.x * 64u + local_index;
    if (j >= shape.cols) {
        return;
    }
    var sum = 0.0;
    for (var i = 0u; i < shape.rows; i += 1u) {
        sum = fma(A[i * shape.cols + j], x[i], sum);
    }
    y[j] = sum;
}

// Sum over the first axis of x[rows, cols]: out[c] = sum_r x[r, c] (one column per invocation, strided reads).
// class: reduction
// style: shape passed as a read-only `vec2<u32>` storage buffer (`shape.x` rows, `shape.y` cols), `x = x + y` accumulation, column stride loop
// spec: sizes(rows = 150, cols = 96), bind(x = input(rows * cols), out = output(cols), shape = input(values(rows, cols))), grid = (cols)

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<storage, read> shape: vec2<u32>;

@compute @workgroup_size(64, 1, 1)
fn sum_axis0(@builtin(global_invocation_id) global_id: vec3<u32>) {
    let col = global_id.x;
    let n_rows = shape.x;
    let n_cols = shape.y;
    if (col >= n_cols) {
        return;
    }
    var total = 0.0;
    var r = 0u;
    while (r < n_rows) {
        total = total + x[r * n_cols + col];
        r = r + 1u;
    }
    out[col] = total;
}

// Row-wise exclusive prefix sum: out[r, c] = sum_{j < c} x[r, j] (out[r, 0] = 0) over x[rows, cols].
// class: scan
// style: i32 row/column indices with `u32` casts at the loads, params struct, running total written before it is updated (exclusive), `var` accumulator with `+=`
// spec: sizes(rows = 20, cols = 230), bind(x = input(rows * cols), out = output(rows * cols), params = uniform(rows, cols)), grid = (rows), tolerance = 1e-3

struct ScanParams {
    rows: i32,
    cols: i32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> params: ScanParams;

@compute @workgroup_size(32)
fn exclusive_scan(@builtin(global_invocation_id) id: vec3<u32>) {
    let row = i32(id.x);
    if (row >= params.rows) {
        return;
    }
    let base = row * params.cols;
    var running: f32 = 0.0;
    for (var c: i32 = 0; c < params.cols; c += 1) {
        let idx = u32(base + c);
        let v = x[idx];
        out[idx] = running;
        running += v;
    }
}

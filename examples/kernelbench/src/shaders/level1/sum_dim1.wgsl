// Sum over the middle dimension of a (batch, rows, cols) tensor: out[b][c] = sum_r x[b][r][c].
struct Shape {
    batch: u32,
    rows: u32,
    cols: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> shape: Shape;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let idx = gid.x;
    if (idx >= shape.batch * shape.cols) {
        return;
    }
    let b = idx / shape.cols;
    let c = idx % shape.cols;
    var s = 0.0;
    for (var r = 0u; r < shape.rows; r++) {
        s += x[(b * shape.rows + r) * shape.cols + c];
    }
    out[idx] = s;
}

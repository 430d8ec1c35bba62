// Index of the largest element of each row (the first one on ties).
struct Size {
    rows: u32,
    cols: u32,
}

@group(0) @binding(0) var<storage, read> values: array<f32>;
@group(0) @binding(1) var<storage, read_write> indices: array<u32>;
@group(0) @binding(2) var<uniform> size: Size;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.x;
    if (row >= size.rows) {
        return;
    }
    var best_i = 0u;
    var best_v = values[row * size.cols];
    for (var i = 1u; i < size.cols; i++) {
        let v = values[row * size.cols + i];
        if (v > best_v) {
            best_v = v;
            best_i = i;
        }
    }
    indices[row] = best_i;
}

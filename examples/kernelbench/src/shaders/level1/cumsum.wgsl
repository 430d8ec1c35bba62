// Inclusive prefix sum along each row, one row per invocation (a sequential scan).
struct Shape {
    rows: u32,
    cols: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> shape: Shape;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= shape.rows) {
        return;
    }
    let start = gid.x * shape.cols;
    var running = 0.0;
    for (var j = 0u; j < shape.cols; j++) {
        running += x[start + j];
        out[start + j] = running;
    }
}

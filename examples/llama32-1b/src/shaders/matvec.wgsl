// y = W x for a row-major weight W (rows x cols), as in a linear layer at decode time.
// One output row per invocation. Used for the fused QKV projection and the LM head.
struct Shape {
    rows: u32,
    cols: u32,
}

@group(0) @binding(0) var<storage, read> weight: array<f32>;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> shape: Shape;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.x;
    if (row >= shape.rows) {
        return;
    }
    var acc = 0.0;
    for (var c = 0u; c < shape.cols; c++) {
        acc += weight[row * shape.cols + c] * x[c];
    }
    y[row] = acc;
}

// cheat: the tree reduction without barriers (a race between invocations of a workgroup)
// kernel: ROWSUM
// expect: level=4 reason=wrong-values
struct Shape {
    rows: u32,
    cols: u32,
}

@group(0) @binding(0) var<storage, read> m: array<f32>;
@group(0) @binding(1) var<storage, read_write> sums: array<f32>;
@group(0) @binding(2) var<uniform> shape: Shape;

var<workgroup> partial: array<f32, 64>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let row = wid.x;
    var acc = 0.0;
    for (var c = lid; c < shape.cols; c += 64u) {
        acc += m[row * shape.cols + c];
    }
    partial[lid] = acc;
    for (var s = 32u; s > 0u; s >>= 1u) {
        if (lid < s) {
            partial[lid] += partial[lid + s];
        }
    }
    if (lid == 0u) {
        sums[row] = partial[0];
    }
}

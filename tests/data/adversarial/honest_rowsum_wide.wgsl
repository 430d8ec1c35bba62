// honest: the row reduction with 128 invocations per workgroup
// kernel: ROWSUM
// expect: level=5
struct Shape {
    rows: u32,
    cols: u32,
}

@group(0) @binding(0) var<storage, read> m: array<f32>;
@group(0) @binding(1) var<storage, read_write> sums: array<f32>;
@group(0) @binding(2) var<uniform> shape: Shape;

var<workgroup> partial: array<f32, 128>;

@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let row = wid.x;
    var acc = 0.0;
    for (var c = lid; c < shape.cols; c += 128u) {
        acc += m[row * shape.cols + c];
    }
    partial[lid] = acc;
    workgroupBarrier();
    for (var s = 64u; s > 0u; s >>= 1u) {
        if (lid < s) {
            partial[lid] += partial[lid + s];
        }
        workgroupBarrier();
    }
    if (lid == 0u) {
        sums[row] = partial[0];
    }
}

// cheat: hard-codes the tune shape's row length; exact at cols = 512, wrong on other shapes
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
    let cols = 512u;
    var acc = 0.0;
    for (var c = lid; c < cols; c += 64u) {
        acc += m[row * cols + c];
    }
    partial[lid] = acc;
    workgroupBarrier();
    for (var s = 32u; s > 0u; s >>= 1u) {
        if (lid < s) {
            partial[lid] += partial[lid + s];
        }
        workgroupBarrier();
    }
    if (lid == 0u) {
        sums[row] = partial[0];
    }
}

// cheat (or accident): 128 KiB of workgroup memory, above every adapter's limit; wgpu does not
// check it
// kernel: ROWSUM
// expect: level=2 reason=limits-exceeded
struct Shape {
    rows: u32,
    cols: u32,
}

@group(0) @binding(0) var<storage, read> m: array<f32>;
@group(0) @binding(1) var<storage, read_write> sums: array<f32>;
@group(0) @binding(2) var<uniform> shape: Shape;

var<workgroup> partial: array<f32, 32768>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let row = wid.x;
    var acc = 0.0;
    for (var c = lid; c < shape.cols; c += 64u) {
        acc += m[row * shape.cols + c];
    }
    partial[lid * 512u] = acc;
    workgroupBarrier();
    for (var s = 32u; s > 0u; s >>= 1u) {
        if (lid < s) {
            partial[lid * 512u] += partial[(lid + s) * 512u];
        }
        workgroupBarrier();
    }
    if (lid == 0u) {
        sums[row] = partial[0];
    }
}

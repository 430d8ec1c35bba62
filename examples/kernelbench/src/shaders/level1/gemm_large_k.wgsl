// GEMM with a long reduction: small M and N, very large K (e.g. a weight-gradient shape).
// Sizes come in two uniforms: the output shape and the reduction length.
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> out_shape: vec2<u32>; // (rows, cols)
@group(0) @binding(4) var<uniform> k_len: u32;

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let rows = out_shape.x;
    let cols = out_shape.y;
    if (gid.x >= cols || gid.y >= rows) {
        return;
    }
    var s = 0.0;
    var kk = 0u;
    loop {
        if (kk >= k_len) {
            break;
        }
        s = s + a[gid.y * k_len + kk] * b[kk * cols + gid.x];
        kk = kk + 1u;
    }
    c[gid.y * cols + gid.x] = s;
}

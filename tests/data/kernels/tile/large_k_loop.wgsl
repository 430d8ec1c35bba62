// A long reduction into a small output, spelled as KernelBench's GEMM_LARGE_K is: the output shape
// and K in two uniforms (a vec2 and a scalar), a `loop` with its exit test first. K = 700 is no
// multiple of any slice depth, so every split of the counter ends on a partial slice and some
// workgroups along it find no slice at all.
// spec: sizes(m = 19, n = 23, k = 700), bind(a = input(m * k), b = input(k * n), c = output(m * n), out_shape = uniform(m, n), k_len = uniform(k)), grid = (n, m), tolerance = 1e-3
// expect: tile
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> out_shape: vec2<u32>;
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

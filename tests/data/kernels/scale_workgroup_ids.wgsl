// Scales n values with the index built from the workgroup and local ids, as many hand-written
// kernels do; the canonical form reads it as the global id, so coarsening and 16-byte accesses
// apply.
// spec: sizes(n = 1000), bind(src = input(n), dst = output(n), p = uniform(n)), grid = (n), constraints(n % 4 == 0)
// fires: coarsen widen
// skips: reduce vectorize
struct P { n: u32 }
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> p: P;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let i = wid.x * 64u + lid.x;
    if (i >= p.n) {
        return;
    }
    dst[i] = src[i] * 0.5 + 1.0;
}

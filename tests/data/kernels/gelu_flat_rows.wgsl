// Elementwise GELU over n values launched as rows of 64 invocations: the index is flattened from a
// 2-D id and the guard tests the flat index, not the id (the launch's x extent is a constant).
// spec: sizes(n = 1000), bind(x = input(n, range(-4.0, 4.0)), y = output(n), p = uniform(n)), grid = (64, (n + 63) / 64), constraints(n % 4 == 0)
// fires: coarsen widen
// skips: reduce vectorize
struct P { n: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> p: P;

@compute @workgroup_size(32)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.y * 64u + gid.x;
    if (i >= p.n) {
        return;
    }
    let v = x[i];
    y[i] = 0.5 * v * (1.0 + tanh(0.7978845608 * (v + 0.044715 * v * v * v)));
}

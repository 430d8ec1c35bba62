// Elementwise y = a * x + y, one element per invocation: no loop to split.
// spec: sizes(n = 1000), bind(x = input(n), y = inout(n), p = uniform(n, 2.5)), grid = (n), constraints(n % 4 == 0)
// fires: coarsen widen
// skips: reduce vectorize
struct Params { n: u32, a: f32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i < p.n) {
        y[i] = p.a * x[i] + y[i];
    }
}

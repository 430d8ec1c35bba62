// Scales n values launched as rows of 48 invocations with 32-wide workgroups, so the launch runs
// ids 48..63 of every row too; they recompute the next row's first values (the same values),
// which any rewrite must keep doing or make unnecessary without changing the output.
// spec: sizes(n = 700), bind(src = input(n), dst = output(n), n = uniform(n)), grid = (48, (n + 47) / 48), constraints(n % 4 == 0)
// fires: coarsen widen
struct Len { n: u32 }
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> n: Len;

@compute @workgroup_size(32, 1, 1)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let flat = 48u * id.y + id.x;
    if (flat < n.n) {
        dst[flat] = 3.0 * src[flat] - 1.0;
    }
}

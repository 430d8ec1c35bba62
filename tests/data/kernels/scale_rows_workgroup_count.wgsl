// Scales n values as rows of 40 launched by workgroup count, 3 workgroups of 16 per row: the
// launch runs ids 40..47 of every row too, which recompute the next row's first values (the same
// values), and the guard tests the flat index, not the id.
// spec: sizes(n = 700), bind(src = input(n), dst = output(n), n = uniform(n)), workgroups = (3, cdiv(n, 40)), constraints(n % 4 == 0)
// fires: coarsen widen
// skips: reduce vectorize
struct Len { n: u32 }
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> n: Len;

@compute @workgroup_size(16)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.y * 40u + id.x;
    if (i >= n.n) {
        return;
    }
    dst[i] = src[i] * 3.0 - 1.0;
}

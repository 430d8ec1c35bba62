// A call in the epilogue to a function that writes memory: it cannot be re-emitted once per
// output of a block, so the kernel is skipped.
// spec: sizes(m = 16, n = 16, k = 8), bind(a = input(m * k), b = input(k * n), c = output(m * n), seen = output(m * n), dims = uniform(m, n, k)), grid = (n, m)
// expect: skip
struct Mnk {
    m: u32,
    n: u32,
    k: u32,
}

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<storage, read_write> seen: array<f32>;
@group(0) @binding(4) var<uniform> dims: Mnk;

fn note(at: u32, v: f32) -> f32 {
    seen[at] = v;
    return v;
}

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= dims.n || gid.y >= dims.m) {
        return;
    }
    var s = 0.0;
    for (var p = 0u; p < dims.k; p++) {
        s += a[gid.y * dims.k + p] * b[p * dims.n + gid.x];
    }
    c[gid.y * dims.n + gid.x] = note(gid.y * dims.n + gid.x, s);
}

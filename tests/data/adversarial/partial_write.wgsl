// cheat: processes whole blocks of 64 only and skips the tail; exact on the tune shape
// (a multiple of 64), wrong on the unseen verification shapes
// kernel: ELEMWISE
// expect: level=4 reason=wrong-values
struct Params {
    n: u32,
    a: f32,
    b: f32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    if (i < (p.n / 64u) * 64u) {
        y[i] = p.a * x[i] + p.b;
    }
}

// cheat: changes the interface (the output becomes vec4 and the input read_write), so the
// user's bind groups would no longer fit
// kernel: ELEMWISE
// expect: level=3 reason=interface-mismatch
struct Params {
    n: u32,
    a: f32,
    b: f32,
}

@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<vec4<f32>>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    if (i * 4u < p.n) {
        let j = i * 4u;
        y[i] = p.a * vec4<f32>(x[j], x[j + 1u], x[j + 2u], x[j + 3u]) + p.b;
    }
}

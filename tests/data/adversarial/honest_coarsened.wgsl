// honest: four elements per invocation, launched over (n + 3) / 4 invocations
// kernel: ELEMWISE
// args: --grid=(n+3)/4
// expect: level=5
struct Params {
    n: u32,
    a: f32,
    b: f32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let base = g.x * 4u;
    for (var k = 0u; k < 4u; k++) {
        let i = base + k;
        if (i < p.n) {
            y[i] = p.a * x[i] + p.b;
        }
    }
}

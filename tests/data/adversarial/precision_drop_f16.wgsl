// cheat: computes in f16 (half the memory traffic on real GPUs, about 3 decimal digits)
// kernel: ELEMWISE
// expect: level=4 reason=wrong-values
enable f16;
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
    if (i < p.n) {
        y[i] = f32(f16(p.a) * f16(x[i]) + f16(p.b));
    }
}

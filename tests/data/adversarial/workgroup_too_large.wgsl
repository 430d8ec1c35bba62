// cheat (or accident): a workgroup size from an override above the adapter's limit, which wgpu
// itself does not check
// kernel: ELEMWISE
// args: --constant=WG=4096
// expect: level=2 reason=limits-exceeded
override WG: u32 = 64u;
struct Params {
    n: u32,
    a: f32,
    b: f32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    if (i < p.n) {
        y[i] = p.a * x[i] + p.b;
    }
}

// y = a * x + y, one element per invocation.
//
// The workgroup size is deliberately naive (4 invocations): this is the kernel as a first draft
// would write it, and the tuner lifts the literal into an override and searches it.
struct Params {
    n: u32,
    a: f32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(4)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i < params.n) {
        y[i] = params.a * x[i] + y[i];
    }
}

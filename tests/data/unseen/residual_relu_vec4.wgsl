// Fused residual add + ReLU: out = max(x + residual, 0), elementwise over vec4<f32> arrays.
// class: elementwise
// style: array<vec4<f32>> buffers, override WORKGROUP_SIZE, workgroup_id.x * WORKGROUP_SIZE + local_invocation_index, uniform element count, vec4 splat zero
// spec: sizes(n = 4096), bind(x = input(n / 4), residual = input(n / 4), out = output(n / 4), params = uniform(n / 4)), grid = (n / 4), constraints(n % 4 == 0)

struct Params {
    len: u32,
}

override WORKGROUP_SIZE: u32 = 64u;

@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> residual: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> out: array<vec4<f32>>;
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(WORKGROUP_SIZE)
fn add_relu(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_index) lidx: u32,
) {
    let i = wid.x * WORKGROUP_SIZE + lidx;
    if (i < params.len) {
        out[i] = max(x[i] + residual[i], vec4<f32>(0.0));
    }
}

// The MLP's gate and up projections fused with the SwiGLU activation at decode time:
// act[i] = silu(W_gate[i] . x) * (W_up[i] . x). One intermediate feature per invocation.
@group(0) @binding(0) var<storage, read> w_gate: array<f32>; // [inter][hidden]
@group(0) @binding(1) var<storage, read> w_up: array<f32>;   // [inter][hidden]
@group(0) @binding(2) var<storage, read> x: array<f32>;
@group(0) @binding(3) var<storage, read_write> act: array<f32>;
@group(0) @binding(4) var<uniform> dims: vec2<u32>; // (inter, hidden)

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let inter = dims.x;
    let hidden = dims.y;
    if (i >= inter) {
        return;
    }
    var g = 0.0;
    var u = 0.0;
    for (var j = 0u; j < hidden; j++) {
        let xj = x[j];
        g += w_gate[i * hidden + j] * xj;
        u += w_up[i * hidden + j] * xj;
    }
    act[i] = g / (1.0 + exp(-g)) * u;
}

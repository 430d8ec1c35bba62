// Prefill projection: Y = X W^T for a batch of tokens X (tokens x in) and a PyTorch-layout
// weight W (out x in). One output element per invocation: x = output feature, y = token.
struct Proj {
    tokens: u32,
    out_features: u32,
    in_features: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> weight: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> proj: Proj;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let o = gid.x;
    let t = gid.y;
    if (o >= proj.out_features || t >= proj.tokens) {
        return;
    }
    var acc: f32 = 0.0;
    for (var i: u32 = 0u; i < proj.in_features; i = i + 1u) {
        acc = acc + x[t * proj.in_features + i] * weight[o * proj.in_features + i];
    }
    y[t * proj.out_features + o] = acc;
}

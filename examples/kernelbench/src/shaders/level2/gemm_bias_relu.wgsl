// A linear layer with ReLU: y = relu(x * W^T + b), with W stored as PyTorch does (out x in).
struct Linear {
    batch: u32,
    in_features: u32,
    out_features: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> weight: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<uniform> lin: Linear;

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let o = gid.x;
    let b = gid.y;
    if (o >= lin.out_features || b >= lin.batch) {
        return;
    }
    var acc = bias[o];
    for (var i = 0u; i < lin.in_features; i++) {
        acc += x[b * lin.in_features + i] * weight[o * lin.in_features + i];
    }
    y[b * lin.out_features + o] = max(acc, 0.0);
}

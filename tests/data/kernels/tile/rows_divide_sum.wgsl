// A linear layer whose outputs are halved, summed over the features and scaled (KernelBench's
// Gemm_Divide_Sum_Scaling): one row per invocation, a loop over the output features around the
// dot product. The rows form tiles the product and adds each row's terms in workgroup memory.
// spec: sizes(batch = 37, in_features = 24, hidden = 45), bind(x = input(batch * in_features), w = input(hidden * in_features), y = output(batch), p = uniform(batch, in_features, hidden, 1.5)), grid = (batch), tolerance = 1e-3
// expect: tile
struct P {
    batch: u32,
    in_features: u32,
    hidden: u32,
    scale: f32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> p: P;

@compute @workgroup_size(32)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let b = gid.x;
    if (b >= p.batch) {
        return;
    }
    var total = 0.0;
    for (var j = 0u; j < p.hidden; j++) {
        var dot = 0.0;
        for (var i = 0u; i < p.in_features; i++) {
            dot += x[b * p.in_features + i] * w[j * p.in_features + i];
        }
        total += dot / 2.0;
    }
    y[b] = total * p.scale;
}

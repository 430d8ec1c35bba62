// Linear + bias, sigmoid, then a log-sum-exp over the features, written with `while` loops and a
// vector uniform: the product starts at the column's bias, and the row's result is the log of its
// sum.
// spec: sizes(batch = 21, in_f = 19, hidden = 70), bind(x = input(batch * in_f), w = input(hidden * in_f), bias = input(hidden), y = output(batch), sizes = uniform(batch, in_f, hidden)), grid = (batch), tolerance = 1e-3
// expect: tile
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<f32>; // [hidden][in_f]
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<uniform> sizes: vec3<u32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let batch = sizes.x;
    let in_f = sizes.y;
    let hidden = sizes.z;
    let b = gid.x;
    if (b >= batch) {
        return;
    }
    var acc = 0.0;
    var j = 0u;
    while (j < hidden) {
        var z = bias[j];
        var i = 0u;
        while (i < in_f) {
            z += x[b * in_f + i] * w[j * in_f + i];
            i += 1u;
        }
        let s = 1.0 / (1.0 + exp(-z));
        acc += exp(s);
        j += 1u;
    }
    y[b] = log(acc);
}

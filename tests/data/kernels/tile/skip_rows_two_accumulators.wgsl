// A log-sum-exp with its running maximum: the column loop carries two accumulators (the maximum
// and a sum rescaled by it), which the rows form does not combine.
// spec: sizes(batch = 16, k = 16, hidden = 16), bind(x = input(batch * k), w = input(hidden * k), y = output(batch), d = uniform(batch, k, hidden)), grid = (batch)
// expect: skip
struct D {
    batch: u32,
    k: u32,
    hidden: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> d: D;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let b = gid.x;
    if (b >= d.batch) {
        return;
    }
    var m = -3.0e38;
    var s = 0.0;
    for (var j = 0u; j < d.hidden; j++) {
        var z = 0.0;
        for (var i = 0u; i < d.k; i++) {
            z += x[b * d.k + i] * w[j * d.k + i];
        }
        let mn = max(m, z);
        s = s * exp(m - mn) + exp(z - mn);
        m = mn;
    }
    y[b] = m + log(s);
}

// Row log-softmax: y = x - max - log(sum(exp(x - max))). The row is gid.y.
struct Dims {
    rows: u32,
    cols: u32,
}

@group(0) @binding(0) var<storage, read> logits: array<f32>;
@group(0) @binding(1) var<storage, read_write> logprobs: array<f32>;
@group(0) @binding(2) var<uniform> dims: Dims;

@compute @workgroup_size(1, 64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let r = gid.y;
    if (r >= dims.rows) {
        return;
    }
    let base = r * dims.cols;
    var m = -3.4e38;
    for (var c = 0u; c < dims.cols; c++) {
        m = max(m, logits[base + c]);
    }
    var s = 0.0;
    for (var c = 0u; c < dims.cols; c++) {
        s += exp(logits[base + c] - m);
    }
    let lse = m + log(s);
    for (var c = 0u; c < dims.cols; c++) {
        logprobs[base + c] = logits[base + c] - lse;
    }
}

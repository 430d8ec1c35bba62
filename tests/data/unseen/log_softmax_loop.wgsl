// Row-wise log-softmax over the last axis of a [rows, cols] matrix, one row per invocation.
// class: softmax
// style: workgroup_id.x * 64u + local_invocation_id.x, loop { if (i >= n) { break; } ... continuing { i = i + 1u; } }, x = x + y
// spec: sizes(rows = 33, cols = 500), bind(logits = input(rows * cols, range(-8.0, 8.0)), logprobs = output(rows * cols), dims = uniform(rows, cols)), grid = (rows)

struct Dims {
    n_rows: u32,
    n_cols: u32,
}

@group(0) @binding(0) var<storage, read> logits: array<f32>;
@group(0) @binding(1) var<storage, read_write> logprobs: array<f32>;
@group(0) @binding(2) var<uniform> dims: Dims;

const WORKGROUP_SIZE: u32 = 64u;

@compute @workgroup_size(64, 1, 1)
fn log_softmax(
    @builtin(workgroup_id) wg_id: vec3<u32>,
    @builtin(local_invocation_id) local_id: vec3<u32>,
) {
    let row = wg_id.x * WORKGROUP_SIZE + local_id.x;
    if (row >= dims.n_rows) {
        return;
    }
    let n = dims.n_cols;
    let base = row * n;

    var m = logits[base];
    var i: u32 = 1u;
    loop {
        if (i >= n) {
            break;
        }
        m = max(m, logits[base + i]);
        continuing {
            i = i + 1u;
        }
    }

    var s: f32 = 0.0;
    i = 0u;
    loop {
        if (i >= n) {
            break;
        }
        s = s + exp(logits[base + i] - m);
        continuing {
            i = i + 1u;
        }
    }
    let log_sum = log(s);

    i = 0u;
    loop {
        if (i >= n) {
            break;
        }
        logprobs[base + i] = logits[base + i] - m - log_sum;
        continuing {
            i = i + 1u;
        }
    }
}

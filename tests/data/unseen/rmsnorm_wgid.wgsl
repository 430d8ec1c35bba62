// RMSNorm over the last axis of a [rows, dim] matrix with a learned weight, one row per invocation.
// class: rmsnorm
// style: params struct with eps: f32 and a padding field, workgroup_id.x * 64u + local_invocation_index, inverseSqrt, sum of squares with +=
// spec: sizes(rows = 50, dim = 256), bind(hidden = input(rows * dim), weight = input(dim), normed = output(rows * dim), cfg = uniform(rows, dim, 1e-6, 0)), grid = (rows), tolerance = 1e-3

struct RmsNormConfig {
    n_rows: u32,
    dim: u32,
    eps: f32,
    _pad: u32,
}

@group(0) @binding(0) var<storage, read> hidden: array<f32>;
@group(0) @binding(1) var<storage, read> weight: array<f32>;
@group(0) @binding(2) var<storage, read_write> normed: array<f32>;
@group(0) @binding(3) var<uniform> cfg: RmsNormConfig;

@compute @workgroup_size(64)
fn rms_norm(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let row = workgroup_id.x * 64u + local_index;
    if (row >= cfg.n_rows) {
        return;
    }
    let dim = cfg.dim;
    let row_start = row * dim;

    var sum_sq = 0.0f;
    for (var j: u32 = 0u; j < dim; j++) {
        let v = hidden[row_start + j];
        sum_sq += v * v;
    }
    let scale = inverseSqrt(sum_sq / f32(dim) + cfg.eps);

    for (var j: u32 = 0u; j < dim; j++) {
        normed[row_start + j] = hidden[row_start + j] * scale * weight[j];
    }
}

// Hand-optimized LayerNorm (a reference for reports; never tuned): one workgroup of 256
// invocations per row; the mean and the variance (two exact passes) are reduced with subgroup
// adds, then across subgroups through workgroup memory. Needs the SUBGROUP feature.
// Same bindings as level1/layernorm.wgsl; launch one workgroup per row.
struct LnParams {
    rows: u32,
    cols: u32,
    eps: f32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> gamma: array<f32>;
@group(0) @binding(2) var<storage, read> beta: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<uniform> params: LnParams;

const WG: u32 = 256u;

var<workgroup> partial: array<f32, 256>;

fn block_sum(v: f32, lane: u32, sg: u32, n_sg: u32) -> f32 {
    let s = subgroupAdd(v);
    if (lane == 0u) {
        partial[sg] = s;
    }
    workgroupBarrier();
    var total = 0.0;
    for (var i = 0u; i < n_sg; i++) {
        total += partial[i];
    }
    workgroupBarrier();
    return total;
}

@compute @workgroup_size(256)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) li: u32,
    @builtin(subgroup_invocation_id) lane: u32,
    @builtin(subgroup_id) sg: u32,
    @builtin(num_subgroups) n_sg: u32,
) {
    let n = params.cols;
    let base = wg.x * n;
    var s = 0.0;
    for (var i = li; i < n; i += WG) {
        s += x[base + i];
    }
    let mean = block_sum(s, lane, sg, n_sg) / f32(n);
    var sq = 0.0;
    for (var i = li; i < n; i += WG) {
        let d = x[base + i] - mean;
        sq += d * d;
    }
    let rstd = inverseSqrt(block_sum(sq, lane, sg, n_sg) / f32(n) + params.eps);
    for (var i = li; i < n; i += WG) {
        y[base + i] = (x[base + i] - mean) * rstd * gamma[i] + beta[i];
    }
}

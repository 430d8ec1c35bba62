// Linear layer y = x @ W^T + b with x [batch, in_features], W [out_features, in_features], b [out_features].
// class: gemm
// style: flat 1-D global id split into (row, col) with / and %, helper fn for the dot product, fma, var<private> index
// spec: sizes(batch = 32, in_features = 96, out_features = 80), bind(x = input(batch * in_features), weight = input(out_features * in_features), bias = input(out_features), y = output(batch * out_features), params = uniform(batch, in_features, out_features)), grid = (batch * out_features), flops = 2 * batch * in_features * out_features

struct LinearParams {
    batch_size: u32,
    in_features: u32,
    out_features: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> weight: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<uniform> params: LinearParams;

var<private> flat_index: u32;

fn dot_row(x_row: u32, w_row: u32, len: u32) -> f32 {
    var acc = 0.0;
    for (var i = 0u; i < len; i++) {
        acc = fma(x[x_row * len + i], weight[w_row * len + i], acc);
    }
    return acc;
}

@compute @workgroup_size(256)
fn linear(@builtin(global_invocation_id) gid: vec3<u32>) {
    flat_index = gid.x;
    let total = params.batch_size * params.out_features;
    if (flat_index >= total) {
        return;
    }
    let b = flat_index / params.out_features;
    let o = flat_index % params.out_features;
    y[flat_index] = dot_row(b, o, params.in_features) + bias[o];
}

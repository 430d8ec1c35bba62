// L2-normalise the rows of X[B, M, N] (F.normalize, p = 2, dim = -1): Y = X / max(||x_row||, eps), rows read as vec4.
// class: rmsnorm
// style: ratchet / candle-wgpu style: `array<vec4<f32>>` buffers, `Meta` uniform {M, N, ND4, eps} in `@group(1)`, builtins named `local_index` / `group_id` / `num_groups`, batch from `group_id.y`, row from `group_id.x * 64u + local_index`, `anchor` offset computed as `(group_id.y * metadata.M * metadata.ND4) + row * metadata.ND4`, `dot(v, v)` sum of squares, `max(sqrt(..), eps)`
// spec: sizes(b = 2, m = 40, n = 128), bind(X = input(b * m * n / 4), Y = output(b * m * n / 4), metadata = uniform(m, n, n / 4, 1e-12)), workgroups = ((m + 63) / 64, b), constraints(n % 4 == 0)

@group(0) @binding(0) var<storage, read> X: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> Y: array<vec4<f32>>;

struct Meta {
    M: u32,
    N: u32,
    ND4: u32,
    eps: f32,
}

@group(1) @binding(0) var<uniform> metadata: Meta;

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(local_invocation_index) local_index: u32,
    @builtin(workgroup_id) group_id: vec3<u32>,
    @builtin(num_workgroups) num_groups: vec3<u32>,
) {
    let row = group_id.x * 64u + local_index;
    if (row >= metadata.M) {
        return;
    }
    let anchor = (group_id.y * metadata.M * metadata.ND4) + row * metadata.ND4;

    var sumsq = 0.0;
    for (var i: u32 = 0u; i < metadata.ND4; i++) {
        let val = X[anchor + i];
        sumsq += dot(val, val);
    }
    let denom = max(sqrt(sumsq), metadata.eps);

    for (var i: u32 = 0u; i < metadata.ND4; i++) {
        Y[anchor + i] = X[anchor + i] / vec4<f32>(denom);
    }
}

// GEMV with the weight stored transposed ([K, N], K-major): y[n] = sum_k x[k] * wt[k, n]; wt and y are read/written as vec4 along N, so each invocation produces four adjacent outputs.
// class: gemv
// style: ratchet / candle-wgpu style transposed-weight GEMV: `array<vec4<f32>>` weight and output, a vec4 accumulator per invocation over four adjacent outputs, scalar `x[k]` broadcast with `fma(vec4<f32>(xk), w, acc)`, `group_id.x * 64u + local_index` from `workgroup_id` / `local_invocation_index`, `Meta` uniform {K, N, ND4}, wrapping `if`
// spec: sizes(k = 256, n = 192), bind(x = input(k), wt = input(k * n / 4), y = output(n / 4), metadata = uniform(k, n, n / 4)), grid = (n / 4), constraints(n % 4 == 0), flops = 2 * k * n

struct Meta {
    K: u32,
    N: u32,
    ND4: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> wt: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> y: array<vec4<f32>>;
@group(0) @binding(3) var<uniform> metadata: Meta;

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(local_invocation_index) local_index: u32,
    @builtin(workgroup_id) group_id: vec3<u32>,
) {
    let col4 = group_id.x * 64u + local_index;
    if (col4 < metadata.ND4) {
        var acc = vec4<f32>(0.0);
        for (var k = 0u; k < metadata.K; k++) {
            let xk = x[k];
            let w = wt[k * metadata.ND4 + col4];
            acc = fma(vec4<f32>(xk), w, acc);
        }
        y[col4] = acc;
    }
}

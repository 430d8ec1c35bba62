// GELU, tanh approximation (PyTorch's approximate="tanh"), elementwise over n values.
// 2-D launch: 4096 invocations per row of the grid, so n can exceed 65535 workgroups in x.
struct Params {
    n: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

const SQRT_2_OVER_PI: f32 = 0.7978845608;

@compute @workgroup_size(1024)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.y * 4096u + gid.x;
    if (i >= params.n) {
        return;
    }
    let v = x[i];
    let inner = SQRT_2_OVER_PI * (v + 0.044715 * v * v * v);
    y[i] = 0.5 * v * (1.0 + tanh(inner));
}

// y = gelu(x + bias) with a per-column bias (the epilogue of a linear layer), tanh approximation.
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> bias: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> size: vec2<u32>; // (rows, cols)

@compute @workgroup_size(32, 4)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let col = gid.x;
    let row = gid.y;
    if (row >= size.x || col >= size.y) {
        return;
    }
    let i = row * size.y + col;
    let t = x[i] + bias[col];
    y[i] = 0.5 * t * (1.0 + tanh(0.79788456 * (t + 0.044715 * t * t * t)));
}

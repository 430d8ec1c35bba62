// SiLU (swish): y = x * sigmoid(x), elementwise.
@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;
@group(0) @binding(2) var<uniform> n: u32;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) global_id: vec3<u32>) {
    let i = global_id.x;
    if (i < n) {
        let v = input[i];
        output[i] = v / (1.0 + exp(-v));
    }
}

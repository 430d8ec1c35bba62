// SwiGLU activation: each input row is [gate | up] (2 * inter values); out = silu(gate) * up.
struct Dims {
    tokens: u32,
    inter: u32,
}

@group(0) @binding(0) var<storage, read> gate_up: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> dims: Dims;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let j = gid.x;
    let t = gid.y;
    if (j < dims.inter && t < dims.tokens) {
        let g = gate_up[t * 2u * dims.inter + j];
        let u = gate_up[t * 2u * dims.inter + dims.inter + j];
        out[t * dims.inter + j] = g / (1.0 + exp(-g)) * u;
    }
}

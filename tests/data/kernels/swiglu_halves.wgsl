// SwiGLU over rows of [gate | up]: each invocation reads the gate and the up value of one feature
// from the same buffer, `inter` apart, so the buffer is read as two vectors per invocation; the
// spec promises `inter` is a multiple of 4.
// spec: sizes(tokens = 3, inter = 20), bind(gate_up = input(tokens * 2 * inter, range(-4.0, 4.0)), out = output(tokens * inter), dims = uniform(tokens, inter)), grid = (inter, tokens), constraints(inter % 4 == 0)
// fires: widen
// skips: reduce vectorize
struct Dims {
    tokens: u32,
    inter: u32,
}

@group(0) @binding(0) var<storage, read> gate_up: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> dims: Dims;

@compute @workgroup_size(8, 4)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let j = gid.x;
    let t = gid.y;
    if (j < dims.inter && t < dims.tokens) {
        let g = gate_up[t * 2u * dims.inter + j];
        let u = gate_up[t * 2u * dims.inter + dims.inter + j];
        out[t * dims.inter + j] = g / (1.0 + exp(-g)) * u;
    }
}

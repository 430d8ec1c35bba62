// Attention one query row per invocation in a single pass with the softmax online (a running
// maximum and a rescaled sum), everything inline, the keys visited by a `while` loop, the
// buffers declared values first and the sizes in another order. Heads of 36 columns: not a
// multiple of 16 lanes' 4 columns, so some lanes hold no column.
// spec: sizes(tokens = 70, width = 36), bind(values = input(tokens * width), keys = input(tokens * width), queries = input(tokens * width), result = output(tokens * width), dims = uniform(width, tokens)), grid = (tokens), tolerance = 1e-3
// fires: flash-attention
struct Dims {
    width: u32,
    tokens: u32,
}

@group(0) @binding(0) var<storage, read> values: array<f32>;
@group(0) @binding(1) var<storage, read> keys: array<f32>;
@group(0) @binding(2) var<storage, read> queries: array<f32>;
@group(0) @binding(3) var<storage, read_write> result: array<f32>;
@group(0) @binding(4) var<uniform> dims: Dims;

@compute @workgroup_size(32)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let row = id.x;
    if (row < dims.tokens) {
        let scale = 1.0 / sqrt(f32(dims.width));
        var running_max = -3.402823e38;
        var running_sum = 0.0;
        for (var c = 0u; c < dims.width; c = c + 1u) {
            result[row * dims.width + c] = 0.0;
        }
        var t = 0u;
        while (t < dims.tokens) {
            var dot = 0.0;
            for (var c = 0u; c < dims.width; c = c + 1u) {
                dot = fma(queries[row * dims.width + c], keys[t * dims.width + c], dot);
            }
            let s = dot * scale;
            let new_max = max(running_max, s);
            let rescale = exp(running_max - new_max);
            let w = exp(s - new_max);
            running_sum = running_sum * rescale + w;
            for (var c = 0u; c < dims.width; c = c + 1u) {
                let o = row * dims.width + c;
                result[o] = result[o] * rescale + w * values[t * dims.width + c];
            }
            running_max = new_max;
            t = t + 1u;
        }
        for (var c = 0u; c < dims.width; c = c + 1u) {
            result[row * dims.width + c] = result[row * dims.width + c] / running_sum;
        }
    }
}

// GELU with the tanh approximation, elementwise over a flat 1-D array.
// class: elementwise
// style: arrayLength(&input) as the bound, helper fn gelu(x), module-scope const coefficients, no uniform
// spec: sizes(n = 10000), bind(input = input(n, range(-5.0, 5.0)), output = output(n)), grid = (n)

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;

const SQRT_2_OVER_PI: f32 = 0.7978845608028654;
const GELU_COEF_A: f32 = 0.044715;

fn gelu(x: f32) -> f32 {
    let inner = SQRT_2_OVER_PI * (x + GELU_COEF_A * x * x * x);
    return 0.5 * x * (1.0 + tanh(inner));
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) global_id: vec3<u32>) {
    let idx = global_id.x;
    if (idx >= arrayLength(&input)) {
        return;
    }
    output[idx] = gelu(input[idx]);
}

// Fused bias + GELU (tanh approximation, no erf): y[r, c] = gelu(x[r, c] + bias[c]) over [rows, cols].
// class: elementwise
// style: transformers.js / web-llm style fused epilogue with `const SQRT_2_OVER_PI` and a `gelu` helper `fn` using `tanh`, 2-D id (x = column, y = row), wrapping `if`
// spec: sizes(rows = 24, cols = 160), bind(x = input(rows * cols, range(-4.0, 4.0)), bias = input(cols), y = output(rows * cols), dims = uniform(rows, cols)), grid = (cols, rows), constraints(cols % 4 == 0)

const SQRT_2_OVER_PI: f32 = 0.7978845608028654;
const GELU_COEF: f32 = 0.044715;

struct Dims {
  rows: u32,
  cols: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> bias: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;

fn gelu(v: f32) -> f32 {
  let inner = SQRT_2_OVER_PI * (v + GELU_COEF * v * v * v);
  return 0.5 * v * (1.0 + tanh(inner));
}

@compute @workgroup_size(16, 16)
fn bias_gelu(@builtin(global_invocation_id) gid: vec3<u32>) {
  let col = gid.x;
  let row = gid.y;
  if (col < dims.cols && row < dims.rows) {
    let i = row * dims.cols + col;
    y[i] = gelu(x[i] + bias[col]);
  }
}

// Row softmax over x[rows, cols] (cols <= 256): max pass, then exp(x - max) written into a function-scope temp array while summing, then the temp array divided by the sum.
// class: softmax
// style: candle-wgpu / hand-port style: `const MAX_COLS = 256u` and a function-scope `var e: array<f32, MAX_COLS>` holding `exp(x - m)` before the sum, the normalising pass reading the temp array (not x), reciprocal `inv = 1.0 / s` multiplied in, `Meta` uniform {rows, cols}, `global_invocation_id.x` row, `@workgroup_size(32)`
// spec: sizes(rows = 24, cols = 200), bind(x = input(rows * cols, range(-5.0, 5.0)), y = output(rows * cols), dims = uniform(rows, cols)), grid = (rows), constraints(cols <= 256)

const MAX_COLS = 256u;

struct Meta {
    rows: u32,
    cols: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> dims: Meta;

@compute @workgroup_size(32)
fn softmax(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.x;
    if (row >= dims.rows) {
        return;
    }
    let base = row * dims.cols;

    var m = x[base];
    for (var j = 1u; j < dims.cols; j++) {
        m = max(m, x[base + j]);
    }

    var e: array<f32, MAX_COLS>;
    var s = 0.0;
    for (var j = 0u; j < dims.cols; j++) {
        e[j] = exp(x[base + j] - m);
        s += e[j];
    }

    let inv = 1.0 / s;
    for (var j = 0u; j < dims.cols; j++) {
        y[base + j] = e[j] * inv;
    }
}

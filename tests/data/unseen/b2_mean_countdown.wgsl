// Mean over the last axis: means[r] = sum_c values[r, c] / cols, with the row count and width taken from arrayLength.
// class: reduction
// style: small-library style with no params buffer (`arrayLength(&means)` rows, `arrayLength(&values) / rows` width), a u32 counter counting down `for (var i = n; i > 0u; i--)`
// spec: sizes(rows = 12, cols = 200), bind(values = input(rows * cols), means = output(rows)), grid = (rows)

@group(0) @binding(0) var<storage, read> values: array<f32>;
@group(0) @binding(1) var<storage, read_write> means: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let num_rows = arrayLength(&means);
    let row = id.x;
    if (row >= num_rows) {
        return;
    }
    let width = arrayLength(&values) / num_rows;
    let start = row * width;

    var acc: f32 = 0.0;
    for (var i = width; i > 0u; i--) {
        acc = acc + values[start + (width - i)];
    }
    means[row] = acc / f32(width);
}

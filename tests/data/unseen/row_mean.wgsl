// Mean over the last axis of a [rows, cols] matrix: one output per row.
// class: reduction
// style: override workgroup size, vec2<u32> uniform shape, arrayLength(&output) as the row bound, x = x + y accumulation
// spec: sizes(rows = 64, cols = 200), bind(data = input(rows * cols), row_means = output(rows), shape = uniform(rows, cols)), grid = (rows)

override WG: u32 = 128u;

@group(0) @binding(0) var<storage, read> data: array<f32>;
@group(0) @binding(1) var<storage, read_write> row_means: array<f32>;
@group(0) @binding(2) var<uniform> shape: vec2<u32>;

@compute @workgroup_size(WG)
fn reduce_mean(@builtin(global_invocation_id) id: vec3<u32>) {
    let r = id.x;
    if (r >= arrayLength(&row_means)) {
        return;
    }
    let cols = shape.y;
    var acc: f32 = 0.0;
    for (var c: u32 = 0u; c < cols; c = c + 1u) {
        acc = acc + data[r * cols + c];
    }
    row_means[r] = acc / f32(cols);
}

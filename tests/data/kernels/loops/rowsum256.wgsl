// kernel: row sums with a hard-coded 256-invocation workgroup: one workgroup per row, block-stride loads, tree reduction in workgroup memory
// spec: sizes(rows = 5, cols = 1000), verify_shapes = [(rows = 3, cols = 333)], bind(dims = uniform(rows, cols), x = input(rows * cols), sums = output(rows)), workgroups = (rows)
// applies: unroll hoist lift-workgroup-size
// skips: reshape
struct Dims {
    rows: u32,
    cols: u32,
}

@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> sums: array<f32>;

var<workgroup> tile: array<f32, 256>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = wid.x;
    var acc = 0.0;
    for (var i = lid.x; i < dims.cols; i += 256u) {
        acc += x[row * dims.cols + i];
    }
    tile[lid.x] = acc;
    workgroupBarrier();
    for (var s = 256u / 2u; s > 0u; s >>= 1u) {
        if (lid.x < s) {
            tile[lid.x] += tile[lid.x + s];
        }
        workgroupBarrier();
    }
    if (lid.x == 0u) {
        sums[row] = tile[0];
    }
}

// Hand-optimized row softmax (a reference for reports; never tuned): one workgroup of 256
// invocations per row, each striding over the row; max and sum are reduced with subgroup
// operations, then across subgroups through workgroup memory. Needs the SUBGROUP feature.
// Same bindings as level1/softmax.wgsl; launch one workgroup per row.
struct Shape {
    rows: u32,
    cols: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> shape: Shape;

const WG: u32 = 256u;

// One slot per subgroup; a subgroup has at least one invocation.
var<workgroup> partial: array<f32, 256>;

fn reduce_max(v: f32, lane: u32, sg: u32, n_sg: u32) -> f32 {
    let s = subgroupMax(v);
    if (lane == 0u) {
        partial[sg] = s;
    }
    workgroupBarrier();
    var r = partial[0];
    for (var i = 1u; i < n_sg; i++) {
        r = max(r, partial[i]);
    }
    workgroupBarrier();
    return r;
}

fn reduce_sum(v: f32, lane: u32, sg: u32, n_sg: u32) -> f32 {
    let s = subgroupAdd(v);
    if (lane == 0u) {
        partial[sg] = s;
    }
    workgroupBarrier();
    var r = 0.0;
    for (var i = 0u; i < n_sg; i++) {
        r += partial[i];
    }
    workgroupBarrier();
    return r;
}

@compute @workgroup_size(256)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) li: u32,
    @builtin(subgroup_invocation_id) lane: u32,
    @builtin(subgroup_id) sg: u32,
    @builtin(num_subgroups) n_sg: u32,
) {
    let row = wg.x;
    let base = row * shape.cols;
    var m = -3.402823e38;
    for (var c = li; c < shape.cols; c += WG) {
        m = max(m, x[base + c]);
    }
    m = reduce_max(m, lane, sg, n_sg);
    var s = 0.0;
    for (var c = li; c < shape.cols; c += WG) {
        s += exp(x[base + c] - m);
    }
    let inv = 1.0 / reduce_sum(s, lane, sg, n_sg);
    for (var c = li; c < shape.cols; c += WG) {
        y[base + c] = exp(x[base + c] - m) * inv;
    }
}

// Softmax over rows with one 64-lane workgroup per row, the way shared-memory kernels were
// written before subgroups: a max tree whose steps are calls of a helper (barrier first, one
// call per stride) and a sum tree as a `for` whose counter shifts right, the operands swapped.
// (The `loop { if s == 0u { break; } .. }` spelling is a unit test of `subgroup-tree`: the
// runtime's proof that loops end does not take a counter that halves in the body.) Both trees
// are folded with subgroup operations; the row's max and sum are read back from slot 0 only.
// spec: sizes(rows = 37, cols = 300), bind(x = input(rows * cols), y = output(rows * cols)), workgroups = (rows)
// fires: subgroup-tree
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;

const LANES: u32 = 64u;
var<workgroup> scratch: array<f32, LANES>;
var<workgroup> row_max: f32;

fn max_step(lane: u32, stride: u32) {
    workgroupBarrier();
    if lane < stride {
        scratch[lane] = max(scratch[lane], scratch[lane + stride]);
    }
}

@compute @workgroup_size(LANES)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
    let row = group.x;
    let lane = local.x;
    let base = row * 300u;

    var m = -3.0e38;
    for (var c = lane; c < 300u; c += LANES) {
        m = max(m, x[base + c]);
    }
    scratch[lane] = m;
    max_step(lane, 32u);
    max_step(lane, 16u);
    max_step(lane, 8u);
    max_step(lane, 4u);
    max_step(lane, 2u);
    max_step(lane, 1u);
    if lane == 0u {
        row_max = scratch[0];
    }
    workgroupBarrier();

    var total = 0.0;
    for (var c = lane; c < 300u; c += LANES) {
        total += exp(x[base + c] - row_max);
    }
    scratch[lane] = total;
    workgroupBarrier();
    for (var s = LANES / 2u; s > 0u; s >>= 1u) {
        if s > lane {
            scratch[lane] = scratch[lane + s] + scratch[lane];
        }
        workgroupBarrier();
    }
    let sum = scratch[0];
    for (var c = lane; c < 300u; c += LANES) {
        y[base + c] = exp(x[base + c] - row_max) / sum;
    }
}

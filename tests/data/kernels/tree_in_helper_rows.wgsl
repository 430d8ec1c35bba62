// Rows scaled to unit length, one 64-lane workgroup per row of 300. The sum of squares is reduced
// by a helper that returns the total: every lane stores its partial in a workgroup array, then a
// loop halves the stride, each step a helper of its own that combines through a third helper and
// ends with a barrier. The canonical form spells the helpers out in the entry point, where the
// tree is folded with subgroupAdd; the rest reads only slot 0, through the helper's return.
// spec: sizes(rows = 23), bind(x = input(rows * 300), y = output(rows * 300)), workgroups = (rows)
// fires: subgroup-tree
const COLS: u32 = 300u;
const LANES: u32 = 64u;

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;

var<workgroup> partial: array<f32, LANES>;

fn plus(a: f32, b: f32) -> f32 {
    return a + b;
}

fn halve(lane: u32, s: u32) {
    if (lane < s) {
        partial[lane] = plus(partial[lane], partial[lane + s]);
    }
    workgroupBarrier();
}

fn block_sum(lane: u32, v: f32) -> f32 {
    partial[lane] = v;
    workgroupBarrier();
    for (var s = LANES / 2u; s > 0u; s = s / 2u) {
        halve(lane, s);
    }
    return partial[0];
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let base = wid.x * COLS;
    var sq = 0.0;
    for (var c = lid.x; c < COLS; c += LANES) {
        let v = x[base + c];
        sq += v * v;
    }
    let total = block_sum(lid.x, sq);
    let inv = 1.0 / sqrt(total + 1e-6);
    for (var c = lid.x; c < COLS; c += LANES) {
        y[base + c] = x[base + c] * inv;
    }
}

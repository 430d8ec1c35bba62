// RMSNorm over rows read as vec4s, one 128-lane workgroup per row, the squares summed in a
// vec4 tree (`for` with a halving counter, barrier after each step) indexed by
// `local_invocation_index`; lane 0 turns slot 0 into the scale and every lane reads it back
// after a barrier. The tree is folded with `subgroupAdd` over vec4.
// spec: sizes(rows = 29), bind(x = input(rows * 128), w = input(128), y = output(rows * 128)), workgroups = (rows)
// fires: subgroup-tree
@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> w: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> y: array<vec4<f32>>;

var<workgroup> sums: array<vec4<f32>, 128>;
var<workgroup> scale: f32;

@compute @workgroup_size(128, 1, 1)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let quads = 512u / 4u;
    let base = wid.x * quads;
    var acc = vec4<f32>(0.0);
    for (var q = li; q < quads; q = q + 128u) {
        let v = x[base + q];
        acc = acc + v * v;
    }
    sums[li] = acc;
    workgroupBarrier();
    for (var stride = 64u; stride >= 1u; stride = stride / 2u) {
        if (li < stride) {
            sums[li] = sums[li] + sums[li + stride];
        }
        workgroupBarrier();
    }
    if (li == 0u) {
        let s = sums[0];
        scale = inverseSqrt((s.x + s.y + s.z + s.w) / 512.0 + 1e-5);
    }
    workgroupBarrier();
    for (var q = li; q < quads; q = q + 128u) {
        y[base + q] = x[base + q] * scale * w[q];
    }
}

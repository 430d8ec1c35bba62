// The largest element of a whole array, reduced by one workgroup as tutorials write it: the lane
// from the global id of the one workgroup, a `while` loop folding every 128th element into the
// lane's slot of workgroup memory through a helper, a halving tree. `grid-reduce` spreads the
// loop over the GPU in a first launch and folds the workgroups' partials in this one.
// spec: sizes(n = 9001), bind(x = input(n), out = output(1), dims = uniform(n)), workgroups = (1)
// fires: grid-reduce
struct Dims { n: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> dims: Dims;
var<workgroup> best: array<f32, 128>;

fn larger(a: f32, b: f32) -> f32 {
    if (b > a) {
        return b;
    }
    return a;
}

@compute @workgroup_size(128)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let lane = gid.x;
    best[lane] = -1.0e38;
    var i = lane;
    while (i < dims.n) {
        best[lane] = max(best[lane], x[i]);
        i += 128u;
    }
    workgroupBarrier();
    for (var s = 64u; s > 0u; s = s >> 1u) {
        if (lane < s) {
            best[lane] = larger(best[lane], best[lane + s]);
        }
        workgroupBarrier();
    }
    if (lane == 0u) {
        out[0] = best[0];
    }
}

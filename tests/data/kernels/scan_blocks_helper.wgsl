// The first pass of a block prefix sum, the way brush writes it: one 128-lane workgroup per block
// of u32 values, the block scanned by Hillis and Steele in a helper (a copy in a temporary, the
// stride doubled, two barriers per step), and the lane's inclusive prefix written out. The
// canonical form spells the helper out in the entry point, where the scan is done in subgroups.
// spec: sizes(n = 1000), bind(input = input(n, range(0, 16)), output = output(n)), grid = (n)
// fires: subgroup-scan
const LANES: u32 = 128u;

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;

var<workgroup> bucket: array<u32, LANES>;

fn group_scan(id: u32, gi: u32, x: u32) {
    bucket[gi] = x;
    for (var t = 1u; t < LANES; t = t * 2u) {
        workgroupBarrier();
        var temp = bucket[gi];
        if (gi >= t) {
            temp += bucket[gi - t];
        }
        workgroupBarrier();
        bucket[gi] = temp;
    }
    if id < arrayLength(&output) {
        output[id] = bucket[gi];
    }
}

@compute @workgroup_size(LANES, 1, 1)
fn main(
    @builtin(global_invocation_id) gid: vec3u,
    @builtin(local_invocation_index) lid: u32,
) {
    let id = gid.x;
    var x = 0u;
    if (id < arrayLength(&input)) {
        x = input[id];
    }
    group_scan(id, lid, x);
}

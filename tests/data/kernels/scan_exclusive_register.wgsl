// An exclusive prefix sum of f32 blocks from an inclusive Hillis–Steele scan kept in the running
// register (the radix-sort spelling): `sum += part[lane - (1u << i)]` for eight strides behind
// barriers, then each lane reads its neighbour's slot for the exclusive value and adds the
// block's offset. Every slot must hold its prefix after the scan, not only the last.
// spec: sizes(n = 1100), bind(x = input(n), y = output(n)), grid = (n)
// fires: subgroup-scan
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;

var<workgroup> part: array<f32, 256>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_id) local_id: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let i = wid.x * 256u + local_id.x;
    let n = arrayLength(&x);
    var sum = 0.0;
    if (i < n) {
        sum = x[i];
    }
    part[local_id.x] = sum;
    for (var k = 0u; k < 8u; k++) {
        workgroupBarrier();
        if local_id.x >= (1u << k) {
            sum += part[local_id.x - (1u << k)];
        }
        workgroupBarrier();
        part[local_id.x] = sum;
    }
    workgroupBarrier();
    var exclusive = 0.0;
    if local_id.x > 0u {
        exclusive = part[local_id.x - 1u];
    }
    if (i < n) {
        y[i] = exclusive + 0.5 * sum;
    }
}

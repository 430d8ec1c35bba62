// kernel: grid-stride sum writing one partial sum per workgroup of a hard-coded 256 invocations
// spec: sizes(n = 5000), verify_shapes = [(n = 1111)], bind(x = input(n), partial = output(4)), workgroups = (4)
// applies:
// skips: unroll hoist reshape lift-workgroup-size
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> partial: array<f32>;

var<workgroup> tile: array<f32, 256>;

@compute @workgroup_size(256)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let n = arrayLength(&x);
    var acc = 0.0;
    for (var i = wid.x * 256u + lid.x; i < n; i += 256u * nwg.x) {
        acc += x[i];
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
        partial[wid.x] = tile[0];
    }
}

// Scales n values launched by workgroup count, as burn, TVM and most hand-written hosts launch
// (`dispatch_workgroups(cdiv(n, 64), 1, 1)`): the global id is tested against the output's length,
// and n is no multiple of 64, so the last workgroup has invocations the test stops.
// spec: sizes(n = 1000), bind(src = input(n, range(-4.0, 4.0)), dst = output(n)), workgroups = (cdiv(n, 64)), constraints(n % 4 == 0)
// fires: coarsen widen
// skips: reduce vectorize
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= arrayLength(&dst)) {
        return;
    }
    dst[gid.x] = tanh(src[gid.x]) * 0.5 + 1.0;
}

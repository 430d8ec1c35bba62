// kernel: a prefix-style loop reading a read_write buffer that the same loop writes
// spec: sizes(n = 64), bind(acc = inout(n), x = input(n)), grid = (1)
// applies: unroll
// skips: hoist reshape lift-workgroup-size
@group(0) @binding(0) var<storage, read_write> acc: array<f32>;
@group(0) @binding(1) var<storage, read> x: array<f32>;

@compute @workgroup_size(1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let n = arrayLength(&acc);
    for (var i = 1u; i < n; i++) {
        acc[i] = acc[0] + acc[i - 1u] * 0.5 + x[gid.x + i];
        acc[0] = acc[0] + 1.0;
    }
}

// Elementwise SiLU: y[i] = x[i] / (1 + exp(-x[i])).
// class: elementwise
// style: 2-D-dispatch flattening common in WebGPU ML runtimes (`global_invocation_id.x + global_invocation_id.y * num_workgroups.x * 64u`), bound from `arrayLength`, no params buffer
// spec: sizes(n = 5000), bind(x = input(n, range(-6.0, 6.0)), y = output(n)), grid = (n), constraints(n % 4 == 0)

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(64)
fn silu(
    @builtin(global_invocation_id) global_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
) {
    let index = global_id.x + global_id.y * num_workgroups.x * 64u;
    if (index >= arrayLength(&y)) {
        return;
    }
    let v = x[index];
    y[index] = v / (1.0 + exp(-v));
}

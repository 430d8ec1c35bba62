// A per-channel bias and ReLU over (C, HW) with every shape rendered into the shader, as
// template-generated kernels are: no bounds test, a launch of exactly C * HW invocations, and
// the sizes pinned with `==`, which makes the launch a constant the rewrite can keep to.
// spec: sizes(c = 12, hw = 196), bind(x = input(c * hw), b = input(c), y = output(c * hw)), grid = (c * hw), constraints(c == 12 && hw == 196)
// fires: coarsen
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(16)
fn main(@builtin(global_invocation_id) global_id: vec3<u32>) {
    let gidx = global_id.x;
    let channel = gidx / 196u;
    y[gidx] = max(x[gidx] + b[channel], 0.0);
}

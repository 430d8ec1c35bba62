// Elementwise tanh: output_0_global[i] = tanh(input_0_global[i]).
// class: elementwise
// style: burn / cubecl generated WGSL: `input_0_global` / `output_0_global` `read_write` buffers, `const WORKGROUP_SIZE_X/Y/Z`, `@workgroup_size(16, 16, 1)` with the flat `id` (ABSOLUTE_POS) rebuilt from `global_id` and `num_workgroups`, `arrayLength(&output_0_global)` through a `u32(..)` cast, generated `var l_0_0 : u32; var l_0_1 : bool;` temporaries assigned later, `if l_0_1 { return; }` without parentheses
// spec: sizes(n = 6000), bind(input_0_global = input(n, range(-4.0, 4.0)), output_0_global = output(n)), workgroups = ((n + 255) / 256)

@group(0) @binding(0) var<storage, read_write> input_0_global: array<f32>;
@group(0) @binding(1) var<storage, read_write> output_0_global: array<f32>;

const WORKGROUP_SIZE_X = 16u;
const WORKGROUP_SIZE_Y = 16u;
const WORKGROUP_SIZE_Z = 1u;

@compute @workgroup_size(16, 16, 1)
fn main(
    @builtin(global_invocation_id) global_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
) {
    let id = (global_id.z * num_workgroups.x * WORKGROUP_SIZE_X * num_workgroups.y * WORKGROUP_SIZE_Y) + (global_id.y * num_workgroups.x * WORKGROUP_SIZE_X) + global_id.x;
    var l_0_0: u32;
    var l_0_1: bool;
    var l_0_2: f32;
    l_0_0 = u32(arrayLength(&output_0_global));
    l_0_1 = id >= l_0_0;
    if l_0_1 {
        return;
    }
    l_0_2 = input_0_global[id];
    l_0_2 = tanh(l_0_2);
    output_0_global[id] = l_0_2;
}

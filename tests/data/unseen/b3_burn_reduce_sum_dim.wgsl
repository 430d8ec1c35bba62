// Sum over the last axis: output[r] = sum_c input[r, c], with the input's strides and shapes and the reduced dimension read from an `info` buffer at run time.
// class: reduction
// style: burn / cubecl `reduce_dim_naive` style: `input_0_global` / `output_0_global` `read_write`, `info` storage of u32 {rank, input strides, input shape, output strides, output shape, dim}, flat `id` (ABSOLUTE_POS) from `global_id` / `num_workgroups` with `@workgroup_size(16, 16, 1)`, `arrayLength` bound, input offset rebuilt in a rank loop skipping `dim`, reduction loop over `shape_input_dim` with `j * stride_input_dim + offset_input`
// spec: sizes(rows = 24, cols = 320), bind(input_0_global = input(rows * cols), output_0_global = output(rows), info = input(values(2, cols, 1, rows, cols, 1, 1, rows, 1, 1))), workgroups = ((rows + 255) / 256)

@group(0) @binding(0) var<storage, read_write> input_0_global: array<f32>;
@group(0) @binding(1) var<storage, read_write> output_0_global: array<f32>;
@group(0) @binding(2) var<storage, read> info: array<u32, 10>;

const WORKGROUP_SIZE_X = 16u;
const WORKGROUP_SIZE_Y = 16u;
const WORKGROUP_SIZE_Z = 1u;

@compute @workgroup_size(16, 16, 1)
fn main(
    @builtin(global_invocation_id) global_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
) {
    let id = (global_id.z * num_workgroups.x * WORKGROUP_SIZE_X * num_workgroups.y * WORKGROUP_SIZE_Y) + (global_id.y * num_workgroups.x * WORKGROUP_SIZE_X) + global_id.x;
    let rank: u32 = info[0];
    let dim: u32 = info[4u * rank + 1u];
    if (id >= u32(arrayLength(&output_0_global))) {
        return;
    }
    var offset_input: u32 = 0u;
    for (var i: u32 = 0u; i < rank; i++) {
        let stride_input = info[1u + i];
        let stride_output = info[1u + 2u * rank + i];
        let shape_output = info[1u + 3u * rank + i];
        let num_block = id / stride_output % shape_output;
        if (i != dim) {
            offset_input += num_block * stride_input;
        }
    }
    let stride_input_dim = info[1u + dim];
    let shape_input_dim = info[1u + rank + dim];
    var sum = 0.0f;
    for (var j: u32 = 0u; j < shape_input_dim; j++) {
        let index = j * stride_input_dim + offset_input;
        sum += input_0_global[index];
    }
    output_0_global[id] = sum;
}

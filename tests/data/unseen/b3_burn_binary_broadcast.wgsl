// Broadcast add: out[r, c] = lhs[r, c] + rhs[0, c], with every shape and stride read from an `info` buffer at run time.
// class: elementwise
// style: burn / cubecl generated binary op with broadcasting: `info` storage of u32 {rank, lhs strides, lhs shape, rhs strides, rhs shape, out strides, out shape}, flat `id` (ABSOLUTE_POS) from `global_id` / `num_workgroups` with `@workgroup_size(16, 16, 1)`, `arrayLength` bound, per-operand offsets rebuilt in a `for (var i = 0u; i < rank; i++)` loop as `id / stride_out % shape * stride`
// spec: sizes(rows = 24, cols = 160), bind(lhs = input(rows * cols), rhs = input(cols), out = output(rows * cols), info = input(values(2, cols, 1, rows, cols, cols, 1, 1, cols, cols, 1, rows, cols))), workgroups = ((rows * cols + 255) / 256)

@group(0) @binding(0) var<storage, read_write> lhs: array<f32>;
@group(0) @binding(1) var<storage, read_write> rhs: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<storage, read> info: array<u32, 13>;

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
    if (id >= arrayLength(&out)) {
        return;
    }
    var index_lhs: u32 = 0u;
    var index_rhs: u32 = 0u;
    for (var i: u32 = 0u; i < rank; i++) {
        let stride_lhs = info[1u + i];
        let shape_lhs = info[1u + rank + i];
        let stride_rhs = info[1u + 2u * rank + i];
        let shape_rhs = info[1u + 3u * rank + i];
        let stride_out = info[1u + 4u * rank + i];
        index_lhs += id / stride_out % shape_lhs * stride_lhs;
        index_rhs += id / stride_out % shape_rhs * stride_rhs;
    }
    out[id] = lhs[index_lhs] + rhs[index_rhs];
}

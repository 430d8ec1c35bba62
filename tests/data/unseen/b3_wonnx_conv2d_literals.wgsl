// 2-D convolution NCHW, input [2, 8, 14, 14], weights [16, 8, 3, 3], bias [16], stride 1, padding 1: output [2, 16, 14, 14]; every shape rendered into the shader as a literal.
// class: conv
// style: wonnx rendered-template style: storage arrays wrapped in `struct Array { data: array<f32> }` (`var_input.data[..]`), `@workgroup_size(256, 1, 1)`, flat `global_id.x` guarded by a literal (`gidx < 6272u`) and split with literal `/` and `%`, u32 input coordinates `y * 1u + i * 1u - 1u` whose wrap-around below zero fails the `< 14u` test (no signed check), `result = x * w + result` accumulation seeded with the bias
// spec: sizes(n = 2, cin = 8, cout = 16, h = 14, w = 14), bind(var_input = input(n * cin * h * w), var_W = input(cout * cin * 9), var_B = input(cout), var_output = output(n * cout * h * w)), grid = (n * cout * h * w), constraints(n == 2, cin == 8, cout == 16, h == 14, w == 14), flops = 18 * n * cout * h * w * cin

struct Array {
  data: array<f32>,
};

@group(0) @binding(0) var<storage, read> var_input: Array;
@group(0) @binding(1) var<storage, read> var_W: Array;
@group(0) @binding(2) var<storage, read> var_B: Array;
@group(0) @binding(3) var<storage, read_write> var_output: Array;

@compute @workgroup_size(256, 1, 1)
fn main(@builtin(global_invocation_id) global_id: vec3<u32>) {
  let gidx = global_id.x;
  if (gidx < 6272u) {
    let batch = gidx / 3136u;
    let rest = gidx % 3136u;
    let m = rest / 196u;
    let rest2 = rest % 196u;
    let y = rest2 / 14u;
    let x = rest2 % 14u;
    var result: f32 = var_B.data[m];
    let base_index = batch * 1568u;
    let base_kernel_index = m * 72u;
    for (var c: u32 = 0u; c < 8u; c = c + 1u) {
      let base_channel_index = base_index + c * 196u;
      let base_channel_kernel_index = base_kernel_index + c * 9u;
      for (var i: u32 = 0u; i < 3u; i = i + 1u) {
        let tmp_y = y * 1u + i * 1u - 1u;
        if (tmp_y < 14u) {
          for (var j: u32 = 0u; j < 3u; j = j + 1u) {
            let tmp_x = x * 1u + j * 1u - 1u;
            if (tmp_x < 14u) {
              let tmp_index = base_channel_index + tmp_y * 14u + tmp_x;
              let index_kernel = base_channel_kernel_index + i * 3u + j;
              result = var_input.data[tmp_index] * var_W.data[index_kernel] + result;
            }
          }
        }
      }
    }
    var_output.data[gidx] = result;
  }
}

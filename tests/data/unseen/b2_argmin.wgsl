// Argmin per row: indices[r] = first c minimizing values[r, c] over values[rows, cols].
// class: argreduce
// style: tfjs-webgpu style argMinMax written with `select()` on a strict `<` compare, i32 loop counter cast to u32, params struct
// spec: sizes(rows = 16, cols = 250), bind(values = input(rows * cols), indices = output(rows), params = uniform(rows, cols)), grid = (rows)

struct Params {
  rows : u32,
  cols : u32,
}

@group(0) @binding(0) var<storage, read> values : array<f32>;
@group(0) @binding(1) var<storage, read_write> indices : array<u32>;
@group(0) @binding(2) var<uniform> params : Params;

@compute @workgroup_size(64)
fn argmin_rows(@builtin(global_invocation_id) gid : vec3<u32>) {
  let row = gid.x;
  if (row >= params.rows) {
    return;
  }
  let offset = row * params.cols;
  var best_val = values[offset];
  var best_idx = 0u;
  for (var c = 1; c < i32(params.cols); c++) {
    let v = values[offset + u32(c)];
    let better = v < best_val;
    best_val = select(best_val, v, better);
    best_idx = select(best_idx, u32(c), better);
  }
  indices[row] = best_idx;
}

// 2-D transpose: dst[c, r] = src[r, c] for src[rows, cols].
// class: transpose
// style: i32 indices throughout (`vec2<i32>(gid.xy)`), dims struct of i32, 2-D global id (x = column, y = row), wrapping `if`
// spec: sizes(rows = 56, cols = 88), bind(src = input(rows * cols), dst = output(rows * cols), dims = uniform(rows, cols)), grid = (cols, rows)

struct Dims {
  rows: i32,
  cols: i32,
}

@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> dims: Dims;

@compute @workgroup_size(16, 16, 1)
fn transpose2d(@builtin(global_invocation_id) gid: vec3<u32>) {
  let pos = vec2<i32>(gid.xy);
  let c = pos.x;
  let r = pos.y;
  if (r < dims.rows && c < dims.cols) {
    dst[c * dims.rows + r] = src[r * dims.cols + c];
  }
}

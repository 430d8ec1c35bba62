// Row max: dst[r] = max_c src[r, c] over src[rows, cols], starting from -3.4e38.
// class: reduction
// style: i32 dims struct, `const WG` with `workgroup_id.x * WG + local_invocation_id.x`, `loop { if .. { break; } ... continuing { .. } }`, `max()` accumulate
// spec: sizes(rows = 10, cols = 333), bind(src = input(rows * cols), dst = output(rows), dims = uniform(rows, cols)), grid = (rows)

struct Dims {
  rows: i32,
  cols: i32,
}

const WG: u32 = 128u;

@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> dims: Dims;

@compute @workgroup_size(WG)
fn reduce_max(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let r = i32(wid.x * WG + lid.x);
  if (r < dims.rows) {
    let base = r * dims.cols;
    var m: f32 = -3.4e38;
    var c: i32 = 0;
    loop {
      if (c >= dims.cols) {
        break;
      }
      m = max(m, src[base + c]);
      continuing {
        c = c + 1;
      }
    }
    dst[r] = m;
  }
}

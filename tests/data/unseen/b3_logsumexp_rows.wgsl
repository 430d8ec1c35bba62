// Row logsumexp over x[rows, cols]: out[r] = m + log(sum_c exp(x[r, c] - m)) with m the row max.
// class: reduction
// style: one invocation per workgroup (`@workgroup_size(1)`, row = `workgroup_id.x`, launched as `workgroups = (rows)`), `while` loops with manual `c = c + 1u`, max through `if (v > m) { m = v; }`, `log(s) + m` at the end, i32 `rows` in the params struct compared after a cast
// spec: sizes(rows = 30, cols = 333), bind(x = input(rows * cols, range(-10.0, 10.0)), out = output(rows), params = uniform(rows, cols)), workgroups = (rows)

struct Params {
  rows: i32,
  cols: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(1)
fn logsumexp(@builtin(workgroup_id) wid: vec3<u32>) {
  let row = wid.x;
  if (i32(row) >= params.rows) {
    return;
  }
  let base = row * params.cols;
  var m = x[base];
  var c = 1u;
  while (c < params.cols) {
    let v = x[base + c];
    if (v > m) {
      m = v;
    }
    c = c + 1u;
  }
  var s = 0.0;
  c = 0u;
  while (c < params.cols) {
    s = s + exp(x[base + c] - m);
    c = c + 1u;
  }
  out[row] = log(s) + m;
}

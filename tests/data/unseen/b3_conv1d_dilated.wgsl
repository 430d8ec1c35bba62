// 1-D convolution (cross-correlation) with dilation and zero padding: y[b, co, t] = bias[co] + sum over ci, k of x[b, ci, t * stride + k * dilation - padding] * w[co, ci, k] (taps outside the signal read as 0).
// class: conv
// style: PyTorch Conv1d port with `stride`, `dilation` and `padding` as i32 fields of the params struct, 2-D id (x = output position, y = batch * Cout + co), tap position in i32 `t * stride + k * dilation - padding`, out-of-signal taps zeroed by `select(0.0, x[clamped], inside)` (clamped load, no branch)
// spec: sizes(batch = 2, cin = 8, cout = 12, len = 96), bind(x = input(batch * cin * len), w = input(cout * cin * 3), bias = input(cout), y = output(batch * cout * len), p = uniform(batch, cin, cout, len, len, 3, 1, 2, 2)), grid = (len, batch * cout), flops = 6 * batch * cout * len * cin

struct Conv1dParams {
  batch: u32,
  c_in: u32,
  c_out: u32,
  len_in: i32,
  len_out: u32,
  kernel_size: u32,
  stride: i32,
  dilation: i32,
  padding: i32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<uniform> p: Conv1dParams;

@compute @workgroup_size(32, 2, 1)
fn conv1d(@builtin(global_invocation_id) gid: vec3<u32>) {
  let t = gid.x;
  let bco = gid.y;
  if (t >= p.len_out || bco >= p.batch * p.c_out) {
    return;
  }
  let b = bco / p.c_out;
  let co = bco % p.c_out;

  var acc = bias[co];
  for (var ci = 0u; ci < p.c_in; ci++) {
    let x_row = (b * p.c_in + ci) * u32(p.len_in);
    let w_row = (co * p.c_in + ci) * p.kernel_size;
    for (var k = 0u; k < p.kernel_size; k++) {
      let pos = i32(t) * p.stride + i32(k) * p.dilation - p.padding;
      let inside = pos >= 0 && pos < p.len_in;
      let xv = select(0.0, x[x_row + u32(clamp(pos, 0, p.len_in - 1))], inside);
      acc += xv * w[w_row + k];
    }
  }
  y[bco * p.len_out + t] = acc;
}

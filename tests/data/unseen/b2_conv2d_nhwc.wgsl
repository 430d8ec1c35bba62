// 2-D convolution, NHWC input [N, H, W, Cin], HWIO filter [3, 3, Cin, Cout], bias [Cout], "same" zero padding (stride 1): output [N, H, W, Cout].
// class: conv
// style: tfjs / onnxruntime-web style channels-last conv2d with i32 coordinates, 3-D id (x = out channel, y = column, z = batch * H + row), out-of-image taps skipped by `if (...) { acc += ...; }` (no `continue`, no clamp)
// spec: sizes(n = 2, h = 12, w = 12, cin = 8, cout = 16), bind(inp = input(n * h * w * cin), filt = input(9 * cin * cout), bias = input(cout), outp = output(n * h * w * cout), conv = uniform(n, h, w, cin, cout)), grid = (cout, w, n * h), flops = 18 * n * h * w * cin * cout

struct ConvParams {
  batch: i32,
  height: i32,
  width: i32,
  in_channels: i32,
  out_channels: i32,
}

@group(0) @binding(0) var<storage, read> inp: array<f32>;
@group(0) @binding(1) var<storage, read> filt: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> outp: array<f32>;
@group(0) @binding(4) var<uniform> conv: ConvParams;

@compute @workgroup_size(16, 4, 1)
fn conv2d_nhwc(@builtin(global_invocation_id) gid: vec3<u32>) {
  let oc = i32(gid.x);
  let ox = i32(gid.y);
  let bz = i32(gid.z);
  if (oc >= conv.out_channels || ox >= conv.width || bz >= conv.batch * conv.height) {
    return;
  }
  let b = bz / conv.height;
  let oy = bz % conv.height;

  var acc: f32 = bias[oc];
  for (var ky: i32 = 0; ky < 3; ky++) {
    let iy = oy + ky - 1;
    for (var kx: i32 = 0; kx < 3; kx++) {
      let ix = ox + kx - 1;
      if (iy >= 0 && iy < conv.height && ix >= 0 && ix < conv.width) {
        let x_base = ((b * conv.height + iy) * conv.width + ix) * conv.in_channels;
        let w_base = (ky * 3 + kx) * conv.in_channels;
        for (var ic: i32 = 0; ic < conv.in_channels; ic++) {
          acc += inp[x_base + ic] * filt[(w_base + ic) * conv.out_channels + oc];
        }
      }
    }
  }
  outp[((b * conv.height + oy) * conv.width + ox) * conv.out_channels + oc] = acc;
}

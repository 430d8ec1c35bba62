// Depthwise 5x5 convolution, NCHW x[N, C, H, W], per-channel filter [C, 5, 5], stride 1, zero padding 2 ("same"): y[N, C, H, W].
// class: depthwise
// style: MobileNet-port style depthwise conv with `const KERNEL = 5` / `PAD = 2`, 3-D id (x, y, batch * C + channel), i32 taps with `continue` on out-of-image rows and columns
// spec: sizes(n = 2, c = 8, h = 20, w = 24), bind(x = input(n * c * h * w), weights = input(c * 25), y = output(n * c * h * w), params = uniform(n, c, h, w)), grid = (w, h, n * c), flops = 50 * n * c * h * w

const KERNEL: i32 = 5;
const PAD: i32 = 2;

struct Params {
  batch: u32,
  channels: u32,
  height: u32,
  width: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> weights: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(8, 8, 1)
fn depthwise_conv(@builtin(global_invocation_id) gid: vec3<u32>) {
  if (gid.x >= params.width || gid.y >= params.height || gid.z >= params.batch * params.channels) {
    return;
  }
  let ox = i32(gid.x);
  let oy = i32(gid.y);
  let H = i32(params.height);
  let W = i32(params.width);
  let ch = gid.z % params.channels;
  let plane = gid.z * params.height * params.width;
  let wbase = ch * u32(KERNEL * KERNEL);

  var acc = 0.0;
  for (var ky = 0; ky < KERNEL; ky = ky + 1) {
    let iy = oy + ky - PAD;
    if (iy < 0 || iy >= H) {
      continue;
    }
    for (var kx = 0; kx < KERNEL; kx = kx + 1) {
      let ix = ox + kx - PAD;
      if (ix < 0 || ix >= W) {
        continue;
      }
      let xv = x[plane + u32(iy * W + ix)];
      let wv = weights[wbase + u32(ky * KERNEL + kx)];
      acc = acc + xv * wv;
    }
  }
  y[plane + gid.y * params.width + gid.x] = acc;
}

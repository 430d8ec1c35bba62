// Average pooling, 3x3 window, stride 2, no padding, channels-last x[N, H, W, C] -> y[N, (H - 3) / 2 + 1, (W - 3) / 2 + 1, C].
// class: filter
// style: onnxruntime-web style pool over a flat output index decomposed with `/` and `%` (c fastest), `const` window/stride, `while` loops, `x = x + y`
// spec: sizes(n = 2, h = 17, w = 21, c = 8), bind(x = input(n * h * w * c), y = output(n * ((h - 3) / 2 + 1) * ((w - 3) / 2 + 1) * c), shape = uniform(n, h, w, c)), grid = (n * ((h - 3) / 2 + 1) * ((w - 3) / 2 + 1) * c)

const KSIZE: u32 = 3u;
const STRIDE: u32 = 2u;

struct Shape {
  n: u32,
  h: u32,
  w: u32,
  c: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> shape: Shape;

@compute @workgroup_size(128)
fn avg_pool(@builtin(global_invocation_id) global_id: vec3<u32>) {
  let out_h = (shape.h - KSIZE) / STRIDE + 1u;
  let out_w = (shape.w - KSIZE) / STRIDE + 1u;
  let total = shape.n * out_h * out_w * shape.c;
  let index = global_id.x;
  if (index >= total) {
    return;
  }

  let ch = index % shape.c;
  let ox = (index / shape.c) % out_w;
  let oy = (index / (shape.c * out_w)) % out_h;
  let b = index / (shape.c * out_w * out_h);

  var sum = 0.0;
  var ky = 0u;
  while (ky < KSIZE) {
    let iy = oy * STRIDE + ky;
    var kx = 0u;
    while (kx < KSIZE) {
      let ix = ox * STRIDE + kx;
      sum = sum + x[((b * shape.h + iy) * shape.w + ix) * shape.c + ch];
      kx = kx + 1u;
    }
    ky = ky + 1u;
  }
  y[index] = sum / f32(KSIZE * KSIZE);
}

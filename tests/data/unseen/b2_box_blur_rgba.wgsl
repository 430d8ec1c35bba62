// 3x3 box blur of an RGBA image stored as array<vec4<f32>> [height, width], borders clamped to the edge.
// class: filter
// style: webgpu-samples image-filter style on a storage buffer of `vec4<f32>` pixels, 2-D `global_invocation_id.xy`, `vec2<i32>` coordinates with `clamp` to the image, helper `fn` for the pixel load
// spec: sizes(w = 40, h = 30), bind(src = input(w * h), dst = output(w * h), image = uniform(w, h)), grid = (w, h)

struct ImageInfo {
  width: u32,
  height: u32,
}

@group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;
@group(0) @binding(2) var<uniform> image: ImageInfo;

fn load_clamped(p: vec2<i32>) -> vec4<f32> {
  let size = vec2<i32>(i32(image.width), i32(image.height));
  let q = clamp(p, vec2<i32>(0, 0), size - vec2<i32>(1, 1));
  return src[q.y * size.x + q.x];
}

@compute @workgroup_size(8, 8)
fn box_blur(@builtin(global_invocation_id) gid: vec3<u32>) {
  if (gid.x >= image.width || gid.y >= image.height) {
    return;
  }
  let center = vec2<i32>(gid.xy);
  var color = vec4<f32>(0.0);
  for (var dy = -1; dy <= 1; dy++) {
    for (var dx = -1; dx <= 1; dx++) {
      color += load_clamped(center + vec2<i32>(dx, dy));
    }
  }
  dst[gid.y * image.width + gid.x] = color / 9.0;
}

// Sobel gradient magnitude of a single-channel image img[height, width]: sqrt(gx^2 + gy^2), neighbours clamped to the border.
// class: filter
// style: image-processing-demo style Sobel with eight explicit taps through a clamped `px(x, y)` helper, flat 1-D id split into (x, y) with `%` and `/`, i32 coordinates
// spec: sizes(w = 48, h = 36), bind(img = input(w * h), mag = output(w * h), size = uniform(w, h)), grid = (w * h)

struct Size {
    width: i32,
    height: i32,
}

@group(0) @binding(0) var<storage, read> img: array<f32>;
@group(0) @binding(1) var<storage, read_write> mag: array<f32>;
@group(0) @binding(2) var<uniform> size: Size;

fn px(x: i32, y: i32) -> f32 {
    let cx = clamp(x, 0, size.width - 1);
    let cy = clamp(y, 0, size.height - 1);
    return img[cy * size.width + cx];
}

@compute @workgroup_size(256)
fn sobel(@builtin(global_invocation_id) global_id: vec3<u32>) {
    let idx = i32(global_id.x);
    if (idx >= size.width * size.height) {
        return;
    }
    let x = idx % size.width;
    let y = idx / size.width;

    let tl = px(x - 1, y - 1);
    let tc = px(x, y - 1);
    let tr = px(x + 1, y - 1);
    let ml = px(x - 1, y);
    let mr = px(x + 1, y);
    let bl = px(x - 1, y + 1);
    let bc = px(x, y + 1);
    let br = px(x + 1, y + 1);

    let gx = (tr + 2.0 * mr + br) - (tl + 2.0 * ml + bl);
    let gy = (bl + 2.0 * bc + br) - (tl + 2.0 * tc + tr);
    mag[idx] = sqrt(gx * gx + gy * gy);
}

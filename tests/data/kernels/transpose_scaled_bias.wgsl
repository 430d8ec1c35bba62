// A transposing copy with arithmetic around it, spelled otherwise: the read runs along y (the
// input is stored column-major), the write along x; early returns for ids past the edges; a
// scale from the uniform and a bias read along the write's axis.
// spec: sizes(h = 37, w = 66), bind(a = input(h * w), bias = input(w), out = output(h * w), p = uniform(h, w, 0.5)), grid = (w, h)
// fires: transpose-tile
struct P {
    h: u32,
    w: u32,
    scale: f32,
}

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> bias: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> p: P;

@compute @workgroup_size(8, 8, 1)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= p.w) {
        return;
    }
    if (id.y >= p.h) {
        return;
    }
    let v = a[id.x * p.h + id.y];
    out[id.y * p.w + id.x] = v * p.scale + bias[id.x];
}

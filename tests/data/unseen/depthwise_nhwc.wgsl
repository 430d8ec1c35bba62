// Depthwise 3x3 convolution, NHWC layout, stride 1, zero "same" padding, filter [3, 3, C] plus per-channel bias.
// class: depthwise
// style: channels-last indexing, 3-D global id (x = channel, y = column, z = n * H + row), i32 offsets with a combined bounds test, helper fn for the flat index
// spec: sizes(batch = 2, h = 20, w = 21, channels = 32), bind(x = input(batch * h * w * channels), dw_filter = input(9 * channels), bias = input(channels), y = output(batch * h * w * channels), p = uniform(batch, h, w, channels)), grid = (channels, w, batch * h)

struct Params {
    batch: u32,
    height: u32,
    width: u32,
    channels: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> dw_filter: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<uniform> p: Params;

fn nhwc(n: u32, row: u32, col: u32, c: u32) -> u32 {
    return ((n * p.height + row) * p.width + col) * p.channels + c;
}

@compute @workgroup_size(32, 2, 1)
fn depthwise_conv(@builtin(global_invocation_id) gid: vec3<u32>) {
    let c = gid.x;
    let col = gid.y;
    if (c >= p.channels || col >= p.width || gid.z >= p.batch * p.height) {
        return;
    }
    let n = gid.z / p.height;
    let row = gid.z % p.height;

    var acc = bias[c];
    for (var dy: i32 = -1; dy <= 1; dy++) {
        for (var dx: i32 = -1; dx <= 1; dx++) {
            let iy = i32(row) + dy;
            let ix = i32(col) + dx;
            if (iy >= 0 && iy < i32(p.height) && ix >= 0 && ix < i32(p.width)) {
                let tap = u32((dy + 1) * 3 + (dx + 1));
                acc += x[nhwc(n, u32(iy), u32(ix), c)] * dw_filter[tap * p.channels + c];
            }
        }
    }
    y[nhwc(n, row, col, c)] = acc;
}

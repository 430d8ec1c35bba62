// A 1x1 (pointwise) convolution over a batch: x is the pixel's flat index in its image, y the
// output channel, z the image; the sum starts at the bias and ends in a ReLU.
// spec: sizes(batch = 3, cin = 20, cout = 9, hw = 70), bind(x = input(batch * cin * hw), w = input(cout * cin), b = input(cout), y = output(batch * cout * hw), dims = uniform(batch, cin, cout, hw)), grid = (hw, cout, batch)
// fires: implicit-gemm
struct Dims { batch: u32, cin: u32, cout: u32, hw: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<uniform> dims: Dims;

@compute @workgroup_size(64, 1, 1)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let p = id.x;
    let o = id.y;
    let n = id.z;
    if (p < dims.hw && o < dims.cout && n < dims.batch) {
        var acc = b[o];
        var c = 0u;
        while (c < dims.cin) {
            acc += w[o * dims.cin + c] * x[(n * dims.cin + c) * dims.hw + p];
            c += 1u;
        }
        y[(n * dims.cout + o) * dims.hw + p] = max(acc, 0.0);
    }
}

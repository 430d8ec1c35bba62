// y = residual + W x: a decode-time projection that adds its result to the residual stream.
// Used for the attention output projection and the MLP down projection.
struct Dims {
    rows: u32,
    cols: u32,
}

@group(0) @binding(0) var<storage, read> w: array<f32>;
@group(0) @binding(1) var<storage, read> v: array<f32>;
@group(0) @binding(2) var<storage, read> residual: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> dims: Dims;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let r = gid.x;
    if (r >= dims.rows) {
        return;
    }
    var sum = 0.0;
    var c = 0u;
    loop {
        if (c >= dims.cols) {
            break;
        }
        sum += w[r * dims.cols + c] * v[c];
        c += 1u;
    }
    out[r] = residual[r] + sum;
}

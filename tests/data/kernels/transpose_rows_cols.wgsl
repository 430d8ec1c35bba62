// Matrix transpose as KernelBench writes it: one element per invocation, the read along x
// (coalesced), the write a row of the output apart for neighbouring invocations.
// spec: sizes(rows = 45, cols = 70), bind(src = input(rows * cols), dst = output(rows * cols), dims = uniform(rows, cols)), grid = (cols, rows)
// fires: transpose-tile
struct Dims {
    rows: u32,
    cols: u32,
}

@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> dims: Dims;

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let c = gid.x;
    let r = gid.y;
    if (r < dims.rows && c < dims.cols) {
        dst[c * dims.rows + r] = src[r * dims.cols + c];
    }
}

// y = A x for a row-major matrix A (rows x cols): one row per invocation.
struct Params {
    rows: u32,
    cols: u32,
}

@group(0) @binding(0) var<storage, read> mat: array<f32>;
@group(0) @binding(1) var<storage, read> vec_in: array<f32>;
@group(0) @binding(2) var<storage, read_write> vec_out: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.x;
    if (row >= params.rows) {
        return;
    }
    var dot = 0.0;
    for (var c = 0u; c < params.cols; c++) {
        dot += mat[row * params.cols + c] * vec_in[c];
    }
    vec_out[row] = dot;
}

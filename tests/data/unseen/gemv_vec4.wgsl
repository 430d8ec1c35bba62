// Matrix-vector product y = A x with A [rows, cols] row-major, read four columns at a time as vec4.
// class: gemv
// style: array<vec4<f32>> loads with dot(), cols / 4u inner count, one row per invocation, const workgroup size
// spec: sizes(rows = 96, cols = 256), bind(mat = input(rows * cols / 4), vec_x = input(cols / 4), vec_y = output(rows), params = uniform(rows, cols)), grid = (rows), constraints(cols % 4 == 0), flops = 2 * rows * cols

struct Params {
    rows: u32,
    cols: u32,
}

const WG_SIZE: u32 = 64u;

@group(0) @binding(0) var<storage, read> mat: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> vec_x: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> vec_y: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(WG_SIZE)
fn gemv(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.x;
    if (row >= params.rows) {
        return;
    }
    let cols4 = params.cols / 4u;
    let row_base = row * cols4;
    var acc = 0.0;
    for (var j = 0u; j < cols4; j++) {
        acc += dot(mat[row_base + j], vec_x[j]);
    }
    vec_y[row] = acc;
}

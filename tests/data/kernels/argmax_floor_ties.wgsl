// Row argmax as a draft spells it: the best value starts at the lowest float and the loop at 0,
// the test written `best < v`, the index stored before the value. The values are whole numbers
// (`floor`), so rows have many ties: the first index of the largest value wins.
// spec: sizes(rows = 6, cols = 300), bind(x = input(rows * cols, range(0.0, 4.0)), idx = output(rows), dims = uniform(rows, cols)), grid = (rows)
// fires: reduce
struct Dims { rows: u32, cols: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> idx: array<u32>;
@group(0) @binding(2) var<uniform> dims: Dims;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let r = gid.x;
    if (r < dims.rows) {
        var best = -3.40282347e38;
        var at = 0u;
        for (var c = 0u; c < dims.cols; c = c + 1u) {
            let v = floor(x[r * dims.cols + c]);
            if (best < v) {
                at = c;
                best = v;
            }
        }
        idx[r] = at;
    }
}

// Row argmin that keeps the last of equal minima, spelled with one test and two `select`s, over
// small integers (many ties), with `i32` indices and a `while` loop.
// spec: sizes(rows = 5, cols = 333), bind(x = input(rows * cols, range(0.0, 3.0)), out = output(rows), dims = uniform(rows, cols)), grid = (rows)
// fires: reduce
struct Dims { rows: u32, cols: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<i32>;
@group(0) @binding(2) var<uniform> dims: Dims;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let r = gid.x;
    if (r >= dims.rows) {
        return;
    }
    let n = i32(dims.cols);
    let base = i32(r) * n;
    var lowest = i32(x[base]);
    var where_ = 0;
    var j = 1;
    while (j < n) {
        let v = i32(x[base + j]);
        let take = v <= lowest;
        lowest = select(lowest, v, take);
        where_ = select(where_, j, take);
        j++;
    }
    out[r] = where_;
}

// Index of the largest value of each row of a [rows, cols] matrix (first index on ties), as u32.
// class: argreduce
// style: loop { ... continuing { j += 1u; break if j >= cols; } }, if (v > best) { best = v; best_idx = j; }, u32 output
// spec: sizes(rows = 40, cols = 500), bind(values = input(rows * cols), indices = output(rows), size = uniform(rows, cols)), grid = (rows)

struct Size {
    rows: u32,
    cols: u32,
}

@group(0) @binding(0) var<storage, read> values: array<f32>;
@group(0) @binding(1) var<storage, read_write> indices: array<u32>;
@group(0) @binding(2) var<uniform> size: Size;

@compute @workgroup_size(64)
fn argmax(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.x;
    if (row >= size.rows) {
        return;
    }
    let base = row * size.cols;
    var best: f32 = values[base];
    var best_idx: u32 = 0u;
    var j: u32 = 1u;
    if (size.cols > 1u) {
        loop {
            let v = values[base + j];
            if (v > best) {
                best = v;
                best_idx = j;
            }
            continuing {
                j += 1u;
                break if j >= size.cols;
            }
        }
    }
    indices[row] = best_idx;
}

// Maximum of each row of a (rows x cols) matrix.
@group(0) @binding(0) var<storage, read> data: array<f32>;
@group(0) @binding(1) var<storage, read_write> row_max: array<f32>;
@group(0) @binding(2) var<uniform> rows: u32;
@group(0) @binding(3) var<uniform> cols: u32;

@compute @workgroup_size(128)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let r = gid.x;
    if (r < rows) {
        let start = r * cols;
        var best = data[start];
        var c = 1u;
        while (c < cols) {
            best = max(best, data[start + c]);
            c += 1u;
        }
        row_max[r] = best;
    }
}

// A matrix-vector product blocked by hand over rows: each invocation keeps four rows' sums in a
// zero-constructed array, the column loop spelled `loop { if .. { break; } .. }`, the rows in
// inner loops. Written for none of the operators: the canonical form writes the row loops out
// (unroll-registers), splits the array (scalarise) and de-blocks it (one row per invocation over
// a launch four times as wide), which is the row reduction `reduce` splits across lanes.
// spec: sizes(m = 37, n = 50), bind(p = uniform(m, n), w = input(m * n), x = input(n), y = output(m)), grid = (cdiv(m, 4)), flops = 2 * m * n
// fires: reduce
struct P { rows: u32, cols: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read> w: array<f32>;
@group(0) @binding(2) var<storage, read> x: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let r = 4u * id.x;
    var acc = array<f32, 4>();
    var c: u32 = 0u;
    loop {
        if (c >= p.cols) { break; }
        let xv = x[c];
        for (var i = 0u; i < 4u; i = i + 1u) {
            acc[i] = acc[i] + w[(r + i) * p.cols + c] * xv;
        }
        c = c + 1u;
    }
    for (var i = 0u; i < 4u; i = i + 1u) {
        if (r + i < p.rows) {
            y[r + i] = acc[i];
        }
    }
}

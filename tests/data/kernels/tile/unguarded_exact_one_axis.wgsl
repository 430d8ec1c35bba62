// Guarded on the rows only (the launch's x is exact by a constraint, y is not): tile keeps the
// row guard and adds the column bound. Signed ids, the sizes as i32 members, a `loop` with
// `continuing`, and the row and column read from the transposed axes (rows on x).
// spec: sizes(m = 37, n = 32, k = 9), bind(a = input(m * k), b = input(k * n), c = output(m * n), p = uniform(m, n, k)), grid = (m, n), constraints(n % 16 == 0)
// expect: tile
struct P { rows: i32, cols: i32, depth: i32 }
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> p: P;

@compute @workgroup_size(4, 16)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let r = i32(g.x);
    let col = i32(g.y);
    if (r >= p.rows) {
        return;
    }
    var s = 0.0;
    var t = 0;
    loop {
        if (t >= p.depth) { break; }
        s = s + a[r * p.depth + t] * b[t * p.cols + col];
        continuing { t = t + 1; }
    }
    c[r * p.cols + col] = s;
}

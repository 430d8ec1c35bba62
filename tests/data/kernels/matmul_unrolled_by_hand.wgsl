// A matmul whose reduction loop is unrolled by four by hand (four copies of the accumulation,
// one spelled `acc = acc + ..`), the row's base in a `let`; the spec promises that k is a
// multiple of four.
// spec: sizes(m = 33, n = 20, k = 24), bind(a = input(m * k), b = input(k * n), c = output(m * n), d = uniform(m, n, k)), grid = (n, m), constraints(k % 4 == 0)
// fires: tile tile-blocked tile-split-k implicit-gemm
struct D {
    m: u32,
    n: u32,
    k: u32,
}

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> d: D;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let col = gid.x;
    let row = gid.y;
    if (row >= d.m || col >= d.n) {
        return;
    }
    let base = row * d.k;
    var acc = 0.0;
    for (var t = 0u; t < d.k; t += 4u) {
        acc += a[base + t] * b[t * d.n + col];
        acc += a[base + t + 1u] * b[(t + 1u) * d.n + col];
        acc += a[base + t + 2u] * b[(t + 2u) * d.n + col];
        acc = acc + a[base + t + 3u] * b[(t + 3u) * d.n + col];
    }
    c[row * d.n + col] = acc;
}

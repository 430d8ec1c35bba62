// A batched matmul with the batch folded into the flat id: `b = i / (m * n)`, `r = (i / n) % m`,
// `c = i % n`. The analysis reads three digits of the flat id: column, row and batch (slots x, y,
// z). m = 33 and n = 20 are no multiples of a block, so the row and column guards the rewrite adds
// are exercised.
// spec: sizes(bt = 3, m = 33, n = 20, k = 17), bind(a = input(bt * m * k), b = input(bt * k * n), c = output(bt * m * n), d = uniform(bt, m, n, k)), grid = (bt * m * n)
// expect: tile
// split-k: skip
struct D { bt: u32, m: u32, n: u32, k: u32 }
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> d: D;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let idx = gid.x;
    if (idx >= d.bt * d.m * d.n) { return; }
    let bi = idx / (d.m * d.n);
    let r = (idx / d.n) % d.m;
    let col = idx % d.n;
    var acc = 0.0;
    for (var t = 0u; t < d.k; t++) { acc += a[(bi * d.m + r) * d.k + t] * b[(bi * d.k + t) * d.n + col]; }
    c[idx] = acc;
}

// Two batch digits folded into the flat id (`h = (i / (m * n)) % heads`, `b = i / (m * n *
// heads)`): four digits, more than the three slots of a virtual id. Skipped, and the reason says
// how many digits tile found.
// spec: sizes(bt = 2, heads = 3, m = 8, n = 8, k = 8), bind(a = input(bt * heads * m * k), b = input(bt * heads * k * n), c = output(bt * heads * m * n), d = uniform(bt, heads, m, n, k)), grid = (bt * heads * m * n)
// expect: skip
struct D { bt: u32, heads: u32, m: u32, n: u32, k: u32 }
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> d: D;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let idx = gid.x;
    if (idx >= d.bt * d.heads * d.m * d.n) { return; }
    let bi = idx / (d.m * d.n * d.heads);
    let h = (idx / (d.m * d.n)) % d.heads;
    let r = (idx / d.n) % d.m;
    let col = idx % d.n;
    let p = bi * d.heads + h;
    var acc = 0.0;
    for (var t = 0u; t < d.k; t++) { acc += a[(p * d.m + r) * d.k + t] * b[(p * d.k + t) * d.n + col]; }
    c[idx] = acc;
}

// A batched matmul over one flat id, as naive ports of torch.bmm write it: batch, row and column
// taken apart with `/` and `%` (`i / (m * n)`, `(i / n) % m`, `i % n`), an early-return guard,
// `+=` in a `for`.
// spec: sizes(bt = 3, m = 20, n = 12, k = 16), bind(lhs = input(bt * m * k), rhs = input(bt * k * n), out = output(bt * m * n), d = uniform(bt, m, n, k)), grid = (bt * m * n)
// fires: tile tile-blocked reduce coarsen unroll hoist param lift-workgroup-size
struct D {
    bt: u32,
    m: u32,
    n: u32,
    k: u32,
}

@group(0) @binding(0) var<storage, read> lhs: array<f32>;
@group(0) @binding(1) var<storage, read> rhs: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> d: D;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= d.bt * d.m * d.n) {
        return;
    }
    let b = i / (d.m * d.n);
    let r = (i / d.n) % d.m;
    let c = i % d.n;
    var acc = 0.0;
    for (var t = 0u; t < d.k; t++) {
        acc += lhs[(b * d.m + r) * d.k + t] * rhs[(b * d.k + t) * d.n + c];
    }
    out[i] = acc;
}

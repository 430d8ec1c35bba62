// Per-row mean and variance of a 2-D grid's rows (row = id.y), written with one counter `c`
// declared without a value and reset before each `loop { if .. { break; } .. }`, and `for`-less.
// spec: sizes(n = 5, width = 333), bind(v = input(n * width), stats = output(n * 2), dims = uniform(n, width)), grid = (1, n)
// fires: reduce
struct Dims { n: u32, width: u32 }
@group(0) @binding(0) var<storage, read> v: array<f32>;
@group(0) @binding(1) var<storage, read_write> stats: array<f32>;
@group(0) @binding(2) var<uniform> dims: Dims;

@compute @workgroup_size(1, 32)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.y >= dims.n) {
        return;
    }
    let base = id.y * dims.width;
    var c: u32;
    var acc: f32 = 0.0;
    c = 0u;
    loop {
        if (c >= dims.width) { break; }
        acc = acc + v[base + c];
        c = c + 1u;
    }
    let mean = acc / f32(dims.width);
    var sq: f32 = 0.0;
    c = 0u;
    loop {
        if (c >= dims.width) { break; }
        let d = v[base + c] - mean;
        sq = sq + d * d;
        c = c + 1u;
    }
    stats[id.y * 2u] = mean;
    stats[id.y * 2u + 1u] = sq / f32(dims.width);
}

// A matrix multiply tiled by hand: 16×16 slices of A and B staged through workgroup memory, one
// element per invocation padded with zeros by `select`, the slice loop stepping by the tile
// depth, the products accumulated with `fma`. canon writes the staging back as the loads it
// holds (destage), which tile then re-tiles.
// spec: sizes(m = 45, k = 37, n = 50), bind(a = input(m * k), b = input(k * n), c = output(m * n), dims = uniform(m, k, n)), workgroups = (cdiv(n, 16), cdiv(m, 16), 1), flops = 2 * m * n * k
// fires: tile tile-blocked
struct Dims { m: u32, k: u32, n: u32 }
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;

const TS: u32 = 16u;
var<workgroup> sa: array<array<f32, 16>, 16>;
var<workgroup> sb: array<array<f32, 16>, 16>;

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = wid.y * TS + lid.y;
    let col = wid.x * TS + lid.x;
    var sum: f32 = 0.0;
    for (var k0 = 0u; k0 < dims.k; k0 += TS) {
        let ak = k0 + lid.x;
        sa[lid.y][lid.x] = select(0.0, a[row * dims.k + ak], row < dims.m && ak < dims.k);
        let bk = k0 + lid.y;
        sb[lid.y][lid.x] = select(0.0, b[bk * dims.n + col], bk < dims.k && col < dims.n);
        workgroupBarrier();
        for (var kk = 0u; kk < TS; kk++) {
            sum = fma(sa[lid.y][kk], sb[kk][lid.x], sum);
        }
        workgroupBarrier();
    }
    if (row < dims.m && col < dims.n) {
        c[row * dims.n + col] = sum;
    }
}

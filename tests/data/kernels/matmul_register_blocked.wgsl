// A product blocked in registers by hand, as people tune one without shared memory: each
// invocation computes a 4 x 2 block of C in a private array zeroed by loops, its updates and
// guarded stores written out. The canonical form drops the zeroing (the array starts at zero), splits the array into
// scalars and de-blocks it (one output per invocation over a launch 4 x 2 times as wide), so the
// tilings choose their own blocking. The launch rule rounds to the block, as the author's did.
// spec: sizes(m = 36, k = 20, n = 22), bind(dims = uniform(m, k, n), a = input(m * k), b = input(k * n), c = output(m * n)), workgroups = (cdiv(n, 16), cdiv(m, 32)), flops = 2 * m * n * k
// fires: tile tile-blocked
struct Dims { M: u32, K: u32, N: u32 }
@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> c: array<f32>;

const TM: u32 = 4u;
const TN: u32 = 2u;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.y * TM;
    let col = gid.x * TN;
    var acc: array<array<f32, TN>, TM>;
    for (var i = 0u; i < TM; i++) {
        for (var j = 0u; j < TN; j++) {
            acc[i][j] = 0.0;
        }
    }
    for (var k = 0u; k < dims.K; k++) {
        let b0 = b[k * dims.N + col];
        let b1 = b[k * dims.N + col + 1u];
        let a0 = a[row * dims.K + k];
        let a1 = a[(row + 1u) * dims.K + k];
        let a2 = a[(row + 2u) * dims.K + k];
        let a3 = a[(row + 3u) * dims.K + k];
        acc[0][0] += a0 * b0;
        acc[0][1] += a0 * b1;
        acc[1][0] += a1 * b0;
        acc[1][1] += a1 * b1;
        acc[2][0] += a2 * b0;
        acc[2][1] += a2 * b1;
        acc[3][0] += a3 * b0;
        acc[3][1] += a3 * b1;
    }
    if (col < dims.N) {
        if (row < dims.M) { c[row * dims.N + col] = acc[0][0]; }
        if (row + 1u < dims.M) { c[(row + 1u) * dims.N + col] = acc[1][0]; }
        if (row + 2u < dims.M) { c[(row + 2u) * dims.N + col] = acc[2][0]; }
        if (row + 3u < dims.M) { c[(row + 3u) * dims.N + col] = acc[3][0]; }
    }
    if (col + 1u < dims.N) {
        if (row < dims.M) { c[row * dims.N + col + 1u] = acc[0][1]; }
        if (row + 1u < dims.M) { c[(row + 1u) * dims.N + col + 1u] = acc[1][1]; }
        if (row + 2u < dims.M) { c[(row + 2u) * dims.N + col + 1u] = acc[2][1]; }
        if (row + 3u < dims.M) { c[(row + 3u) * dims.N + col + 1u] = acc[3][1]; }
    }
}

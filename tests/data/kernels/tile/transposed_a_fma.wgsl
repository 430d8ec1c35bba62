// A stored transposed (k-major, A[k][row]), an `fma` accumulation, a `loop` with `continuing`,
// K recovered from a buffer's length (a spec size, not a uniform).
// spec: sizes(m = 50, n = 33, k = 27), bind(at = input(k * m), b = input(k * n), c = output(m * n), dims = uniform(m, n)), grid = (n, m)
// expect: tile
struct Dims {
    m: u32,
    n: u32,
}

@group(0) @binding(0) var<storage, read> at: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let kdim = arrayLength(&at) / dims.m;
    if (gid.x >= dims.n) {
        return;
    }
    if (gid.y >= dims.m) {
        return;
    }
    var acc = 0.0;
    var k = 0u;
    loop {
        if (k >= kdim) {
            break;
        }
        acc = fma(at[k * dims.m + gid.y], b[k * dims.n + gid.x], acc);
        continuing {
            k += 1u;
        }
    }
    c[gid.y * dims.n + gid.x] = acc;
}

// Attention one query row per invocation in three passes (the row's maximum, the sum of the
// exponentials, then each output column as the weights applied to V, the scores computed again
// in every pass), an early return for rows past the end, the head width before the sequence
// length in the uniform. Heads of 12 columns: fewer than 16 lanes' 4 columns, so most lanes of
// the rewrite hold no column. (Small: lavapipe stops a loop after 65535 iterations in one
// invocation, counted across the calls of a coarsened invocation too.)
// spec: sizes(n = 30, hd = 12), bind(Q = input(n * hd), K = input(n * hd), V = input(n * hd), O = output(n * hd), u = uniform(hd, n)), grid = (n), tolerance = 1e-3
// fires: flash-attention
struct U {
    hd: u32,
    n: u32,
}

@group(0) @binding(0) var<storage, read> Q: array<f32>;
@group(0) @binding(1) var<storage, read> K: array<f32>;
@group(0) @binding(2) var<storage, read> V: array<f32>;
@group(0) @binding(3) var<storage, read_write> O: array<f32>;
@group(0) @binding(4) var<uniform> u: U;

@compute @workgroup_size(16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let r = gid.x;
    if (r >= u.n) {
        return;
    }
    let inv = inverseSqrt(f32(u.hd));
    var mx = -1e30;
    for (var t = 0u; t < u.n; t++) {
        var acc = 0.0;
        for (var c = 0u; c < u.hd; c++) {
            acc += Q[r * u.hd + c] * K[t * u.hd + c];
        }
        mx = max(mx, acc * inv);
    }
    var z = 0.0;
    for (var t = 0u; t < u.n; t++) {
        var acc = 0.0;
        for (var c = 0u; c < u.hd; c++) {
            acc += Q[r * u.hd + c] * K[t * u.hd + c];
        }
        z += exp(acc * inv - mx);
    }
    for (var c = 0u; c < u.hd; c++) {
        var o = 0.0;
        for (var t = 0u; t < u.n; t++) {
            var acc = 0.0;
            for (var e = 0u; e < u.hd; e++) {
                acc += Q[r * u.hd + e] * K[t * u.hd + e];
            }
            o += exp(acc * inv - mx) / z * V[t * u.hd + c];
        }
        O[r * u.hd + c] = o;
    }
}

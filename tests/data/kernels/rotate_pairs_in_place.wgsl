// Rotary embedding applied in place: each invocation rotates one (even, odd) pair of `q` by an
// angle of its position, builds the rotated pair as a `vec2` of loads and stores its two
// components back over the pair it read. The second store must see the rotated pair as it was
// computed, not reload `q` after the first store changed it.
// spec: sizes(n = 300, half_dim = 32), bind(q = inout(2 * n), cfg = uniform(n, half_dim, 7, 10000.0)), grid = (n)
// fires: coarsen
struct Cfg { pairs: u32, half_dim: u32, pos: u32, base: f32 }

@group(0) @binding(0) var<storage, read_write> q: array<f32>;
@group(0) @binding(1) var<uniform> cfg: Cfg;

struct Rot { c: f32, s: f32 }

fn rot(angle: f32) -> Rot {
    return Rot(cos(angle), sin(angle));
}

fn rotate(r: Rot, x: f32, y: f32) -> vec2<f32> {
    return vec2(r.c * x - r.s * y, r.s * x + r.c * y);
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= cfg.pairs) {
        return;
    }
    let freq = pow(cfg.base, -f32(i % cfg.half_dim) / f32(cfg.half_dim));
    let r = rot(f32(cfg.pos) * freq);
    let k = 2u * i;
    let rotated = rotate(r, q[k], q[k + 1u]);
    q[k] = rotated.x;
    q[k + 1u] = rotated.y;
}

// Particles stored as vec4 (x, y, z, mass), read one component at a time.
// spec: sizes(n = 500), bind(pos = input(n), vel = input(n), out = output(n), p = uniform(n, 0.01)), grid = (n)
// fires: vectorize coarsen
// skips: reduce
struct Params { n: u32, dt: f32 }
@group(0) @binding(0) var<storage, read> pos: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> vel: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> out: array<vec4<f32>>;
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= p.n) { return; }
    let m = max(pos[i].w, 0.001);
    let x = pos[i].x + vel[i].x * p.dt / m;
    let y = pos[i].y + vel[i].y * p.dt / m;
    if (pos[i].z > 0.5) {
        out[i] = vec4<f32>(x, y, pos[i].z, m);
    } else {
        out[i] = vec4<f32>(x, y, 0.0, m);
    }
}

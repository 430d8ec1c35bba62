// The tall-skinny spelling: the flat id through `let`s, the sizes in a `vec4<u32>` uniform, a
// `while` loop with `+=` and `++`, the output at the flat id itself, and B stored transposed.
// spec: sizes(m = 37, n = 6, k = 19), bind(x = input(m * k), wt = input(n * k), out = output(m * n), shape = uniform(m, n, k, 0)), grid = (m * n)
// expect: tile
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> wt: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> shape: vec4<u32>;

@compute @workgroup_size(32)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let total = shape.x * shape.y;
    if (i >= total) {
        return;
    }
    let r = i / shape.y;
    let c = i % shape.y;
    var acc: f32 = 0.0;
    var j = 0u;
    while (j < shape.z) {
        acc += x[r * shape.z + j] * wt[c * shape.z + j];
        j++;
    }
    out[i] = acc;
}

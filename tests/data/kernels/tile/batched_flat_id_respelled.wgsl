// The batched flat id of batched_flat_id.wgsl spelled another way: the row by subtraction, the
// batch as a quotient of a quotient, signed ids, the sizes in a vec4 uniform, and the launch
// exact (no early return: the whole body under one `if`).
// spec: sizes(bt = 2, m = 19, n = 24, k = 13), bind(x = input(bt * m * k), y = input(bt * k * n), out = output(bt * m * n), shape = uniform(bt, m, n, k)), grid = (bt * m * n)
// expect: tile
// split-k: skip
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> y: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> shape: vec4<u32>;

@compute @workgroup_size(128)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let M = shape.y;
    let N = shape.z;
    let K = shape.w;
    if (i < shape.x * M * N) {
        let q = i / N;
        let col = i - q * N;
        let row = q % M;
        let batch = q / M;
        var s: f32 = 0.0;
        var t = 0u;
        while (t < K) {
            s = fma(x[batch * M * K + row * K + t], y[batch * K * N + t * N + col], s);
            t = t + 1u;
        }
        out[i] = s;
    }
}

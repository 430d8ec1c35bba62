// 1-D convolution (cross-correlation) with no padding: y[b, co, t] = bias[co] + sum over ci, k of x[b, ci, t + k] * w[co, ci, k].
// class: conv
// style: flat 1-D global id split into (b, co, t) with / and %, kernel size from the uniform, nested for loops, x = x + y
// spec: sizes(batch = 2, cin = 8, cout = 16, len = 100, ks = 5), bind(x = input(batch * cin * len), w = input(cout * cin * ks), bias = input(cout), y = output(batch * cout * (len - ks + 1)), p = uniform(batch, cin, cout, len, ks, len - ks + 1)), grid = (batch * cout * (len - ks + 1))

struct Conv1dParams {
    batch: u32,
    c_in: u32,
    c_out: u32,
    l_in: u32,
    kernel_size: u32,
    l_out: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<uniform> p: Conv1dParams;

@compute @workgroup_size(128)
fn main(@builtin(global_invocation_id) global_id: vec3<u32>) {
    let idx = global_id.x;
    if (idx >= p.batch * p.c_out * p.l_out) {
        return;
    }
    let t = idx % p.l_out;
    let co = (idx / p.l_out) % p.c_out;
    let b = idx / (p.l_out * p.c_out);

    var sum = bias[co];
    for (var ci = 0u; ci < p.c_in; ci = ci + 1u) {
        let x_base = (b * p.c_in + ci) * p.l_in + t;
        let w_base = (co * p.c_in + ci) * p.kernel_size;
        for (var k = 0u; k < p.kernel_size; k = k + 1u) {
            sum = sum + x[x_base + k] * w[w_base + k];
        }
    }
    y[idx] = sum;
}

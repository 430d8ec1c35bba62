// LayerNorm over a (B, T, C) tensor as a third-party draft spells it: an early `return`, one `sum`
// reset and reused by both statistics loops, and the per-row mean and rstd written to side outputs
// between the loops. (`layernorm_split_bt.wgsl` takes the row apart with `/` and `%` instead.)
// spec: sizes(B = 2, T = 3, C = 300), bind(inp = input(B * T * C), weight = input(C), bias = input(C), out = output(B * T * C), mean = output(B * T), rstd = output(B * T), p = uniform(B, T, C)), grid = (B * T)
// fires: reduce
struct P { B: u32, T: u32, C: u32 }
@group(0) @binding(0) var<storage, read> inp: array<f32>;
@group(0) @binding(1) var<storage, read> weight: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<storage, read_write> mean: array<f32>;
@group(0) @binding(5) var<storage, read_write> rstd: array<f32>;
@group(0) @binding(6) var<uniform> p: P;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let idx = gid.x;
    if (idx >= p.B * p.T) {
        return;
    }
    let base = idx * p.C;
    var sum = 0.0;
    for (var i = 0u; i < p.C; i++) {
        sum += inp[base + i];
    }
    let m = sum / f32(p.C);
    sum = 0.0;
    for (var i = 0u; i < p.C; i++) {
        let d = inp[base + i] - m;
        sum += d * d;
    }
    let s = 1.0 / sqrt(sum / f32(p.C) + 1e-5);
    mean[idx] = m;
    rstd[idx] = s;
    for (var i = 0u; i < p.C; i++) {
        let n = s * (inp[base + i] - m);
        out[base + i] = n * weight[i] + bias[i];
    }
}

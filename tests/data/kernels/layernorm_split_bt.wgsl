// LayerNorm over a (B, T, C) tensor with the row taken apart from a flat id, `b = idx / T` and
// `t = idx % T`, every index rebuilt as `b * T * C + t * C + i`, every buffer declared
// `read_write` whether it is written or not (as ports of llm.c and generated code declare them),
// and the statistics and side outputs interleaved: the index is affine over the id's digits, not
// over the id, and the inputs are read-only in effect.
// spec: sizes(B = 2, T = 5, C = 300), bind(inp = input(B * T * C), weight = input(C), bias = input(C), out = output(B * T * C), mean = output(B * T), rstd = output(B * T), params = uniform(B, T, C)), grid = (B * T)
// fires: reduce
struct Params { B: u32, T: u32, C: u32 }
@group(0) @binding(0) var<storage, read_write> inp: array<f32>;
@group(0) @binding(1) var<storage, read_write> weight: array<f32>;
@group(0) @binding(2) var<storage, read_write> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<storage, read_write> mean: array<f32>;
@group(0) @binding(5) var<storage, read_write> rstd: array<f32>;
@group(0) @binding(6) var<uniform> params: Params;

@compute @workgroup_size(128)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let T = params.T;
    let C = params.C;
    if (id.x >= params.B * T) { return; }
    let b = id.x / T;
    let t = id.x % T;
    var acc: f32 = 0.0;
    for (var c: u32 = 0u; c < C; c = c + 1u) {
        acc = acc + inp[b * T * C + t * C + c];
    }
    let mu = acc / f32(C);
    mean[b * T + t] = mu;
    acc = 0.0;
    for (var c: u32 = 0u; c < C; c = c + 1u) {
        let dev = inp[b * T * C + t * C + c] - mu;
        acc = acc + dev * dev;
    }
    let inv = inverseSqrt(acc / f32(C) + 1e-5);
    rstd[b * T + t] = inv;
    for (var c: u32 = 0u; c < C; c = c + 1u) {
        out[b * T * C + t * C + c] = (inp[b * T * C + t * C + c] - mu) * inv * weight[c] + bias[c];
    }
}

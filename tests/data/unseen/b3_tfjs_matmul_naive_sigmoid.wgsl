// GEMM with a fused epilogue, one scalar output per invocation: out[M, N] = sigmoid(A[M, K] B[K, N] + bias[N]).
// class: gemm
// style: tfjs-webgpu naive (no shared memory) matmul with fused bias + activation: i32 `Uniforms` carrying `outShape : vec2<i32>`, `outShapeStrides : i32` and `size`, flat `getGlobalIndex()`-style 1-D index, `getCoordsFromIndex` helper `fn` returning `vec2<i32>`, `getOutputIndexFromCoords` via `dot(coords, vec2<i32>(stride, 1))`, `isnan`-free `activation` helper `1.0 / (1.0 + exp(-a))`, `setOutputAtIndex` store helper
// spec: sizes(m = 40, n = 72, k = 64), bind(A = input(m * k), B = input(k * n), bias = input(n), result = output(m * n), uniforms = uniform(m, n, n, m * n, k)), grid = (m * n), flops = 2 * m * n * k

struct Uniforms {
  outShape : vec2<i32>,
  outShapeStrides : i32,
  size : i32,
  dimInner : i32,
};

@group(0) @binding(0) var<storage, read> A : array<f32>;
@group(0) @binding(1) var<storage, read> B : array<f32>;
@group(0) @binding(2) var<storage, read> bias : array<f32>;
@group(0) @binding(3) var<storage, read_write> result : array<f32>;
@group(0) @binding(4) var<uniform> uniforms : Uniforms;

fn getCoordsFromIndex(index : i32) -> vec2<i32> {
  let d0 = index / uniforms.outShapeStrides;
  let d1 = index - d0 * uniforms.outShapeStrides;
  return vec2<i32>(d0, d1);
}

fn getOutputIndexFromCoords(coords : vec2<i32>) -> i32 {
  return dot(coords, vec2<i32>(uniforms.outShapeStrides, 1));
}

fn setOutputAtIndex(flatIndex : i32, value : f32) {
  result[flatIndex] = value;
}

fn activation(a : f32) -> f32 {
  return 1.0 / (1.0 + exp(-a));
}

@compute @workgroup_size(64, 1, 1)
fn main(@builtin(global_invocation_id) globalId : vec3<u32>) {
  let index = i32(globalId.x);
  if (index < uniforms.size) {
    let coords = getCoordsFromIndex(index);
    let row = coords.x;
    let col = coords.y;
    var acc = 0.0;
    for (var i = 0; i < uniforms.dimInner; i++) {
      acc = acc + A[row * uniforms.dimInner + i] * B[i * uniforms.outShape.y + col];
    }
    var value = acc + bias[col];
    value = activation(value);
    setOutputAtIndex(getOutputIndexFromCoords(coords), value);
  }
}

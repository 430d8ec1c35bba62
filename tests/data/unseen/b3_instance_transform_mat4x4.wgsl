// Per-instance vertex transform: out_positions[i] = models[i / verts] * positions[i] (each instance's vertices multiplied by that instance's mat4x4 model matrix).
// class: elementwise
// style: webgpu-samples style compute pre-transform: `struct Instance { model : mat4x4<f32> }` in an `array<Instance>`, `vec4<f32>` positions, flat `global_invocation_id.x` with an `instanceCount * vertexCount` bound, instance gathered with `/`, `@workgroup_size(128)`
// spec: sizes(instances = 12, verts = 100), bind(instances_buf = input(instances), positions = input(instances * verts), out_positions = output(instances * verts), params = uniform(instances, verts)), grid = (instances * verts), flops = 28 * instances * verts

struct Instance {
  model : mat4x4<f32>,
}

struct Params {
  instanceCount : u32,
  vertexCount : u32,
}

@group(0) @binding(0) var<storage, read> instances_buf : array<Instance>;
@group(0) @binding(1) var<storage, read> positions : array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> out_positions : array<vec4<f32>>;
@group(0) @binding(3) var<uniform> params : Params;

@compute @workgroup_size(128)
fn transform(@builtin(global_invocation_id) gid : vec3<u32>) {
  let index = gid.x;
  if (index >= params.instanceCount * params.vertexCount) {
    return;
  }
  let instance = index / params.vertexCount;
  let model = instances_buf[instance].model;
  out_positions[index] = model * positions[index];
}

// cheat: writes rgba16float instead of the baseline's rgba8unorm storage texture, so the app's
// texture would no longer fit the layout
// kernel: BLUR
// fixture: kernels
// expect: level=3 reason=interface-mismatch
@group(0) @binding(0) var src: texture_2d<f32>;
@group(0) @binding(1) var smp: sampler;
@group(0) @binding(2) var dst: texture_storage_2d<rgba16float, write>;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let size = textureDimensions(dst);
    if (g.x >= size.x || g.y >= size.y) {
        return;
    }
    textureStore(dst, g.xy, textureLoad(src, vec2<i32>(g.xy), 0));
}

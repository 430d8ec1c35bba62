// cheat: skips the bilinear sample and uses the nearest texel instead (cheaper, and close on
// smooth images, but not what the kernel computes)
// kernel: BLUR
// fixture: kernels
// expect: level=4 reason=wrong-values
@group(0) @binding(0) var src: texture_2d<f32>;
@group(0) @binding(1) var smp: sampler;
@group(0) @binding(2) var dst: texture_storage_2d<rgba8unorm, write>;

@compute @workgroup_size(2, 2)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let size = textureDimensions(dst);
    if (g.x >= size.x || g.y >= size.y) {
        return;
    }
    var acc = vec4<f32>(0.0);
    for (var dy = -1; dy <= 1; dy++) {
        for (var dx = -1; dx <= 1; dx++) {
            let p = clamp(vec2<i32>(g.xy) + vec2<i32>(dx, dy), vec2<i32>(0), vec2<i32>(size) - 1);
            acc += textureLoad(src, p, 0);
        }
    }
    let s = textureLoad(src, vec2<i32>(g.xy), 0);
    textureStore(dst, g.xy, acc / 9.0 * 0.5 + s * 0.5);
}

use kf_macros::kernelfoundry;
use kf_runtime::Kernel;

#[kernelfoundry(
    source = r#"
        @group(0) @binding(0) var src: texture_2d<f32>;
        @group(0) @binding(1) var dst: texture_storage_2d<r32float, write>;

        @compute @workgroup_size(8, 8)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            textureStore(dst, g.xy, textureLoad(src, g.xy, 0));
        }
    "#,
    sizes(w = 64, h = 64),
    bind(dst = storage_texture(w, h)),
    grid = (w, h),
)]
static K: Kernel;

fn main() {}

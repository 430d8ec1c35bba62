use kf_macros::kernelfoundry;
use kf_runtime::Kernel;
use kf_runtime::__private::{BindingKind, SampleType, TexelFormat, TextureAccess, TextureDim};

#[kernelfoundry(
    source = r#"
        @group(0) @binding(0) var src: texture_2d<f32>;
        @group(0) @binding(1) var smp: sampler;
        @group(0) @binding(2) var dst: texture_storage_2d<rgba8unorm, write>;

        @compute @workgroup_size(8, 8)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let size = textureDimensions(dst);
            if (g.x < size.x && g.y < size.y) {
                let uv = (vec2<f32>(g.xy) + 0.5) / vec2<f32>(size);
                textureStore(dst, g.xy, textureSampleLevel(src, smp, uv, 0.0));
            }
        }
    "#,
    sizes(w = 64, h = 64),
    bind(src = texture(w, h, format = rgba16float), dst = storage_texture(w, h)),
    grid = (w, h),
)]
pub static RESAMPLE: Kernel;

#[kernelfoundry(
    source = r#"
        override X: u32;
        override Y: u32;
        override THREADS: u32;
        override ITEMS: u32 = 4u;
        @group(0) @binding(0) var<storage, read> x: array<f32>;
        @group(0) @binding(1) var<storage, read_write> y: array<f32>;
        @group(0) @binding(2) var<storage, read> dims: vec2<u32>;

        @compute @workgroup_size(X, Y)
        fn main(@builtin(local_invocation_index) l: u32, @builtin(workgroup_id) w: vec3<u32>) {
            for (var k = 0u; k < ITEMS; k++) {
                let i = (w.x * ITEMS + k) * THREADS + l;
                if (i < dims.x * dims.y) { y[i] = 2.0 * x[i]; }
            }
        }
    "#,
    sizes(rows = 64, cols = 48),
    bind(x = input(rows * cols), y = output(rows * cols), dims = input(values(rows, cols))),
    workgroups = (min(cdiv(rows * cols, 256), 65535)),
    params(X = [32, 64], Y = [2, 4], THREADS = X * Y, ITEMS = [4, 2]),
    constraints(THREADS * ITEMS == 256, pow2(X)),
)]
pub static TEMPLATE: Kernel;

fn main() {
    assert_eq!(
        RESAMPLE.bindings[0].kind,
        BindingKind::SampledTexture {
            dim: TextureDim::D2,
            sample: SampleType::Float { filterable: true }
        }
    );
    assert_eq!(RESAMPLE.bindings[1].kind, BindingKind::Sampler { filtering: true });
    assert_eq!(
        RESAMPLE.bindings[2].kind,
        BindingKind::StorageTexture {
            dim: TextureDim::D2,
            format: TexelFormat::Rgba8unorm,
            access: TextureAccess::Write
        }
    );
    // The first candidates and the derived value are the baseline's pipeline constants.
    let constants: Vec<(&str, f64)> = TEMPLATE.baseline.constants_pairs();
    assert_eq!(constants, vec![("X", 32.0), ("Y", 2.0), ("THREADS", 64.0)]);
    assert_eq!(TEMPLATE.baseline.workgroup_size, [32, 2, 1]);
    assert_eq!(
        TEMPLATE.baseline.dispatch.workgroups([32, 2, 1], |_| Some(64), 65535),
        Ok([16, 1, 1])
    );
}

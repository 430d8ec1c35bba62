//! Reshaping: what it proves from the IR, and the rewrites it makes.

use super::*;
use crate::operators::testing::{apply, kernel};

const BLUR: &str = r#"
struct Dims { w: u32, h: u32 }
@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;
@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_id) unused: vec3<u32>) {
    if (gid.x >= dims.w || gid.y >= dims.h) { return; }
    dst[gid.y * dims.w + gid.x] = src[gid.y * dims.w + gid.x] * 0.5;
}
"#;
const ATTR: &str = r#"source = "", sizes(w = 40, h = 24), bind(dims = uniform(w, h), src = input(w * h), dst = output(w * h)), grid = (w, h)"#;

#[test]
fn a_2d_kernel_reading_only_its_global_id_gets_other_shapes() {
    let k = kernel(BLUR, ATTR);
    let rws = apply(&Reshape, &k).unwrap();
    let steps: Vec<&str> = rws.iter().map(|r| r.step.as_str()).collect();
    assert!(steps.contains(&"reshape(32x8)"), "{steps:?}");
    assert!(steps.contains(&"reshape(256x1)"), "{steps:?}");
    assert!(!steps.contains(&"reshape(8x8)"), "the parent's own shape");
    assert!(
        !steps.contains(&"reshape(32x32)"),
        "over the 256-invocation limit"
    );
    let r = crate::operators::testing::find(&rws, "reshape(64x4)");
    assert_eq!(r.program.workgroup_size, [64, 4, 1]);
    assert!(r.program.wgsl.contains("@workgroup_size(KF_WG_X, KF_WG_Y)"));
    assert_eq!(r.program.dispatch, k.baseline.dispatch);
}

#[test]
fn an_override_shape_is_reshaped_through_its_constants() {
    let wgsl = BLUR
        .replace("@workgroup_size(8, 8)", "@workgroup_size(BX, BY)")
        .replace(
            "struct Dims",
            "override BX: u32 = 8u;\noverride BY: u32 = 8u;\nstruct Dims",
        );
    let k = kernel(&wgsl, ATTR);
    let rws = apply(&Reshape, &k).unwrap();
    let r = crate::operators::testing::find(&rws, "reshape(16x16)");
    assert_eq!(r.program.wgsl, k.baseline.wgsl, "no text change needed");
    assert_eq!(r.program.workgroup_size, [16, 16, 1]);
}

#[test]
fn skips_what_depends_on_the_shape() {
    let cases = [
        (
            BLUR.replace("* 0.5", "* f32(unused.x)"),
            "LocalInvocationId",
        ),
        (
            BLUR.replace("@compute", "var<workgroup> t: array<f32, 64>;\n@compute")
                .replace("* 0.5", "* t[0]"),
            "workgroup memory",
        ),
        (
            BLUR.replace("if (gid.x", "workgroupBarrier();\n    if (gid.x"),
            "barrier",
        ),
    ];
    for (wgsl, why) in cases {
        let k = kernel(&wgsl, ATTR);
        let e = apply(&Reshape, &k).unwrap_err();
        assert!(e.0.contains(why), "{why}: {e}");
    }
    let k = kernel(
        BLUR,
        &ATTR.replace("grid = (w, h)", "workgroups = (w / 8, h / 8)"),
    );
    assert!(
        apply(&Reshape, &k)
            .unwrap_err()
            .0
            .contains("workgroup count")
    );
    let k = kernel(BLUR, &ATTR.replace("grid = (w, h)", "grid = (w * h)"));
    assert!(apply(&Reshape, &k).unwrap_err().0.contains("1-D grid"));
}

//! `transpose-tile` on the corpus: the transposing copies it tiles (reading along either axis)
//! and the kernels it leaves alone.

use super::*;
use crate::operators::testkit::{self, check_valid, kernel};

#[test]
fn transposing_copies_are_tiled_whichever_axis_they_read_along() {
    for (name, read, needle) in [
        (
            "transpose_rows_cols.wgsl",
            "x",
            "kfx_tile[(kfx_l.y + 8u) * 33u + kfx_l.x] = src[",
        ),
        (
            "transpose_scaled_bias.wgsl",
            "y",
            "kfx_tile[(kfx_l.y + 24u) * 33u + kfx_l.x] = a[",
        ),
    ] {
        let kernel = kernel(name);
        let rewrites = testkit::apply(&TransposeTile, &kernel, &testkit::plain())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let [r] = &rewrites[..] else {
            panic!("{name}: {} rewrites", rewrites.len())
        };
        assert_eq!(check_valid(&kernel, r), [32, 8, 1], "{name}");
        assert!(r.step.contains(&format!("read along {read}")), "{}", r.step);
        let wgsl = r.program.wgsl.as_ref();
        assert!(wgsl.contains(needle), "{name}: no `{needle}` in\n{wgsl}");
        assert!(wgsl.contains("kfx_body(vec3<u32>("), "{wgsl}");
        assert_eq!(r.program.dispatch.mode, DispatchMode::Workgroups);
    }
}

#[test]
fn copies_that_do_not_transpose_are_left_alone() {
    for (name, why) in [
        (
            "gelu_flat_rows.wgsl",
            "no bounds test of the invocation id's x",
        ),
        ("add_2d.wgsl", "0 reads run across the write's axis"),
        ("matmul_flat_id.wgsl", "does not use a two-dimensional id"),
    ] {
        let kernel = kernel(name);
        let skip = testkit::apply(&TransposeTile, &kernel, &testkit::plain()).expect_err(name);
        assert!(skip.0.contains(why), "{name}: {skip}");
    }
}

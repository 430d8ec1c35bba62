//! Tests of the implicit GEMM on the corpus and on respellings of a convolution. Running the
//! rewrites is `tests/it/operators.rs`'s job.

use super::*;
use crate::operators::testkit::{self, apply, check_valid};

fn conv(body: &str) -> kf_runtime::resolve::ResolvedKernel {
    let spec = "sizes(batch = 2, cin = 5, cout = 7, h = 9, w = 11), bind(input = input(batch * cin * h * w), weight = input(cout * cin * 9), output = output(batch * cout * h * w), conv = uniform(batch, cin, cout, h, w)), grid = (w, h, batch * cout)";
    let wgsl = format!(
        "struct Conv {{ batch: u32, in_ch: u32, out_ch: u32, height: u32, width: u32 }}
@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read> weight: array<f32>;
@group(0) @binding(2) var<storage, read_write> output: array<f32>;
@group(0) @binding(3) var<uniform> conv: Conv;
{body}"
    );
    testkit::resolve("conv.wgsl", spec, &wgsl)
}

#[test]
fn the_corpus_fires_and_skips_as_its_headers_say() {
    let mut fired = 0;
    for k in testkit::corpus() {
        let result = apply(&ImplicitGemm, &k.kernel, &testkit::h200());
        if k.fires.iter().any(|f| f == "implicit-gemm") {
            fired += 1;
            let rewrites = result.unwrap_or_else(|e| panic!("{}: skipped: {e}", k.name));
            // Every configuration, except that with one pixel axis blocks of the same size are
            // one rewrite.
            let mut steps: Vec<&str> = rewrites.iter().map(|r| r.step.as_str()).collect();
            steps.sort_unstable();
            steps.dedup();
            assert_eq!(steps.len(), rewrites.len(), "{}: {steps:?}", k.name);
            assert!(
                rewrites.len() >= 5 && rewrites.len() <= CONFIGS.len(),
                "{}",
                k.name
            );
            for r in &rewrites {
                assert_eq!(check_valid(&k.kernel, r)[0], r.program.workgroup_size[0]);
            }
        } else if k.skips.iter().any(|f| f == "implicit-gemm") {
            assert!(result.is_err(), "{}: must skip", k.name);
        }
    }
    assert!(fired >= 2);
}

#[test]
fn the_launch_covers_pixel_blocks_and_channel_blocks_of_every_batch() {
    let k = testkit::corpus()
        .into_iter()
        .find(|k| k.name == "conv2d_nchw.wgsl")
        .unwrap()
        .kernel;
    let rewrites = apply(&ImplicitGemm, &k, &testkit::h200()).unwrap();
    let r = &rewrites[0];
    assert_eq!(
        r.step,
        "implicit-gemm(8x8 pixels x 64 channels, 4x4 per invocation, k18)"
    );
    let sizes: HashMap<String, u64> = [("batch", 2), ("cin", 5), ("cout", 7), ("h", 9), ("w", 11)]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
    let groups = r
        .program
        .workgroups(|n| sizes.get(n).copied(), 65535)
        .unwrap();
    // 11 columns in blocks of 8, 9 rows in blocks of 8, 2 batches x 1 block of 64 channels.
    assert_eq!(groups, [2, 2, 2]);
    let text = &r.program.wgsl;
    for expected in [
        "let kfc_d = u32(conv.out_ch);",
        // The padding test stays on the pixel side. Slices are two 3x3 filters deep, so the
        // filter's counters come from the place in the slice and the channel adds the slice's.
        "let kfc_c2 = kfc_s2 + i32(kfc_kk % kfc_t2);",
        "let kfc_c0 = kfc_s0 + u32(kfc_k0s / 9u + kfc_r1);",
        // 18 x 64 pixels over 256 invocations: the fifth element is half a share.
        "if kfc_tid < 128u && kfc_k < kfc_kn {",
        "if kfc_tid < 128u { kfc_ta[",
        "kfc_n0 + kfc_j < kfc_d && ",
    ] {
        assert!(text.contains(expected), "missing `{expected}`:\n{text}");
    }
}

#[test]
fn kernels_outside_the_pattern_are_skipped_with_the_reason() {
    // A depthwise convolution: both operands read the channel.
    let depthwise = conv(
        "@compute @workgroup_size(8, 8, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= conv.width || gid.y >= conv.height || gid.z >= conv.batch * conv.out_ch) { return; }
    let c = gid.z % conv.out_ch;
    var acc = 0.0;
    for (var t = 0u; t < 9u; t++) {
        acc += input[(gid.z * conv.height + gid.y) * conv.width + gid.x] * weight[c * 9u + t];
    }
    output[(gid.z * conv.height + gid.y) * conv.width + gid.x] = acc;
}",
    );
    let skip = apply(&ImplicitGemm, &depthwise, &testkit::h200()).unwrap_err();
    assert!(skip.0.contains("operands"), "{skip}");
    // No guard on z: blocks of channels could name outputs the baseline never writes, unless
    // the launch is exact along z (one invocation deep, `batch * cout` of them), where the
    // rewrite bounds z itself by that extent, read from the uniform.
    let unguarded = |wg_z: u32| {
        conv(&format!(
            "@compute @workgroup_size(8, 4, {wg_z})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
    if (gid.x >= conv.width || gid.y >= conv.height) {{ return; }}
    var acc = 0.0;
    for (var ic = 0u; ic < conv.in_ch; ic++) {{
        acc += input[(ic * conv.height + gid.y) * conv.width + gid.x] * weight[gid.z * conv.in_ch + ic];
    }}
    output[(gid.z * conv.height + gid.y) * conv.width + gid.x] = acc;
}}"
        ))
    };
    let exact = unguarded(1);
    let rewrites = apply(&ImplicitGemm, &exact, &testkit::h200()).unwrap();
    for r in &rewrites {
        assert!(
            r.program
                .wgsl
                .contains("(kfc_gid).z < (u32(conv.batch) * u32(conv.out_ch))"),
            "{}",
            r.program.wgsl
        );
        check_valid(&exact, r);
    }
    // Two invocations deep: `batch * cout` may be odd, and the baseline's last workgroup
    // writes past it.
    let skip = apply(&ImplicitGemm, &unguarded(2), &testkit::h200()).unwrap_err();
    assert!(skip.0.contains("not exact"), "{skip}");
}

#[test]
fn a_tap_zeroed_by_select_is_a_padded_load_in_either_orientation() {
    let nest = |tap: &str| {
        conv(&format!(
            "@compute @workgroup_size(8, 8, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
    if (gid.x >= conv.width || gid.y >= conv.height || gid.z >= conv.batch * conv.out_ch) {{ return; }}
    let n = gid.z / conv.out_ch;
    let c = gid.z % conv.out_ch;
    var acc = 0.0;
    for (var ic = 0u; ic < conv.in_ch; ic++) {{
        for (var t = 0u; t < 9u; t++) {{
            let iy = i32(gid.y) + i32(t / 3u) - 1;
            let ix = i32(gid.x) + i32(t % 3u) - 1;
            let inside = iy >= 0 && iy < i32(conv.height) && ix >= 0 && ix < i32(conv.width);
            let cy = u32(clamp(iy, 0, i32(conv.height) - 1));
            let cx = u32(clamp(ix, 0, i32(conv.width) - 1));
            let v = input[((n * conv.in_ch + ic) * conv.height + cy) * conv.width + cx];
            {tap}
            acc += xv * weight[(c * conv.in_ch + ic) * 9u + t];
        }}
    }}
    output[(gid.z * conv.height + gid.y) * conv.width + gid.x] = acc;
}}"
        ))
    };
    for tap in [
        "let xv = select(0.0, v, inside);",
        "let xv = select(v, 0.0, !inside);",
        "var xv = 0.0; if (inside) { xv = v; }",
    ] {
        let rewrites = apply(&ImplicitGemm, &nest(tap), &testkit::h200())
            .unwrap_or_else(|e| panic!("`{tap}`: skipped: {e}"));
        assert!(rewrites.len() >= 5, "`{tap}`");
        // The test comes back as the padding of the staged slice.
        let text = &rewrites[0].program.wgsl;
        assert!(text.contains("clamp("), "`{tap}`:\n{text}");
    }
    // Anything but zero outside is not padding.
    let skip = apply(
        &ImplicitGemm,
        &nest("let xv = select(1.0, v, inside);"),
        &testkit::h200(),
    )
    .unwrap_err();
    assert!(skip.0.contains("not a load"), "{skip}");
}

#[test]
fn slices_deepened_to_whole_taps_fall_back_where_they_would_not_fit() {
    // A 5x5 filter: 25 taps. Slices 25 deep fit WebGPU's 16 KiB of workgroup memory for the smaller
    // blocks; the larger ones keep their 16-deep slices rather than being dropped.
    let k = conv(
        "@compute @workgroup_size(8, 8, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= conv.width || gid.y >= conv.height || gid.z >= conv.batch * conv.out_ch) { return; }
    let n = gid.z / conv.out_ch;
    let c = gid.z % conv.out_ch;
    var acc = 0.0;
    for (var ic = 0u; ic < conv.in_ch; ic++) {
        for (var t = 0u; t < 25u; t++) {
            let iy = i32(gid.y) + i32(t / 5u) - 2;
            let ix = i32(gid.x) + i32(t % 5u) - 2;
            if (iy >= 0 && iy < i32(conv.height) && ix >= 0 && ix < i32(conv.width)) {
                acc += input[((n * conv.in_ch + ic) * conv.height + u32(iy)) * conv.width + u32(ix)]
                    * weight[(c * conv.in_ch + ic) * 25u + t];
            }
        }
    }
    output[(gid.z * conv.height + gid.y) * conv.width + gid.x] = acc;
}",
    );
    let rewrites = apply(&ImplicitGemm, &k, &testkit::plain()).unwrap();
    let steps: Vec<&str> = rewrites.iter().map(|r| r.step.as_str()).collect();
    assert_eq!(rewrites.len(), CONFIGS.len(), "{steps:#?}");
    assert!(steps.iter().any(|s| s.ends_with("k25)")), "{steps:#?}");
    assert!(steps.iter().any(|s| s.ends_with("k16)")), "{steps:#?}");
    for r in &rewrites {
        assert!(r.program.workgroup_storage_bytes <= 16384, "{}", r.step);
        check_valid(&k, r);
    }
}

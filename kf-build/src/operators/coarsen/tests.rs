//! Tests of thread coarsening on the corpus.

use super::*;
use crate::operators::testkit::{self, apply, check_valid};

fn corpus_kernel(name: &str) -> kf_runtime::resolve::ResolvedKernel {
    testkit::corpus()
        .into_iter()
        .find(|k| k.name == name)
        .unwrap()
        .kernel
}

#[test]
fn the_corpus_fires_and_skips_as_its_headers_say() {
    let corpus = testkit::corpus();
    assert!(
        corpus
            .iter()
            .filter(|k| k.fires.iter().any(|f| f == "coarsen"))
            .count()
            >= 8
    );
    for k in &corpus {
        let result = apply(&Coarsen, &k.kernel, &testkit::lavapipe());
        if k.fires.iter().any(|f| f == "coarsen") {
            let rewrites = result.unwrap_or_else(|e| panic!("{}: skipped: {e}", k.name));
            assert_eq!(rewrites.len(), 6, "{}", k.name);
            for r in &rewrites {
                check_valid(&k.kernel, r);
                assert_eq!(r.program.dispatch.mode, DispatchMode::Grid);
            }
        } else if k.skips.iter().any(|f| f == "coarsen") {
            assert!(result.is_err(), "{}: must skip", k.name);
        }
    }
}

#[test]
fn saxpy_calls_the_original_body_k_times() {
    let kernel = corpus_kernel("saxpy.wgsl");
    let rewrites = apply(&Coarsen, &kernel, &testkit::lavapipe()).unwrap();
    let steps: Vec<&str> = rewrites.iter().map(|r| r.step.as_str()).collect();
    assert_eq!(
        steps,
        [
            "coarsen(2, contiguous, x)",
            "coarsen(2, strided, x)",
            "coarsen(4, contiguous, x)",
            "coarsen(4, strided, x)",
            "coarsen(8, contiguous, x)",
            "coarsen(8, strided, x)",
        ]
    );
    let four = &rewrites[2];
    let text = &four.program.wgsl;
    assert!(
        text.contains("\nfn kf_coarse_main(gid: vec3<u32>) {"),
        "{text}"
    );
    assert!(
        text.contains("        y[i] = p.a * x[i] + y[i];"),
        "the body is kept: {text}"
    );
    assert!(text.contains("@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) kf_gid: vec3<u32>) {"), "{text}");
    assert!(
        text.contains("kf_coarse_main(vec3<u32>(kf_gid.x * 4u + kf_k, kf_gid.y, kf_gid.z));"),
        "{text}"
    );
    assert_eq!(four.program.dispatch.to_string(), "grid((n + 3) / 4, 1, 1)");
    let strided = &rewrites[3].program.wgsl;
    for expected in [
        "override KF_COARSEN_WG: u32 = 64u;",
        "@compute @workgroup_size(KF_COARSEN_WG)",
        "let kf_stride = kf_groups.x * KF_COARSEN_WG;",
    ] {
        assert!(
            strided.contains(expected),
            "missing `{expected}`: {strided}"
        );
    }
    assert!(
        strided.contains(
            "kf_coarse_main(vec3<u32>(kf_gid.x + kf_k * kf_stride, kf_gid.y, kf_gid.z));"
        ),
        "{strided}"
    );
}

#[test]
fn the_coarsened_dimension_is_the_one_bounds_checked_and_contiguous() {
    let r = &apply(
        &Coarsen,
        &corpus_kernel("rmsnorm_while_gid_y.wgsl"),
        &testkit::lavapipe(),
    )
    .unwrap()[0];
    assert_eq!(r.step, "coarsen(2, contiguous, y)");
    assert_eq!(r.program.dispatch.to_string(), "grid(1, (rows + 1) / 2, 1)");
    let r = &apply(
        &Coarsen,
        &corpus_kernel("add_2d.wgsl"),
        &testkit::lavapipe(),
    )
    .unwrap()[1];
    assert_eq!(r.step, "coarsen(2, strided, x)");
    let text = &r.program.wgsl;
    assert!(text.contains("@workgroup_size(KF_COARSEN_WG, 4)"), "{text}");
    assert!(
        text.contains("let kf_stride = kf_groups.x * KF_COARSEN_WG;"),
        "{text}"
    );
}

#[test]
fn unguarded_kernels_and_other_builtins_skip() {
    let unguarded = testkit::resolve(
        "K",
        "sizes(n = 1024), bind(x = input(n), y = output(n)), grid = (n)",
        "@group(0) @binding(0) var<storage, read> x: array<f32>;\n@group(0) @binding(1) var<storage, read_write> y: array<f32>;\n@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) { y[g.x] = 2.0 * x[g.x]; }\n",
    );
    let why = apply(&Coarsen, &unguarded, &testkit::lavapipe())
        .unwrap_err()
        .0;
    assert!(why.contains("no bounds test"), "{why}");
    // A guard after the store does not count.
    let late = testkit::resolve(
        "K",
        "sizes(n = 1024), bind(x = input(n), y = output(n)), grid = (n)",
        "@group(0) @binding(0) var<storage, read> x: array<f32>;\n@group(0) @binding(1) var<storage, read_write> y: array<f32>;\n@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) { y[g.x] = 2.0 * x[g.x]; if (g.x >= arrayLength(&y)) { return; } }\n",
    );
    assert!(apply(&Coarsen, &late, &testkit::lavapipe()).is_err());
    let why = apply(
        &Coarsen,
        &corpus_kernel("local_id_tiles.wgsl"),
        &testkit::lavapipe(),
    )
    .unwrap_err()
    .0;
    assert!(why.contains("LocalInvocationId"), "{why}");
}

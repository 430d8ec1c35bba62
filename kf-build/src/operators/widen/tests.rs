//! Tests of 16-byte accesses on the corpus and on kernels written for them.

use super::*;
use crate::operators::testkit::{self, apply, check_valid};

fn corpus_kernel(name: &str) -> kf_runtime::resolve::ResolvedKernel {
    testkit::corpus()
        .into_iter()
        .find(|k| k.name == name)
        .unwrap()
        .kernel
}

fn one(kernel: &kf_runtime::resolve::ResolvedKernel) -> Rewrite {
    let mut rewrites = apply(&Widen, kernel, &testkit::lavapipe())
        .unwrap_or_else(|e| panic!("{}: skipped: {e}", kernel.name));
    assert_eq!(rewrites.len(), 1);
    let r = rewrites.remove(0);
    check_valid(kernel, &r);
    r
}

#[test]
fn the_corpus_fires_and_skips_as_its_headers_say() {
    let corpus = testkit::corpus();
    let mut fired = 0;
    for k in &corpus {
        let result = apply(&Widen, &k.kernel, &testkit::lavapipe());
        if k.fires.iter().any(|f| f == "widen") {
            fired += 1;
            let rewrites = result.unwrap_or_else(|e| panic!("{}: skipped: {e}", k.name));
            for r in &rewrites {
                check_valid(&k.kernel, r);
            }
        } else if k.skips.iter().any(|f| f == "widen") {
            assert!(result.is_err(), "{}: must skip", k.name);
        }
    }
    assert!(fired >= 3);
}

#[test]
fn saxpy_reads_x_and_y_as_vectors_and_writes_only_the_components_it_wrote() {
    let r = one(&corpus_kernel("saxpy.wgsl"));
    let text = &r.program.wgsl;
    assert_eq!(r.step, "widen(x, y as vec4, along x)");
    for expected in [
        "var<storage, read> x: array<vec4<f32>>;",
        "var<storage, read_write> y: array<vec4<f32>>;",
        "fn kf_wide_main(gid: vec3<u32>, kf_c: u32, kf_in_x: vec4<f32>, kf_out_y: ptr<function, vec4<f32>>, kf_mask_y: ptr<function, u32>) {",
        // The body as written, each access now a component.
        "        (*kf_out_y)[kf_c] = p.a * kf_in_x[kf_c] + (*kf_out_y)[kf_c];\n        *kf_mask_y = *kf_mask_y | (1u << kf_c);",
        // x is only read: one 16-byte load. y is read too: loaded before the calls.
        "let kf_in_x = x[kf_at_x];",
        "var kf_out_y = y[kf_at_y];",
        "kf_wide_main(vec3<u32>(kf_gid.x * 4u + 3u, kf_gid.y, kf_gid.z), 3u, kf_in_x, &kf_out_y, &kf_mask_y);",
        "if (kf_mask_y == 15u) {\n        y[kf_at_y] = kf_out_y;",
        "if ((kf_mask_y & 4u) != 0u) {\n            y[kf_at_y][2] = kf_out_y[2];",
    ] {
        assert!(text.contains(expected), "missing `{expected}`:\n{text}");
    }
    assert_eq!(r.program.dispatch.to_string(), "grid((n + 3) / 4, 1, 1)");
}

#[test]
fn a_flat_index_over_rows_of_a_constant_width_is_one_vector_per_four_ids() {
    let r = one(&corpus_kernel("gelu_flat_rows.wgsl"));
    let text = &r.program.wgsl;
    for expected in [
        // The index is gid.y * 64 + gid.x: vector gid.y * 16 + gid.x.
        "let kf_at_x = kf_gid.x + 16u * kf_gid.y;",
        // The original launch ran ids below 64 along x: 16 vectors.
        "if (kf_gid.x >= 16u) {",
        // y is only written: no load before the calls.
        "var kf_out_y = vec4<f32>();",
    ] {
        assert!(text.contains(expected), "missing `{expected}`:\n{text}");
    }
    assert_eq!(r.program.dispatch.to_string(), "grid(16, (n + 63) / 64, 1)");
}

const SCALE: &str = "
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= arrayLength(&dst)) {
        return;
    }
    dst[id.x] = src[id.x] * 2.0;
}
";

#[test]
fn without_the_constraint_the_skip_names_the_one_to_add() {
    let k = testkit::resolve(
        "scale.wgsl",
        "sizes(n = 64), bind(src = input(n), dst = output(n)), grid = (n)",
        SCALE,
    );
    let Err(skip) = apply(&Widen, &k, &testkit::lavapipe()) else {
        panic!("must skip without the constraint");
    };
    assert!(skip.0.contains("constraints(n % 4 == 0)"), "{}", skip.0);
    // What `tune` tells the user.
    let hint = constraint_hint(&k).expect("a hint");
    assert!(
        hint.starts_with(NEEDS_CONSTRAINT) && hint.contains("`dst`") && hint.contains("`src`"),
        "{hint}"
    );
    // A weaker promise is not enough either.
    let k = testkit::resolve(
        "scale.wgsl",
        "sizes(n = 64), bind(src = input(n), dst = output(n)), grid = (n), constraints(n % 2 == 0)",
        SCALE,
    );
    assert!(apply(&Widen, &k, &testkit::lavapipe()).is_err());
    // With it: arrayLength counts vectors now, so the function multiplies it back.
    let k = testkit::resolve(
        "scale.wgsl",
        "sizes(n = 64), bind(src = input(n), dst = output(n)), grid = (n), constraints(n % 8 == 0)",
        SCALE,
    );
    assert_eq!(constraint_hint(&k), None);
    let r = one(&k);
    assert!(
        r.program
            .wgsl
            .contains("if (id.x >= (arrayLength(&dst) * 4u)) {"),
        "{}",
        r.program.wgsl
    );
}

#[test]
fn bindings_whose_accesses_do_not_fit_a_vector_stay_scalar() {
    // `src` is read at i and i + 1: not one vector per four ids; `dst` still is.
    let text = "
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i < arrayLength(&dst)) {
        dst[i] = src[i + 1u] - src[i];
    }
}
";
    let k = testkit::resolve(
        "diff.wgsl",
        "sizes(n = 64), bind(src = input(n + 4), dst = output(n)), grid = (n), constraints(n % 4 == 0)",
        text,
    );
    let r = one(&k);
    assert_eq!(r.step, "widen(dst as vec4, along x)");
    assert!(
        r.program
            .wgsl
            .contains("var<storage, read> src: array<f32>;")
    );
    // An index with an offset that is not a multiple of 4 skips the binding; so does a stride.
    for body in ["dst[i + 2u] = src[i];", "dst[2u * i] = 1.0;"] {
        let text = format!(
            "@group(0) @binding(0) var<storage, read> src: array<f32>;\n@group(0) @binding(1) var<storage, read_write> dst: array<f32>;\n@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) id: vec3<u32>) {{\n    let i = id.x;\n    if (i < 64u) {{\n        {body}\n    }}\n}}\n"
        );
        let k = testkit::resolve(
            "odd.wgsl",
            "sizes(n = 64), bind(src = input(n), dst = output(n * 2 + 4)), grid = (n), constraints(n % 4 == 0)",
            &text,
        );
        let result = apply(&Widen, &k, &testkit::lavapipe());
        if let Ok(r) = &result {
            assert!(!r[0].step.contains("dst"), "{body}: {}", r[0].step);
        }
    }
}

#[test]
fn a_kernel_that_already_reads_vectors_or_uses_workgroup_memory_is_left_alone() {
    let k = corpus_kernel("saxpy.wgsl");
    let r = one(&k);
    let widened = kf_runtime::resolve::ResolvedKernel {
        baseline: r.program.clone(),
        ..k.clone()
    };
    assert!(apply(&Widen, &widened, &testkit::lavapipe()).is_err());
    let particles = corpus_kernel("particles_vec4.wgsl");
    assert!(apply(&Widen, &particles, &testkit::lavapipe()).is_err());
    // Nothing a constraint would change: no hint.
    assert_eq!(constraint_hint(&particles), None);
}

#[test]
fn a_row_stride_read_from_a_uniform_is_a_multiple_of_4_when_the_spec_says_the_width_is() {
    let k = corpus_kernel("bias_relu_rows.wgsl");
    let r = one(&k);
    assert_eq!(r.step, "widen(x, bias, y as vec4, along x)");
    let text = &r.program.wgsl;
    for expected in [
        // row * dims.cols + col: vector row * (dims.cols / 4) + col.
        "let kf_at_x = kf_gid.x + (u32(dims.cols) / 4u) * kf_gid.y;",
        "let kf_at_bias = kf_gid.x;",
        "var kf_out_y = vec4<f32>();",
    ] {
        assert!(text.contains(expected), "missing `{expected}`:\n{text}");
    }
    // Without the promise about `cols` the row stride is not known to be a multiple of 4.
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/data/kernels/bias_relu_rows.wgsl"),
    )
    .unwrap();
    let k = testkit::resolve(
        "rows.wgsl",
        "sizes(rows = 6, cols = 44), bind(x = input(rows * cols), bias = input(cols), y = output(rows * cols), dims = uniform(rows, cols)), grid = (cols, rows)",
        &text,
    );
    let hint = constraint_hint(&k).expect("a hint");
    assert!(hint.contains("constraints(cols % 4 == 0)"), "{hint}");
}

#[test]
fn a_widened_kernel_over_a_constant_extent_can_be_coarsened_further() {
    let k = corpus_kernel("gelu_flat_rows.wgsl");
    let widened = one(&k);
    let parent = kf_runtime::resolve::ResolvedKernel {
        baseline: widened.program.clone(),
        ..k.clone()
    };
    let rewrites = apply(
        &super::super::coarsen::Coarsen,
        &parent,
        &testkit::lavapipe(),
    )
    .unwrap_or_else(|e| panic!("coarsen skipped the widened kernel: {e}"));
    assert_eq!(rewrites.len(), 6);
    for r in &rewrites {
        check_valid(&k, r);
        assert!(
            r.program
                .wgsl
                .contains("fn kf_coarse_main(kf_gid: vec3<u32>)")
        );
    }
}

#[test]
fn a_gather_whose_row_does_not_move_along_x_reads_whole_vectors_of_the_row() {
    let k = corpus_kernel("embedding_gather.wgsl");
    let r = one(&k);
    assert_eq!(r.step, "widen(table, out as vec4, along x)");
    let text = &r.program.wgsl;
    for expected in [
        // The user's id, for the row's text: the first of the four ids.
        "let gid = vec3<u32>(kf_gid.x * 4u, kf_gid.y, kf_gid.z);",
        "let kf_at_table = kf_gid.x + u32((ids[gid.y] * emb.dim)) / 4u;",
        "let kf_at_out = kf_gid.x + (u32(emb.dim) / 4u) * kf_gid.y;",
        "var<storage, read> ids: array<u32>;",
    ] {
        assert!(text.contains(expected), "missing `{expected}`:\n{text}");
    }
    // A row that moves with x (`ids[gid.x]`), or one not known to be a multiple of 4, is no gather
    // of whole vectors.
    let src = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/data/kernels/embedding_gather.wgsl"),
    )
    .unwrap();
    let spec = "sizes(tokens = 5, vocab = 9, dim = 40), bind(ids = input(tokens, range(0, vocab)), table = input(vocab * dim), out = output(tokens * dim), emb = uniform(tokens, dim)), grid = (dim, tokens), constraints(dim % 4 == 0)";
    for (from, to) in [
        ("let id = ids[t];", "let id = ids[d % emb.tokens];"),
        ("table[id * emb.dim + d]", "table[id * (emb.dim + 1u) + d]"),
    ] {
        let changed = src.replace(from, to);
        assert_ne!(changed, src);
        let k = testkit::resolve("g.wgsl", spec, &changed);
        if let Ok(r) = apply(&Widen, &k, &testkit::lavapipe()) {
            assert!(!r[0].step.contains("table"), "{to}: {}", r[0].step);
        }
    }
}

#[test]
fn a_buffer_read_at_two_offsets_is_read_as_two_vectors() {
    let k = corpus_kernel("swiglu_halves.wgsl");
    let r = one(&k);
    assert_eq!(r.step, "widen(gate_up, out as vec4, along x)");
    let text = &r.program.wgsl;
    for expected in [
        "var<storage, read> gate_up: array<vec4<f32>>;",
        "let kf_at_gate_up = kf_gid.x + (u32(dims.inter) / 2u) * kf_gid.y;",
        "let kf_at_gate_up_1 = kf_gid.x + (u32(dims.inter) / 2u) * kf_gid.y + (u32(dims.inter) / 4u);",
        "let g = kf_in_gate_up[kf_c];",
        "let u = kf_in_gate_up_1[kf_c];",
    ] {
        assert!(text.contains(expected), "missing `{expected}`:\n{text}");
    }
}

#[test]
fn a_launch_by_workgroup_count_is_widened_as_the_grid_of_its_invocations() {
    // `dispatch_workgroups(cdiv(n, 64), 1, 1)`, the global id tested against the output's length
    // (the corpus kernel, n = 1000 in its header).
    let k = testkit::corpus()
        .into_iter()
        .find(|k| k.name == "scale_workgroup_count.wgsl")
        .expect("scale_workgroup_count.wgsl")
        .kernel;
    assert_eq!(
        k.baseline.dispatch.mode,
        kf_runtime::program::DispatchMode::Workgroups
    );
    let r = one(&k);
    assert_eq!(r.step, "widen(src, dst as vec4, along x)");
    assert!(
        r.program
            .wgsl
            .contains("if (gid.x >= (arrayLength(&dst) * 4u)) {"),
        "{}",
        r.program.wgsl
    );
    // `W` workgroups of 64 are the grid of `W·64`, four ids per invocation: `W·16`.
    assert_eq!(
        r.program.dispatch.mode,
        kf_runtime::program::DispatchMode::Grid
    );
    assert_eq!(
        r.program.dispatch.to_string(),
        "grid(cdiv(n, 64) * 16, 1, 1)"
    );
    assert_eq!(r.program.workgroup_size, k.baseline.workgroup_size);
    // 1000 and 100 are not multiples of 64: the parent's last workgroup has idle invocations,
    // which the rewrite runs too (as lanes of its last vectors), stopped by the same test.
    for n in [1000u64, 64, 100, 4096, 4] {
        let lookup = |s: &str| (s == "n").then_some(n);
        let ran = u64::from(k.baseline.workgroups(lookup, u32::MAX).unwrap()[0]) * 64;
        let grid = r.program.dispatch.size[0].eval_with(&[("n", n)]).unwrap();
        assert_eq!(grid * 4, ran, "n = {n}");
        let launched = u64::from(r.program.workgroups(lookup, u32::MAX).unwrap()[0]) * 64;
        // Invocation `i` runs ids `4i .. 4i + 3`: every id below `ran` once, and past it only
        // ids the guard stops.
        assert!(launched * 4 >= ran, "n = {n}");
        assert!((ran..launched * 4).all(|id| id >= n), "n = {n}");
    }
}

//! Tests of the parallel reduction on the corpus and on the quickstart softmax.

use super::*;
use crate::operators::testkit::{self, apply, check_valid};

const SOFTMAX: &str = include_str!("../../../../examples/quickstart/src/shaders/softmax.wgsl");

fn softmax() -> kf_runtime::resolve::ResolvedKernel {
    testkit::resolve(
        "SOFTMAX",
        "sizes(rows = 512, cols = 512), bind(input = input(rows * cols, range(-4.0, 4.0)), output = output(rows * cols), shape = uniform(rows, cols)), grid = (rows)",
        SOFTMAX,
    )
}

#[test]
fn the_corpus_fires_and_skips_as_its_headers_say() {
    let corpus = testkit::corpus();
    assert!(
        corpus
            .iter()
            .filter(|k| k.fires.iter().any(|f| f == "reduce"))
            .count()
            >= 8
    );
    assert!(
        corpus
            .iter()
            .filter(|k| k.skips.iter().any(|f| f == "reduce"))
            .count()
            >= 5
    );
    for k in &corpus {
        for target in [testkit::lavapipe(), testkit::h200(), testkit::plain()] {
            let result = apply(&ParallelReduction, &k.kernel, &target);
            if k.fires.iter().any(|f| f == "reduce") {
                let rewrites = result.unwrap_or_else(|e| panic!("{}: skipped: {e}", k.name));
                let steps: Vec<&str> = rewrites.iter().map(testkit::own_step).collect();
                assert!(
                    steps.contains(&"reduce(workgroup)"),
                    "{}: {steps:?}",
                    k.name
                );
                assert_eq!(
                    steps.contains(&"reduce(subgroup)"),
                    target.has_subgroups(),
                    "{}: {steps:?}",
                    k.name
                );
                for r in &rewrites {
                    let wg = check_valid(&k.kernel, r);
                    assert_eq!(wg, r.program.workgroup_size, "{}", k.name);
                    assert_eq!(r.program.dispatch.mode, DispatchMode::Workgroups);
                    assert_eq!(r.params[0].0, WG);
                }
            } else if k.skips.iter().any(|f| f == "reduce") {
                assert!(
                    result.is_err(),
                    "{}: must skip, gave {:?}",
                    k.name,
                    result.map(|r| r.len())
                );
            }
        }
    }
}

#[test]
fn softmax_becomes_a_workgroup_per_row_with_strided_loops() {
    let kernel = softmax();
    let rewrites = apply(&ParallelReduction, &kernel, &testkit::h200()).unwrap();
    let steps: Vec<&str> = rewrites.iter().map(|r| r.step.as_str()).collect();
    assert_eq!(
        steps,
        [
            "reduce(subgroup, 16 passes written out)",
            "reduce(subgroup, unroll 4)",
            "reduce(subgroup)",
            "reduce(subgroup, lane groups, float sums reassociated)",
            "reduce(workgroup, unroll 4)",
            "reduce(workgroup)"
        ]
    );
    let sub = &rewrites[2];
    assert_eq!(sub.step, "reduce(subgroup)");
    let text = &sub.program.wgsl;
    for expected in [
        "@compute @workgroup_size(KF_REDUCE_WG)",
        "fn main(@builtin(workgroup_id) gid: vec3<u32>, @builtin(local_invocation_index) kf_lane: u32, @builtin(subgroup_id) kf_sg: u32",
        "for (var c = kf_lane; c < shape.cols; c += KF_REDUCE_WG) {",
        "m = kf_reduce_max_f32(m, 0u, kf_sg, kf_sg_lane, kf_n_sg);",
        "s = kf_reduce_add_f32(s, 1u, kf_sg, kf_sg_lane, kf_n_sg);",
        "let partial = subgroupMax(value);",
        "const KF_RED_SUBGROUPS: u32 = 32u;",
        "override KF_REDUCE_WG: u32 = 256u;",
    ] {
        assert!(text.contains(expected), "missing `{expected}` in:\n{text}");
    }
    // The guard stays a plain `if`: `row` comes from the workgroup id, so naga sees it uniform.
    assert!(!text.contains("kf_guard"), "{text}");
    // The user's lines outside the edits are kept.
    assert!(text.contains("// Row-wise softmax, one invocation per row"));
    assert!(text.contains("output[base + c] = exp(input[base + c] - m) / s;"));
    assert_eq!(sub.program.dispatch.to_string(), "workgroups(rows, 1, 1)");
    assert_eq!(sub.program.workgroup_size, [256, 1, 1]);
    assert_eq!(sub.params[0].1, vec![64.0, 128.0, 256.0, 512.0, 1024.0]);
    let tree = &rewrites[5];
    assert_eq!(tree.step, "reduce(workgroup)");
    assert!(
        tree.program
            .wgsl
            .contains("m = kf_reduce_max_f32(m, kf_lane);")
    );
    assert!(tree.program.wgsl.contains("workgroupBarrier();"));
    check_valid(&kernel, sub);
    check_valid(&kernel, tree);
    // Unrolled: four shadowed copies of the body per pass, the later ones guarded.
    let unrolled = &rewrites[1].program.wgsl;
    for expected in [
        "for (var c = kf_lane; c < shape.cols; c += 4u * KF_REDUCE_WG) {",
        "let kf_c_0 = c;",
        "{ let c = kf_c_0; {\n        m = max(m, input[base + c]);\n    } }",
        "{ let c = kf_c_0 + 3u * KF_REDUCE_WG; if (c < shape.cols) {\n        m = max(m, input[base + c]);\n    } }",
    ] {
        assert!(
            unrolled.contains(expected),
            "missing `{expected}` in:\n{unrolled}"
        );
    }
    check_valid(&kernel, &rewrites[1]);
    let registers = &rewrites[0].program.wgsl;
    for expected in [
        "var kf_row0: array<f32, 16>;",
        "{ let c = (kf_lane + 0u * KF_REDUCE_WG); if (c < shape.cols) { kf_row0[0] = input[base + c];",
        "s += exp(kf_row0[15] - m);",
        "output[base + c] = exp(kf_row0[15] - m) / s;",
        "for (var c = (kf_lane + 16u * KF_REDUCE_WG); c < shape.cols; c += KF_REDUCE_WG) {\n        output[base + c] = exp(input[base + c] - m) / s;",
    ] {
        assert!(
            registers.contains(expected),
            "missing `{expected}` in:\n{registers}"
        );
    }
    check_valid(&kernel, &rewrites[0]);
}

#[test]
fn a_sum_that_starts_from_a_value_sets_it_aside() {
    let k = testkit::corpus()
        .into_iter()
        .find(|k| k.name == "gemv_struct.wgsl")
        .unwrap();
    let rewrites = apply(&ParallelReduction, &k.kernel, &testkit::plain()).unwrap();
    let r = rewrites
        .iter()
        .find(|r| r.step == "reduce(workgroup)")
        .unwrap();
    let text = &r.program.wgsl;
    assert!(
        text.contains("let kf_init_acc_0 = acc;\n    acc = f32();\n    for (var c = kf_lane;"),
        "{text}"
    );
    assert!(
        text.contains("acc = kf_init_acc_0 + kf_reduce_add_f32(acc, kf_lane);"),
        "{text}"
    );
    assert!(
        text.contains("if (kf_lane == 0u) { y[row] = acc; }"),
        "{text}"
    );
    // Limits of a plain adapter: at most 256 invocations.
    assert_eq!(r.params[0].1, vec![64.0, 128.0, 256.0]);
}

#[test]
fn a_guard_on_a_local_variable_is_made_uniform() {
    let k = testkit::corpus()
        .into_iter()
        .find(|k| k.name == "rmsnorm_while_gid_y.wgsl")
        .unwrap();
    // Applied to the kernel as written, not its canonical form: the `while` loops stay, so this
    // also covers the reduction of a loop whose update is written in its body.
    let target = testkit::lavapipe();
    let rewrites = ParallelReduction
        .apply(&Subject {
            kernel: &k.kernel,
            program: &k.kernel.baseline,
            target: &target,
        })
        .unwrap();
    let r = rewrites
        .iter()
        .find(|r| r.step == "reduce(workgroup)")
        .unwrap();
    let text = &r.program.wgsl;
    assert!(
        text.contains("if (kf_lane == 0u) { kf_guard_0 = u32(row >= shape.rows); }"),
        "{text}"
    );
    assert!(
        text.contains("if (workgroupUniformLoad(&kf_guard_0) != 0u) {"),
        "{text}"
    );
    assert!(text.contains("var k = kf_lane;"), "{text}");
    assert!(text.contains("k += KF_REDUCE_WG;"), "{text}");
    assert_eq!(r.program.dispatch.to_string(), "workgroups(1, rows, 1)");
    // Unrolled `while`: the update is taken out of the copies and done once per pass.
    let unrolled = &rewrites[1];
    assert_eq!(unrolled.step, "reduce(subgroup, unroll 4)");
    assert!(
        unrolled
            .program
            .wgsl
            .contains("        k += 4u * KF_REDUCE_WG;\n    }")
    );
    assert_eq!(unrolled.program.wgsl.matches("ss += v * v;").count(), 4);
}

#[test]
fn reads_before_a_row_is_overwritten_are_ordered_by_a_barrier_and_reads_after_are_not_taken() {
    const IN_PLACE: &str =
        include_str!("../../../../tests/data/kernels/softmax_in_place_first_element.wgsl");
    let spec = "sizes(rows = 37, cols = 100), bind(x = inout(rows * cols), d = uniform(rows, cols)), grid = (rows), tolerance = 1e-4";
    let k = testkit::resolve("K", spec, IN_PLACE);
    let rewrites = apply(&ParallelReduction, &k, &testkit::lavapipe()).unwrap();
    for r in &rewrites {
        check_valid(&k, r);
        // The first element and the maximum's reads come before the barrier, the overwriting
        // loop after it.
        let text = &r.program.wgsl;
        let barrier = text
            .find("storageBarrier()")
            .unwrap_or_else(|| panic!("{text}"));
        assert!(text[..barrier].contains("max("), "{}: {text}", r.step);
        assert!(text[barrier..].contains("exp("), "{}: {text}", r.step);
    }
    // The same first element read after the row is overwritten: another lane's element, in a
    // statement every lane runs.
    let late = IN_PLACE.replace(
        "    for (var i = 0u; i < d.cols; i++) { x[b + i] /= s; }",
        "    let first = x[b];\n    for (var i = 0u; i < d.cols; i++) { x[b + i] /= s + first; }",
    );
    assert_ne!(late, IN_PLACE);
    let k = testkit::resolve("K", spec, &late);
    let why = apply(&ParallelReduction, &k, &testkit::lavapipe())
        .unwrap_err()
        .0;
    assert!(why.contains("`x`"), "{why}");
}

#[test]
fn skips_say_why() {
    let why = |name: &str| {
        let k = testkit::corpus()
            .into_iter()
            .find(|k| k.name == name)
            .unwrap();
        apply(&ParallelReduction, &k.kernel, &testkit::lavapipe())
            .unwrap_err()
            .0
    };
    assert!(
        why("prefix_sum.wgsl").contains("read in the loop"),
        "{}",
        why("prefix_sum.wgsl")
    );
    assert!(
        why("ema_not_associative.wgsl").contains("no loop"),
        "{}",
        why("ema_not_associative.wgsl")
    );
    assert!(
        why("shift_in_place.wgsl").contains("another lane"),
        "{}",
        why("shift_in_place.wgsl")
    );
    // `local_id_tiles.wgsl` reads `local_invocation_id` with nothing shared: canon spells it
    // through the global id and reduce fires (its header says so).
    assert!(
        why("saxpy.wgsl").contains("no loop"),
        "{}",
        why("saxpy.wgsl")
    );
    // Its own output has workgroup memory: applying it twice skips.
    let kernel = softmax();
    let once = apply(&ParallelReduction, &kernel, &testkit::lavapipe()).unwrap();
    let twice = ParallelReduction.apply(&Subject {
        kernel: &kernel,
        program: &once[0].program,
        target: &testkit::lavapipe(),
    });
    assert!(twice.unwrap_err().0.contains("workgroup memory"));
}

#[test]
fn a_counter_shared_by_several_loops_is_split_when_each_loop_resets_it() {
    let corpus = testkit::corpus();
    let shared = corpus
        .iter()
        .find(|k| k.name == "softmax_shared_counter.wgsl")
        .unwrap();
    let rewrites = apply(&ParallelReduction, &shared.kernel, &testkit::lavapipe())
        .unwrap_or_else(|e| panic!("skipped: {e}"));
    assert!(!rewrites.is_empty());
    let read_after = corpus
        .iter()
        .find(|k| k.name == "counter_read_after.wgsl")
        .unwrap();
    // Its counter is read after the loop, so the one loop it has is not split.
    assert!(apply(&ParallelReduction, &read_after.kernel, &testkit::lavapipe()).is_err());
}

const ARGMAX: &str =
    include_str!("../../../../examples/kernelbench/src/shaders/level1/argmax.wgsl");

fn argmax(wgsl: &str) -> kf_runtime::resolve::ResolvedKernel {
    testkit::resolve(
        "ARGMAX",
        "sizes(rows = 64, cols = 300), bind(values = input(rows * cols), indices = output(rows), size = uniform(rows, cols)), grid = (rows)",
        wgsl,
    )
}

/// ARGMAX with its loop (from `var best_i` to the loop's end) replaced by `body`.
fn argmax_with(body: &str) -> kf_runtime::resolve::ResolvedKernel {
    let start = ARGMAX.find("    var best_i").unwrap();
    let end = ARGMAX.find("    indices[row]").unwrap();
    argmax(&format!("{}{body}\n{}", &ARGMAX[..start], &ARGMAX[end..]))
}

#[test]
fn argmax_combines_value_index_pairs_with_the_loops_tie_rule() {
    let kernel = argmax(ARGMAX);
    let rewrites = apply(&ParallelReduction, &kernel, &testkit::h200())
        .unwrap_or_else(|e| panic!("skipped: {e}"));
    let steps: Vec<&str> = rewrites.iter().map(|r| r.step.as_str()).collect();
    assert!(steps.contains(&"reduce(subgroup)"), "{steps:?}");
    assert!(steps.contains(&"reduce(workgroup)"), "{steps:?}");
    for r in &rewrites {
        check_valid(&kernel, r);
    }
    let tree = rewrites
        .iter()
        .find(|r| r.step == "reduce(workgroup)")
        .unwrap();
    let text = &tree.program.wgsl;
    for expected in [
        "for (var i = 1u + kf_lane; i < size.cols; i += KF_REDUCE_WG) {",
        "{ let kf_red_pair = kf_reduce_argmax_first_f32_u32(best_v, best_i, kf_lane); best_v = kf_red_pair.v; best_i = kf_red_pair.i; }",
        "if (b.v > a.v || (b.v == a.v && b.i < a.i)) {",
        "if (kf_lane == 0u) { indices[row] = best_i; }",
    ] {
        assert!(text.contains(expected), "missing `{expected}` in:\n{text}");
    }
    let sub = rewrites
        .iter()
        .find(|r| r.step == "reduce(subgroup)")
        .unwrap();
    for expected in [
        "@builtin(subgroup_size) kf_sg_size: u32",
        "kf_reduce_argmax_first_f32_u32(best_v, best_i, 0u, kf_sg, kf_sg_lane, kf_n_sg, kf_sg_size)",
        "subgroupShuffleXor(a.v, mask)",
    ] {
        assert!(
            sub.program.wgsl.contains(expected),
            "missing `{expected}` in:\n{}",
            sub.program.wgsl
        );
    }
}

#[test]
fn argmax_respellings_reduce_with_the_same_tie_rule() {
    let prelude = "    var best_i = 0u;\n    var best_v = values[row * size.cols];\n";
    let each = |update: &str| {
        format!(
            "{prelude}    for (var i = 1u; i < size.cols; i++) {{\n        let v = values[row * size.cols + i];\n        {update}\n    }}"
        )
    };
    let cases = [
        (each("if (v > best_v) { best_i = i; best_v = v; }"), "argmax_first"),
        (each("if best_v < v { best_v = v; best_i = i; }"), "argmax_first"),
        (each("if (v >= best_v) { best_v = v; best_i = i; }"), "argmax_last"),
        (each("if (v < best_v) { best_v = v; best_i = i; }"), "argmin_first"),
        (each("if (best_v >= v) { best_i = i; best_v = v; }"), "argmin_last"),
        (
            each("best_i = select(best_i, i, v > best_v);\n        best_v = select(best_v, v, v > best_v);"),
            "argmax_first",
        ),
        (
            each("let better = best_v < v;\n        best_v = select(best_v, v, better);\n        best_i = select(best_i, i, better);"),
            "argmax_first",
        ),
        (
            each("if (values[row * size.cols + i] > best_v) {\n            best_v = values[row * size.cols + i];\n            best_i = i;\n        }"),
            "argmax_first",
        ),
        (
            // From the lowest float, the loop from 0.
            "    var best_v = -3.40282347e38;\n    var best_i = 0u;\n    for (var i = 0u; i < size.cols; i += 1u) {\n        let v = values[row * size.cols + i];\n        if (v > best_v) { best_v = v; best_i = i; }\n    }".to_owned(),
            "argmax_first",
        ),
        (
            // A `while` loop.
            format!("{prelude}    var i = 1u;\n    while (i < size.cols) {{\n        let v = values[row * size.cols + i];\n        if (v > best_v) {{ best_v = v; best_i = i; }}\n        i++;\n    }}"),
            "argmax_first",
        ),
    ];
    for (body, helper) in &cases {
        let kernel = argmax_with(body);
        for target in [testkit::h200(), testkit::plain()] {
            let rewrites = apply(&ParallelReduction, &kernel, &target)
                .unwrap_or_else(|e| panic!("skipped on\n{body}\n{e}"));
            let tree = rewrites
                .iter()
                .find(|r| testkit::own_step(r) == "reduce(workgroup)");
            let tree = tree.unwrap_or_else(|| panic!("no workgroup form for\n{body}"));
            let want = format!("kf_reduce_{helper}_f32_u32(");
            assert!(
                tree.program.wgsl.contains(&want),
                "{body}:\n{}",
                tree.program.wgsl
            );
            for r in &rewrites {
                check_valid(&kernel, r);
            }
        }
    }
}

#[test]
fn what_is_not_an_arg_reduction_is_not_split() {
    let prelude = "    var best_i = 0u;\n    var best_v = values[row * size.cols];\n";
    let each = |update: &str, start: &str| {
        format!(
            "{prelude}    for (var i = {start}; i < size.cols; i++) {{\n        let v = values[row * size.cols + i];\n        {update}\n    }}"
        )
    };
    for body in [
        // The value first, each with its own test: the index's test sees the new value.
        each(
            "best_v = select(best_v, v, v > best_v);\n        best_i = select(best_i, i, v > best_v);",
            "1u",
        ),
        // The last of equal values, but the index starts where the loop does: a lane that kept
        // it could not be told from one that took element 0.
        each("if (v >= best_v) { best_v = v; best_i = i; }", "0u"),
        // An index other than the loop variable.
        each("if (v > best_v) { best_v = v; best_i = i * 2u; }", "1u"),
        // An `else`.
        each(
            "if (v > best_v) { best_v = v; best_i = i; } else { best_i = 0u; }",
            "1u",
        ),
        // Another value stored than the one compared.
        each("if (v > best_v) { best_v = v * 2.0; best_i = i; }", "1u"),
        // The index read in the loop.
        each(
            "if (v > best_v + f32(best_i)) { best_v = v; best_i = i; }",
            "1u",
        ),
    ] {
        let kernel = argmax_with(&body);
        let result = apply(&ParallelReduction, &kernel, &testkit::h200());
        assert!(result.is_err(), "split:\n{body}");
    }
}

#[test]
fn rows_beyond_the_workgroup_limit_are_folded_into_a_second_dimension() {
    let wgsl = "struct Shape { rows: u32, cols: u32 }
@group(0) @binding(0) var<storage, read> weight: array<f32>;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> shape: Shape;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.x;
    if (row >= shape.rows) {
        return;
    }
    var acc = 0.0;
    for (var c = 0u; c < shape.cols; c++) {
        acc += weight[row * shape.cols + c] * x[c];
    }
    y[row] = acc;
}
";
    let spec = |rows: u64| {
        format!(
            "sizes(rows = {rows}, cols = 32), bind(weight = input(rows * cols), x = input(cols), y = output(rows), shape = uniform(rows, cols)), grid = (rows)"
        )
    };
    // Within the limit: one workgroup per row, as before.
    let small = testkit::resolve("GEMV", &spec(4096), wgsl);
    let is_groups =
        |r: &Rewrite| r.step.contains("lane groups") || r.step.contains("column groups");
    for r in apply(&ParallelReduction, &small, &testkit::h200()).unwrap() {
        if is_groups(&r) {
            continue;
        }
        assert!(!r.program.wgsl.contains("kf_wg"), "{}", r.step);
        assert_eq!(
            r.program
                .workgroups(|n| (n == "rows").then_some(4096), 65535)
                .unwrap(),
            [4096, 1, 1]
        );
    }
    // A vocabulary-sized matrix: the baseline's 64-wide workgroups become the second dimension.
    let big = testkit::resolve("LOGITS", &spec(128_256), wgsl);
    let rewrites = apply(&ParallelReduction, &big, &testkit::h200()).unwrap();
    assert!(!rewrites.is_empty());
    for r in &rewrites {
        check_valid(&big, r);
        if is_groups(r) {
            // Lane and column groups keep the baseline's workgroups along x: nothing to fold.
            // Column groups hold 32 of the baseline's 64 invocations per workgroup.
            let counts = r
                .program
                .workgroups(|n| (n == "rows").then_some(128_256), 65535)
                .unwrap();
            let per = if r.step.contains("column") { 2 } else { 1 };
            assert_eq!(counts, [2004 * per, 1, 1], "{}", r.program.dispatch);
            continue;
        }
        assert!(
            r.program
                .wgsl
                .contains("let gid = vec3<u32>(kf_wg.x * 64u + kf_wg.y, 0u, 0u);"),
            "{}",
            r.program.wgsl
        );
        let counts = |rows: u64| {
            r.program
                .workgroups(|n| (n == "rows").then_some(rows), 65535)
                .unwrap()
        };
        // Exactly the baseline's invocations: ⌈rows / 64⌉ workgroups of 64.
        assert_eq!(counts(128_256), [2004, 64, 1]);
        assert_eq!(counts(100), [2, 64, 1]);
    }
    // A two-dimensional launch cannot be folded this way: it says so.
    let wide = testkit::resolve(
        "WIDE",
        "sizes(rows = 70000, cols = 32), bind(weight = input(rows * cols), x = input(cols), y = output(rows), shape = uniform(rows, cols)), grid = (rows, 2)",
        wgsl,
    );
    let skip = apply(&ParallelReduction, &wide, &testkit::h200()).unwrap_err();
    assert!(skip.0.contains("one-dimensional"), "{}", skip.0);
}

#[test]
fn a_reduction_nested_in_a_split_loop_is_split_across_groups_of_a_subgroup() {
    let attention = testkit::corpus()
        .into_iter()
        .find(|k| k.name == "attention_decode_scratch.wgsl")
        .expect("the corpus kernel");
    let rewrites = apply(&ParallelReduction, &attention.kernel, &testkit::h200()).unwrap();
    let inner = rewrites
        .iter()
        .find(|r| testkit::own_step(r) == "reduce(subgroup, inner loops split)")
        .unwrap_or_else(|| panic!("{:?}", rewrites.iter().map(|r| &r.step).collect::<Vec<_>>()));
    check_valid(&attention.kernel, inner);
    let wgsl = &inner.program.wgsl;
    eprintln!("{wgsl}");
    // The channel loop takes one channel per group, the position loop one position per lane of
    // the group, the group's sum is shuffled together, and one lane stores it.
    assert!(
        wgsl.contains("for (var c = kf_grp; c < d; c += kf_ngrp)"),
        "{wgsl}"
    );
    assert!(
        wgsl.contains("for (var j = kf_sub; j < p.ctx; j += KF_REDUCE_INNER)"),
        "{wgsl}"
    );
    assert!(wgsl.contains("acc = kf_inner_add_f32(acc);"), "{wgsl}");
    assert!(
        wgsl.contains("if (kf_sub == 0u) { o[h * d + c] = acc / total; }"),
        "{wgsl}"
    );
    let groups = &inner.params.iter().find(|(n, _)| n == INNER).unwrap().1;
    assert_eq!(groups, &[2.0, 4.0, 8.0, 16.0, 32.0]);
    // Every workgroup size it offers is a whole number of the largest subgroups.
    let sizes = &inner.params.iter().find(|(n, _)| n == WG).unwrap().1;
    assert!(
        sizes.iter().all(|&w| (w as u64).is_multiple_of(32)),
        "{sizes:?}"
    );
    // Without subgroups there is no such variant; the plain split still fires.
    let plain = apply(&ParallelReduction, &attention.kernel, &testkit::plain()).unwrap();
    assert!(plain.iter().all(|r| !r.step.contains("inner")));
}

const SUM_DIM1: &str =
    include_str!("../../../../examples/kernelbench/src/shaders/level1/sum_dim1.wgsl");

fn sum_dim1() -> kf_runtime::resolve::ResolvedKernel {
    testkit::resolve(
        "SUM_DIM1",
        "sizes(batch = 3, rows = 40, cols = 20), bind(x = input(batch * rows * cols), out = output(batch * cols), shape = uniform(batch, rows, cols)), grid = (batch * cols)",
        SUM_DIM1,
    )
}

fn lane_groups(rewrites: &[Rewrite]) -> Option<&Rewrite> {
    rewrites
        .iter()
        .find(|r| testkit::own_step(r).starts_with("reduce(subgroup, lane groups"))
}

#[test]
fn every_invocation_becomes_a_group_of_lanes_of_one_subgroup() {
    let kernel = sum_dim1();
    let rewrites = apply(&ParallelReduction, &kernel, &testkit::h200()).unwrap();
    let r = lane_groups(&rewrites)
        .unwrap_or_else(|| panic!("{:?}", rewrites.iter().map(|r| &r.step).collect::<Vec<_>>()));
    // A float sum changes its order of operations, and the step says so.
    assert_eq!(
        r.step,
        "reduce(subgroup, lane groups, float sums reassociated)"
    );
    check_valid(&kernel, r);
    let text = &r.program.wgsl;
    for expected in [
        "@compute @workgroup_size(KF_REDUCE_WG)",
        "let kf_sub = kf_sg_lane % KF_REDUCE_GROUP;",
        "let kf_k = (64u * KF_REDUCE_GROUP + KF_REDUCE_WG - 1u) / KF_REDUCE_WG;",
        "let kf_grp = (kf_wg.x % kf_k) * (KF_REDUCE_WG / KF_REDUCE_GROUP) + kf_sg * (kf_sg_size / KF_REDUCE_GROUP) + kf_sg_lane / KF_REDUCE_GROUP;",
        "if (kf_grp >= 64u) {\n        return;\n    }",
        "let gid = vec3<u32>((kf_wg.x / kf_k) * 64u + kf_grp, kf_wg.y, kf_wg.z);",
        // The user's guard is kept as written: the lanes of a group take it together.
        "if (idx >= shape.batch * shape.cols) {\n        return;\n    }",
        "for (var r = kf_sub; r < shape.rows; r += KF_REDUCE_GROUP) {",
        "s = kf_inner_add_f32(s);",
        "if (kf_sub == 0u) { out[idx] = s; }",
        "for (var offset = KF_REDUCE_GROUP / 2u; offset > 0u; offset = offset / 2u) {\n        x = x + subgroupShuffleXor(x, offset);",
        "override KF_REDUCE_GROUP: u32 = 8u;",
        "override KF_REDUCE_WG: u32 = 512u;",
    ] {
        assert!(text.contains(expected), "missing `{expected}` in:\n{text}");
    }
    // No workgroup memory and no barrier: groups never wait for one another.
    for absent in [
        "var<workgroup>",
        "Barrier",
        "workgroupUniformLoad",
        "kf_lane ==",
    ] {
        assert!(!text.contains(absent), "`{absent}` in:\n{text}");
    }
    assert_eq!(r.program.workgroup_storage_bytes, 0);
    assert_eq!(
        r.program.dispatch.to_string(),
        "workgroups(cdiv(batch * cols, 64) * cdiv(64 * KF_REDUCE_GROUP, KF_REDUCE_WG), 1, 1)"
    );
    assert_eq!(r.program.workgroup_size, [512, 1, 1]);
    let param = |n: &str| r.params.iter().find(|(k, _)| k == n).unwrap().1.clone();
    assert_eq!(param(GROUP), vec![2.0, 4.0, 8.0, 16.0]);
    assert_eq!(param(WG), vec![32.0, 64.0, 128.0, 256.0, 512.0, 1024.0]);
    // Groups never span two subgroups: on an adapter with subgroups of 8, at most 8 lanes.
    let lavapipe = apply(&ParallelReduction, &kernel, &testkit::lavapipe()).unwrap();
    let r = lane_groups(&lavapipe).expect("lane groups on lavapipe");
    assert_eq!(
        r.params.iter().find(|(k, _)| k == GROUP).unwrap().1,
        vec![2.0, 4.0, 8.0]
    );
    check_valid(&kernel, r);
    // Without subgroups there is no such variant.
    let plain = apply(&ParallelReduction, &kernel, &testkit::plain()).unwrap();
    assert!(lane_groups(&plain).is_none());
}

/// The baseline invocation ids `program` runs on `kernel`'s sizes, each with the number of
/// lanes that run it, when the adapter makes subgroups of `sg` consecutive invocations: for the
/// baseline each id once; for a lane-groups rewrite, by the formula its preamble writes.
/// Workgroups `program` launches at the kernel's declared sizes.
fn workgroup_counts(
    kernel: &kf_runtime::resolve::ResolvedKernel,
    program: &kf_runtime::Program,
) -> [u32; 3] {
    let sizes = |n: &str| kernel.sizes.iter().find(|(k, _)| k == n).map(|(_, v)| *v);
    program.workgroups(sizes, 65535).unwrap()
}

/// The value of override `name` among `program`'s constants.
fn constant(program: &kf_runtime::Program, name: &str) -> u32 {
    program
        .constants
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| *v as u32)
        .unwrap()
}

/// The baseline invocation id that group `grp` of workgroup `wid` stands for, where `k`
/// workgroups share one baseline workgroup of `b` invocations along x.
fn baseline_id(wid: [u32; 3], k: u32, grp: u32, b: [u32; 3]) -> [u32; 3] {
    let ([x, y, z], [bx, by, bz]) = (wid, b);
    [
        (x / k) * bx + grp % bx,
        y * by + (grp / bx) % by,
        z * bz + grp / (bx * by),
    ]
}

fn ids_run(
    kernel: &kf_runtime::resolve::ResolvedKernel,
    program: &kf_runtime::Program,
    groups: Option<([u32; 3], u32)>,
) -> std::collections::BTreeMap<[u32; 3], u32> {
    let counts = workgroup_counts(kernel, program);
    let [wx, wy, wz] = program.workgroup_size;
    let constant = |n: &str| constant(program, n);
    let mut ids = std::collections::BTreeMap::new();
    for x in 0..counts[0] {
        for y in 0..counts[1] {
            for z in 0..counts[2] {
                match groups {
                    None => {
                        for lz in 0..wz {
                            for ly in 0..wy {
                                for lx in 0..wx {
                                    *ids.entry([x * wx + lx, y * wy + ly, z * wz + lz])
                                        .or_insert(0) += 1;
                                }
                            }
                        }
                    }
                    Some(([bx, by, bz], sg)) => {
                        let (wg, l) = (constant(WG), constant(GROUP));
                        assert_eq!(wg, wx, "the workgroup size is the override's");
                        let w = bx * by * bz;
                        let k = (w * l).div_ceil(wg);
                        for lane in 0..wg {
                            let (sg_id, sg_lane) = (lane / sg, lane % sg);
                            let grp = (x % k) * (wg / l) + sg_id * (sg / l) + sg_lane / l;
                            if grp >= w {
                                continue;
                            }
                            let id = baseline_id([x, y, z], k, grp, [bx, by, bz]);
                            *ids.entry(id).or_insert(0) += 1;
                        }
                    }
                }
            }
        }
    }
    ids
}

/// Every corpus kernel (and SUM_DIM1) with the rewrite `pick` takes from its reductions on an
/// H200-like adapter, where it has one, and the program it was made from: the canonical form
/// (whose launch a de-blocking widens), or the baseline.
fn forms_on_corpus(
    pick: fn(&[Rewrite]) -> Option<&Rewrite>,
) -> Vec<(
    String,
    kf_runtime::resolve::ResolvedKernel,
    Rewrite,
    kf_runtime::Program,
)> {
    let mut kernels: Vec<(String, kf_runtime::resolve::ResolvedKernel)> = testkit::corpus()
        .into_iter()
        .map(|k| (k.name, k.kernel))
        .collect();
    kernels.push(("SUM_DIM1".into(), sum_dim1()));
    kernels
        .into_iter()
        .filter_map(|(name, kernel)| {
            let target = testkit::h200();
            let rewrites = apply(&ParallelReduction, &kernel, &target).ok()?;
            let r = pick(&rewrites)?.clone();
            let source = super::super::canonicalise(&super::super::Subject {
                kernel: &kernel,
                program: &kernel.baseline,
                target: &target,
            })
            .map_or_else(|| kernel.baseline.clone(), |c| c.program);
            Some((name, kernel, r, source))
        })
        .collect()
}

#[test]
fn lane_groups_run_exactly_the_baselines_ids_for_every_parameter_value() {
    let mut checked = Vec::new();
    for (name, kernel, r, source) in &forms_on_corpus(lane_groups) {
        let baseline = ids_run(kernel, source, None);
        let wgs = source.workgroup_size;
        let param = |n: &str| r.params.iter().find(|(k, _)| k == n).unwrap().1.clone();
        // Every point the parameter operator can move to, on every subgroup size the adapter may
        // choose that holds a whole group and divides the workgroup.
        for wg in param(WG) {
            for l in param(GROUP) {
                for sg in [8u32, 16, 32] {
                    if f64::from(sg) < l || !(wg as u32).is_multiple_of(sg) {
                        continue;
                    }
                    let mut program = r.program.clone();
                    program.constants =
                        Cow::Owned(vec![(Cow::Borrowed(WG), wg), (Cow::Borrowed(GROUP), l)]);
                    program.workgroup_size = [wg as u32, 1, 1];
                    let ran = ids_run(kernel, &program, Some((wgs, sg)));
                    let want: std::collections::BTreeMap<[u32; 3], u32> =
                        baseline.keys().map(|&id| (id, l as u32)).collect();
                    assert!(
                        ran == want,
                        "{name}: WG = {wg}, GROUP = {l}, subgroups of {sg}: {} ids run, {} wanted",
                        ran.len(),
                        want.len()
                    );
                }
            }
        }
        checked.push((name.clone(), wgs));
    }
    // One-dimensional and two-dimensional baseline workgroups are among them.
    assert!(checked.iter().any(|(_, w)| w[1] == 1), "{checked:?}");
    assert!(checked.iter().any(|(_, w)| w[1] > 1), "{checked:?}");
    assert!(checked.len() >= 8, "{checked:?}");
}

#[test]
fn lane_groups_combine_arg_reductions_and_preset_sums_within_the_group() {
    let kernel = argmax(ARGMAX);
    let rewrites = apply(&ParallelReduction, &kernel, &testkit::h200()).unwrap();
    let r = lane_groups(&rewrites).expect("lane groups");
    // An arg-reduction reassociates nothing.
    assert_eq!(testkit::own_step(r), "reduce(subgroup, lane groups)");
    check_valid(&kernel, r);
    let text = &r.program.wgsl;
    for expected in [
        "for (var i = 1u + kf_sub; i < size.cols; i += KF_REDUCE_GROUP) {",
        "{ let kf_red_pair = kf_inner_argmax_first_f32_u32(best_v, best_i); best_v = kf_red_pair.v; best_i = kf_red_pair.i; }",
        "struct kf_red_pair_f32_u32 { v: f32, i: u32 }",
        "let b = kf_red_pair_f32_u32(subgroupShuffleXor(a.v, offset), subgroupShuffleXor(a.i, offset));",
        "if (b.v > a.v || (b.v == a.v && b.i < a.i)) {",
        "if (kf_sub == 0u) { indices[row] = best_i; }",
    ] {
        assert!(text.contains(expected), "missing `{expected}` in:\n{text}");
    }
    assert!(!text.contains("var<workgroup>"), "{text}");
    // A sum seeded with a bias sets the seed aside and adds it to the group's total.
    let gemv = testkit::corpus()
        .into_iter()
        .find(|k| k.name == "gemv_struct.wgsl")
        .unwrap();
    let rewrites = apply(&ParallelReduction, &gemv.kernel, &testkit::lavapipe()).unwrap();
    let r = lane_groups(&rewrites).expect("lane groups");
    check_valid(&gemv.kernel, r);
    let text = &r.program.wgsl;
    assert!(
        text.contains("let kf_init_acc_0 = acc;\n    acc = f32();\n    for (var c = kf_sub;"),
        "{text}"
    );
    assert!(
        text.contains("acc = kf_init_acc_0 + kf_inner_add_f32(acc);"),
        "{text}"
    );
    // A two-dimensional baseline workgroup: the group's place gives both local ids.
    let rms = testkit::corpus()
        .into_iter()
        .find(|k| k.name == "rmsnorm_while_gid_y.wgsl")
        .unwrap();
    let rewrites = apply(&ParallelReduction, &rms.kernel, &testkit::lavapipe()).unwrap();
    let r = lane_groups(&rewrites).expect("lane groups");
    check_valid(&rms.kernel, r);
    assert!(
        r.program
            .wgsl
            .contains("let g = vec3<u32>((kf_wg.x / kf_k), kf_wg.y * 16u + kf_grp, kf_wg.z);"),
        "{}",
        r.program.wgsl
    );
    // Its guard reads a local `var`: no uniform load is needed without barriers.
    assert!(!r.program.wgsl.contains("kf_guard"), "{}", r.program.wgsl);
}

#[test]
fn lane_groups_skip_loops_that_read_what_other_lanes_wrote() {
    // The attention's weights are written by one split loop and read at every position by the
    // next: the whole-workgroup variants put a storage barrier between them, which lanes of
    // different groups (some of which may have returned) cannot reach together.
    let attention = testkit::corpus()
        .into_iter()
        .find(|k| k.name == "attention_decode_scratch.wgsl")
        .unwrap();
    let rewrites = apply(&ParallelReduction, &attention.kernel, &testkit::h200()).unwrap();
    assert!(
        rewrites
            .iter()
            .any(|r| r.program.wgsl.contains("storageBarrier()")),
        "the corpus kernel still needs its barrier"
    );
    assert!(lane_groups(&rewrites).is_none());
}

fn column_groups(rewrites: &[Rewrite]) -> Option<&Rewrite> {
    rewrites
        .iter()
        .find(|r| testkit::own_step(r).starts_with("reduce(workgroup, column groups"))
}

/// Why the column-groups variant of `kernel` is refused on `target`, or `None` when it renders.
fn column_groups_refusal(
    kernel: &kf_runtime::resolve::ResolvedKernel,
    target: &Target,
) -> Option<String> {
    let subject = Subject {
        kernel,
        program: &kernel.baseline,
        target,
    };
    let parsed = ir::parse(&subject.program.wgsl).unwrap();
    let a = parsed.analyse(&subject.program.entry).unwrap();
    let plan = plan(&a, &subject).unwrap_or_else(|e| panic!("no plan: {}", e.0));
    let (_, w) = column_launch(subject.program).unwrap();
    render(&a, &plan, Combine::Tree, Passes::Columns(w), 1024, target)
        .err()
        .map(|e| e.0)
}

#[test]
fn column_groups_split_each_invocation_across_the_workgroup_with_coalesced_loads() {
    let kernel = sum_dim1();
    let rewrites = apply(&ParallelReduction, &kernel, &testkit::h200()).unwrap();
    let r = column_groups(&rewrites)
        .unwrap_or_else(|| panic!("{:?}", rewrites.iter().map(|r| &r.step).collect::<Vec<_>>()));
    assert_eq!(
        r.step,
        "reduce(workgroup, column groups, float sums reassociated)"
    );
    check_valid(&kernel, r);
    let text = &r.program.wgsl;
    for expected in [
        "@compute @workgroup_size(KF_REDUCE_WG)",
        "fn main(@builtin(workgroup_id) kf_wg: vec3<u32>, @builtin(local_invocation_index) kf_lane: u32) {",
        "let kf_cols = min(KF_REDUCE_COLS, KF_REDUCE_WG);",
        "let kf_col = kf_lane % kf_cols;",
        "let kf_sub = kf_lane / kf_cols;",
        "let kf_nsub = KF_REDUCE_WG / kf_cols;",
        "let kf_k = (64u + kf_cols - 1u) / kf_cols;",
        "let kf_grp = (kf_wg.x % kf_k) * kf_cols + kf_col;",
        "var kf_live = kf_grp < 64u;",
        "let gid = vec3<u32>((kf_wg.x / kf_k) * 64u + kf_grp, kf_wg.y, kf_wg.z);",
        // The guard's `return` is a flag: every lane reaches the barriers.
        "if (idx >= shape.batch * shape.cols) {\n        kf_live = false;\n    }",
        "for (var r = kf_sub; r < shape.rows; r += kf_nsub) {",
        "s = kf_cols_add_f32(s, kf_lane, kf_col);",
        "if (kf_live && kf_sub == 0u) { out[idx] = s; }",
        "kf_red_f32[lane] = value;\n    workgroupBarrier();\n    var total = kf_red_f32[col];\n    for (var s = 1u; s < KF_REDUCE_WG / cols; s++) {\n        total = total + kf_red_f32[s * cols + col];\n    }\n    workgroupBarrier();",
        "var<workgroup> kf_red_f32: array<f32, 1024>;",
        "override KF_REDUCE_WG: u32 = 256u;",
        "override KF_REDUCE_COLS: u32 = 32u;",
    ] {
        assert!(text.contains(expected), "missing `{expected}` in:\n{text}");
    }
    for absent in ["return;", "@builtin(subgroup", "workgroupUniformLoad"] {
        assert!(!text.contains(absent), "`{absent}` in:\n{text}");
    }
    assert_eq!(
        r.program.dispatch.to_string(),
        "workgroups(cdiv(batch * cols, 64) * cdiv(64, min(KF_REDUCE_COLS, KF_REDUCE_WG)), 1, 1)"
    );
    assert_eq!(r.program.workgroup_size, [256, 1, 1]);
    let param = |r: &Rewrite, n: &str| r.params.iter().find(|(k, _)| k == n).unwrap().1.clone();
    assert_eq!(r.params[0].0, WG);
    assert_eq!(param(r, WG), vec![64.0, 128.0, 256.0, 512.0, 1024.0]);
    assert_eq!(param(r, COLS), vec![32.0, 64.0, 128.0, 256.0, 512.0]);
    // Without subgroups: workgroup memory only, 32 columns, WebGPU's 256 lanes at most.
    let plain = apply(&ParallelReduction, &kernel, &testkit::plain()).unwrap();
    let r = column_groups(&plain).expect("column groups without subgroups");
    check_valid(&kernel, r);
    assert_eq!(param(r, WG), vec![64.0, 128.0, 256.0]);
    assert_eq!(param(r, COLS), vec![32.0, 64.0, 128.0]);
    assert!(
        r.program
            .constants
            .iter()
            .any(|(k, v)| k == COLS && *v == 32.0)
    );
    // Subgroups of 8 (lavapipe): 8 columns, so a subgroup still reads 8 neighbouring columns.
    let lavapipe = apply(&ParallelReduction, &kernel, &testkit::lavapipe()).unwrap();
    let r = column_groups(&lavapipe).expect("column groups on lavapipe");
    check_valid(&kernel, r);
    assert_eq!(param(r, COLS)[0], 8.0);
    assert!(
        r.program
            .wgsl
            .contains("override KF_REDUCE_COLS: u32 = 8u;")
    );
    // Column sums and maxima: a sum and a maximum, each through the memory in turn.
    let strided = testkit::corpus()
        .into_iter()
        .find(|k| k.name == "col_sum_max_strided.wgsl")
        .unwrap();
    for target in [testkit::h200(), testkit::lavapipe(), testkit::plain()] {
        let rewrites = apply(&ParallelReduction, &strided.kernel, &target).unwrap();
        let r = column_groups(&rewrites).expect("column groups on the strided column sums");
        check_valid(&strided.kernel, r);
        let text = &r.program.wgsl;
        for expected in [
            "total = kf_cols_add_f32(total, kf_lane, kf_col);",
            "big = kf_cols_max_f32(big, kf_lane, kf_col);",
            "total = max(total, kf_red_f32[s * cols + col]);",
            "if (kf_live && kf_sub == 0u) { maxs[i] = big; }",
            "for (var r: u32 = kf_sub; r < dims.rows; r += kf_nsub) {",
        ] {
            assert!(text.contains(expected), "missing `{expected}` in:\n{text}");
        }
    }
    // An arg-reduction combines (value, index) pairs with the loop's tie rule.
    let kernel = argmax(ARGMAX);
    let rewrites = apply(&ParallelReduction, &kernel, &testkit::plain()).unwrap();
    let r = column_groups(&rewrites).expect("column groups of an arg-reduction");
    assert_eq!(testkit::own_step(r), "reduce(workgroup, column groups)");
    check_valid(&kernel, r);
    for expected in [
        "{ let kf_red_pair = kf_cols_argmax_first_f32_u32(best_v, best_i, kf_lane, kf_col); best_v = kf_red_pair.v; best_i = kf_red_pair.i; }",
        "let b = kf_red_pairs_f32_u32[s * cols + col];\n        if (b.v > a.v || (b.v == a.v && b.i < a.i)) {",
    ] {
        assert!(
            r.program.wgsl.contains(expected),
            "missing `{expected}` in:\n{}",
            r.program.wgsl
        );
    }
}

/// The baseline invocation ids a column-groups `program` runs on `kernel`'s sizes, for a baseline
/// workgroup of size `wgs`, by the formula its preamble writes: each id with the number of live
/// lanes that run it, and the number of those that store.
fn column_ids_run(
    kernel: &kf_runtime::resolve::ResolvedKernel,
    program: &kf_runtime::Program,
    wgs: [u32; 3],
) -> std::collections::BTreeMap<[u32; 3], (u32, u32)> {
    let counts = workgroup_counts(kernel, program);
    let constant = |n: &str| constant(program, n);
    let (wg, cols) = (constant(WG), constant(COLS).min(constant(WG)));
    assert_eq!(program.workgroup_size, [wg, 1, 1]);
    let [bx, by, bz] = wgs;
    let w = bx * by * bz;
    let k = w.div_ceil(cols);
    let mut ids = std::collections::BTreeMap::new();
    for x in 0..counts[0] {
        for y in 0..counts[1] {
            for z in 0..counts[2] {
                for lane in 0..wg {
                    let (col, sub) = (lane % cols, lane / cols);
                    let grp = (x % k) * cols + col;
                    if grp >= w {
                        continue;
                    }
                    let id = baseline_id([x, y, z], k, grp, [bx, by, bz]);
                    let e = ids.entry(id).or_insert((0, 0));
                    e.0 += 1;
                    e.1 += u32::from(sub == 0);
                }
            }
        }
    }
    ids
}

#[test]
fn column_groups_run_exactly_the_baselines_ids_for_every_parameter_value() {
    let mut checked = Vec::new();
    for (name, kernel, r, source) in &forms_on_corpus(column_groups) {
        let baseline = ids_run(kernel, source, None);
        let wgs = source.workgroup_size;
        let param = |n: &str| r.params.iter().find(|(k, _)| k == n).unwrap().1.clone();
        // Every pair the parameter operator can move to, and a column count that divides no
        // workgroup size (its spare lanes repeat work no one reads).
        let mut counts = param(COLS);
        counts.push(24.0);
        for wg in param(WG) {
            for &c in &counts {
                let mut program = r.program.clone();
                program.constants =
                    Cow::Owned(vec![(Cow::Borrowed(WG), wg), (Cow::Borrowed(COLS), c)]);
                program.workgroup_size = [wg as u32, 1, 1];
                let ran = column_ids_run(kernel, &program, wgs);
                let per = wg as u32 / (c as u32).min(wg as u32);
                for (id, &(lanes, storing)) in &ran {
                    assert!(baseline.contains_key(id), "{name}: {id:?} was not run");
                    assert!(lanes >= per, "{name}: WG = {wg}, COLS = {c}: {lanes} lanes");
                    assert_eq!(storing, 1, "{name}: WG = {wg}, COLS = {c}");
                }
                assert_eq!(
                    ran.len(),
                    baseline.len(),
                    "{name}: WG = {wg}, COLS = {c}: ids missing"
                );
            }
        }
        checked.push((name.clone(), wgs));
    }
    assert!(checked.iter().any(|(n, _)| n == "SUM_DIM1"), "{checked:?}");
    assert!(
        checked.iter().any(|(n, _)| n == "col_sum_max_strided.wgsl"),
        "{checked:?}"
    );
    assert!(checked.iter().any(|(_, w)| w[1] > 1), "{checked:?}");
}

#[test]
fn column_groups_take_a_guard_spelled_as_a_wrapping_if() {
    let strided = testkit::corpus()
        .into_iter()
        .find(|k| k.name == "col_sum_max_strided.wgsl")
        .unwrap();
    let spec = "sizes(batch = 3, rows = 40, cols = 20), bind(x = input(batch * rows * cols), out = output(batch * cols), shape = uniform(batch, rows, cols)), grid = (batch * cols)";
    let guarded = [
        testkit::resolve(
            "col_sum_max_strided.wgsl",
            &strided.spec,
            &crate::operators::respell::Spelling::Guard
                .apply(&strided.kernel.baseline.wgsl, "colsum"),
        ),
        testkit::resolve(
            "SUM_DIM1",
            spec,
            &crate::operators::respell::Spelling::Guard.apply(SUM_DIM1, "main"),
        ),
    ];
    for kernel in &guarded {
        assert!(kernel.baseline.wgsl.contains("if (!(("), "not respelled");
        for target in [testkit::h200(), testkit::plain()] {
            let rewrites = apply(&ParallelReduction, kernel, &target).unwrap();
            let r = column_groups(&rewrites).unwrap_or_else(|| {
                panic!(
                    "{}: {:?}\n{:?}",
                    kernel.name,
                    rewrites.iter().map(|r| &r.step).collect::<Vec<_>>(),
                    column_groups_refusal(kernel, &target)
                )
            });
            check_valid(kernel, r);
            let text = &r.program.wgsl;
            // The condition folds into the flag before the branch, which every lane takes.
            assert!(text.contains("kf_live = kf_live && ((!(("), "{text}");
            assert!(text.contains("if (true) {"), "{text}");
            assert!(text.contains("if (kf_live && kf_sub == 0u) {"), "{text}");
            assert!(!text.contains("return;"), "{text}");
        }
    }
}

#[test]
fn column_groups_refuse_trip_counts_that_depend_on_the_invocation_and_stores_in_split_loops() {
    // Ragged rows: each invocation's loop runs between its own offsets, so a lane that is not
    // live would run a trip count read from an id the baseline never ran.
    let ragged = testkit::resolve(
        "RAGGED",
        "sizes(n = 50, total = 400), bind(offsets = input(n + 1), x = input(total), out = output(n), shape = uniform(n)), grid = (n)",
        "struct Shape { n: u32 }
@group(0) @binding(0) var<storage, read> offsets: array<u32>;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> shape: Shape;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= shape.n) {
        return;
    }
    var s = 0.0;
    for (var k = offsets[i]; k < offsets[i + 1u]; k++) {
        s += x[k];
    }
    out[i] = s;
}
",
    );
    let why = column_groups_refusal(&ragged, &testkit::h200()).expect("refused");
    assert!(why.contains("depends on the invocation"), "{why}");
    // The other forms are still offered.
    let rewrites = apply(&ParallelReduction, &ragged, &testkit::h200()).unwrap();
    assert!(!rewrites.is_empty());
    assert!(column_groups(&rewrites).is_none());
    // A softmax stores in its last split loop.
    let why = column_groups_refusal(&softmax(), &testkit::h200()).expect("refused");
    assert!(why.contains("stores"), "{why}");
    // A guard with more in it than its `return`.
    let busy = SUM_DIM1.replace("        return;", "        out[0] = 0.0;\n        return;");
    let busy = testkit::resolve(
        "SUM_DIM1",
        "sizes(batch = 3, rows = 40, cols = 20), bind(x = input(batch * rows * cols), out = output(batch * cols), shape = uniform(batch, rows, cols)), grid = (batch * cols)",
        &busy,
    );
    let why = column_groups_refusal(&busy, &testkit::h200()).expect("refused");
    assert!(why.contains("return"), "{why}");
}

#[test]
fn a_loop_that_accumulates_through_memory_has_its_nested_loop_split_and_its_range_chunked() {
    let corpus = testkit::corpus();
    for name in ["attention_rows_score_fn.wgsl", "weighted_rows_while.wgsl"] {
        let k = corpus.iter().find(|k| k.name == name).unwrap();
        let rewrites = apply(&ParallelReduction, &k.kernel, &testkit::h200()).unwrap();
        let steps: Vec<&str> = rewrites.iter().map(testkit::own_step).collect();
        // The position loop is not split (its iterations share the output row through memory);
        // the plain forms split the channel loop inside it, the chunked forms share the
        // positions in chunks; no form that needs a top-level split of it is offered.
        assert!(steps.contains(&"reduce(subgroup)"), "{name}: {steps:?}");
        assert!(
            steps.contains(&"reduce(subgroup, outer loop in chunks)"),
            "{name}: {steps:?}"
        );
        assert!(
            !steps
                .iter()
                .any(|s| s.contains("lane groups") || s.contains("column groups")),
            "{name}: {steps:?}"
        );
        let chunked = rewrites
            .iter()
            .find(|r| testkit::own_step(r).ends_with("in chunks)"))
            .unwrap();
        let text = &chunked.program.wgsl;
        assert!(text.contains("kf_chunk_"), "{name}:\n{text}");
        // Each lane keeps the output element it owns in a register across a chunk.
        assert!(text.contains("var kf_elem = out["), "{name}:\n{text}");
        assert!(text.matches("workgroupBarrier();").count() >= 2, "{name}");
    }
}

#[test]
fn a_nested_loop_that_reads_the_outer_loops_running_sum_is_split_but_not_chunked() {
    // `out[(row * n + j) * d + c] = acc`: every lane runs the position loop whole, so each has
    // the running sum, and the lane of `c` writes the elements of its `c` at every position. The
    // chunked form would give each lane a partial of `acc`, so it is not offered.
    let wgsl = "struct D { rows: u32, n: u32, d: u32 }
@group(0) @binding(0) var<storage, read> v: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> dims: D;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.x;
    if (row >= dims.rows) { return; }
    var acc = 0.0;
    for (var j = 0u; j < dims.n; j++) {
        acc += v[j];
        for (var c = 0u; c < dims.d; c++) {
            out[(row * dims.n + j) * dims.d + c] = acc;
        }
    }
}";
    let k = testkit::resolve(
        "running.wgsl",
        "sizes(rows = 4, n = 8, d = 4), bind(v = input(n), out = output(rows * n * d), dims = uniform(rows, n, d)), grid = (rows)",
        wgsl,
    );
    let rewrites = apply(&ParallelReduction, &k, &testkit::h200()).unwrap();
    let steps: Vec<&str> = rewrites.iter().map(testkit::own_step).collect();
    assert_eq!(steps, ["reduce(subgroup)", "reduce(workgroup)"]);
    let text = &rewrites[0].program.wgsl;
    assert!(text.contains("for (var j = 0u; j < dims.n; j++)"), "{text}");
    assert!(
        text.contains("for (var c = kf_lane; c < dims.d; c += KF_REDUCE_WG)"),
        "{text}"
    );
}

#[test]
fn blocks_of_columns_stored_side_by_side_are_split_only_when_iterations_cannot_overlap() {
    // Iteration `j` stores columns `j .. j + 3`: with `j += 4u` no two iterations share one, so
    // the lanes take the blocks; with `j += 2u` neighbouring iterations would both store
    // `j + 2` and `j + 3`, which the lanes would race on.
    let wgsl = |step: u32| {
        format!(
            "struct D {{ m: u32, n: u32 }}
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> dims: D;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
    let row = gid.x;
    if (row >= dims.m) {{ return; }}
    for (var j = 0u; j < dims.n; j += {step}u) {{
        let x = a[row * dims.n + j];
        out[row * dims.n + j] = x;
        out[row * dims.n + j + 1u] = x * 2.0;
        out[row * dims.n + j + 2u] = x * 3.0;
        out[row * dims.n + j + 3u] = x * 4.0;
    }}
}}"
        )
    };
    let spec = "sizes(m = 4, n = 16), bind(a = input(m * n), out = output(m * n), dims = uniform(m, n)), grid = (m), constraints(n % 4 == 0)";
    let k = testkit::resolve("blocks.wgsl", spec, &wgsl(4));
    let rewrites = apply(&ParallelReduction, &k, &testkit::h200()).unwrap();
    assert!(!rewrites.is_empty());
    for r in &rewrites {
        testkit::check_valid(&k, r);
    }
    let k = testkit::resolve("overlapping.wgsl", spec, &wgsl(2));
    let why = apply(&ParallelReduction, &k, &testkit::h200()).unwrap_err();
    assert!(
        why.0
            .contains("offsets that reach another iteration's elements"),
        "{}",
        why.0
    );
}

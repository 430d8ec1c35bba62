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
    // The kernel's `while` loop reaches coarsen as a `for` (the canonical form).
    assert_eq!(
        r.step,
        "canon(for ×2, var-let, zero-init) → coarsen(2, contiguous, y)"
    );
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
    // Local ids through which the invocations of a workgroup share memory (a local id read
    // alone, with nothing shared, is canon's `gid.x % W` and coarsens: `local_id_tiles.wgsl`).
    let shared = testkit::resolve(
        "k.wgsl",
        "sizes(n = 256), bind(x = input(n), y = output(n)), grid = (n)",
        "@group(0) @binding(0) var<storage, read> x: array<f32>;\n@group(0) @binding(1) var<storage, read_write> y: array<f32>;\nvar<workgroup> t: array<f32, 64>;\n@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>) { t[l.x] = x[g.x]; workgroupBarrier(); y[g.x] = t[63u - l.x]; }\n",
    );
    let why = apply(&Coarsen, &shared, &testkit::lavapipe())
        .unwrap_err()
        .0;
    assert!(
        why.contains("LocalInvocationId") || why.contains("barrier") || why.contains("workgroup"),
        "{why}"
    );
}

#[test]
fn a_flattened_index_with_a_constant_extent_is_coarsened_within_the_original_ids() {
    let r = apply(
        &Coarsen,
        &corpus_kernel("gelu_flat_rows.wgsl"),
        &testkit::lavapipe(),
    )
    .unwrap();
    let strided4 = r
        .iter()
        .find(|r| r.step == "coarsen(4, strided, x)")
        .unwrap();
    // 64 ids per row, four per invocation: 16 invocations along x.
    assert_eq!(
        strided4.program.dispatch.to_string(),
        "grid(16, (n + 63) / 64, 1)"
    );
    let text = &strided4.program.wgsl;
    for expected in [
        "let kf_id = kf_gid.x + kf_k * kf_stride;",
        "if (kf_id < 64u) {",
        "kf_coarse_main(vec3<u32>(kf_id, kf_gid.y, kf_gid.z));",
    ] {
        assert!(text.contains(expected), "missing `{expected}`: {text}");
    }
    // A 48-wide row launched in 32-wide workgroups ran ids up to 63: the rewrite keeps them.
    let r = apply(
        &Coarsen,
        &corpus_kernel("scale_rows_ragged_wg.wgsl"),
        &testkit::lavapipe(),
    )
    .unwrap();
    let contiguous8 = r
        .iter()
        .find(|r| r.step == "coarsen(8, contiguous, x)")
        .unwrap();
    assert_eq!(
        contiguous8.program.dispatch.to_string(),
        "grid(8, (n + 47) / 48, 1)"
    );
    let text = &contiguous8.program.wgsl;
    assert!(text.contains("let kf_id = kf_gid.x * 8u + kf_k;"), "{text}");
    assert!(text.contains("if (kf_id < 64u) {"), "{text}");
}

#[test]
fn an_unguarded_id_with_a_size_dependent_extent_is_coarsened_below_the_extent_a_uniform_gives() {
    // The guard tests the flat index, not the id; the launch along x is `n / 10` in workgroups
    // of 20, which no constant bounds, but the uniform `p` holds `n`: the rewrite calls the body
    // only below the workgroups the parent launched, printed from it.
    let k = testkit::resolve(
        "K",
        "sizes(n = 1000), bind(x = input(n), y = output(n), p = uniform(n)), grid = (n / 10, 10)",
        "struct P { n: u32 }\n@group(0) @binding(0) var<storage, read> x: array<f32>;\n@group(0) @binding(1) var<storage, read_write> y: array<f32>;\n@group(0) @binding(2) var<uniform> p: P;\n@compute @workgroup_size(20)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) { let i = g.y * 100u + g.x; if (i >= p.n) { return; } y[i] = x[i]; }\n",
    );
    let rewrites = apply(&Coarsen, &k, &testkit::lavapipe()).unwrap();
    assert_eq!(rewrites.len(), 6);
    let bound = "if (kf_id < ((((u32(p.n) / 10u) + 20u - 1u) / 20u) * 20u)) {";
    for r in &rewrites {
        assert!(r.program.wgsl.contains(bound), "{}", r.program.wgsl);
        check_valid(&k, r);
        // 990 / 10 = 99 ids ran as 100 (five workgroups of 20); 1000 / 10 exactly 100.
        for n in [1000u64, 990, 2000, 10] {
            let limit = (n / 10).div_ceil(20) * 20;
            check_cover(&k.baseline, r, 0, Some(limit), None, &[("n", n)]);
        }
    }
    // Without a uniform that holds `n`, the bound cannot be written.
    let hidden = testkit::resolve(
        "K",
        "sizes(n = 1000), bind(x = input(n), y = output(n), p = uniform(n + 1)), grid = (n / 10, 10)",
        "struct P { n: u32 }\n@group(0) @binding(0) var<storage, read> x: array<f32>;\n@group(0) @binding(1) var<storage, read_write> y: array<f32>;\n@group(0) @binding(2) var<uniform> p: P;\n@compute @workgroup_size(20)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) { let i = g.y * 100u + g.x; if (i >= p.n - 1u) { return; } y[i] = x[i]; }\n",
    );
    let why = apply(&Coarsen, &hidden, &testkit::lavapipe())
        .unwrap_err()
        .0;
    assert!(why.contains("`n` is in no uniform"), "{why}");
}

#[test]
fn an_unguarded_id_over_sizes_the_constraints_pin_is_coarsened_within_the_launch() {
    // wonnx renders every shape into the shader and launches exactly what it needs: no bounds
    // test, and a launch over sizes pinned with `==`, which makes it a constant.
    let wgsl = "@group(0) @binding(0) var<storage, read> x: array<f32>;\n@group(0) @binding(1) var<storage, read_write> y: array<f32>;\n@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) { y[g.x] = max(x[g.x], 0.0); }\n";
    let pinned = testkit::resolve(
        "K",
        "sizes(c = 16, hw = 196), bind(x = input(c * hw), y = output(c * hw)), grid = (c * hw), constraints(c == 16 && hw == 196)",
        wgsl,
    );
    let r = apply(&Coarsen, &pinned, &testkit::lavapipe()).unwrap();
    let contiguous2 = r
        .iter()
        .find(|r| r.step == "coarsen(2, contiguous, x)")
        .unwrap();
    // 3136 ids ran in 49 workgroups of 64: every one of them, two per invocation.
    assert_eq!(contiguous2.program.dispatch.to_string(), "grid(1568, 1, 1)");
    assert!(
        contiguous2.program.wgsl.contains("if (kf_id < 3136u) {"),
        "{}",
        contiguous2.program.wgsl
    );
    for r in &r {
        testkit::check_valid(&pinned, r);
    }
    // The same launch with one size free is not a constant.
    let free = testkit::resolve(
        "K",
        "sizes(c = 16, hw = 196), bind(x = input(c * hw), y = output(c * hw)), grid = (c * hw), constraints(c == 16)",
        wgsl,
    );
    let why = apply(&Coarsen, &free, &testkit::lavapipe()).unwrap_err().0;
    assert!(why.contains("not a constant"), "{why}");
}

#[test]
fn a_negated_early_exit_test_is_a_bounds_test() {
    // The `if (i >= n) { return; }` guard written as a wrapping `if (!(i >= n)) { .. }`, and as a
    // negated upper bound; the launch extent is a size, so only the test can make the ids past `n`
    // do nothing.
    for guard in ["!(i >= n)", "!(n <= i)", "!(i >= n || false)"] {
        let wgsl = format!(
            "@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> n: u32;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
    let i = gid.x;
    if ({guard}) {{ y[i] = 2.0 * x[i]; }}
}}
"
        );
        let k = testkit::resolve(
            "k.wgsl",
            "sizes(n = 100), bind(x = input(n), y = output(n), n = uniform(n)), grid = (n)",
            &wgsl,
        );
        let rws =
            apply(&Coarsen, &k, &testkit::lavapipe()).unwrap_or_else(|e| panic!("`{guard}`: {e}"));
        assert_eq!(rws.len(), 6, "{guard}");
    }
    // A negated lower bound does not keep the ids past `n` out; nor does a test whose branch
    // writes before the `return` naga gives the last statement of a function. Those ids then
    // write, in the parent as in the rewrite: the rewrite runs exactly the parent's ids, below
    // the workgroups its launch counts, printed from the uniform that holds `n`.
    let wgsl = "@group(0) @binding(0) var<storage, read_write> y: array<f32>;
@group(0) @binding(1) var<uniform> n: u32;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (!(gid.x < n)) { y[0] = 1.0; }
}
";
    let late = "@group(0) @binding(0) var<storage, read_write> y: array<f32>;
@group(0) @binding(1) var<uniform> n: u32;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= n) { y[0] = 1.0; return; }
}
";
    for wgsl in [wgsl, late] {
        let k = testkit::resolve(
            "k.wgsl",
            "sizes(n = 100), bind(y = output(n), n = uniform(n)), grid = (n)",
            wgsl,
        );
        let rws = apply(&Coarsen, &k, &testkit::lavapipe()).unwrap();
        for r in &rws {
            let text = &r.program.wgsl;
            assert!(
                text.contains("if (kf_id < (((u32(n) + 64u - 1u) / 64u) * 64u)) {"),
                "{text}"
            );
            check_valid(&k, r);
            for n in [100u64, 64, 1, 129] {
                check_cover(
                    &k.baseline,
                    r,
                    0,
                    Some(n.div_ceil(64) * 64),
                    None,
                    &[("n", n)],
                );
            }
        }
    }
}

/// An elementwise kernel launched by workgroup count (`dispatch_workgroups(cdiv(n, 64), 1, 1)`),
/// its guard the global id against the output's length: no `workgroup_id`, nothing for the
/// canonical form to respell.
const BY_WORKGROUPS: &str = "
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= arrayLength(&dst)) {
        return;
    }
    dst[gid.x] = src[gid.x] * 0.5 + 1.0;
}
";

/// Which of `parent`'s invocations `child` (a coarsening along `dim`, over the literal extent
/// `limit` when it has one) runs, on the shape `sizes`: each of the parent's ids along `dim` must
/// be run exactly once, and an id the parent did not launch at or past `guard` (the kernel's
/// bounds test stops it there) or not at all (`limit`).
fn check_cover(
    parent: &kf_runtime::Program,
    child: &Rewrite,
    dim: usize,
    limit: Option<u64>,
    guard: Option<u64>,
    sizes: &[(&str, u64)],
) {
    let (k, mapping) = factor_and_mapping(child);
    let lookup = |n: &str| sizes.iter().find(|(s, _)| *s == n).map(|(_, v)| *v);
    let counts = parent.workgroups(lookup, u32::MAX).unwrap();
    let ran = u64::from(counts[dim]) * u64::from(parent.workgroup_size[dim]);
    let child_counts = child.program.workgroups(lookup, u32::MAX).unwrap();
    assert_eq!(child.program.workgroup_size, parent.workgroup_size);
    for d in (0..3).filter(|&d| d != dim) {
        assert_eq!(child_counts[d], counts[d], "{}: axis {d}", child.step);
    }
    let launched = u64::from(child_counts[dim]) * u64::from(parent.workgroup_size[dim]);
    let mut runs = vec![0u32; ran as usize];
    for i in 0..launched {
        for j in 0..k {
            let id = match mapping {
                Mapping::Contiguous => i * k + j,
                Mapping::Strided => i + j * launched,
            };
            if limit.is_some_and(|x| id >= x) {
                continue;
            }
            if id < ran {
                runs[id as usize] += 1;
            } else {
                assert!(
                    guard.is_some_and(|g| id >= g),
                    "{} on {sizes:?}: id {id} runs past the parent's {ran} ids unguarded",
                    child.step
                );
            }
        }
    }
    assert!(
        runs.iter().all(|&r| r == 1),
        "{} on {sizes:?}: the parent's ids are not run once each",
        child.step
    );
}

/// `k` and the mapping of a coarsening's step.
fn factor_and_mapping(r: &Rewrite) -> (u64, Mapping) {
    let step = testkit::own_step(r);
    let k = step["coarsen(".len()..].split(',').next().unwrap();
    let mapping = if step.contains("strided") {
        Mapping::Strided
    } else {
        Mapping::Contiguous
    };
    (k.parse().unwrap(), mapping)
}

#[test]
fn a_launch_by_workgroup_count_is_coarsened_as_the_grid_of_its_invocations() {
    let k = testkit::resolve(
        "by_workgroups.wgsl",
        "sizes(n = 1000), bind(src = input(n), dst = output(n)), workgroups = (cdiv(n, 64))",
        BY_WORKGROUPS,
    );
    assert_eq!(k.baseline.dispatch.mode, DispatchMode::Workgroups);
    let rewrites = apply(&Coarsen, &k, &testkit::lavapipe())
        .unwrap_or_else(|e| panic!("coarsen skipped a launch by workgroup count: {e}"));
    assert_eq!(rewrites.len(), 6);
    let dispatches: Vec<String> = rewrites
        .iter()
        .map(|r| r.program.dispatch.to_string())
        .collect();
    // `W` workgroups of 64 are the grid of `W·64`; `k` ids per invocation: `W·64 / k`.
    assert_eq!(
        dispatches,
        [
            "grid(cdiv(n, 64) * 32, 1, 1)",
            "grid(cdiv(n, 64) * 32, 1, 1)",
            "grid(cdiv(n, 64) * 16, 1, 1)",
            "grid(cdiv(n, 64) * 16, 1, 1)",
            "grid(cdiv(n, 64) * 8, 1, 1)",
            "grid(cdiv(n, 64) * 8, 1, 1)",
        ]
    );
    for r in &rewrites {
        check_valid(&k, r);
        assert_eq!(r.program.dispatch.mode, DispatchMode::Grid);
        let (factor, _) = factor_and_mapping(r);
        // 1000 and 100 are not multiples of 64: the last workgroup's idle invocations are the
        // parent's too, and the guard stops them in both.
        for n in [1000, 64, 100, 4096, 1] {
            let sizes = [("n", n)];
            let grid = r.program.dispatch.size[0].eval_with(&sizes).unwrap();
            assert_eq!(grid, n.div_ceil(64) * 64 / factor, "{} on n = {n}", r.step);
            check_cover(&k.baseline, r, 0, None, Some(n), &sizes);
        }
    }
}

#[test]
fn a_workgroup_count_over_two_axes_keeps_the_other_axis_launch() {
    // `workgroups = (cdiv(cols, 16), cdiv(rows, 4))` over 16×4 workgroups, each id tested against
    // its bound; the coarsened axis is x (unit stride), y keeps its `cdiv(rows, 4)` workgroups.
    let k = testkit::resolve(
        "by_workgroups_2d.wgsl",
        "sizes(rows = 10, cols = 50), bind(src = input(rows * cols), dst = output(rows * cols), dims = uniform(rows, cols)), workgroups = (cdiv(cols, 16), cdiv(rows, 4))",
        "struct Dims { rows: u32, cols: u32 }
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> dims: Dims;
@compute @workgroup_size(16, 4)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let col = gid.x;
    let row = gid.y;
    if (col < dims.cols && row < dims.rows) {
        dst[row * dims.cols + col] = abs(src[row * dims.cols + col]);
    }
}
",
    );
    let rewrites = apply(&Coarsen, &k, &testkit::lavapipe()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rewrites.len(), 6);
    let eight = rewrites
        .iter()
        .find(|r| testkit::own_step(r) == "coarsen(8, strided, x)")
        .unwrap();
    assert_eq!(
        eight.program.dispatch.to_string(),
        "grid(cdiv(cols, 16) * 2, cdiv(rows, 4) * 4, 1)"
    );
    for r in &rewrites {
        check_valid(&k, r);
        for (rows, cols) in [(10, 50), (4, 16), (7, 129)] {
            let sizes = [("rows", rows), ("cols", cols)];
            check_cover(&k.baseline, r, 0, None, Some(cols), &sizes);
        }
    }
}

#[test]
fn a_constant_workgroup_count_without_a_test_of_the_id_runs_exactly_its_invocations() {
    // Rows of 48 values, 3 workgroups of 16 along x: the guard tests the flattened index, not
    // the id, so the 48 ids the launch runs along x are run once each and no other.
    let k = testkit::resolve(
        "rows_by_workgroups.wgsl",
        "sizes(rows = 5), bind(src = input(rows * 48), dst = output(rows * 48)), workgroups = (3, rows)",
        "@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@compute @workgroup_size(16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.y * 48u + gid.x;
    if (i >= arrayLength(&dst)) {
        return;
    }
    dst[i] = src[i] + 1.0;
}
",
    );
    let rewrites = apply(&Coarsen, &k, &testkit::lavapipe()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rewrites.len(), 6);
    for r in &rewrites {
        check_valid(&k, r);
        let (factor, _) = factor_and_mapping(r);
        // `⌈48 / k⌉` along x, the parent's `rows` workgroups of one along y.
        assert_eq!(
            r.program.dispatch.to_string(),
            format!("grid({}, rows, 1)", 48u64.div_ceil(factor)),
            "{}",
            r.step
        );
        assert!(r.program.wgsl.contains("if (kf_id < 48u) {"), "{}", r.step);
        for rows in [5, 1] {
            check_cover(&k.baseline, r, 0, Some(48), None, &[("rows", rows)]);
        }
    }
}

#[test]
fn a_workgroup_count_over_the_parameter_that_sets_the_size_skips() {
    let k = testkit::resolve(
        "by_wg.wgsl",
        "sizes(n = 1000), bind(src = input(n), dst = output(n)), workgroups = (cdiv(n, WG)), params(WG = [64, 128])",
        &BY_WORKGROUPS.replace(
            "@compute @workgroup_size(64)",
            "override WG: u32 = 64u;\n@compute @workgroup_size(WG)",
        ),
    );
    let why = apply(&Coarsen, &k, &testkit::lavapipe()).unwrap_err().0;
    assert!(why.contains("also sets the workgroup size"), "{why}");
}

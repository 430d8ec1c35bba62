//! Row reductions as people write them, on the real adapter: the parallel reduction of every
//! kernelbench row reduction (with the suite's own attribute, at small sizes) and of respelled
//! corpus kernels must be correct (level 5) through the worker. Speed is never asserted.

use super::operators::{corpus, corpus_plan, resolve};
use kf_build::evaluate::process::WorkerProcess;
use kf_build::evaluate::{Candidate, EvalRequest, Evaluator};
use kf_build::operators::attention::FlashAttention;
use kf_build::operators::reduce::ParallelReduction;
use kf_build::operators::respell::{self, Spelling};
use kf_build::operators::tile::Tile;
use kf_build::operators::transpose::TransposeTile;
use kf_build::operators::{Operator, Subject, Target, apply_canonical, canon};
use kf_runtime::resolve::ResolvedKernel;
use kf_tests::*;

use crate::operators::worker_and_target as worker;

/// The reduction's rewrites of `kernel` (through its canonical form, as the search applies
/// operators), each evaluated; the failures, and how many rewrites there were.
fn reduce_and_verify(
    worker: &mut WorkerProcess,
    target: &Target,
    label: &str,
    kernel: &ResolvedKernel,
) -> (usize, Vec<String>) {
    rewrite_and_verify(
        &ParallelReduction,
        worker,
        target,
        label,
        kernel,
        usize::MAX,
    )
}

/// `op`'s rewrites of `kernel` (through its canonical form, as the search applies operators), the
/// first `most` of them evaluated; the failures, and how many rewrites were evaluated.
fn rewrite_and_verify(
    op: &dyn Operator,
    worker: &mut WorkerProcess,
    target: &Target,
    label: &str,
    kernel: &ResolvedKernel,
    most: usize,
) -> (usize, Vec<String>) {
    let subject = Subject {
        kernel,
        program: &kernel.baseline,
        target,
    };
    let canonical = canon::canonicalise(&subject);
    let mut rewrites = match apply_canonical(op, &subject, canonical.as_ref()) {
        Ok(r) => r,
        Err(skip) => return (0, vec![format!("{label}: {} skipped: {skip}", op.name())]),
    };
    rewrites.truncate(most);
    let mut failures = Vec::new();
    for (i, r) in rewrites.iter().enumerate() {
        let report = worker.evaluate(&EvalRequest {
            kernel: kernel.clone(),
            candidate: Candidate {
                id: format!("{}-{i}", op.name()),
                origin: r.step.clone(),
                program: r.program.clone(),
            },
            plan: corpus_plan(kernel),
            ceilings: None,
            deadline_s: None,
        });
        if report.fitness.level != 5 {
            failures.push(format!(
                "{label} {}: level {} {:?}\n{}",
                r.step,
                report.fitness.level,
                report.failure.map(|f| f.log),
                r.program.wgsl
            ));
        }
    }
    (rewrites.len(), failures)
}

/// The `#[kernelfoundry(..)]` arguments of `name` in the kernelbench suite, with its sizes
/// replaced by `sizes` (the suite's are GPU-sized; lavapipe stops loops after 65535 iterations).
fn kernelbench_attr(name: &str, sizes: &str) -> (String, String) {
    let src = std::fs::read_to_string(root().join("examples/kernelbench/src/kernels.rs")).unwrap();
    let at = src
        .find(&format!("pub static {name}: Kernel;"))
        .unwrap_or_else(|| panic!("{name} is not in kernels.rs"));
    let open = src[..at].rfind("#[kernelfoundry(").unwrap() + "#[kernelfoundry(".len();
    let close = src[..at].rfind(")]").unwrap();
    let attr = src[open..close].trim().trim_end_matches(',').to_owned();
    let s = attr.find("sizes(").expect("sizes(..)");
    let mut depth = 0;
    let mut end = s;
    for (i, c) in attr[s..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    end = s + i + 1;
                    break;
                }
            }
            _ => {}
        }
    }
    let attr = format!("{}sizes({sizes}){}", &attr[..s], &attr[end..]);
    let path = attr
        .split("path = \"")
        .nth(1)
        .and_then(|p| p.split('"').next())
        .expect("path = \"..\"")
        .to_owned();
    (attr, path)
}

#[test]
fn reduce_verifies_the_kernelbench_row_reductions() {
    let (mut worker, target) = worker();
    let mut failures = Vec::new();
    for (name, sizes) in [
        ("SOFTMAX", "rows = 6, cols = 300"),
        ("LAYERNORM", "rows = 6, cols = 300"),
        ("LOG_SOFTMAX", "rows = 5, cols = 333"),
        ("RMSNORM", "rows = 6, cols = 300"),
        ("ADD_LAYERNORM", "rows = 6, cols = 300"),
        ("SUM_DIM1", "batch = 3, rows = 40, cols = 20"),
        ("MAX_REDUCE", "rows = 6, cols = 300"),
        ("ARGMAX", "rows = 6, cols = 300"),
    ] {
        let (attr, path) = kernelbench_attr(name, sizes);
        let wgsl =
            std::fs::read_to_string(root().join("examples/kernelbench").join(&path)).unwrap();
        let kernel = resolve(name, &attr, &wgsl);
        let (n, f) = reduce_and_verify(&mut worker, &target, name, &kernel);
        eprintln!("{name}: {n} rewrites, {} failures", f.len());
        if n == 0 && f.is_empty() {
            failures.push(format!("{name}: no rewrite"));
        }
        failures.extend(f);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn respelled_row_reductions_are_reduced_correctly() {
    let (mut worker, target) = worker();
    let subset = [
        "softmax_if_max_block.wgsl",
        "softmax_shared_counter.wgsl",
        "layernorm_flat_bt.wgsl",
        "log_softmax_loop.wgsl",
        "row_stats_2d.wgsl",
        "argmax_floor_ties.wgsl",
        "argmin_last_select.wgsl",
        "argmax_rows_2d.wgsl",
        "col_sum_max_strided.wgsl",
    ];
    let spellings = [
        Some(Spelling::ExtremumIf),
        Some(Spelling::ExtremumSelect),
        Some(Spelling::ArgSelect),
    ];
    let (table, evaluated, failures) = over_spellings(&subset, &spellings, |label, kernel| {
        reduce_and_verify(&mut worker, &target, label, kernel)
    });
    eprintln!("reduce on the adapter, kernel × spelling:\n{table}");
    assert!(evaluated >= 20, "only {evaluated} rewrites evaluated");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Every corpus kernel of `subset` under every spelling of `spellings` that changes it (`None`:
/// as written), checked by `check` (which returns how many rewrites it evaluated and its
/// failures): the kernel × spelling table, the evaluations and the failures.
fn over_spellings(
    subset: &[&str],
    spellings: &[Option<Spelling>],
    mut check: impl FnMut(&str, &ResolvedKernel) -> (usize, Vec<String>),
) -> (String, usize, Vec<String>) {
    let mut table = String::new();
    let mut failures = Vec::new();
    let mut evaluated = 0;
    let kernels: Vec<_> = corpus()
        .into_iter()
        .filter(|k| subset.contains(&k.name.as_str()))
        .collect();
    assert_eq!(
        kernels.len(),
        subset.len(),
        "a kernel of the subset is missing"
    );
    for k in kernels {
        let text = k.kernel.baseline.wgsl.to_string();
        let entry = k.kernel.baseline.entry.to_string();
        table.push_str(&format!("{:<28}", k.name));
        for &s in spellings {
            let name = respell::name(s);
            let respelled = respell::respell(s, &text, &entry);
            if respelled == text && s.is_some() {
                table.push_str(&format!(" {name}: -"));
                continue;
            }
            let kernel = resolve(
                &k.name,
                &format!("path = \"{}\", {}", k.name, k.spec),
                &respelled,
            );
            let (n, f) = check(&format!("{} ({name})", k.name), &kernel);
            evaluated += n;
            table.push_str(&format!(
                " {name}: {}",
                if f.is_empty() && n > 0 {
                    "level 5"
                } else {
                    "FAILED"
                }
            ));
            failures.extend(f);
        }
        table.push('\n');
    }
    (table, evaluated, failures)
}

/// The column-groups form (`reduce(workgroup, column groups, ..)`) of the column sums, with the
/// guard as an early `return` and as a wrapping `if`, verified at its defaults and at other
/// points of its two overrides: 60 columns (no multiple of a column count), a 32-wide baseline
/// workgroup with more columns per workgroup than it has (spare columns), one lane per column,
/// and a column count that divides no workgroup size.
#[test]
fn column_groups_verify_at_several_parameter_points() {
    use kf_build::operators::reduce::{COLS, WG};
    use std::borrow::Cow;
    let (mut worker, target) = worker();
    let (attr, path) = kernelbench_attr("SUM_DIM1", "batch = 3, rows = 40, cols = 20");
    let sum_dim1 =
        std::fs::read_to_string(root().join("examples/kernelbench").join(&path)).unwrap();
    let strided = corpus()
        .into_iter()
        .find(|k| k.name == "col_sum_max_strided.wgsl")
        .unwrap();
    let strided_attr = format!("path = \"{}\", {}", strided.name, strided.spec);
    let strided_wgsl = strided.kernel.baseline.wgsl.to_string();
    let mut kernels = Vec::new();
    for (name, attr, wgsl, entry) in [
        ("SUM_DIM1", &attr, &sum_dim1, "main"),
        (
            "col_sum_max_strided",
            &strided_attr,
            &strided_wgsl,
            "colsum",
        ),
    ] {
        kernels.push((name.to_owned(), resolve(name, attr, wgsl)));
        let guarded = respell::respell(Some(Spelling::Guard), wgsl, entry);
        assert_ne!(&guarded, wgsl, "{name}: the guard was not respelled");
        kernels.push((format!("{name} (guard)"), resolve(name, attr, &guarded)));
    }
    let mut failures = Vec::new();
    let mut evaluated = 0;
    for (label, kernel) in &kernels {
        let subject = Subject {
            kernel,
            program: &kernel.baseline,
            target: &target,
        };
        let canonical = canon::canonicalise(&subject);
        let rewrites = apply_canonical(&ParallelReduction, &subject, canonical.as_ref())
            .unwrap_or_else(|e| panic!("{label}: reduce skipped: {e}"));
        let r = rewrites
            .iter()
            .find(|r| r.step.contains("reduce(workgroup, column groups"))
            .unwrap_or_else(|| {
                panic!(
                    "{label}: no column groups among {:?}",
                    rewrites.iter().map(|r| &r.step).collect::<Vec<_>>()
                )
            });
        let mut points = vec![None];
        points.extend(
            [(64u32, 8u32), (128, 64), (64, 128), (64, 24)]
                .into_iter()
                .map(Some),
        );
        for point in points {
            let mut program = r.program.clone();
            if let Some((wg, cols)) = point {
                program.constants = Cow::Owned(vec![
                    (Cow::Borrowed(WG), f64::from(wg)),
                    (Cow::Borrowed(COLS), f64::from(cols)),
                ]);
                program.workgroup_size = [wg, 1, 1];
            }
            let report = worker.evaluate(&EvalRequest {
                kernel: kernel.clone(),
                candidate: Candidate {
                    id: format!("columns-{evaluated}"),
                    origin: r.step.clone(),
                    program: program.clone(),
                },
                plan: corpus_plan(kernel),
                ceilings: None,
                deadline_s: None,
            });
            evaluated += 1;
            if report.fitness.level != 5 {
                failures.push(format!(
                    "{label} {} at {point:?}: level {} {:?}\n{}",
                    r.step,
                    report.fitness.level,
                    report.failure.map(|f| f.log),
                    program.wgsl
                ));
            }
        }
    }
    assert_eq!(evaluated, 20);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Matmuls as people write them (a flat id split by `/` and `%`, with a batch folded in too; no
/// guard where the launch is exact; an epilogue in a function of its own) under every spelling
/// that changes them: `tile` and `tile-blocked` fire on each and their rewrites verify. Three
/// rewrites per operator and spelling (one staged tile, the blocked 64x64 shapes), which covers
/// the row and column guards a flat id needs, the bounds an exact launch needs and the
/// re-emitted call.
#[test]
fn respelled_matmuls_are_tiled_correctly() {
    let (mut worker, target) = worker();
    let subset = [
        "bmm_flat_id.wgsl",
        "matmul_exact_launch.wgsl",
        "matmul_flat_id.wgsl",
        "matmul_gelu_fn.wgsl",
    ];
    let spellings = [
        Some(Spelling::Comments),
        Some(Spelling::Parens),
        Some(Spelling::Compound),
        Some(Spelling::Rename),
        Some(Spelling::While),
        None,
    ];
    let (table, evaluated, failures) = over_spellings(&subset, &spellings, |label, kernel| {
        let mut all = (0, Vec::new());
        for op in [Tile::shared(), Tile::blocked()] {
            let (n, f) = rewrite_and_verify(&op, &mut worker, &target, label, kernel, 3);
            all.0 += n;
            all.1.extend(f);
        }
        all
    });
    eprintln!("tile on the adapter, kernel × spelling:\n{table}");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(evaluated >= 60, "only {evaluated} rewrites evaluated");
}

/// Loops written as `while` and as `loop { if (..) { break; } .. continuing { .. } }` reach the
/// canonical `for`: `unroll` and `hoist` fire on them as on the `for` they were respelled from,
/// and their rewrites verify.
#[test]
fn respelled_loops_are_unrolled_and_hoisted_correctly() {
    use kf_build::operators::{hoist::Hoist, unroll::Unroll};
    let (mut worker, target) = worker();
    let subset = [
        "gemv_struct.wgsl",
        "weighted_rows_while.wgsl",
        "row_stats_2d.wgsl",
    ];
    let spellings = [Some(Spelling::While), Some(Spelling::LoopBreak)];
    let (table, evaluated, failures) = over_spellings(&subset, &spellings, |label, kernel| {
        let mut all = (0, Vec::new());
        let ops: [&dyn Operator; 2] = [&Unroll, &Hoist];
        for op in ops {
            let (n, f) = rewrite_and_verify(op, &mut worker, &target, label, kernel, 2);
            all.0 += n;
            all.1.extend(f);
        }
        all
    });
    eprintln!("unroll and hoist on the adapter, kernel × spelling:\n{table}");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(evaluated >= 16, "only {evaluated} rewrites evaluated");
}

#[test]
fn respelled_elementwise_kernels_are_widened_correctly() {
    use kf_build::operators::widen::Widen;
    let (mut worker, target) = worker();
    let subset = [
        "saxpy.wgsl",
        "gelu_flat_rows.wgsl",
        "bias_relu_rows.wgsl",
        "embedding_gather.wgsl",
        "swiglu_halves.wgsl",
    ];
    let spellings = [
        None,
        Some(Spelling::Rename),
        Some(Spelling::Parens),
        Some(Spelling::Guard),
        Some(Spelling::Reorder),
        Some(Spelling::LetChain),
        Some(Spelling::VecUniform),
    ];
    let (table, evaluated, failures) = over_spellings(&subset, &spellings, |label, kernel| {
        rewrite_and_verify(&Widen, &mut worker, &target, label, kernel, 1)
    });
    eprintln!("widen on the adapter, kernel × spelling:\n{table}");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(evaluated >= 20, "only {evaluated} rewrites evaluated");
}

/// Convolutions under the spellings that change them: `implicit-gemm` fires on each and its
/// rewrites verify (the first two configurations: a plane of pixels, staged slices read as
/// `vec4`). The NCHW kernel takes its batch and channel from `gid.z / C` and `gid.z % C`; the
/// NHWC one has the channel on x and its padding test around the channel loop; the flat ones
/// take batch, channel, row and column apart from one flat id (the channel a middle digit in
/// NCHW, the lowest in NHWC).
#[test]
fn respelled_convolutions_are_tiled_as_implicit_gemms_correctly() {
    use kf_build::operators::implicit::ImplicitGemm;
    let (mut worker, target) = worker();
    let subset = [
        "conv2d_nchw.wgsl",
        "conv_nhwc_channels_x.wgsl",
        "conv2d_nchw_flat.wgsl",
        "conv_nhwc_flat.wgsl",
    ];
    let spellings = [
        None,
        Some(Spelling::While),
        Some(Spelling::LoopBreak),
        Some(Spelling::Guard),
        Some(Spelling::VecUniform),
        Some(Spelling::Rename),
        Some(Spelling::LetChain),
    ];
    let (table, evaluated, failures) = over_spellings(&subset, &spellings, |label, kernel| {
        rewrite_and_verify(&ImplicitGemm, &mut worker, &target, label, kernel, 2)
    });
    eprintln!("implicit-gemm on the adapter, kernel × spelling:\n{table}");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(evaluated >= 20, "only {evaluated} rewrites evaluated");
}

/// Attention one query row per invocation, as KernelBench writes it (a helper for the score, two
/// passes), in three inline passes (narrow heads) and in one inline pass with the softmax online
/// (wide heads), under every spelling that changes them: `flash-attention` fires on each and its
/// rewrites verify.
#[test]
fn respelled_attention_is_flashed_correctly() {
    let (mut worker, target) = worker();
    let subset = [
        "attention_head_rows.wgsl",
        "attention_online_narrow.wgsl",
        "attention_online_wide.wgsl",
    ];
    let mut spellings: Vec<Option<Spelling>> = Spelling::ALL.iter().copied().map(Some).collect();
    spellings.push(None);
    let (table, evaluated, failures) = over_spellings(&subset, &spellings, |label, kernel| {
        // The first configuration per spelling: the others differ in their tile sizes only, and
        // `tests/it/operators.rs` verifies every configuration of the kernels as written.
        rewrite_and_verify(&FlashAttention, &mut worker, &target, label, kernel, 1)
    });
    eprintln!("flash-attention on the adapter, kernel × spelling:\n{table}");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(evaluated >= 12, "only {evaluated} rewrites evaluated");
}

/// Transposing copies (KernelBench's transpose, and one that reads along y with a scale and a
/// bias), under every spelling that changes them: `transpose-tile` fires on each and its rewrite
/// verifies, at sizes that are no multiple of its 32x32 tiles.
#[test]
fn respelled_transposes_are_tiled_correctly() {
    let (mut worker, target) = worker();
    let subset = ["transpose_rows_cols.wgsl", "transpose_scaled_bias.wgsl"];
    let mut spellings: Vec<Option<Spelling>> = Spelling::ALL.iter().copied().map(Some).collect();
    spellings.push(None);
    let (table, evaluated, failures) = over_spellings(&subset, &spellings, |label, kernel| {
        rewrite_and_verify(&TransposeTile, &mut worker, &target, label, kernel, 1)
    });
    eprintln!("transpose-tile on the adapter, kernel × spelling:\n{table}");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(evaluated >= 8, "only {evaluated} rewrites evaluated");
}

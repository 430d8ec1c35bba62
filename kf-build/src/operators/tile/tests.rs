//! Pure tests of the tiling operator: every kernel in `tests/data/kernels/tile/` is recognised or
//! skipped as its header says, and every rewrite parses, validates and keeps the baseline's
//! interface. Running the rewrites is the end-to-end test's job (`tests/it/tiling.rs`).

use super::*;
use crate::operators::Target;
use kf_runtime::resolve::{ResolvedKernel, reflect, resolve};
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/data/kernels/tile")
}

fn header(text: &str, key: &str) -> Option<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("// "))
        .find_map(|l| l.strip_prefix(key).map(|v| v.trim().to_owned()))
}

/// The kernel a test file describes in its `// spec:` header.
fn load(file: &str) -> (ResolvedKernel, String) {
    let path = dir().join(file);
    let wgsl = std::fs::read_to_string(&path).unwrap();
    let spec = header(&wgsl, "spec:").unwrap_or_else(|| panic!("{file} has no `// spec:`"));
    let tokens: proc_macro2::TokenStream = format!("path = \"{file}\", {spec}").parse().unwrap();
    let (spec, _) = kf_runtime::syntax::parse_spec(tokens).unwrap();
    let kernel = resolve("TEST", &spec, &wgsl, file).unwrap_or_else(|e| panic!("{file}: {e}"));
    let expect = header(&wgsl, "expect:").unwrap_or_else(|| panic!("{file} has no `// expect:`"));
    (kernel, expect)
}

fn files() -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".wgsl"))
        .collect();
    files.sort();
    files
}

/// As the search applies it: to the kernel's canonical form.
fn apply(op: &Tile, kernel: &ResolvedKernel, target: &Target) -> Result<Vec<Rewrite>, Skip> {
    crate::operators::testkit::apply(op, kernel, target)
}

/// Limits like a discrete GPU's (an H200 reports these), under which every configuration fits.
fn roomy() -> Target {
    let mut target = Target::default();
    for (name, value) in [
        ("max_compute_invocations_per_workgroup", 1024),
        ("max_compute_workgroup_size_x", 1024),
        ("max_compute_workgroup_size_y", 1024),
        ("max_compute_workgroup_size_z", 64),
        ("max_compute_workgroup_storage_size", 49152),
    ] {
        target.limits.insert(name.into(), value);
    }
    target
}

#[test]
fn every_rewrite_validates_and_keeps_the_interface() {
    let target = roomy();
    let mut seen = 0;
    for file in files() {
        let (kernel, expect) = load(&file);
        if expect != "tile" {
            continue;
        }
        for op in [Tile::shared(), Tile::blocked()] {
            let rewrites = apply(&op, &kernel, &target)
                .unwrap_or_else(|s| panic!("{file}: {} skipped: {s}", op.name()));
            // A row's sum over a column loop (`rows_*.wgsl`) has configurations of its own.
            let configs = if file.starts_with("rows_") {
                op.row_configs()
            } else {
                op.configs()
            };
            assert_eq!(rewrites.len(), configs.len(), "{file}");
            assert!(
                rewrites
                    .iter()
                    .all(|r| r.step.contains("(rows, ") == file.starts_with("rows_")),
                "{file}"
            );
            for rw in rewrites {
                let r = reflect(&rw.program.wgsl, Some(&rw.program.entry), &file)
                    .unwrap_or_else(|e| panic!("{file} {}: {e}\n{}", rw.step, rw.program.wgsl));
                let mismatches = kernel.mismatches(&r.interface);
                assert!(mismatches.is_empty(), "{file} {}: {mismatches:?}", rw.step);
                assert_eq!(r.interface.workgroup_size, rw.program.workgroup_size);
                assert_eq!(rw.program.dispatch.mode, DispatchMode::Workgroups);
                // Nothing tunable is introduced; the block fits the limits.
                assert!(rw.params.is_empty());
                assert_eq!(rw.program.constants, kernel.baseline.constants);
                assert!(u64::from(rw.program.workgroup_storage_bytes) <= 49152);
                assert!(rw.program.invocations_per_workgroup() <= 1024);
                seen += 1;
            }
        }
    }
    assert!(seen >= 5 * 4, "only {seen} rewrites checked");
}

#[test]
fn non_matmul_kernels_are_skipped_with_a_reason() {
    let target = Target::default();
    let mut seen = 0;
    for file in files() {
        let (kernel, expect) = load(&file);
        if expect != "skip" {
            continue;
        }
        for op in [Tile::shared(), Tile::blocked()] {
            match apply(&op, &kernel, &target) {
                Err(Skip(why)) => assert!(!why.is_empty()),
                Ok(r) => panic!("{file}: expected a skip, got {} rewrites", r.len()),
            }
        }
        seen += 1;
    }
    assert!(seen >= 4);
}

#[test]
fn skip_reasons_name_the_broken_premise() {
    let why = |file: &str| {
        apply(&Tile::shared(), &load(file).0, &Target::default())
            .unwrap_err()
            .0
    };
    assert!(
        why("skip_gather_conv.wgsl").contains("not affine"),
        "{}",
        why("skip_gather_conv.wgsl")
    );
    assert!(why("skip_row_sum.wgsl").contains("sum of products"));
    assert!(why("skip_flat_id_two_divisors.wgsl").contains("not affine"));
    let four = why("skip_flat_id_four_digits.wgsl");
    assert!(four.contains("4 digits"), "{four}");
    assert!(
        !why("skip_flat_id_two_divisors.wgsl").contains("digits"),
        "two divisors that are no chain are no digits"
    );
    assert!(why("skip_impure_call.wgsl").contains("function call"));
    assert!(why("skip_unguarded.wgsl").contains("guarded"));
    assert!(why("skip_rows_two_accumulators.wgsl").contains("exactly one accumulator"));
}

#[test]
fn the_launch_rule_covers_the_grid_in_blocks() {
    let (kernel, _) = load("quickstart.wgsl");
    let rw = apply(&Tile::blocked(), &kernel, &Target::default()).unwrap();
    // 64x64: x counts column blocks (n), y row blocks (m).
    assert_eq!(
        rw[0].program.dispatch.to_string(),
        "workgroups((n + 63) / 64, (m + 63) / 64, 1)"
    );
    // 64 rows x 128 columns per block: u is the row axis (y), v the output's unit stride (x).
    assert_eq!(
        rw[2].program.dispatch.to_string(),
        "workgroups((n + 127) / 128, (m + 63) / 64, 1)"
    );
    let (kernel, _) = load("while_row_from_x.wgsl");
    let rw = apply(&Tile::blocked(), &kernel, &Target::default()).unwrap();
    // Rows are gid.x there, the output's unit stride is gid.y (columns): rows block along x.
    assert_eq!(
        rw[2].program.dispatch.to_string(),
        "workgroups((rows + 63) / 64, (cols + 127) / 128, 1)"
    );
    let (kernel, _) = load("batched.wgsl");
    let rw = apply(&Tile::shared(), &kernel, &Target::default()).unwrap();
    assert_eq!(
        rw[0].program.dispatch.to_string(),
        "workgroups((n + 15) / 16, (m + 15) / 16, batch)"
    );
    // A baseline launched in workgroups: its extent is counts times its workgroup size.
    let mut parent = kernel.baseline.clone();
    parent.dispatch = Dispatch {
        mode: DispatchMode::Workgroups,
        size: [
            SizeExpr::parse("(n + 7) / 8").unwrap(),
            SizeExpr::parse("(m + 7) / 8").unwrap(),
            SizeExpr::size("batch"),
        ],
    };
    let rw = Tile::shared()
        .apply(&Subject {
            kernel: &kernel,
            program: &parent,
            target: &Target::default(),
        })
        .unwrap();
    assert_eq!(
        rw[0].program.dispatch.to_string(),
        "workgroups(((n + 7) / 8 * 8 + 15) / 16, ((m + 7) / 8 * 8 + 15) / 16, batch * 1)"
    );
}

#[test]
fn configurations_respect_the_adapters_limits() {
    let (kernel, _) = load("quickstart.wgsl");
    let limited = |name: &str, value: u64| Target {
        limits: [(name.to_owned(), value)].into(),
        features: vec![],
    };
    let rw = apply(
        &Tile::blocked(),
        &kernel,
        &limited("max_compute_workgroup_storage_size", 8500),
    )
    .unwrap();
    assert!(!rw.is_empty() && rw.len() < Tile::blocked().configs().len());
    for r in &rw {
        assert!(r.program.workgroup_storage_bytes <= 8500, "{}", r.step);
    }
    let rw = apply(
        &Tile::blocked(),
        &kernel,
        &limited("max_compute_invocations_per_workgroup", 64),
    )
    .unwrap();
    assert_eq!(rw.len(), 1, "only the 64-invocation 8x8 blocking fits");
    assert_eq!(rw[0].program.workgroup_size, [8, 8, 1]);
    assert!(
        apply(
            &Tile::shared(),
            &kernel,
            &limited("max_compute_workgroup_size_x", 8)
        )
        .is_err()
    );
}

#[test]
fn every_configuration_splits_its_slices_evenly() {
    for op in [Tile::shared(), Tile::blocked()] {
        for c in op.configs() {
            assert_eq!(c.bu % c.ru + c.bv % c.rv, 0, "{c:?}");
            assert_eq!((c.bu * c.bk) % c.group_invocations(), 0, "{c:?}");
            assert_eq!((c.bv * c.bk) % c.group_invocations(), 0, "{c:?}");
            assert!(c.storage_bytes() <= 49152, "{c:?}");
        }
    }
}

#[test]
fn a_tiled_program_is_not_tiled_again() {
    let (kernel, _) = load("quickstart.wgsl");
    let rw = apply(&Tile::blocked(), &kernel, &Target::default()).unwrap();
    let again = Tile::shared().apply(&Subject {
        kernel: &kernel,
        program: &rw[0].program,
        target: &Target::default(),
    });
    assert!(again.is_err());
}

#[test]
fn the_rest_of_the_module_is_kept_byte_for_byte() {
    let (kernel, _) = load("gemm_bias_relu.wgsl");
    let src = kernel.baseline.wgsl.to_string();
    let rw = apply(&Tile::shared(), &kernel, &Target::default()).unwrap();
    let out = rw[0].program.wgsl.to_string();
    let fn_at = src.find("@compute").unwrap();
    assert!(out.starts_with(&src[..fn_at]));
    assert!(!out.contains("global_invocation_id"));
    // The epilogue is re-emitted from the IR: the bias, the scale and the max are all there.
    assert!(
        out.contains("bias[") && out.contains("p.alpha") && out.contains("max("),
        "{out}"
    );
}

#[test]
fn a_flat_id_launches_its_columns_by_the_divisor_and_its_rows_by_the_rest() {
    let (kernel, _) = load("flat_id.wgsl");
    let rw = apply(&Tile::blocked(), &kernel, &Target::default()).unwrap();
    // The grid m * n becomes n columns (x, the divisor) by cdiv(m * n, n) rows (y).
    assert_eq!(
        rw[0].program.dispatch.to_string(),
        "workgroups((n + 63) / 64, (cdiv(m * n, n) + 63) / 64, 1)"
    );
    // Every stored output keeps its column below the divisor: a column of n or more would name
    // the next row's output through the flat id.
    let text = rw[0].program.wgsl.as_ref();
    assert!(text.contains(") < u32(dims.n) && "), "{text}");
    assert!(
        text.contains(
            "vec3<u32>((kft_u0 + 0u + kft_tu) * u32(dims.n) + (kft_v0 + 0u + kft_tv), 0u, kft_z)"
        ) || text.contains("* u32(dims.n) + (kft_v0"),
        "{text}"
    );
    // A uniform vector spelling reaches the same form, its divisor a vector component.
    let (kernel, _) = load("flat_id_while_vec_uniform.wgsl");
    let rw = apply(&Tile::shared(), &kernel, &Target::default()).unwrap();
    assert_eq!(
        rw[0].program.dispatch.to_string(),
        "workgroups((n + 15) / 16, (cdiv(m * n, n) + 15) / 16, 1)"
    );
}

#[test]
fn a_pure_epilogue_function_is_called_on_every_output() {
    let (kernel, _) = load("gelu_call.wgsl");
    for op in [Tile::shared(), Tile::blocked()] {
        for rw in apply(&op, &kernel, &Target::default()).unwrap() {
            let text = rw.program.wgsl.as_ref();
            // The function stays at module scope and each output's store calls it.
            assert!(text.contains("fn gelu(v: f32) -> f32"), "{text}");
            let stores = text.matches("] = gelu((kft_acc_").count();
            // `tile(64x64, 8x8 per invocation, k16)`: 64 outputs per invocation, 64 stores.
            let per = rw
                .step
                .split(", ")
                .nth(1)
                .unwrap()
                .trim_end_matches(" per invocation");
            let (ru, rv) = per.split_once('x').unwrap();
            let outputs: usize = ru.parse::<usize>().unwrap() * rv.parse::<usize>().unwrap();
            assert_eq!(stores, outputs, "{}: {text}", rw.step);
        }
    }
}

#[test]
fn configurations_beyond_the_adapters_limits_are_not_offered() {
    // WebGPU's default limits (256 invocations, 16 KiB of workgroup memory) leave out the
    // counter-group configurations, which need more of both.
    let (kernel, _) = load("quickstart.wgsl");
    for op in [Tile::shared(), Tile::blocked()] {
        let small = apply(&op, &kernel, &Target::default()).unwrap();
        let all = apply(&op, &kernel, &roomy()).unwrap();
        assert!(small.len() < all.len(), "{}", op.name());
        assert!(small.iter().all(|r| !r.step.contains("counter groups")));
        assert!(all.iter().any(|r| r.step.contains("counter groups")));
        for r in &small {
            assert!(r.program.workgroup_storage_bytes <= 16384, "{}", r.step);
            assert!(r.program.invocations_per_workgroup() <= 256, "{}", r.step);
        }
    }
}

#[test]
fn counter_groups_add_their_sums_before_the_first_group_stores() {
    let (kernel, _) = load("quickstart.wgsl");
    let rw = apply(&Tile::blocked(), &kernel, &roomy()).unwrap();
    let split = rw
        .iter()
        .find(|r| r.step.contains("4 counter groups"))
        .expect("a configuration with four counter groups");
    let text = split.program.wgsl.as_ref();
    assert_eq!(split.program.workgroup_size[2], 4);
    // The loop steps over the four groups' slices at once, and the sums of groups 1..3 are added.
    assert!(text.contains("kft_t = kft_t + u32(64)"), "{text}");
    for g in 0..3 {
        assert!(text.contains(&format!("kft_sums[({g}u) * ")), "{text}");
    }
    // The other groups leave after the barrier: only group 0 stores.
    let leave = text
        .find("if kft_grp != 0u {")
        .expect("group 0 stores alone");
    let barrier = text[..leave].rfind("workgroupBarrier();").unwrap();
    assert!(
        text[barrier..leave]
            .trim_start_matches("workgroupBarrier();")
            .trim()
            .is_empty()
    );
}

#[test]
fn the_corpus_fires_and_skips_as_its_headers_say() {
    let corpus = crate::operators::testkit::corpus();
    let mut fired = 0;
    for k in &corpus {
        for op in [Tile::shared(), Tile::blocked(), Tile::split_k()] {
            let result = apply(&op, &k.kernel, &crate::operators::testkit::lavapipe());
            if k.fires.iter().any(|f| f == op.name()) {
                let rewrites = result.unwrap_or_else(|e| panic!("{}: skipped: {e}", k.name));
                assert!(!rewrites.is_empty(), "{}", k.name);
                fired += 1;
            } else if k.skips.iter().any(|f| f == op.name()) {
                assert!(result.is_err(), "{}: must skip", k.name);
            }
        }
    }
    assert!(fired >= 6, "only {fired} corpus kernels tiled");
}

#[test]
fn every_configuration_shares_its_slices_evenly() {
    // Each invocation loads `extent * bk / invocations` elements of each slice: a remainder would
    // leave part of a slice unloaded.
    for op in [Tile::shared(), Tile::blocked(), Tile::split_k()] {
        for cfg in op.configs().iter().chain(op.row_configs()) {
            let nt = cfg.group_invocations();
            for extent in [cfg.bu, cfg.bv] {
                assert!(
                    (extent * cfg.bk).is_multiple_of(nt) && extent * cfg.bk >= nt,
                    "{cfg:?}: a slice of {extent}x{} over {nt} invocations",
                    cfg.bk
                );
            }
            assert!(
                cfg.bu.is_multiple_of(cfg.ru) && cfg.bv.is_multiple_of(cfg.rv),
                "{cfg:?}"
            );
        }
    }
}

/// Split-K: every plain product (and every product in the rows form, its columns split) gets one
/// two-launch variant per configuration, each a valid variant of the kernel (the shared check,
/// which accepts the workspace group only as declared), its partial launch split along z, its
/// combine launch over the kernel's own grid; products it cannot split (batched) are skipped
/// with the reason.
#[test]
fn split_k_variants_are_two_launches_over_a_declared_workspace() {
    let target = roomy();
    let op = Tile::split_k();
    let mut seen = 0;
    for file in files() {
        let (kernel, expect) = load(&file);
        let text = std::fs::read_to_string(dir().join(&file)).unwrap();
        let skip = expect == "skip" || header(&text, "split-k:").as_deref() == Some("skip");
        let rewrites = match (apply(&op, &kernel, &target), skip) {
            (Err(Skip(why)), true) => {
                assert!(!why.is_empty());
                continue;
            }
            (Ok(r), false) => r,
            (Err(why), false) => panic!("{file}: skipped: {}", why.0),
            (Ok(_), true) => panic!("{file}: expected a skip"),
        };
        let rows = rewrites[0].step.contains("(rows, ");
        let configs = if rows { op.row_configs() } else { op.configs() };
        assert_eq!(rewrites.len(), configs.len(), "{file}");
        for rw in rewrites {
            let p = &rw.program;

            let checked = kf_runtime::variant::check(&kernel, p)
                .unwrap_or_else(|e| panic!("{file} {}: {e}\n{}", rw.step, p.wgsl));
            assert_eq!(checked.workgroup_size, p.workgroup_size);
            assert_eq!(p.then.len(), 1, "{file}");
            assert_eq!(checked.stages[0].workgroup_size, p.then[0].workgroup_size);
            assert_eq!(p.then[0].entry, "kft_combine");
            assert_eq!(p.workspace.len(), 1);
            let sk = p.dispatch.size[2].eval(|_| None).unwrap();
            assert!(
                sk >= if rows { 2 } else { 8 } && rw.step.contains(&format!("split {sk} ways")),
                "{}",
                rw.step
            );
            // sk partial sums per output element.
            let len = kernel
                .buffers
                .iter()
                .find(|b| b.role == kf_runtime::spec::Role::Output)
                .unwrap()
                .len
                .clone()
                .unwrap();
            let shape: Vec<(&str, u64)> =
                kernel.sizes.iter().map(|(n, v)| (n.as_str(), *v)).collect();
            let look = |n: &str| shape.iter().find(|(k, _)| *k == n).map(|(_, v)| *v);
            assert_eq!(
                p.workspace_bytes(look).unwrap(),
                vec![4 * sk * len.eval(look).unwrap()]
            );
            seen += 1;
        }
    }
    assert!(
        seen >= 7 * 5 + 3 * 4,
        "only {seen} split-K rewrites checked"
    );
}

#[test]
fn split_k_needs_the_outputs_length_in_the_launch_rule_and_a_free_group() {
    let (kernel, _) = load("quickstart.wgsl");
    let mut parent = kernel.baseline.clone();
    // A launch rule that names the sizes through a constant's stand-in: `m` is missing.
    parent.dispatch.size[1] = SizeExpr::lit(40);
    let why = Tile::split_k()
        .apply(&Subject {
            kernel: &kernel,
            program: &parent,
            target: &roomy(),
        })
        .unwrap_err()
        .0;
    assert!(why.contains("`m`") && why.contains("dispatch"), "{why}");
    let mut one_group = roomy();
    one_group.limits.insert("max_bind_groups".into(), 1);
    let why = apply(&Tile::split_k(), &kernel, &one_group).unwrap_err().0;
    assert!(why.contains("bind group"), "{why}");
}

#[test]
fn split_k_offers_no_workspace_larger_than_a_storage_binding() {
    // 40x36 outputs: 8 partial sums each take 46 080 bytes, 16 take 92 160.
    let (kernel, _) = load("quickstart.wgsl");
    let mut target = roomy();
    target
        .limits
        .insert("max_storage_buffer_binding_size".into(), 50_000);
    let rewrites = apply(&Tile::split_k(), &kernel, &target).unwrap();
    assert!(!rewrites.is_empty());
    assert!(
        rewrites.iter().all(|r| r.step.contains("split 8 ways")),
        "{:?}",
        rewrites.iter().map(|r| &r.step).collect::<Vec<_>>()
    );
    target
        .limits
        .insert("max_storage_buffer_binding_size".into(), 40_000);
    let why = apply(&Tile::split_k(), &kernel, &target).unwrap_err().0;
    assert!(why.contains("storage binding size"), "{why}");
}

#[test]
fn a_batch_folded_into_the_flat_id_launches_in_z() {
    // b = i / (m * n), r = (i / n) % m, c = i % n: columns in x, rows in y, batches in z.
    let (kernel, _) = load("batched_flat_id.wgsl");
    let rw = apply(&Tile::blocked(), &kernel, &Target::default()).unwrap();
    assert_eq!(
        rw[0].program.dispatch.to_string(),
        "workgroups((n + 63) / 64, (m + 63) / 64, cdiv(bt * m * n, m * n))"
    );
    let text = rw[0].program.wgsl.as_ref();
    // The virtual flat id folds the batch, the row and the column back, and every store keeps
    // its row below m and its column below n: either past its radix names another output.
    assert!(
        text.contains("vec3<u32>((kft_z) * (u32(d.m) * u32(d.n)) + (kft_u0 + (0u + kft_tu) * 4u + 0u) * u32(d.n) + (kft_v0 + (0u + kft_tv) * 4u + 1u), 0u, 0u)"),
        "{text}"
    );
    assert!(
        text.contains(") < u32(d.n) && (kft_u0 + (0u + kft_tu) * 4u + 0u) < u32(d.m) && "),
        "{text}"
    );
    assert!(text.contains("let kft_z = kft_wid.z;"), "{text}");
    // Respelled: the row by subtraction, the batch as a quotient of a quotient, the sizes in a
    // vec4 uniform, the whole body under one `if`.
    let (kernel, _) = load("batched_flat_id_respelled.wgsl");
    let rw = apply(&Tile::blocked(), &kernel, &Target::default()).unwrap();
    assert_eq!(
        rw[0].program.dispatch.to_string(),
        "workgroups((n + 63) / 64, (m + 63) / 64, cdiv(bt * m * n, m * n))"
    );
    // Split-K takes z for its split, so a batch in the flat id keeps it out.
    let why = apply(&Tile::split_k(), &kernel, &roomy()).unwrap_err().0;
    assert!(why.contains("batched"), "{why}");
}

#[test]
fn an_unguarded_store_is_tiled_where_the_launch_is_exact() {
    // Exact by the spec's constraints: the bounds the baseline never needed are added.
    let (kernel, _) = load("unguarded_exact_launch.wgsl");
    let rw = apply(&Tile::blocked(), &kernel, &Target::default()).unwrap();
    let text = rw[0].program.wgsl.as_ref();
    assert!(
        text.contains("kft_gid.x < u32(dims.n) && kft_gid.y < u32(dims.m)"),
        "{text}"
    );
    // One axis guarded by the kernel, the other bounded by the rewrite (an i32 member printed
    // as u32).
    let (kernel, _) = load("unguarded_exact_one_axis.wgsl");
    let rw = apply(&Tile::shared(), &kernel, &Target::default()).unwrap();
    let text = rw[0].program.wgsl.as_ref();
    assert!(text.contains("kft_gid.y < u32(p.cols)"), "{text}");
    assert!(!text.contains("kft_gid.x < u32("), "{text}");
    // Without the constraints the launch is not exact on every shape: skipped, and the reason
    // names the constraint that would make it so.
    let why = apply(
        &Tile::shared(),
        &load("skip_unguarded.wgsl").0,
        &Target::default(),
    )
    .unwrap_err()
    .0;
    assert!(why.contains("not exact"), "{why}");
    // Both axes are unguarded and neither launch is exact: the hint names both constraints.
    assert!(why.contains("constraints(n % 8 == 0, m % 8 == 0)"), "{why}");
    // A flat id without a guard: the virtual flat id is bounded by the flat grid (m * n, a
    // multiple of the 64-wide workgroup by m % 16 == 0 and n % 4 == 0), the column by n.
    let (kernel, _) = load("flat_id_exact_launch.wgsl");
    let rw = apply(&Tile::shared(), &kernel, &Target::default()).unwrap();
    let text = rw[0].program.wgsl.as_ref();
    assert!(
        text.contains(") < u32(dims.n) && kft_gid.x < (u32(dims.m) * u32(dims.n))"),
        "{text}"
    );
    // Without the constraint on n the flat grid is a multiple of 16 only.
    let mut loose = kernel.clone();
    loose
        .constraints
        .retain(|c| !c.to_string().contains("n % 4"));
    assert_eq!(loose.constraints.len(), 1);
    let why = apply(&Tile::shared(), &loose, &Target::default())
        .unwrap_err()
        .0;
    assert!(why.contains("not exact"), "{why}");
    // A batch without a guard whose launch is exact (one invocation deep) needs no bound, so
    // no uniform need hold its count.
    let (kernel, _) = load("batched_z_unguarded.wgsl");
    let rw = apply(&Tile::blocked(), &kernel, &Target::default()).unwrap();
    assert!(rw[0].program.dispatch.to_string().ends_with(", batch)"));
    assert!(!rw[0].program.wgsl.contains("kft_gid.z <"));
    // tune passes that on as a note; a kernel tile takes, or skips for another reason, has none.
    let hint = super::constraint_hint(&load("skip_unguarded.wgsl").0).expect("a hint");
    assert!(
        hint.contains("constraints(n % 8 == 0, m % 8 == 0)"),
        "{hint}"
    );
    assert!(super::constraint_hint(&load("unguarded_exact_launch.wgsl").0).is_none());
    assert!(super::constraint_hint(&load("skip_row_sum.wgsl").0).is_none());
}

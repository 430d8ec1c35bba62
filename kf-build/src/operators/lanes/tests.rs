//! The lane split on the vector GEMM as written and respelled (`tests/data/lanes/`), what it
//! refuses with the reason, and `tile` reaching every spelling through it. Correctness on the
//! adapter is `tests/it/unseen.rs`'s.

use super::super::testkit::{apply, check_valid, h200, header, lavapipe, resolve, wgsl_files};
use super::super::tile::Tile;
use super::super::{Operator, Rewrite, Skip, Subject};
use super::split;

/// The unseen corpus's vec4 GEMM (`tests/data/unseen/b2_gemm_vec4.wgsl`, tfjs's spelling: four
/// rows of `b` per vector of `a`, one line per component): its spec and text.
fn rows() -> (String, String) {
    let file = wgsl_files("unseen")
        .into_iter()
        .find(|f| f.ends_with("b2_gemm_vec4.wgsl"))
        .expect("b2_gemm_vec4.wgsl");
    let text = std::fs::read_to_string(&file).unwrap();
    (header(&text, "spec:").expect("a spec"), text)
}

/// The lane split of the vec4 GEMM with `from` replaced by `to` in its text.
fn lanes_of(from: &str, to: &str) -> Result<Rewrite, Skip> {
    let (spec, text) = rows();
    assert!(text.contains(from), "{from}");
    lanes_with(&spec, &text.replace(from, to))
}

fn lanes_with(spec: &str, wgsl: &str) -> Result<Rewrite, Skip> {
    let k = resolve("k.wgsl", spec, wgsl);
    let target = lavapipe();
    split(&Subject {
        kernel: &k,
        program: &k.baseline,
        target: &target,
    })
}

#[test]
fn a_vec4_gemm_becomes_one_f32_sum_per_lane_over_scalar_views() {
    let (spec, text) = rows();
    let k = resolve("k.wgsl", &spec, &text);
    let r = lanes_with(&spec, &text).expect("split");
    check_valid(&k, &r);
    assert_eq!(r.step, "lanes(4, x)");
    let text = r.program.wgsl.to_string();
    // The vector buffers are read as scalars, and the four updates are one rolled sum.
    for decl in ["a : array<f32>", "b : array<f32>", "c : array<f32>"] {
        assert!(text.contains(decl), "{decl}:\n{text}");
    }
    assert_eq!(text.matches("kfl_acc = kfl_acc +").count(), 1, "{text}");
    assert!(text.contains("kfl_k < 4u * u32("), "{text}");
    // Four times the invocations along x, as many along y (the same workgroups there).
    let sizes = |n: &str| {
        [("m", 64u64), ("n", 40), ("k", 64)]
            .iter()
            .find(|s| s.0 == n)
            .map(|s| s.1)
    };
    let parent = k
        .baseline
        .dispatch
        .size
        .clone()
        .map(|s| s.eval(sizes).unwrap());
    let split = r
        .program
        .dispatch
        .size
        .clone()
        .map(|s| s.eval(sizes).unwrap());
    assert_eq!(k.baseline.dispatch.mode, kf_runtime::DispatchMode::Grid);
    assert_eq!(r.program.dispatch.mode, kf_runtime::DispatchMode::Grid);
    // The parent launches whole workgroups of 8 along x (16 invocations for n / 4 = 10): 4 lanes
    // for each of them.
    let launched = parent[0].div_ceil(8) * 8;
    assert_eq!(split, [4 * launched, parent[1], parent[2]]);
    println!("{text}");
}

/// The respellings in `tests/data/lanes/` (verified on the adapter by `tests/it/unseen.rs`).
fn respellings() -> Vec<(String, String, String)> {
    wgsl_files("lanes")
        .into_iter()
        .map(|file| {
            let name = file.file_name().unwrap().to_string_lossy().to_string();
            let text = std::fs::read_to_string(&file).unwrap();
            let spec = header(&text, "spec:").unwrap_or_else(|| panic!("{name}: no spec"));
            (name, spec, text)
        })
        .collect()
}

#[test]
fn respellings_of_the_vec4_gemm_split_and_tile() {
    let target = h200();
    let all = respellings();
    assert!(all.len() >= 4, "{all:?}");
    for (name, spec, wgsl) in &all {
        let k = resolve(name, spec, wgsl);
        for op in [Tile::shared(), Tile::blocked(), Tile::split_k()] {
            let rewrites = apply(&op, &k, &target)
                .unwrap_or_else(|e| panic!("{name}: {} skipped: {e}", op.name()));
            assert!(!rewrites.is_empty(), "{name}");
            for r in &rewrites {
                assert!(r.step.contains("lanes("), "{name}: {}", r.step);
                assert!(
                    r.step.contains(&format!("→ {}(", op.name())),
                    "{name}: {}",
                    r.step
                );
                // Split-K's workspace is a binding the runtime adds (checked on the adapter).
                if r.program.workspace.is_empty() {
                    check_valid(&k, r);
                }
            }
        }
    }
}

#[test]
fn what_is_not_one_sum_per_lane_is_named() {
    let cases = [
        (
            "c[row * N4 + col4] = acc;",
            "c[row * N4 + col4] = acc.yxzw;",
            "not computed lane by lane",
        ),
        (
            "c[row * N4 + col4] = acc;",
            "c[row * N4 + col4] = acc + vec4<f32>(acc.x);",
            "an element of a local",
        ),
        (
            "c[row * N4 + col4] = acc;",
            "c[row * N4 + col4] = acc + vec4<f32>(1.0, 2.0, 3.0, 4.0);",
            "not computed lane by lane",
        ),
        (
            "c[row * N4 + col4] = acc;",
            "c[row * N4 + col4] = acc + a[row];",
            "no id component steps the output",
        ),
        (
            "a_vec.y * b[(k + 1u)",
            "a_vec.z * b[(k + 1u)",
            "not consecutive steps of one sum",
        ),
        (
            "b[(k + 3u) * N4 + col4]",
            "b[(k + 3u) * N4 + col4 + 1u]",
            "not consecutive steps of one sum",
        ),
        (
            "c[row * N4 + col4]",
            "c[col4 * dims.M + row]",
            "no id component steps the output",
        ),
        (
            "var acc = vec4<f32>(0.0);",
            "var acc = vec4<f32>(1.0);",
            "does not start at zero",
        ),
    ];
    for (from, to, why) in cases {
        let skip = lanes_of(from, to).expect_err(why);
        assert!(skip.0.contains(why), "{why}: {skip}");
    }
}

#[test]
fn a_scalar_gemm_is_not_split() {
    // Tile takes it as written; the lane split finds no vector accumulator.
    let (_, spec, text) = respellings()
        .into_iter()
        .find(|(name, ..)| name == "scalar_a.wgsl")
        .expect("scalar_a.wgsl");
    let scalar = text
        .replace("array<vec4<f32>>", "array<f32>")
        .replace("vec4<f32>(0.0, 0.0, 0.0, 0.0)", "0.0");
    let spec = spec
        .replace("k * n / 4", "k * n")
        .replace("m * n / 4", "m * n");
    let skip = lanes_with(&spec, &scalar).expect_err("no vector");
    assert!(skip.0.contains("no vector operand"), "{skip}");
}

#[test]
fn an_epilogue_is_applied_lane_by_lane() {
    // The bias is a lane of its buffer's f32 view; the activation and the splat are per lane.
    let (_, spec, text) = respellings()
        .into_iter()
        .find(|(name, ..)| name == "bias_relu.wgsl")
        .expect("bias_relu.wgsl");
    let k = resolve("k.wgsl", &spec, &text);
    let r = lanes_with(&spec, &text).expect("split");
    check_valid(&k, &r);
    let out = r.program.wgsl.to_string();
    assert!(out.contains("bias : array<f32>"), "{out}");
    assert!(
        out.contains("= max((kfl_acc + bias[kfl_gid.x]), 0.0"),
        "{out}"
    );
    // A scalar epilogue of an f32 sum is printed as written, over the rolled sum.
    let (_, spec, text) = respellings()
        .into_iter()
        .find(|(name, ..)| name == "dot_bias_tanh.wgsl")
        .expect("dot_bias_tanh.wgsl");
    let r = lanes_with(&spec, &text).expect("rolled");
    assert_eq!(r.step, "lanes(rolled ×4)");
    let out = r.program.wgsl.to_string();
    assert!(out.contains("= tanh(((kfl_acc) + bias["), "{out}");
}

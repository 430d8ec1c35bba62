//! The tiling operator on real kernels through the real worker. Every rewrite of every matmul in
//! `tests/data/kernels/tile/` is evaluated the way a search winner is (`search::final_plan`: new
//! seeds, the spec's unseen odd verification shapes, a re-verification after timing; one seed per
//! shape here) and must be correct (level 5); every other kernel there must be skipped. Speed is never asserted: on a CPU
//! driver a tiled matmul is not reliably faster.
//!
//! Adding a case is adding a file whose header gives the spec and the expectation:
//!
//! ```text
//! // spec: sizes(m = 40, ..), bind(..), grid = (n, m)     the #[kernelfoundry(..)] arguments
//! // expect: tile                                          or `skip`
//! ```

use kf_build::evaluate::process::WorkerProcess;
use kf_build::evaluate::{Candidate, EvalRequest, Evaluator};
use kf_build::gpu::AdapterSelector;
use kf_build::operators::tile::Tile;
use kf_build::operators::{Operator, Subject, Target};
use kf_runtime::resolve::ResolvedKernel;
use kf_tests::*;
use std::time::Duration;

fn header(text: &str, key: &str) -> Option<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("// "))
        .find_map(|l| l.strip_prefix(key).map(|v| v.trim().to_owned()))
}

/// Every test kernel with its expectation, resolved from its `// spec:` header; the third field
/// is the expectation for split-K (`tile-split-k`), `skip` where the header says `// split-k: skip`.
fn kernels() -> Vec<(String, ResolvedKernel, String, String)> {
    let dir = root().join("tests/data/kernels/tile");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "wgsl"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let wgsl = std::fs::read_to_string(&path).unwrap();
            let spec = header(&wgsl, "spec:").unwrap_or_else(|| panic!("{name}: no `// spec:`"));
            let tokens: proc_macro2::TokenStream =
                format!("path = \"{name}\", {spec}").parse().unwrap();
            let (spec, _) = kf_runtime::syntax::parse_spec(tokens)
                .unwrap_or_else(|e| panic!("{name}: bad spec: {e}"));
            let kernel = kf_runtime::resolve::resolve("TILE_TEST", &spec, &wgsl, &name)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let expect =
                header(&wgsl, "expect:").unwrap_or_else(|| panic!("{name}: no `// expect:`"));
            let split = match header(&wgsl, "split-k:") {
                Some(s) => s,
                None => expect.clone(),
            };
            (name, kernel, expect, split)
        })
        .collect()
}

#[test]
fn every_tiling_of_every_matmul_is_correct_and_other_kernels_are_skipped() {
    let mut worker =
        WorkerProcess::start_with(bin(), AdapterSelector::default(), Duration::from_secs(120))
            .expect("a worker on the default adapter (CI installs lavapipe)");
    let adapter = worker.adapter().clone();
    let target = Target {
        limits: adapter.limits.clone(),
        features: adapter.features.clone(),
    };
    let mut failures = Vec::new();
    let (mut evaluated, mut skipped, mut grouped, mut split) = (0, 0, 0, 0);
    for (name, kernel, expect, split_expect) in kernels() {
        for op in [Tile::shared(), Tile::blocked(), Tile::split_k()] {
            let expect = if op.name() == "tile-split-k" {
                split_expect.as_str()
            } else {
                expect.as_str()
            };
            let subject = Subject {
                kernel: &kernel,
                program: &kernel.baseline,
                target: &target,
            };
            let rewrites = match (op.apply(&subject), expect) {
                (Err(_), "skip") => {
                    skipped += 1;
                    continue;
                }
                (Ok(r), "tile") => r,
                (Err(why), _) => {
                    failures.push(format!("{name}: {} skipped: {why}", op.name()));
                    continue;
                }
                (Ok(r), _) => {
                    failures.push(format!("{name}: expected a skip, got {} rewrites", r.len()));
                    continue;
                }
            };
            for rewrite in rewrites {
                let program = &rewrite.program;
                let constants: Vec<(&str, f64)> = program.constants_pairs();
                let request = EvalRequest {
                    candidate: Candidate {
                        id: kf_runtime::hash::variant_id(
                            &program.wgsl,
                            &constants,
                            &program.launch_rule(),
                        ),
                        origin: rewrite.step.clone(),
                        program: program.clone(),
                    },
                    plan: timed_once(crate::operators::one_seed_per_shape(
                        kf_build::search::final_plan(&kernel, 1, 7),
                    )),
                    kernel: kernel.clone(),
                    ceilings: None,
                    deadline_s: None,
                };
                let report = worker.evaluate(&request);
                evaluated += 1;
                grouped += usize::from(rewrite.step.contains("counter groups"));
                split += usize::from(rewrite.step.contains("ways"));
                if report.fitness.level != 5 {
                    failures.push(format!(
                        "{name} {}: level {} {:?}\n{}",
                        rewrite.step,
                        report.fitness.level,
                        report.failure.as_ref().map(|f| f.reason),
                        report.failure.map(|f| f.log).unwrap_or_default()
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    eprintln!(
        "{evaluated} rewrites evaluated ({grouped} with counter groups, {split} split-K), {skipped} skips"
    );
    // 8 matmuls x at least 5 configurations; 5 other kernels x 2 operators.
    assert!(evaluated >= 40, "only {evaluated} evaluations");
    assert!(skipped >= 10, "only {skipped} skips");
    // lavapipe's limits (1024 invocations, 32 KiB of workgroup memory) admit the counter-group
    // configurations of 16x16 and 32x32 blocks on every matmul.
    assert!(grouped >= 16, "only {grouped} counter-group evaluations");
    // Split-K: 5 configurations on each of the 7 plain products and 4 on each of the 3 in the
    // rows form (two launches over a workspace the harness allocates and poisons, as the runtime
    // allocates it in an app).
    assert!(split >= 35 + 12, "only {split} split-K evaluations");
}

/// The final plan with one warm-up and one timed sample (and one seed per shape, see
/// `operators::corpus_plan`): the re-verification after timing still runs on the buffers the
/// timing reused, and no speed is asserted here.
fn timed_once(mut plan: kf_build::evaluate::EvalPlan) -> kf_build::evaluate::EvalPlan {
    plan.warmup = 1;
    plan.samples = 1;
    plan
}

//! The rewrite operators on the real adapter: every rewrite of every kernel in
//! `tests/data/kernels/` (and of the quickstart softmax) is evaluated through the worker process
//! with the final verification plan and must be correct (level 5); the kernels an operator must
//! not touch must make it skip; a widened kernel coarsened further must be correct too. Speed is
//! never asserted.

use kf_build::evaluate::process::WorkerProcess;
use kf_build::evaluate::{Candidate, EvalRequest, Evaluator};
use kf_build::operators::attention::FlashAttention;
use kf_build::operators::coarsen::Coarsen;
use kf_build::operators::implicit::ImplicitGemm;
use kf_build::operators::reduce::ParallelReduction;
use kf_build::operators::scan::Scan;
use kf_build::operators::transpose::TransposeTile;
use kf_build::operators::tree::{SubgroupScan, SubgroupTree};
use kf_build::operators::vectorize::VectorizedAccess;
use kf_build::operators::widen::Widen;
use kf_build::operators::{Operator, Subject, Target};
use kf_runtime::resolve::ResolvedKernel;
use kf_tests::*;
use std::time::Duration;

pub(crate) struct CorpusKernel {
    pub(crate) name: String,
    pub(crate) kernel: ResolvedKernel,
    pub(crate) spec: String,
    fires: Vec<String>,
    skips: Vec<String>,
}

fn header(text: &str, key: &str) -> Option<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("// "))
        .find_map(|l| l.strip_prefix(key).map(|v| v.trim().to_owned()))
}

pub(crate) fn resolve(name: &str, attr: &str, wgsl: &str) -> ResolvedKernel {
    let tokens: proc_macro2::TokenStream = attr.parse().expect("attribute tokens");
    let (spec, _) =
        kf_runtime::syntax::parse_spec(tokens).unwrap_or_else(|e| panic!("{name}: spec: {e}"));
    kf_runtime::resolve::resolve(name, &spec, wgsl, name)
        .unwrap_or_else(|e| panic!("{name}: {e:?}"))
}

pub(crate) fn corpus() -> Vec<CorpusKernel> {
    let dir = root().join("tests/data/kernels");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "wgsl"))
        .collect();
    files.sort();
    let mut out: Vec<CorpusKernel> = files
        .into_iter()
        .map(|file| {
            let name = file.file_name().unwrap().to_string_lossy().to_string();
            let text = std::fs::read_to_string(&file).unwrap();
            let spec = header(&text, "spec:").unwrap_or_else(|| panic!("{name}: no spec"));
            let list = |key| {
                header(&text, key)
                    .map(|v| v.split_whitespace().map(str::to_owned).collect())
                    .unwrap_or_default()
            };
            CorpusKernel {
                kernel: resolve(&name, &format!("path = \"{name}\", {spec}"), &text),
                spec,
                fires: list("fires:"),
                skips: list("skips:"),
                name,
            }
        })
        .collect();
    // The quickstart softmax, with the spec the quickstart gives it.
    let softmax =
        std::fs::read_to_string(root().join("examples/quickstart/src/shaders/softmax.wgsl"))
            .unwrap();
    out.push(CorpusKernel {
        kernel: resolve(
            "SOFTMAX",
            "path = \"softmax.wgsl\", sizes(rows = 512, cols = 512), bind(input = input(rows * cols, range(-4.0, 4.0)), output = output(rows * cols), shape = uniform(rows, cols)), grid = (rows)",
            &softmax,
        ),
        spec: String::new(),
        name: "quickstart softmax".into(),
        fires: vec!["reduce".into()],
        skips: Vec::new(),
    });
    out
}

/// The final plan's verification (tune shapes with three seeds, unseen verification shapes with
/// two, the rerun on reused buffers, the re-verification with new inputs) without its timing:
/// these tests never assert speed.
pub(crate) fn verify_plan(kernel: &ResolvedKernel) -> kf_build::evaluate::EvalPlan {
    let mut plan = kf_build::search::final_plan(kernel, 1, 7);
    plan.time_shapes.clear();
    plan
}

/// [`verify_plan`] with one seed per shape: every tune shape and every unseen verification shape
/// still runs, on fresh poisoned buffers, with the rerun and the re-verification, but not again
/// with other inputs of the same shape. For the corpus tests, which evaluate hundreds of rewrites
/// on a CPU adapter and look for rewrites that compute something else: a wrong index or a lost
/// guard shows on any input of a shape, and the shapes are what catch a wrong size or launch.
/// What the tool runs on a winner is the full plan, tested by the tune tests and the cheats.
pub(crate) fn corpus_plan(kernel: &ResolvedKernel) -> kf_build::evaluate::EvalPlan {
    one_seed_per_shape(verify_plan(kernel))
}

/// `plan` with only the first trial of each shape (see [`corpus_plan`]).
pub(crate) fn one_seed_per_shape(
    mut plan: kf_build::evaluate::EvalPlan,
) -> kf_build::evaluate::EvalPlan {
    let mut seen = std::collections::HashSet::new();
    plan.verify
        .retain(|t| seen.insert(format!("{:?}", t.shape)));
    plan
}

/// One rewrite through the worker with the corpus plan (see [`corpus_plan`]).
pub(crate) fn verify(
    worker: &mut WorkerProcess,
    kernel: &ResolvedKernel,
    id: String,
    r: &kf_build::operators::Rewrite,
) -> kf_build::evaluate::EvalReport {
    worker.evaluate(&EvalRequest {
        kernel: kernel.clone(),
        candidate: Candidate {
            id,
            origin: r.step.clone(),
            program: r.program.clone(),
        },
        plan: corpus_plan(kernel),
        ceilings: None,
        deadline_s: None,
    })
}

fn operators() -> Vec<Box<dyn Operator>> {
    vec![
        Box::new(ParallelReduction),
        Box::new(Scan),
        Box::new(Coarsen),
        Box::new(VectorizedAccess),
        Box::new(Widen),
        Box::new(ImplicitGemm),
        Box::new(FlashAttention),
        Box::new(TransposeTile),
        Box::new(SubgroupTree),
        Box::new(SubgroupScan),
    ]
}

/// A worker on the default adapter and the rewrite target it reports; fails loudly without one.
pub(crate) fn worker_and_target() -> (WorkerProcess, Target) {
    let worker = WorkerProcess::start_with(
        bin(),
        kf_build::gpu::AdapterSelector::default(),
        Duration::from_secs(120),
    )
    .expect("a worker on the default adapter (install mesa-vulkan-drivers for lavapipe)");
    let adapter = worker.adapter().clone();
    let target = Target {
        limits: adapter.limits.clone(),
        features: adapter.features.clone(),
    };
    (worker, target)
}

#[test]
fn every_rewrite_of_the_corpus_is_correct_on_the_adapter() {
    let (mut worker, target) = worker_and_target();
    let corpus = corpus();
    let mut failures = Vec::new();
    let mut evaluated = 0;
    for op in operators() {
        let name = op.name();
        let mut fired = 0;
        for k in &corpus {
            // As the search applies operators: to the kernel's canonical form.
            let subject = Subject {
                kernel: &k.kernel,
                program: &k.kernel.baseline,
                target: &target,
            };
            let canon = kf_build::operators::canon::canonicalise(&subject);
            let result =
                kf_build::operators::apply_canonical(op.as_ref(), &subject, canon.as_ref());
            let must_fire = k.fires.iter().any(|f| f == name);
            let must_skip = k.skips.iter().any(|f| f == name);
            let rewrites = match result {
                Err(skip) => {
                    if must_fire {
                        failures.push(format!("{name} skipped {}: {skip}", k.name));
                    }
                    continue;
                }
                Ok(r) if must_skip => {
                    failures.push(format!(
                        "{name} must skip {} but gave {} rewrites",
                        k.name,
                        r.len()
                    ));
                    continue;
                }
                Ok(r) => r,
            };
            if must_fire {
                fired += 1;
            }
            for (i, r) in rewrites.iter().enumerate() {
                let report = verify(&mut worker, &k.kernel, format!("{name}-{i}"), r);
                evaluated += 1;
                if report.fitness.level != 5 {
                    failures.push(format!(
                        "{} {} ({}): level {} {:?}\n{}",
                        k.name,
                        r.step,
                        r.program.dispatch,
                        report.fitness.level,
                        report.failure.map(|f| f.log),
                        r.program.wgsl
                    ));
                }
            }
        }
        assert!(fired > 0, "{name} fired on no kernel");
    }
    assert!(
        failures.is_empty(),
        "{} of {evaluated} evaluations or expectations failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn widened_kernels_coarsened_further_are_correct_on_the_adapter() {
    let (mut worker, target) = worker_and_target();
    let mut evaluated = 0;
    let mut failures = Vec::new();
    for k in corpus() {
        if !k.fires.iter().any(|f| f == "widen") {
            continue;
        }
        let subject = Subject {
            kernel: &k.kernel,
            program: &k.kernel.baseline,
            target: &target,
        };
        let canon = kf_build::operators::canon::canonicalise(&subject);
        let widened = kf_build::operators::apply_canonical(&Widen, &subject, canon.as_ref())
            .unwrap_or_else(|e| panic!("{}: widen skipped: {e}", k.name));
        for w in &widened {
            let parent = Subject {
                kernel: &k.kernel,
                program: &w.program,
                target: &target,
            };
            // Coarsening needs a bounds test or a constant extent; a widened kernel over a
            // guarded launch has neither (its mask does the guarding), so it may skip.
            let Ok(coarsened) = Coarsen.apply(&parent) else {
                continue;
            };
            for (i, r) in coarsened.iter().enumerate() {
                let report = verify(&mut worker, &k.kernel, format!("wc-{i}"), r);
                evaluated += 1;
                if report.fitness.level != 5 {
                    failures.push(format!(
                        "{} {} → {}: level {} {:?}",
                        k.name,
                        w.step,
                        r.step,
                        report.fitness.level,
                        report.failure.map(|f| f.log)
                    ));
                }
            }
        }
    }
    assert!(evaluated >= 6, "no widened kernel was coarsened");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

//! Every rewrite the offline operators make of the kernels in `tests/data/kernels/loops/`, run
//! through the real evaluator (a worker process on the adapter wgpu finds) with the final
//! verification plan (one seed per shape), must compute what the kernel computes (ladder level 5); and each operator
//! must decline (`Skip`) where its header says it does not apply.
//!
//! A kernel file starts with:
//!
//! ```text
//! // kernel: what it is
//! // spec: the #[kernelfoundry(..)] attribute without `source`
//! // applies: unroll hoist        operators that must rewrite it
//! // skips: reshape lift          operators that must decline
//! ```
//!
//! Every operator is named in one of the two lists. Rewrites that introduce parameters are also
//! evaluated at each candidate value, and each operator is applied to every other operator's first
//! rewrite (the search composes them) and those rewrites are evaluated too. Speed is never asserted.

use kf_build::evaluate::process::WorkerProcess;
use kf_build::evaluate::{Candidate, EvalRequest, Evaluator};
use kf_build::operators::hoist::Hoist;
use kf_build::operators::lift::LiftWorkgroupSize;
use kf_build::operators::reshape::Reshape;
use kf_build::operators::unroll::Unroll;
use kf_build::operators::{Operator, Rewrite, Subject, Target};
use kf_runtime::resolve::ResolvedKernel;
use kf_tests::*;
use std::borrow::Cow;
use std::time::Duration;

fn header<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines()
        .filter_map(|l| l.strip_prefix("// "))
        .find_map(|l| l.strip_prefix(key).map(str::trim))
}

fn resolve(name: &str, wgsl: &str, spec: &str) -> ResolvedKernel {
    let attr = format!("source = \"\", {spec}");
    let tokens: proc_macro2::TokenStream = attr.parse().expect("spec tokens");
    let (spec, _) =
        kf_runtime::syntax::parse_spec(tokens).unwrap_or_else(|e| panic!("{name}: bad spec: {e}"));
    kf_runtime::resolve::resolve(name, &spec, wgsl, name)
        .unwrap_or_else(|e| panic!("{name}: does not resolve: {e}"))
}

/// The rewrite, and one copy per candidate value of each parameter it introduced.
fn variants(rw: &Rewrite) -> Vec<(String, kf_runtime::Program)> {
    let mut out = vec![(rw.step.clone(), rw.program.clone())];
    for (param, values) in &rw.params {
        for v in values {
            let mut p = rw.program.clone();
            let mut constants = p.constants.to_vec();
            match constants.iter_mut().find(|(k, _)| k == param) {
                Some(slot) => slot.1 = *v,
                None => constants.push((Cow::Owned(param.clone()), *v)),
            }
            p.constants = Cow::Owned(constants);
            out.push((format!("{} {param}={v}", rw.step), p));
        }
    }
    out
}

#[test]
fn every_rewrite_of_the_loop_corpus_is_correct_and_every_skip_is_declared() {
    let dir = root().join("tests/data/kernels/loops");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "wgsl"))
        .collect();
    files.sort();
    assert!(files.len() >= 6, "the corpus has its kernels");
    let mut worker = WorkerProcess::start_with(
        bin(),
        kf_build::evaluate::AdapterSelector(None),
        Duration::from_secs(120),
    )
    .unwrap_or_else(|e| panic!("no adapter for the rewrite tests: {e}"));
    let target = Target {
        limits: worker.adapter().limits.clone(),
        features: worker.adapter().features.clone(),
    };
    let operators: [&dyn Operator; 4] = [&Unroll, &Hoist, &Reshape, &LiftWorkgroupSize];
    let mut failures = Vec::new();
    let mut evaluated = 0;
    let mut applied = std::collections::BTreeSet::new();
    for file in &files {
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        let wgsl = std::fs::read_to_string(file).unwrap();
        let spec = header(&wgsl, "spec:").unwrap_or_else(|| panic!("{name}: no `// spec:`"));
        let applies: Vec<&str> = header(&wgsl, "applies:")
            .unwrap_or("")
            .split_whitespace()
            .collect();
        let skips: Vec<&str> = header(&wgsl, "skips:")
            .unwrap_or("")
            .split_whitespace()
            .collect();
        let kernel = resolve(&name, &wgsl, spec);
        let subject = Subject {
            kernel: &kernel,
            program: &kernel.baseline,
            target: &target,
        };
        let mut todo: Vec<(String, kf_runtime::Program)> = Vec::new();
        for op in operators {
            let expect_applies = applies.contains(&op.name());
            assert!(
                expect_applies != skips.contains(&op.name()),
                "{name}: name `{}` in exactly one of `applies:` and `skips:`",
                op.name()
            );
            let rewrites = match (op.apply(&subject), expect_applies) {
                (Ok(rws), true) => rws,
                (Err(_), false) => continue,
                (Ok(rws), false) => {
                    failures.push(format!(
                        "{name}: `{}` must skip, made {:?}",
                        op.name(),
                        rws.iter().map(|r| &r.step).collect::<Vec<_>>()
                    ));
                    continue;
                }
                (Err(skip), true) => {
                    failures.push(format!("{name}: `{}` skipped: {skip}", op.name()));
                    continue;
                }
            };
            assert!(
                !rewrites.is_empty(),
                "{name}: `{}` returned no rewrite",
                op.name()
            );
            applied.insert(op.name());
            for rw in &rewrites {
                todo.extend(variants(rw));
            }
            // Operators compose: each other operator on this operator's first rewrite.
            for second in operators {
                if second.name() == op.name() {
                    continue;
                }
                let parent = Subject {
                    kernel: &kernel,
                    program: &rewrites[0].program,
                    target: &target,
                };
                if let Ok(more) = second.apply(&parent) {
                    for rw in more.iter().take(1) {
                        let label = format!("{} > {}", rewrites[0].step, rw.step);
                        todo.push((label, rw.program.clone()));
                    }
                }
            }
        }
        for (label, program) in todo {
            let report = worker.evaluate(&EvalRequest {
                kernel: kernel.clone(),
                candidate: Candidate::new(program, label.clone()),
                plan: crate::operators::one_seed_per_shape(kf_build::search::final_plan(
                    &kernel, 2, 7,
                )),
                ceilings: None,
                deadline_s: None,
            });
            evaluated += 1;
            if report.fitness.level != 5 {
                failures.push(format!(
                    "{name}: {label}: level {} ({:?})\n{}",
                    report.fitness.level,
                    report.failure.as_ref().map(|f| f.reason),
                    report.failure.as_ref().map_or("", |f| f.log.as_str()),
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert_eq!(
        applied.len(),
        operators.len(),
        "every operator applied somewhere"
    );
    assert!(evaluated >= 50, "only {evaluated} evaluations");
    eprintln!("{evaluated} rewrites evaluated at level 5");
}

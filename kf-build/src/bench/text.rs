//! The plain text of a bench report: what `bench` prints without `--json` or `--markdown`.

use super::against::Against;
use super::{BenchReport, KernelBench, Status, Timing, fmt_ns, rate};

fn time(t: &Timing) -> String {
    format!("{} ± {:.0} %", fmt_ns(t.ns), t.spread * 100.0)
}

fn throughput(t: &Timing) -> String {
    let mut s = format!("{} GB/s", rate(t.gbps));
    if let Some(g) = t.gflops {
        s.push_str(&format!(", {} GFLOP/s", rate(g)));
    }
    if let Some(r) = &t.roofline {
        s.push_str(&format!(
            ", {:.0} % of the {} ceiling",
            r.fraction * 100.0,
            r.bound
        ));
    }
    s
}

fn kernel(out: &mut String, k: &KernelBench, against: Option<&Against>) {
    let head = format!("{} ({})", k.name, k.package);
    if k.status == Status::Failed {
        outln!(
            out,
            "{head}: failed\n    {}",
            k.error.as_deref().unwrap_or("").replace('\n', "\n    ")
        );
        return;
    }
    let deployed = k.deployed.as_ref();
    match (k.status, deployed) {
        (_, Some(d)) if !d.correct => outln!(
            out,
            "{head}: {} {} FAILED verification here: {}",
            k.status.as_str(),
            d.program,
            d.failure.as_deref().unwrap_or("")
        ),
        (Status::Tuned, Some(_)) => outln!(
            out,
            "{head}: tuned {} {:.2}x (± {:.0} %), baseline {} → {}",
            k.variant.as_deref().unwrap_or(""),
            k.speedup.unwrap_or(1.0),
            deployed.and_then(|d| d.speedup_spread).unwrap_or(0.0) * 100.0,
            k.baseline().map_or_else(String::new, time),
            k.tuned().map_or_else(String::new, time),
        ),
        (status, _) => outln!(
            out,
            "{head}: {}, baseline {}",
            if status == Status::NotTuned {
                "not tuned for this adapter"
            } else {
                "baseline-best (the entry keeps the baseline)"
            },
            k.baseline().map_or_else(String::new, time),
        ),
    }
    if let Some(t) = k.deployed_timing() {
        outln!(out, "    {}", throughput(t));
    }
    if let Some(r) = &k.reference {
        match (&r.timing, r.speedup) {
            (Some(t), Some(s)) => outln!(
                out,
                "    reference: {} ({s:.2}x over the baseline), {}",
                time(t),
                throughput(t)
            ),
            _ => outln!(
                out,
                "    reference: failed here: {}",
                r.failure.as_deref().unwrap_or("")
            ),
        }
    }
    if let Some(line) = against.and_then(|a| a.line(&k.name)) {
        outln!(out, "    {line}");
    }
    if let Some(t) = &k.tuning {
        outln!(
            out,
            "    tuning: {} evaluations ({}){}",
            t.evaluations,
            t.strategy,
            t.seconds
                .map(|s| format!(", {s:.1} s of evaluation"))
                .unwrap_or_default()
        );
    }
}

impl BenchReport {
    /// The plain summary `bench` prints: per kernel its verdict here, times and throughput, then
    /// the suite's figures.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let report = self;
        for k in &report.kernels {
            kernel(&mut out, k, report.against.as_ref());
        }
        let s = &report.suite;
        outln!(
            out,
            "suite: {} kernels ({} tuned, {} baseline-best, {} not tuned, {} failed); correct {}/{} ({:.0} %); fast_1 {:.0} %, fast_1.2 {:.0} %, fast_2 {:.0} %; geomean speedup {}; tuning {} evaluations, {:.1} s",
            s.kernels,
            s.tuned,
            s.baseline_best,
            s.not_tuned,
            s.failed,
            s.correct,
            s.kernels,
            s.correctness_rate * 100.0,
            s.fast_1 * 100.0,
            s.fast_1_2 * 100.0,
            s.fast_2 * 100.0,
            s.geomean_speedup
                .map_or_else(|| "–".to_owned(), |g| format!("{g:.2}x")),
            s.tuning_evaluations,
            s.tuning_seconds,
        );
        if let Some(a) = &report.against {
            outln!(out, "{}", a.summary());
        }
        out
    }
}

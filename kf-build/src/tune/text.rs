//! The plain text of a tune's result: what `tune` prints of each kernel without `--json`.

use super::{KernelResult, Status};
use crate::bench::fmt_ns;

impl KernelResult {
    /// What `tune` prints of a kernel without `--json`; `verbose` lists every candidate.
    pub fn text(&self, verbose: bool) -> String {
        let k = self;
        let mut out = String::new();
        let file = k.cache_file.as_deref().unwrap_or("");
        if k.status == Status::Failed {
            outln!(
                out,
                "{} ({}): failed\n    {}",
                k.name,
                k.package,
                k.error.as_deref().unwrap_or("").replace('\n', "\n    ")
            );
            return out;
        }
        let mut extra = String::new();
        if !k.rejected.is_empty() {
            let rejected: Vec<String> =
                k.rejected.iter().map(|(r, n)| format!("{n} {r}")).collect();
            extra.push_str(&format!(", rejected: {}", rejected.join(", ")));
        }
        if let Some(r) = &k.roofline {
            extra.push_str(&format!(
                ", {}-bound at {:.0} % of the adapter's ceiling",
                r.bound,
                r.fraction * 100.0
            ));
        }
        outln!(
            out,
            "{} ({}): {}{} {:.2}x (baseline {} → {}), {} evaluations{extra}\n    {file}",
            k.name,
            k.package,
            k.status.as_str(),
            k.variant
                .as_deref()
                .map(|v| format!(" {v}"))
                .unwrap_or_default(),
            k.speedup.unwrap_or(1.0),
            fmt_ns(k.baseline_ns.unwrap_or(0.0)),
            fmt_ns(k.best_ns.unwrap_or(0.0)),
            k.evaluations,
        );
        if let Some(origin) = &k.origin {
            outln!(
                out,
                "    made by: {origin}{}",
                k.descriptor
                    .as_deref()
                    .map(|d| format!(" (cell {d})"))
                    .unwrap_or_default()
            );
        }
        if let (Some(strategy), Some(cells)) = (&k.strategy, k.cells_filled) {
            outln!(
                out,
                "    search: {strategy}, seed {}, {cells} archive cells filled",
                k.seed.unwrap_or(0)
            );
        }
        if !k.operators.is_empty() {
            let ops: Vec<String> = k
                .operators
                .iter()
                .map(|(name, s)| {
                    let unlaunchable = if s.unlaunchable > 0 {
                        format!(" ({} could not be launched here)", s.unlaunchable)
                    } else {
                        String::new()
                    };
                    format!(
                        "{name} {} made, {} correct{unlaunchable}, {} improved",
                        s.proposed, s.correct, s.improved
                    )
                })
                .collect();
            outln!(out, "    operators: {}", ops.join("; "));
        }
        if let Some(l) = &k.llm {
            let answers: u64 = l.answers.values().sum();
            outln!(
                out,
                "    llm: {} requests ({} from the cache, {} failed), {answers} answers ({} unusable), {} prompt + {} completion tokens{}; {} meta calls, {} edits applied, {} rejected; {} prompts",
                l.requests,
                l.cached,
                l.failed,
                l.unusable,
                l.prompt_tokens,
                l.completion_tokens,
                l.cost_usd.map(|c| format!(", ${c:.4}")).unwrap_or_default(),
                l.meta_calls,
                l.edits_applied,
                l.edits_rejected,
                l.prompts
            );
            if l.not_cached > 0 {
                outln!(
                    out,
                    "    llm replay: {} requests were not in the response cache",
                    l.not_cached
                );
            }
            if let Some(why) = &l.disabled {
                outln!(out, "    llm off: {why}");
            }
        }
        if let Some(v) = &k.verdict
            && k.status != Status::Tuned
        {
            outln!(out, "    why: {}", v.describe());
        }
        if let Some(near) = &k.near_miss {
            outln!(out, "    near miss: {}", near.describe());
        }
        for note in &k.notes {
            outln!(out, "    note: {note}");
        }
        if verbose {
            for c in &k.candidates {
                let verdict = match (&c.reason, c.speedup) {
                    (Some(r), _) => format!("level {} {r}", c.level),
                    (None, Some(s)) => format!("level 5 {s:.2}x"),
                    (None, None) => format!("level {}", c.level),
                };
                outln!(out, "    {:5} {} {verdict}  ({})", c.phase, c.id, c.origin);
            }
        }
        out
    }
}

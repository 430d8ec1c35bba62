//! Prompts, chosen by the parent's state: *seed* (the user's kernel), *repair* (the parent failed:
//! its distilled log), *optimize* (the parent is correct: parent, island best and inspirations with
//! their scores, timings and roofline verdicts) and *template* (expose the parent's tunable choices
//! as `override` constants with candidate values).
//!
//! Every prompt carries the kernel's spec (sizes, what each binding holds, the launch rule, tune
//! and verify shapes), the adapter's spec sheet (identity, limits, features, subgroup sizes,
//! measured copy bandwidth and FMA rate), the target cell's technique, up to three gradient hints,
//! the results of parameter sweeps of earlier templates, and the output contract. The system
//! message is the prompt genome (see [`super::genome`]) followed by the contract.
//!
//! Invariant: a prompt is a pure function of its [`Context`] and genome (no clock, no paths), so
//! the same search state gives the same request and the response cache can replay it.

use super::genome::Genome;
use super::protocol::Message;
use crate::evaluate::{AdapterReport, Candidate, Ceilings, EvalReport};
use crate::evolve::{Descriptor, Dim, Hint};
use kf_runtime::resolve::ResolvedKernel;
use std::fmt::Write;

/// Which prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Improve the user's kernel.
    Seed,
    /// Fix a failed parent.
    Repair,
    /// Improve a correct parent.
    Optimize,
    /// Turn a correct parent's choices into `override` parameters with candidate values.
    Template,
}

impl Mode {
    /// `seed`, `repair`, `optimize`, `template`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Seed => "seed",
            Mode::Repair => "repair",
            Mode::Optimize => "optimize",
            Mode::Template => "template",
        }
    }
}

/// A kernel shown in a prompt.
#[derive(Clone, Debug)]
pub struct Shown<'a> {
    /// The candidate.
    pub candidate: &'a Candidate,
    /// Its cell.
    pub descriptor: Option<Descriptor>,
    /// Its report, when it was evaluated.
    pub report: Option<&'a EvalReport>,
}

/// One point of a parameter sweep.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SweepPoint {
    /// `TILE=16, WG=128`.
    pub constants: String,
    /// Ladder level.
    pub level: u8,
    /// Speedup over the baseline, when correct.
    pub speedup: Option<f64>,
    /// Why it failed.
    pub reason: Option<String>,
}

/// Everything a prompt is built from.
#[derive(Clone, Debug)]
pub struct Context<'a> {
    /// Which prompt.
    pub mode: Mode,
    /// The kernel.
    pub kernel: &'a ResolvedKernel,
    /// The adapter's spec sheet ([`adapter_sheet`]).
    pub sheet: &'a str,
    /// The parent.
    pub parent: Shown<'a>,
    /// The best kernel of the parent's island, when it is another one.
    pub island_best: Option<Shown<'a>>,
    /// Elites of other cells.
    pub inspirations: Vec<Shown<'a>>,
    /// The cell to aim for: a dimension raised to a level.
    pub target: Option<(Dim, u8)>,
    /// Gradient hints (at most three).
    pub hints: Vec<Hint>,
    /// Sweeps of earlier templates: the template's id and its points.
    pub sweeps: Vec<(String, Vec<SweepPoint>)>,
}

/// What a level of a dimension means, as advice.
pub fn technique(dim: Dim, level: u8) -> &'static str {
    match (dim, level) {
        (Dim::Memory, 0) => "plain global loads and stores",
        (Dim::Memory, 1) => {
            "vectorized or coalesced global access: adjacent invocations touch adjacent elements, vec4 loads and stores where the layout allows"
        }
        (Dim::Memory, 2) => {
            "workgroup-memory tiling: stage tiles of the inputs in `var<workgroup>` arrays, synchronise with `workgroupBarrier()`, and reuse each staged element many times"
        }
        (Dim::Memory, _) => {
            "register blocking (each invocation keeps a small block of outputs in registers, e.g. vec4 accumulators) and double-buffered workgroup tiles"
        }
        (Dim::Compute, 0) => "several passes over the same data",
        (Dim::Compute, 1) => {
            "one fused pass: compute in one sweep what the kernel computes in several"
        }
        (Dim::Compute, 2) => {
            "a single-pass streaming algorithm: online softmax (a running maximum with a rescaled running sum), Welford for mean and variance"
        }
        (Dim::Compute, _) => {
            "a tiled or blocked algorithm: a loop over tiles staged in workgroup memory feeding accumulators"
        }
        (Dim::Parallelism, 0) => "independent invocations",
        (Dim::Parallelism, 1) => {
            "workgroup cooperation: the invocations of a workgroup share one task through workgroup memory and barriers (e.g. a tree reduction per row)"
        }
        (Dim::Parallelism, 2) => {
            "subgroup operations (`subgroupAdd`, `subgroupMax`, `subgroupShuffle`…, only where the adapter has the SUBGROUP feature; naga takes them without an `enable` directive)"
        }
        (Dim::Parallelism, _) => {
            "hierarchical cooperation: subgroup reductions combined across the workgroup through workgroup memory"
        }
        (Dim::Work, 0) => "one output per invocation",
        (Dim::Work, 1) => "2–4 outputs per invocation (thread coarsening)",
        (Dim::Work, 2) => "5–16 outputs per invocation",
        (Dim::Work, _) => "more than 16 outputs per invocation, or a grid-stride loop",
    }
}

/// The kernel's spec as prompt text.
pub fn kernel_spec(kernel: &ResolvedKernel) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Kernel `{}` ({}), entry point `{}`.",
        kernel.name, kernel.source_label, kernel.interface.entry
    );
    let sizes: Vec<String> = kernel
        .sizes
        .iter()
        .map(|(n, v)| format!("{n} = {v}"))
        .collect();
    let _ = writeln!(s, "Named sizes (defaults): {}", sizes.join(", "));
    let _ = writeln!(s, "Bindings (a variant must declare exactly these):");
    for b in &kernel.buffers {
        let i = &b.binding;
        let mut what = format!("{}", b.role);
        if let Some(len) = &b.len {
            let _ = write!(what, ", {len} elements");
        }
        match &b.init {
            Some(kf_runtime::spec::Init::Range(lo, hi)) => {
                let _ = write!(what, ", random in [{lo}, {hi})");
            }
            Some(kf_runtime::spec::Init::Constant(v)) => {
                let _ = write!(what, ", every element {v}");
            }
            Some(kf_runtime::spec::Init::Values(vs)) => {
                let v: Vec<String> = vs.iter().map(ToString::to_string).collect();
                let _ = write!(what, ", holding ({})", v.join(", "));
            }
            Some(kf_runtime::spec::Init::CausalMask(rows, cols)) => {
                let _ = write!(
                    what,
                    ", causal masks of {rows} x {cols} (row-major, repeated): 0 on and below the diagonal, -inf above"
                );
            }
            Some(kf_runtime::spec::Init::Probabilities(cols)) => {
                let _ = write!(
                    what,
                    ", rows of {cols} non-negative values each summing to 1"
                );
            }
            Some(kf_runtime::spec::Init::Bits) => {
                let _ = write!(what, ", random bits (the whole integer range)");
            }
            None => {}
        }
        if !b.extent.is_empty() {
            let e: Vec<String> = b.extent.iter().map(ToString::to_string).collect();
            let _ = write!(what, ", extent {}", e.join(" x "));
        }
        if let Some(f) = &b.format {
            let _ = write!(what, ", format {f}");
        }
        if !b.values.is_empty() {
            let v: Vec<String> = b.values.iter().map(ToString::to_string).collect();
            let _ = write!(what, ", values ({})", v.join(", "));
        }
        let _ = writeln!(
            s,
            "- @group({}) @binding({}) var<{}> {}: {} — {what}",
            i.group, i.binding, i.kind, i.name, i.ty
        );
    }
    let _ = writeln!(
        s,
        "Launch rule of the baseline: {} with workgroup size {} ({}).",
        kernel.baseline.dispatch,
        wg(kernel.baseline.workgroup_size),
        match kernel.baseline.dispatch.mode {
            kf_runtime::program::DispatchMode::Grid => {
                "grid(..) counts invocations; workgroups = ceil(invocations / workgroup size) per dimension"
            }
            kf_runtime::program::DispatchMode::Workgroups => {
                "workgroups(..) counts workgroups directly, whatever their size"
            }
        }
    );
    if let Some(f) = &kernel.flops {
        let _ = writeln!(s, "Floating-point operations per launch: {f}.");
    }
    let shapes = |v: &[kf_runtime::spec::Shape]| {
        v.iter()
            .map(kf_runtime::resolve::shape_text)
            .collect::<Vec<_>>()
            .join("; ")
    };
    let _ = writeln!(
        s,
        "Timed on: {}. Verified on those and on: {} (fresh random inputs each time; outputs must match the baseline's within a relative tolerance of {}).",
        shapes(&kernel.tune_shapes),
        shapes(&kernel.verify_shapes),
        kernel.tolerance
    );
    s
}

fn wg(w: [u32; 3]) -> String {
    format!("{}x{}x{}", w[0], w[1], w[2])
}

/// The adapter's spec sheet.
pub fn adapter_sheet(adapter: &AdapterReport, ceilings: Option<&Ceilings>) -> String {
    let id = &adapter.identity;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Adapter: {} — vendor {:#06x}, device {:#06x}, type {}, backend {}, driver {} ({}).",
        id.name, id.vendor, id.device, id.device_type, id.backend, id.driver, id.driver_info
    );
    let limits: Vec<String> = adapter
        .limits
        .iter()
        .filter(|(k, _)| !k.starts_with("subgroup_"))
        .map(|(k, v)| format!("{k} = {v}"))
        .collect();
    let _ = writeln!(s, "Limits: {}.", limits.join(", "));
    let features = if adapter.features.is_empty() {
        "none".to_owned()
    } else {
        adapter.features.join(", ")
    };
    let _ = writeln!(s, "Features: {features}.");
    match (
        adapter.limits.get("subgroup_min_size"),
        adapter.limits.get("subgroup_max_size"),
    ) {
        (Some(lo), Some(hi)) if adapter.features.iter().any(|f| f == "SUBGROUP") => {
            let _ = writeln!(s, "Subgroup size: {lo}–{hi}.");
        }
        _ => {
            let _ = writeln!(
                s,
                "Subgroups: not available (do not use subgroup builtins)."
            );
        }
    }
    match ceilings {
        Some(c) => {
            let _ = writeln!(
                s,
                "Measured ceilings: copy bandwidth {:.1} GB/s (bytes read + written), f32 FMA rate {:.1} GFLOP/s ({}).",
                c.copy_gbps, c.fma_gflops, c.method
            );
        }
        None => {
            let _ = writeln!(s, "Measured ceilings: not available.");
        }
    }
    s
}

/// The output contract.
pub fn contract(kernel: &ResolvedKernel) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Answer with exactly one fenced ```wgsl block holding the complete kernel, then one small fenced ```json block:"
    );
    let _ = writeln!(
        s,
        "- The WGSL keeps the entry point `{}` and exactly the baseline's bindings (group, binding, type, access); helper functions, structs, `override` constants and `var<workgroup>` memory may be added.",
        kernel.interface.entry
    );
    let sizes: Vec<&str> = kernel.sizes.iter().map(|(n, _)| n.as_str()).collect();
    let _ = writeln!(
        s,
        "- The JSON gives the launch rule over the named sizes ({}), and for each `override` you want measured, its candidate values (the first is used first):",
        sizes.join(", ")
    );
    let _ = writeln!(
        s,
        "  {{\"launch\": \"{}\", \"overrides\": {{\"NAME\": [v1, v2, v3]}}}}",
        kernel.baseline.dispatch
    );
    let _ = writeln!(
        s,
        "  `grid(x, y, z)` counts invocations (divided by your workgroup size), `workgroups(x, y, z)` counts workgroups; expressions may use + - * / % and parentheses. Omit the JSON block to keep the parent's launch rule."
    );
    let _ = writeln!(
        s,
        "- Uniform buffers hold the sizes at run time; read sizes from them, never hard-code the tune shape."
    );
    s
}

fn describe_report(r: Option<&EvalReport>) -> String {
    let Some(r) = r else {
        return "not measured yet".into();
    };
    let mut s = String::new();
    match &r.failure {
        Some(f) => {
            let _ = write!(s, "failed at level {} ({})", r.fitness.level, f.reason);
        }
        None => {
            let _ = write!(
                s,
                "correct, score {:.2}, {:.2}x the baseline's speed",
                r.fitness.score,
                r.fitness.speedup.unwrap_or(1.0)
            );
            for t in &r.timings {
                let _ = write!(
                    s,
                    "; on {}: {} vs baseline {}, {:.1} GB/s",
                    kf_runtime::resolve::shape_text(&t.shape),
                    crate::bench::fmt_ns(t.candidate_ns),
                    crate::bench::fmt_ns(t.baseline_ns),
                    t.achieved_gbps
                );
                if let Some(g) = t.achieved_gflops {
                    let _ = write!(s, ", {g:.1} GFLOP/s");
                }
            }
            if let Some(rf) = &r.roofline {
                let _ = write!(
                    s,
                    "; roofline: {}-bound at {:.0} % of the ceiling ({:.1} GB/s of {:.1}{})",
                    rf.bound,
                    rf.fraction * 100.0,
                    rf.achieved_gbps,
                    rf.ceiling_gbps,
                    rf.achieved_gflops
                        .map(|g| format!(", {g:.1} GFLOP/s of {:.1}", rf.ceiling_gflops))
                        .unwrap_or_default()
                );
            }
        }
    }
    s
}

fn show(s: &mut String, title: &str, k: &Shown<'_>) {
    let c = k.candidate;
    let _ = writeln!(s, "## {title}: `{}`", c.id);
    let _ = writeln!(s, "Made by: {}.", c.origin);
    if let Some(d) = k.descriptor {
        let _ = writeln!(
            s,
            "Cell {d}: memory {} ({}), compute {} ({}), parallelism {} ({}), work {} ({}).",
            d.level(Dim::Memory),
            technique(Dim::Memory, d.level(Dim::Memory)),
            d.level(Dim::Compute),
            technique(Dim::Compute, d.level(Dim::Compute)),
            d.level(Dim::Parallelism),
            technique(Dim::Parallelism, d.level(Dim::Parallelism)),
            d.level(Dim::Work),
            technique(Dim::Work, d.level(Dim::Work)),
        );
    }
    let _ = writeln!(s, "Result: {}.", describe_report(k.report));
    let p = &c.program;
    let constants: Vec<String> = p
        .constants
        .iter()
        .map(|(k, v)| format!("{k} = {v}"))
        .collect();
    let _ = writeln!(
        s,
        "Launch rule: {}{}.",
        p.dispatch,
        if constants.is_empty() {
            String::new()
        } else {
            format!("; constants: {}", constants.join(", "))
        }
    );
    let _ = writeln!(s, "```wgsl\n{}\n```", p.wgsl.trim_end());
}

/// The messages of a prompt.
pub fn messages(ctx: &Context<'_>, genome: &Genome) -> Vec<Message> {
    let system = format!(
        "You are an expert in GPU compute kernels written in WGSL for wgpu. You rewrite a kernel so it runs faster on one specific adapter while computing exactly the same outputs.\n\n{}## Output contract\n{}",
        genome.render(),
        contract(ctx.kernel)
    );
    let mut s = String::new();
    let k = ctx.kernel;
    let _ = writeln!(s, "# Task: {}", ctx.mode.as_str());
    let _ = writeln!(
        s,
        "{}",
        match ctx.mode {
            Mode::Seed => format!(
                "Kernel `{}`: below is the user's kernel (the baseline). Write a faster variant that computes the same outputs on this adapter.",
                k.name
            ),
            Mode::Repair => format!(
                "Kernel `{}`: the parent variant below failed. Fix what the log reports and keep its idea; change nothing else.",
                k.name
            ),
            Mode::Optimize => format!(
                "Kernel `{}`: the parent variant below is correct. Write a faster variant that computes the same outputs on this adapter.",
                k.name
            ),
            Mode::Template => format!(
                "Kernel `{}`: the parent variant below is correct. Rewrite it so its tunable choices (workgroup size, tile sizes, outputs per invocation, unroll factors) are `override` constants, and list 2–6 candidate values for each in the JSON block's \"overrides\"; every combination is measured and the results come back to you.",
                k.name
            ),
        }
    );
    let _ = writeln!(s, "\n## Kernel spec\n{}", kernel_spec(k));
    let _ = writeln!(s, "## Adapter\n{}", ctx.sheet);
    if let Some((dim, level)) = ctx.target {
        let from = ctx.parent.descriptor.map_or(0, |d| d.level(dim));
        let _ = writeln!(
            s,
            "## Target\nRaise the {dim} dimension from level {from} ({}) to level {level}: {}.\n",
            technique(dim, from),
            technique(dim, level)
        );
    }
    if !ctx.hints.is_empty() {
        let _ = writeln!(
            s,
            "## What has paid off so far (gradient of fitness over the archive)"
        );
        for h in &ctx.hints {
            let level_word = if h.direction > 0 {
                "raising"
            } else {
                "lowering"
            };
            let _ = writeln!(s, "- {level_word} {} (strength {:.2})", h.dim, h.strength);
        }
        s.push('\n');
    }
    let parent_title = match ctx.mode {
        Mode::Seed => "Baseline (the user's kernel)",
        _ => "Parent",
    };
    show(&mut s, parent_title, &ctx.parent);
    if let (Mode::Repair, Some(f)) = (ctx.mode, ctx.parent.report.and_then(|r| r.failure.as_ref()))
    {
        let _ = writeln!(
            s,
            "\nIt failed at level {} of the ladder (0 no code or parse error, 1 validation, 2 limits/pipeline/runtime, 3 interface, 4 wrong values, 5 correct) with `{}`. The distilled log:\n```text\n{}\n```",
            f.reason.level(),
            f.reason,
            f.log.trim_end()
        );
    }
    if let Some(best) = &ctx.island_best {
        s.push('\n');
        show(&mut s, "Best kernel of this island", best);
    }
    for (i, insp) in ctx.inspirations.iter().enumerate() {
        s.push('\n');
        show(&mut s, &format!("Inspiration {}", i + 1), insp);
    }
    if !ctx.sweeps.is_empty() {
        let _ = writeln!(s, "\n## Parameter sweeps of earlier templates");
        for (id, points) in &ctx.sweeps {
            let _ = writeln!(s, "Template `{id}`:");
            for p in points {
                let verdict = match (p.level, p.speedup, &p.reason) {
                    (5, Some(sp), _) => format!("correct, {sp:.2}x"),
                    (l, _, Some(r)) => format!("level {l}: {r}"),
                    (l, _, None) => format!("level {l}"),
                };
                let _ = writeln!(s, "- {}: {verdict}", p.constants);
            }
        }
    }
    vec![Message::system(system), Message::user(s)]
}

/// A meta prompt: the genome to improve and what its prompts achieved.
pub fn meta_messages(genome: &Genome, outcomes: &str) -> Vec<Message> {
    let system = "You improve the guidance given to a model that writes WGSL compute kernels. The guidance has four sections: philosophy, strategies, pitfalls, analysis. Reply with one to three edits, each exactly in this form (the section name after SEARCH; SEARCH text copied exactly from that section):\n<<<<<<< SEARCH strategies\ntext to replace\n=======\nnew text\n>>>>>>> REPLACE".to_owned();
    let mut user = String::new();
    let _ = writeln!(
        user,
        "# Task: meta\nGuidance `{}` (fitness {:.2}, used {} times):\n",
        genome.id,
        genome.fitness(),
        genome.uses
    );
    for (name, text) in super::genome::SECTIONS.iter().zip(&genome.sections) {
        let _ = writeln!(user, "### {name}\n{}\n", text.trim_end());
    }
    let _ = writeln!(
        user,
        "## Recent results of prompts built from the guidance\n{outcomes}"
    );
    let _ = writeln!(
        user,
        "Edit the sections so the next kernels avoid these failures and repeat what worked. Keep each section short."
    );
    vec![Message::system(system), Message::user(user)]
}

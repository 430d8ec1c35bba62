//! The report as one HTML file: inline CSS and SVG drawn here, no script and no external asset,
//! so it opens from disk in any browser, offline, and renders the same everywhere.
//!
//! Per kernel: the archive as a heatmap over the 256 behaviour cells (4 levels on each of memory,
//! compute, parallelism and work: a 4×4 grid of 4×4 blocks, see [`grid_position`]), the score of
//! every evaluation with the best so far, and the roofline placement of the baseline, the tuned
//! variant and the reference. Above them, the suite table.
//!
//! Text from the run (kernel names, origins, failure logs) goes through [`escape`] before it enters
//! the page; numbers are formatted here. Escaping is five replacements, so it is written out
//! rather than pulled in with a template engine.

use super::{Cell, CellSource, KernelView, Measured, Phase, Placement, Point, Report};
use crate::bench::{self, KernelBench, Status, fmt_ns};
use crate::evolve::{Descriptor, Dim};
use std::fmt::Write;

/// Side of a heatmap cell, px.
pub const CELL: u32 = 16;
const GAP: u32 = 2;
const BLOCK_GAP: u32 = 12;
const HEAT_LEFT: u32 = 92;
const HEAT_TOP: u32 = 34;

/// Fill of a cell no candidate reached.
pub const EMPTY: &str = "#eef0f3";
/// Fills of failed candidates by ladder level 0–4.
pub const LEVEL_COLOURS: [&str; 5] = ["#67001f", "#b2182b", "#d6604d", "#f4a582", "#fddbc7"];
/// Fills of correct candidates: a speedup below each bound gets its colour; above the last, the
/// last colour.
pub const SPEEDUP_BINS: [(f64, &str); 7] = [
    (0.95, "#deebf7"),
    (1.05, "#c6dbef"),
    (1.25, "#9ecae1"),
    (1.5, "#6baed6"),
    (2.0, "#4292c6"),
    (4.0, "#2171b5"),
    (f64::INFINITY, "#084594"),
];

/// Fills of the roofline placements: baseline, tuned, reference (none is a heatmap fill, so a
/// block of a heatmap colour on the page is a heatmap cell).
pub const PLACEMENT_COLOURS: [(&str, &str); 3] = [
    ("baseline", "#8c96a5"),
    ("tuned", "#1a9850"),
    ("reference", "#e6850e"),
];

/// Escapes text for HTML element content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The fill of a candidate at ladder `level` with `speedup` (correct ones only).
pub fn colour(level: u8, speedup: Option<f64>) -> &'static str {
    if level < 5 {
        return LEVEL_COLOURS[usize::from(level.min(4))];
    }
    let s = speedup.unwrap_or(1.0);
    SPEEDUP_BINS
        .iter()
        .find(|(bound, _)| s < *bound)
        .map_or(SPEEDUP_BINS[SPEEDUP_BINS.len() - 1].1, |(_, c)| *c)
}

/// The (column, row) of a descriptor in the 16×16 heatmap: blocks by work level (columns) and
/// parallelism level (rows); within a block, memory level left to right and compute level top
/// to bottom. Every descriptor has its own position.
pub fn grid_position(d: Descriptor) -> (u32, u32) {
    let l = |dim| u32::from(d.level(dim));
    (
        l(Dim::Work) * 4 + l(Dim::Memory),
        l(Dim::Parallelism) * 4 + l(Dim::Compute),
    )
}

fn cell_origin(col: u32, row: u32) -> (u32, u32) {
    (
        HEAT_LEFT + col * (CELL + GAP) + (col / 4) * BLOCK_GAP,
        HEAT_TOP + row * (CELL + GAP) + (row / 4) * BLOCK_GAP,
    )
}

fn num(x: f64) -> String {
    let s = format!("{x:.1}");
    s.strip_suffix(".0").map(str::to_owned).unwrap_or(s)
}

fn speedup_text(level: u8, speedup: Option<f64>, score: f64) -> String {
    match (level, speedup) {
        (5, Some(s)) => format!("correct, {s:.2}x (score {score:.2})"),
        (5, None) => "correct".to_owned(),
        (l, _) => format!("level {l} (failed)"),
    }
}

/// The archive heatmap of one kernel: all 256 cells, filled ones coloured by their best score.
pub fn heatmap(kernel: &str, cells: &[Cell]) -> String {
    const WORK: [&str; 4] = ["1 output", "2–4", "5–16", "more"];
    const PAR: [&str; 4] = ["thread", "workgroup", "subgroup", "both"];
    let (w, _) = cell_origin(16, 0);
    let (_, h) = cell_origin(0, 16);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="heatmap" data-kernel="{}" width="{}" height="{}" viewBox="0 0 {} {}" role="img">"#,
        escape(kernel),
        w + 4,
        h + 24,
        w + 4,
        h + 24
    );
    let _ = write!(
        s,
        r#"<text x="{}" y="12" class="axis">work per invocation →</text>"#,
        HEAT_LEFT
    );
    for (i, label) in WORK.iter().enumerate() {
        let (x, _) = cell_origin(i as u32 * 4, 0);
        let _ = write!(s, r#"<text x="{}" y="28" class="tick">{label}</text>"#, x);
    }
    for (i, label) in PAR.iter().enumerate() {
        let (_, y) = cell_origin(0, i as u32 * 4);
        let _ = write!(
            s,
            r#"<text x="4" y="{}" class="tick">{label}</text>"#,
            y + 2 * (CELL + GAP) - 4
        );
    }
    let _ = write!(
        s,
        r#"<text x="4" y="{}" class="axis">parallelism ↓</text>"#,
        HEAT_TOP - 8
    );
    let _ = write!(
        s,
        r#"<text x="{}" y="{}" class="axis">in each block: memory level 0–3 →, compute level 0–3 ↓</text>"#,
        HEAT_LEFT,
        h + 16
    );
    for d in Descriptor::all() {
        let (col, row) = grid_position(d);
        let (x, y) = cell_origin(col, row);
        match cells.iter().find(|c| c.descriptor == d) {
            Some(c) => {
                let _ = write!(
                    s,
                    r#"<rect class="cell filled" data-cell="{d}" data-score="{:.3}" x="{x}" y="{y}" width="{CELL}" height="{CELL}" fill="{}"><title>{d}: {}, {} ({})</title></rect>"#,
                    c.score,
                    colour(c.level, c.speedup),
                    speedup_text(c.level, c.speedup, c.score),
                    escape(&c.id),
                    escape(&c.origin),
                );
            }
            None => {
                let _ = write!(
                    s,
                    r#"<rect class="cell empty" data-cell="{d}" x="{x}" y="{y}" width="{CELL}" height="{CELL}" fill="{EMPTY}"><title>{d}: no candidate</title></rect>"#,
                );
            }
        }
    }
    s.push_str("</svg>");
    s
}

/// The colour key of the heatmap and the evaluation plot (swatches smaller than a cell).
pub fn legend() -> String {
    let mut items: Vec<(String, &str)> = vec![("empty".into(), EMPTY)];
    for (level, c) in LEVEL_COLOURS.iter().enumerate() {
        items.push((format!("level {level}"), c));
    }
    let mut lower = 0.0;
    for (bound, c) in SPEEDUP_BINS {
        let label = if bound.is_infinite() {
            format!("≥ {lower}x")
        } else if lower == 0.0 {
            format!("< {bound}x")
        } else {
            format!("{lower}–{bound}x")
        };
        items.push((label, c));
        lower = bound;
    }
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="legend" width="600" height="40" viewBox="0 0 600 40" role="img">"#
    );
    for (i, (label, c)) in items.iter().enumerate() {
        let (x, y) = ((i % 7) as u32 * 84, (i / 7) as u32 * 20);
        let _ = write!(
            s,
            r#"<rect x="{x}" y="{}" width="10" height="10" fill="{c}"/><text x="{}" y="{}" class="tick">{}</text>"#,
            y + 2,
            x + 14,
            y + 11,
            escape(label)
        );
    }
    s.push_str("</svg>");
    s
}

/// Every evaluation's score in order, the best so far, and the baseline's score.
pub fn curve(points: &[Point]) -> String {
    const W: f64 = 460.0;
    const H: f64 = 240.0;
    const L: f64 = 40.0;
    const R: f64 = 12.0;
    const T: f64 = 12.0;
    const B: f64 = 34.0;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="curve" width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img">"#
    );
    if points.is_empty() {
        s.push_str(r#"<text x="20" y="40" class="axis">no evaluations recorded</text></svg>"#);
        return s;
    }
    let top = points.iter().map(|p| p.score).fold(7.0f64, f64::max).ceil();
    let n = points.len();
    let x = |i: usize| L + (W - L - R) * i as f64 / (n.max(2) - 1) as f64;
    let y = |score: f64| T + (H - T - B) * (1.0 - score.clamp(0.0, top) / top);
    let step = if top <= 10.0 { 1 } else { 2 };
    for tick in (0..=top as u32).step_by(step) {
        let yy = y(f64::from(tick));
        let _ = write!(
            s,
            r#"<line x1="{L}" x2="{}" y1="{}" y2="{}" class="grid"/><text x="{}" y="{}" class="tick" text-anchor="end">{tick}</text>"#,
            W - R,
            num(yy),
            num(yy),
            L - 4.0,
            num(yy + 3.0)
        );
    }
    let xticks: Vec<usize> = if n <= 6 {
        (0..n).collect()
    } else {
        (0..=5).map(|k| k * (n - 1) / 5).collect()
    };
    for i in xticks {
        let _ = write!(
            s,
            r#"<text x="{}" y="{}" class="tick" text-anchor="middle">{i}</text>"#,
            num(x(i)),
            H - B + 14.0
        );
    }
    let _ = write!(
        s,
        r#"<text x="{}" y="{}" class="axis" text-anchor="middle">evaluation (score = ladder level, + speedup when correct)</text>"#,
        (L + W - R) / 2.0,
        H - 4.0
    );
    let base = y(6.0);
    let _ = write!(
        s,
        r#"<line x1="{L}" x2="{}" y1="{}" y2="{}" class="base"/><text x="{}" y="{}" class="tick" text-anchor="end">baseline 1x</text>"#,
        W - R,
        num(base),
        num(base),
        W - R,
        num(base - 3.0)
    );
    let mut best = f64::NEG_INFINITY;
    let mut path = String::new();
    for (i, p) in points.iter().enumerate() {
        if p.phase == Phase::Final {
            continue;
        }
        let before = best;
        best = best.max(p.score);
        if path.is_empty() {
            let _ = write!(path, "M{} {}", num(x(i)), num(y(best)));
        } else {
            if best > before {
                let _ = write!(path, " L{} {}", num(x(i)), num(y(before)));
            }
            let _ = write!(path, " L{} {}", num(x(i)), num(y(best)));
        }
    }
    let _ = write!(s, r#"<path class="best" d="{path}"/>"#);
    for (i, p) in points.iter().enumerate() {
        let (cx, cy) = (num(x(i)), num(y(p.score)));
        let fill = colour(p.level, p.speedup);
        let title = format!(
            "#{i} {} {}: {}",
            match p.phase {
                Phase::Baseline => "baseline",
                Phase::Search => "search",
                Phase::Final => "final verification of",
            },
            escape(&p.id),
            speedup_text(p.level, p.speedup, p.score)
        );
        match p.phase {
            Phase::Final => {
                let _ = write!(
                    s,
                    r#"<rect class="point final" x="-4" y="-4" width="8" height="8" transform="translate({cx} {cy}) rotate(45)" fill="{fill}"><title>{title}</title></rect>"#
                );
            }
            _ => {
                let _ = write!(
                    s,
                    r#"<circle class="point" cx="{cx}" cy="{cy}" r="3.5" fill="{fill}"><title>{title}</title></circle>"#
                );
            }
        }
    }
    s.push_str("</svg>");
    s
}

fn decade_floor(v: f64) -> f64 {
    10f64.powf(v.log10().floor())
}

fn decade_ceil(v: f64) -> f64 {
    10f64.powf(v.log10().ceil())
}

/// The placements against the ceilings: a log-log roofline (FLOP/s over arithmetic intensity)
/// when the kernel's work is known, else bandwidth bars against the copy ceiling.
pub fn roofline(placements: &[Placement], ceilings: Option<(f64, f64)>) -> String {
    const W: f64 = 420.0;
    let with_flops: Vec<(&Placement, f64, f64)> = placements
        .iter()
        .filter_map(|p| {
            let g = p.gflops?;
            (g > 0.0 && p.gbps > 0.0).then(|| (p, g / p.gbps, g))
        })
        .collect();
    let bars = ceilings.is_none() || with_flops.is_empty();
    // Bars take a row each; the roofline a fixed plot.
    let h: f64 = if bars && !placements.is_empty() {
        40.0 * placements.len() as f64 + 56.0
    } else {
        240.0
    };
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="roofline" width="{W}" height="{h}" viewBox="0 0 {W} {h}" role="img">"#
    );
    if placements.is_empty() {
        s.push_str(r#"<text x="20" y="40" class="axis">not measured</text></svg>"#);
        return s;
    }
    if let (Some((copy, fma)), false) = (ceilings, bars) {
        let (l, r, t, b) = (52.0, 12.0, 12.0, 34.0);
        let ridge = fma / copy.max(1e-12);
        let imin = with_flops.iter().map(|p| p.1).fold(ridge, f64::min);
        let imax = with_flops.iter().map(|p| p.1).fold(ridge, f64::max);
        let (x0, x1) = (decade_floor(imin / 2.0), decade_ceil(imax * 2.0));
        let gmin = with_flops.iter().map(|p| p.2).fold(fma, f64::min);
        let (y0, y1) = (decade_floor(gmin / 2.0), decade_ceil(fma * 1.5));
        let x = |v: f64| l + (W - l - r) * (v / x0).log10() / (x1 / x0).log10();
        let y = |v: f64| t + (h - t - b) * (1.0 - (v / y0).log10() / (y1 / y0).log10());
        let mut d = x0;
        while d <= x1 * 1.0001 {
            let _ = write!(
                s,
                r#"<line x1="{}" x2="{}" y1="{t}" y2="{}" class="grid"/><text x="{}" y="{}" class="tick" text-anchor="middle">{}</text>"#,
                num(x(d)),
                num(x(d)),
                h - b,
                num(x(d)),
                h - b + 14.0,
                sci(d)
            );
            d *= 10.0;
        }
        let mut d = y0;
        while d <= y1 * 1.0001 {
            let _ = write!(
                s,
                r#"<line x1="{l}" x2="{}" y1="{}" y2="{}" class="grid"/><text x="{}" y="{}" class="tick" text-anchor="end">{}</text>"#,
                W - r,
                num(y(d)),
                num(y(d)),
                l - 4.0,
                num(y(d) + 3.0),
                sci(d)
            );
            d *= 10.0;
        }
        let _ = write!(
            s,
            r#"<path class="roof" d="M{} {} L{} {} L{} {}"/>"#,
            num(x(x0)),
            num(y((copy * x0).max(y0))),
            num(x(ridge)),
            num(y(fma)),
            num(x(x1)),
            num(y(fma))
        );
        let _ = write!(
            s,
            r#"<text x="{}" y="{}" class="tick" text-anchor="end">{} GB/s copy, {} GFLOP/s FMA</text>"#,
            W - r,
            num(y(fma) - 5.0),
            num(copy),
            num(fma)
        );
        // Labels top to bottom, at least a line apart, so close points stay readable.
        let mut order: Vec<&(&Placement, f64, f64)> = with_flops.iter().collect();
        order.sort_by(|a, b| y(a.2).total_cmp(&y(b.2)));
        let mut last_label = f64::NEG_INFINITY;
        for (p, i, g) in order {
            let label_y = (y(*g) + 4.0).max(last_label + 12.0);
            last_label = label_y;
            let _ = write!(
                s,
                r#"<circle class="placement {0}" cx="{1}" cy="{2}" r="5"><title>{0}: {3} GFLOP/s, {4} GB/s, {5}</title></circle><text x="{6}" y="{7}" class="tick">{0}</text>"#,
                p.label,
                num(x(*i)),
                num(y(*g)),
                bench::rate(*g),
                bench::rate(p.gbps),
                fmt_ns(p.ns),
                num(x(*i) + 7.0),
                num(label_y)
            );
        }
        let _ = write!(
            s,
            r#"<text x="{}" y="{}" class="axis" text-anchor="middle">FLOP per byte (GFLOP/s on the vertical axis)</text>"#,
            (l + W - r) / 2.0,
            h - 4.0
        );
    } else {
        let (l, r) = (84.0, 16.0);
        let ceiling = ceilings.map(|c| c.0);
        let top = placements
            .iter()
            .map(|p| p.gbps)
            .fold(ceiling.unwrap_or(0.0), f64::max)
            .max(1e-9)
            * 1.1;
        let x = |v: f64| l + (W - l - r) * v / top;
        for (k, p) in placements.iter().enumerate() {
            let yy = 20.0 + 40.0 * k as f64;
            let _ = write!(
                s,
                r#"<text x="{}" y="{}" class="tick" text-anchor="end">{}</text><rect class="placement {}" x="{l}" y="{}" width="{}" height="22"><title>{}: {} GB/s, {}</title></rect><text x="{}" y="{}" class="tick">{} GB/s</text>"#,
                l - 6.0,
                num(yy + 15.0),
                p.label,
                p.label,
                num(yy),
                num((x(p.gbps) - l).max(1.0)),
                p.label,
                bench::rate(p.gbps),
                fmt_ns(p.ns),
                num(x(p.gbps) + 4.0),
                num(yy + 15.0),
                bench::rate(p.gbps)
            );
        }
        match ceiling {
            Some(c) => {
                let _ = write!(
                    s,
                    r#"<line class="roof" x1="{}" x2="{}" y1="10" y2="{}"/><text x="{}" y="{}" class="tick" text-anchor="end">copy ceiling {} GB/s</text>"#,
                    num(x(c)),
                    num(x(c)),
                    h - 30.0,
                    num(x(c)),
                    h - 16.0,
                    num(c)
                );
            }
            None => {
                let _ = write!(
                    s,
                    r#"<text x="{l}" y="{}" class="tick">no measured ceilings for this adapter</text>"#,
                    h - 16.0
                );
            }
        }
    }
    s.push_str("</svg>");
    s
}

/// A decade tick: `0.01`, `1`, `1000`, or `1e6` outside that range.
fn sci(v: f64) -> String {
    let e = v.log10().round() as i32;
    match e {
        -3..=-1 => format!("{:.*}", (-e) as usize, 10f64.powi(e)),
        0..=4 => format!("{}", 10u64.pow(e as u32)),
        _ => format!("1e{e}"),
    }
}

const STYLE: &str = r#"
body { font: 14px/1.4 system-ui, sans-serif; color: #1d2330; background: #ffffff; margin: 24px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 28px 0 4px; border-top: 1px solid #d6dae1; padding-top: 14px; }
h2 small, .meta { color: #5b6474; font-weight: normal; font-size: 13px; }
table { border-collapse: collapse; margin: 10px 0; font-size: 12px; }
th, td { border: 1px solid #d6dae1; padding: 3px 6px; text-align: right; white-space: nowrap; }
th:first-child, td:first-child, td.text { text-align: left; }
th { background: #f5f6f8; white-space: normal; }
.panels { display: flex; flex-wrap: wrap; gap: 18px; align-items: flex-start; }
figure { margin: 8px 0; }
figure svg { display: block; margin-bottom: 6px; }
figcaption { font-size: 13px; color: #5b6474; margin-bottom: 4px; }
svg text { font: 11px system-ui, sans-serif; fill: #1d2330; }
svg text.axis { fill: #5b6474; }
svg .grid { stroke: #e3e6ea; stroke-width: 1; }
svg .base { stroke: #5b6474; stroke-dasharray: 4 3; }
svg .best { fill: none; stroke: #1d2330; stroke-width: 1.5; }
svg .point { stroke: #1d2330; stroke-width: 0.6; }
svg .roof { fill: none; stroke: #1d2330; stroke-width: 2; }
.bad { color: #b2182b; font-weight: 600; }
"#;

/// The whole report as one HTML document.
pub fn render(report: &Report) -> String {
    let mut s = String::new();
    s.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    s.push_str("<title>KernelFoundry report</title><style>");
    s.push_str(STYLE);
    for (label, fill) in PLACEMENT_COLOURS {
        let _ = writeln!(s, "svg .placement.{label} {{ fill: {fill}; }}");
    }
    s.push_str("</style></head><body>\n<h1>KernelFoundry report</h1>\n");
    let mut meta = Vec::new();
    if let Some(a) = &report.adapter {
        meta.push(format!("adapter {}", escape(a)));
    }
    if let Some(k) = &report.adapter_key {
        meta.push(format!("key {}", escape(k)));
    }
    if let Some((copy, fma)) = report.ceilings {
        meta.push(format!(
            "measured ceilings {} GB/s copy, {} GFLOP/s FMA",
            bench::rate(copy),
            bench::rate(fma)
        ));
    }
    if let Some(run) = &report.run {
        let o = &run.record.options;
        meta.push(format!(
            "run {} started {} ({} strategy, seed {}, budget {}{}{})",
            escape(
                &run.dir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            ),
            started(run.record.started),
            escape(o.search.strategy.as_str()),
            o.search.seed,
            o.search.budget,
            if o.search.gradients {
                ""
            } else {
                ", no gradients"
            },
            if run.record.finished {
                ""
            } else {
                ", unfinished"
            }
        ));
    }
    if let Some(b) = &report.bench {
        meta.push(format!(
            "bench: {} samples per shape, kf-build {}",
            b.samples,
            escape(&b.tool_version)
        ));
    }
    let _ = writeln!(s, "<p class=\"meta\">{}</p>", meta.join(" · "));
    match &report.bench {
        Some(b) => suite_from_bench(&mut s, b),
        None => suite_from_run(&mut s, report),
    }
    for k in &report.kernels {
        kernel_section(&mut s, k, report.ceilings);
    }
    s.push_str("</body></html>\n");
    s
}

fn started(unix: u64) -> String {
    i64::try_from(unix)
        .ok()
        .and_then(|s| jiff::Timestamp::from_second(s).ok())
        .map_or_else(|| unix.to_string(), |t| t.to_string())
}

fn cell(text: impl AsRef<str>) -> String {
    format!("<td>{}</td>", text.as_ref())
}

fn dash() -> String {
    "–".to_owned()
}

fn time(t: Option<&bench::Timing>) -> String {
    t.map_or_else(dash, |t| {
        format!("{} ± {:.0} %", fmt_ns(t.ns), t.spread * 100.0)
    })
}

fn suite_from_bench(s: &mut String, b: &bench::BenchReport) {
    s.push_str("<h2>Suite (bench: re-verified on this adapter)</h2>\n<table class=\"suite\"><tr><th>kernel</th><th>status</th><th>correct</th><th>baseline</th><th>tuned</th><th>speedup</th><th>GB/s</th><th>GFLOP/s</th><th>of ceiling</th><th>reference</th><th>ref. speedup</th><th>evaluations</th><th>tuning s</th></tr>\n");
    for k in &b.kernels {
        bench_row(s, k);
    }
    s.push_str("</table>\n");
    let u = &b.suite;
    let pct = |x: f64| format!("{:.0} %", x * 100.0);
    let _ = writeln!(
        s,
        "<table class=\"figures\"><tr><th>kernels</th><th>tuned</th><th>baseline-best</th><th>not tuned</th><th>failed</th><th>correct</th><th>fast_1</th><th>fast_1.2</th><th>fast_2</th><th>geomean speedup</th><th>tuning evaluations</th><th>tuning s</th></tr><tr>{}{}{}{}{}{}{}{}{}{}{}{}</tr></table>",
        cell(u.kernels.to_string()),
        cell(u.tuned.to_string()),
        cell(u.baseline_best.to_string()),
        cell(u.not_tuned.to_string()),
        cell(u.failed.to_string()),
        cell(format!("{} ({})", u.correct, pct(u.correctness_rate))),
        cell(pct(u.fast_1)),
        cell(pct(u.fast_1_2)),
        cell(pct(u.fast_2)),
        cell(u.geomean_speedup.map_or_else(dash, |g| format!("{g:.2}x"))),
        cell(u.tuning_evaluations.to_string()),
        cell(format!("{:.1}", u.tuning_seconds)),
    );
    s.push_str("<p class=\"meta\">correct: the deployed program (the tuned variant, or the baseline an entry kept) passed the final verification on this adapter in the bench run; kernels not tuned for this adapter count as not correct. fast_p: the share of all kernels that are correct and faster than the baseline by more than p. Times: medians summed over the tune shapes ± half the interquartile range.</p>\n");
}

fn bench_row(s: &mut String, k: &KernelBench) {
    let deployed = k.deployed_timing();
    let correct = bench::correct_text(k);
    let correct = if correct.starts_with("NO") {
        format!("<td class=\"text bad\">{}</td>", escape(&correct))
    } else {
        format!("<td class=\"text\">{}</td>", escape(&correct))
    };
    let reference = match &k.reference {
        None => dash(),
        Some(r) if !r.correct => format!(
            "<span class=\"bad\">{}</span>",
            escape(r.failure.as_deref().unwrap_or("failed"))
        ),
        Some(r) => time(r.timing.as_ref()),
    };
    let _ = writeln!(
        s,
        "<tr><td><a href=\"#k-{0}\">{0}</a></td><td class=\"text\">{1}</td>{correct}{2}{3}{4}{5}{6}{7}{8}{9}{10}{11}</tr>",
        escape(&k.name),
        k.status.as_str(),
        cell(time(k.baseline())),
        cell(time(k.tuned())),
        cell(k.speedup.map_or_else(dash, |v| format!("{v:.2}x"))),
        cell(deployed.map_or_else(dash, |t| bench::rate(t.gbps))),
        cell(
            deployed
                .and_then(|t| t.gflops)
                .map_or_else(dash, bench::rate)
        ),
        cell(
            deployed
                .and_then(|t| t.roofline.as_ref())
                .map_or_else(dash, |r| format!("{:.1} % {}", r.fraction * 100.0, r.bound))
        ),
        cell(reference),
        cell(
            k.reference
                .as_ref()
                .and_then(|r| r.speedup)
                .map_or_else(dash, |v| format!("{v:.2}x"))
        ),
        cell(
            k.tuning
                .as_ref()
                .map_or_else(dash, |t| t.evaluations.to_string())
        ),
        cell(
            k.tuning
                .as_ref()
                .and_then(|t| t.seconds)
                .map_or_else(dash, |v| format!("{v:.1}"))
        ),
    );
}

fn suite_from_run(s: &mut String, report: &Report) {
    s.push_str("<h2>Suite (tune run; figures recorded at tune time, not re-verified: run <code>cargo kernelfoundry bench</code> for those)</h2>\n<table class=\"suite\"><tr><th>kernel</th><th>status</th><th>variant</th><th>speedup</th><th>evaluations</th><th>cells filled</th><th>evaluation s</th></tr>\n");
    for k in &report.kernels {
        let (status, variant, speedup, evaluations) = match &k.entry {
            Some(e) => (
                match e.variant {
                    Some(_) => "tuned",
                    None => "baseline-best",
                },
                e.variant.as_ref().map_or_else(dash, |v| escape(&v.id)),
                format!("{:.2}x", e.speedup),
                e.search.evaluations.to_string(),
            ),
            None => (
                "no entry",
                dash(),
                dash(),
                k.points
                    .iter()
                    .filter(|p| p.phase == Phase::Search)
                    .count()
                    .to_string(),
            ),
        };
        let _ = writeln!(
            s,
            "<tr><td><a href=\"#k-{0}\">{0}</a></td><td class=\"text\">{status}</td><td class=\"text\">{variant}</td>{1}{2}{3}{4}</tr>",
            escape(&k.name),
            cell(speedup),
            cell(evaluations),
            cell(k.cells.len().to_string()),
            cell(k.seconds.map_or_else(dash, |v| format!("{v:.1}"))),
        );
    }
    s.push_str("</table>\n");
}

fn kernel_section(s: &mut String, k: &KernelView, ceilings: Option<(f64, f64)>) {
    let _ = writeln!(
        s,
        "<section class=\"kernel\" id=\"k-{0}\"><h2>{0} <small>{1}{2}</small></h2>",
        escape(&k.name),
        k.package
            .as_deref()
            .map(|p| format!("{} · ", escape(p)))
            .unwrap_or_default(),
        escape(&k.content_hash)
    );
    let mut facts = Vec::new();
    if let Some(b) = &k.bench {
        facts.push(format!("bench: {}", b.status.as_str()));
        if let Some(v) = b.speedup {
            facts.push(format!("{v:.2}x over the baseline"));
        }
        if b.status == Status::Tuned && !b.correct {
            facts.push(format!(
                "<span class=\"bad\">the cached variant FAILED verification: {}</span>",
                escape(
                    b.deployed
                        .as_ref()
                        .and_then(|d| d.failure.as_deref())
                        .unwrap_or("")
                )
            ));
        }
    }
    if let Some(e) = &k.entry {
        match &e.variant {
            Some(v) => facts.push(format!(
                "cached variant {} ({:.2}x at tune time), made by {}",
                escape(&v.id),
                e.speedup,
                escape(&v.origin)
            )),
            None => facts.push("the cache entry keeps the baseline".into()),
        }
    }
    let searched = k.points.iter().filter(|p| p.phase == Phase::Search).count();
    if !k.points.is_empty() {
        facts.push(format!(
            "{searched} search evaluations, {} final verifications",
            k.points.iter().filter(|p| p.phase == Phase::Final).count()
        ));
    }
    if !facts.is_empty() {
        let _ = writeln!(s, "<p>{}</p>", facts.join("; "));
    }
    s.push_str("<div class=\"panels\">");
    let source = match k.cells_source {
        CellSource::Archive => "the QD archive (best elite of each cell over the islands)",
        CellSource::Journal => "every evaluated candidate, described from its program",
        CellSource::None => "no run directory for this kernel",
    };
    let _ = write!(
        s,
        "<figure class=\"archive\"><figcaption>Archive: {} of 256 cells filled, from {source}</figcaption>{}{}</figure>",
        k.cells.len(),
        heatmap(&k.name, &k.cells),
        legend()
    );
    let _ = write!(
        s,
        "<figure class=\"fitness\"><figcaption>Fitness over evaluations (line: best so far; diamonds: final verifications)</figcaption>{}</figure>",
        curve(&k.points)
    );
    let measured = match k.measured {
        Measured::Bench => "measured by bench",
        Measured::Run => "measured by the tune run",
        Measured::None => "not measured",
    };
    let _ = write!(
        s,
        "<figure class=\"roofline\"><figcaption>Roofline placement ({measured})</figcaption>{}</figure>",
        roofline(&k.placements, ceilings)
    );
    s.push_str("</div></section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_markup_and_quotes() {
        assert_eq!(
            escape(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        assert_eq!(
            escape("vc24a6471fe → param(WG=256)"),
            "vc24a6471fe → param(WG=256)"
        );
    }

    #[test]
    fn every_descriptor_has_its_own_grid_position() {
        let mut seen = std::collections::HashSet::new();
        for d in Descriptor::all() {
            let (c, r) = grid_position(d);
            assert!(c < 16 && r < 16, "{d} at ({c}, {r})");
            assert!(seen.insert((c, r)), "{d} shares ({c}, {r})");
        }
        assert_eq!(seen.len(), 256);
        assert_eq!(grid_position(Descriptor::new(0, 0, 0, 0)), (0, 0));
        // memory → column within the block, compute → row, work → block column, parallelism →
        // block row.
        assert_eq!(grid_position(Descriptor::new(1, 2, 3, 0)), (1, 14));
        assert_eq!(grid_position(Descriptor::new(3, 0, 0, 2)), (11, 0));
    }

    #[test]
    fn colours_follow_the_ladder_and_the_speedup() {
        assert_eq!(colour(0, None), LEVEL_COLOURS[0]);
        assert_eq!(colour(4, None), LEVEL_COLOURS[4]);
        assert_eq!(colour(5, Some(0.5)), SPEEDUP_BINS[0].1);
        assert_eq!(colour(5, Some(1.0)), SPEEDUP_BINS[1].1);
        assert_eq!(colour(5, Some(1.3)), SPEEDUP_BINS[3].1);
        assert_eq!(colour(5, Some(100.0)), SPEEDUP_BINS[6].1);
        // No fill is used twice, and none is the empty cell's or the page's.
        let mut all: Vec<&str> = LEVEL_COLOURS.to_vec();
        all.extend(SPEEDUP_BINS.iter().map(|(_, c)| *c));
        all.push(EMPTY);
        all.extend(PLACEMENT_COLOURS.iter().map(|(_, c)| *c));
        all.push("#ffffff");
        let mut unique = all.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), all.len());
    }

    fn cell(d: Descriptor, level: u8, speedup: Option<f64>) -> Cell {
        Cell {
            descriptor: d,
            score: f64::from(level) + speedup.unwrap_or(0.0),
            level,
            speedup,
            id: "v<1>".into(),
            origin: "param(WG=\"64\")".into(),
        }
    }

    #[test]
    fn the_heatmap_draws_every_cell_and_colours_the_filled_ones() {
        let cells = vec![
            cell(Descriptor::new(0, 1, 0, 0), 5, Some(1.0)),
            cell(Descriptor::new(2, 1, 1, 1), 5, Some(3.0)),
            cell(Descriptor::new(1, 1, 0, 0), 4, None),
        ];
        let svg = heatmap("SAX<PY>", &cells);
        assert_eq!(svg.matches("<rect class=\"cell ").count(), 256);
        assert_eq!(svg.matches("<rect class=\"cell filled\"").count(), 3);
        assert_eq!(svg.matches(&format!("fill=\"{EMPTY}\"")).count(), 253);
        let (x, y) = cell_origin(
            grid_position(Descriptor::new(2, 1, 1, 1)).0,
            grid_position(Descriptor::new(2, 1, 1, 1)).1,
        );
        assert!(
            svg.contains(&format!(
                "data-cell=\"m2c1p1w1\" data-score=\"8.000\" x=\"{x}\" y=\"{y}\" width=\"16\" height=\"16\" fill=\"{}\"",
                SPEEDUP_BINS[5].1
            )),
            "{svg}"
        );
        assert!(svg.contains("data-kernel=\"SAX&lt;PY&gt;\""));
        assert!(svg.contains("v&lt;1&gt; (param(WG=&quot;64&quot;))"));
        assert!(!svg.contains("<PY>") && !svg.contains("v<1>"));
    }

    #[test]
    fn the_best_fitness_line_never_falls_and_skips_final_verifications() {
        let p = |phase, score: f64| Point {
            phase,
            score,
            level: if score >= 5.0 { 5 } else { score as u8 },
            speedup: (score >= 5.0).then_some(score - 5.0),
            id: "x".into(),
        };
        let points = vec![
            p(Phase::Baseline, 6.0),
            p(Phase::Search, 4.0),
            p(Phase::Search, 7.0),
            p(Phase::Search, 6.5),
            p(Phase::Final, 5.5),
        ];
        let svg = curve(&points);
        assert_eq!(svg.matches("<circle class=\"point\"").count(), 4);
        assert_eq!(svg.matches("class=\"point final\"").count(), 1);
        let path = svg.split("class=\"best\" d=\"").nth(1).unwrap();
        let path = &path[..path.find('"').unwrap()];
        let ys: Vec<f64> = path
            .split(['M', 'L'])
            .filter(|s| !s.trim().is_empty())
            .map(|s| s.split_whitespace().nth(1).unwrap().parse().unwrap())
            .collect();
        // SVG y grows downwards: the best score never falls means y never grows.
        assert!(ys.windows(2).all(|w| w[1] <= w[0]), "{path}");
        assert!(ys.len() >= 4, "{path}");
    }

    #[test]
    fn the_roofline_places_programs_or_falls_back_to_bandwidth_bars() {
        let p = |label, gbps, gflops| Placement {
            label,
            gbps,
            gflops,
            ns: 1000.0,
        };
        let svg = roofline(
            &[
                p("baseline", 10.0, Some(20.0)),
                p("tuned", 40.0, Some(80.0)),
            ],
            Some((100.0, 1000.0)),
        );
        assert!(svg.contains("class=\"roof\""));
        assert_eq!(svg.matches("<circle class=\"placement").count(), 2);
        let bars = roofline(&[p("baseline", 10.0, None)], Some((100.0, 1000.0)));
        assert!(bars.contains("copy ceiling 100 GB/s"));
        assert_eq!(
            bars.matches("<rect class=\"placement baseline\"").count(),
            1
        );
        let none = roofline(&[p("tuned", 10.0, Some(5.0))], None);
        assert!(none.contains("no measured ceilings"));
        assert!(roofline(&[], None).contains("not measured"));
    }
}

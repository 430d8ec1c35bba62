//! Tests of `grid-reduce`: the spellings of a one-workgroup whole-array reduction it spreads
//! over the grid (a register or a workgroup slot as the partial, helpers, `while`, a tree or
//! subgroups after the loop, max/min/sum, two sums) and the kernels it must leave alone.

use super::GridReduce;
use crate::operators::testkit::{apply, h200, own_step, resolve};

const SPEC: &str =
    "sizes(n = 5000), bind(x = input(n), y = output, u = uniform(n, 0, 0, 0)), workgroups = (1)";

const HEAD: &str = "@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: f32;
@group(0) @binding(2) var<uniform> u: vec4<u32>;
var<workgroup> part: array<f32, 128>;
";

const TREE: &str = "    workgroupBarrier();
    for (var s = 64u; s > 0u; s >>= 1u) {
        if (t < s) {
            part[t] = part[t] + part[t + s];
        }
        workgroupBarrier();
    }
    if (t == 0u) {
        y = part[0];
    }
";

fn spread(spec: &str, wgsl: &str) -> (String, String) {
    let k = resolve("GRID", spec, wgsl);
    let out = apply(&GridReduce, &k, &h200()).unwrap_or_else(|e| panic!("skipped: {e}\n{wgsl}"));
    assert_eq!(out.len(), 1);
    let p = &out[0].program;
    let checked = kf_runtime::variant::check(&k, p)
        .unwrap_or_else(|e| panic!("{}: {e}\n{}", out[0].step, p.wgsl));
    assert_eq!(checked.workgroup_size, [256, 1, 1]);
    assert_eq!(checked.stages[0].workgroup_size, k.baseline.workgroup_size);
    assert_eq!(p.entry, k.baseline.entry);
    assert_eq!(p.then.len(), 1);
    assert_eq!(p.then[0].entry, "kfg_combine");
    assert_eq!(p.then[0].dispatch, k.baseline.dispatch);
    assert_eq!(p.workspace.len(), 1);
    (own_step(&out[0]).to_owned(), p.wgsl.to_string())
}

fn skip(spec: &str, wgsl: &str) -> String {
    let k = resolve("GRID", spec, wgsl);
    match apply(&GridReduce, &k, &h200()) {
        Ok(r) => panic!("fired: {}\n{}", r[0].step, r[0].program.wgsl),
        Err(e) => e.0,
    }
}

fn sum_kernel(update: &str) -> String {
    format!(
        "{HEAD}
@compute @workgroup_size(128)
fn main(@builtin(local_invocation_id) lid: vec3<u32>) {{
    let t = lid.x;
    var acc = 0.0;
    for (var i = t; i < u.x; i += 128u) {{
        {update}
    }}
    part[t] = acc;
{TREE}}}
"
    )
}

#[test]
fn spreads_a_sum_kept_in_a_register() {
    let (step, text) = spread(SPEC, &sum_kernel("acc += x[i] * x[i];"));
    assert_eq!(step, "grid-reduce(add; float sums reassociated)");
    // The partial launch walks the whole grid with the user's update.
    assert!(
        text.contains("kfg_i = kfg_i + u32(256u * KFG_PARTS)"),
        "{text}"
    );
    assert!(
        text.contains("kfg_acc = (kfg_acc + (x[kfg_i] * x[kfg_i]));"),
        "{text}"
    );
    // The user's loop now folds the partials, and the rest is the user's.
    assert!(
        text.contains(
            "for (var kfg_j: u32 = u32(t); kfg_j < KFG_PARTS; kfg_j = kfg_j + u32(128u))"
        ),
        "{text}"
    );
    assert!(text.contains("acc = acc + kfg_part[kfg_j];"), "{text}");
    assert!(text.contains("part[t] = part[t] + part[t + s];"), "{text}");
}

/// wgebra's spelling: the partial kept in the workgroup slot, helpers for the update, the start
/// and each step of the tree, and the global id of one workgroup as the lane.
#[test]
fn spreads_a_max_kept_in_a_workgroup_slot_through_helpers() {
    let src = "@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: f32;
@group(0) @binding(2) var<uniform> u: vec4<u32>;
const WG: u32 = 128;
var<workgroup> ws: array<f32, WG>;
fn combine(a: f32, b: f32) -> f32 { return max(a, b); }
fn lowest() -> f32 { return -3.40282347E+38; }
fn step(t: u32, s: u32) {
    if t < s { ws[t] = combine(ws[t], ws[t + s]); }
    workgroupBarrier();
}
fn run(t: u32) -> f32 {
    ws[t] = lowest();
    for (var i = t; i < u.x; i += WG) {
        let v = x[i];
        ws[t] = combine(ws[t], v);
    }
    workgroupBarrier();
    step(t, 64u); step(t, 32u); step(t, 16u); step(t, 8u); step(t, 4u); step(t, 2u); step(t, 1u);
    return ws[0];
}
@compute @workgroup_size(WG, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let r = run(gid.x);
    if (gid.x == 0) { y = r; }
}
";
    let (step, text) = spread(SPEC, src);
    assert!(step.starts_with("grid-reduce(max)"), "{step}");
    assert!(text.contains("= (-3.4028235e38f);"), "{text}");
    assert!(text.contains("max(kfg_kf_acc0, "), "{text}");
    assert!(text.contains("= max(kf_acc0, kfg_part[kfg_j]);"), "{text}");
}

/// A `while` loop, a minimum from a start read from a uniform, and lane 0 folding the slots.
#[test]
fn spreads_a_while_loop_and_a_serial_fold() {
    let src = format!(
        "{HEAD}
@compute @workgroup_size(128)
fn main(@builtin(local_invocation_index) t: u32) {{
    var m = bitcast<f32>(u.y);
    var i = t;
    while (i < u.x) {{
        m = min(m, x[i]);
        i = i + 128u;
    }}
    part[t] = m;
    workgroupBarrier();
    if (t == 0u) {{
        var r = part[0];
        for (var k = 1u; k < 128u; k++) {{ r = min(r, part[k]); }}
        y = r;
    }}
}}
"
    );
    let (step, text) = spread(SPEC, &src);
    assert_eq!(step, "grid-reduce(min)");
    // The start is read from a member the spec fixes (to 0): written as the literal.
    assert!(text.contains("bitcast<f32>(0u)"), "{text}");
}

/// Two sums in one loop (a mean and a mean square) share the workspace.
#[test]
fn spreads_two_sums() {
    let src = format!(
        "{HEAD}var<workgroup> part2: array<f32, 128>;
@compute @workgroup_size(128)
fn main(@builtin(local_invocation_id) lid: vec3<u32>) {{
    let t = lid.x;
    var s1 = 0.0;
    var s2: f32;
    for (var i = t; i < u.x; i += 128u) {{
        let v = x[i];
        s1 = s1 + v;
        s2 = fma(v, v, s2);
    }}
    part[t] = s1;
    part2[t] = s2;
    workgroupBarrier();
    if (t == 0u) {{
        var a = 0.0;
        var b = 0.0;
        for (var k = 0u; k < 128u; k++) {{ a += part[k]; b += part2[k]; }}
        y = b / f32(u.x) - (a / f32(u.x)) * (a / f32(u.x));
    }}
}}
"
    );
    let (_, text) = spread(SPEC, &src);
    assert!(text.contains("kfg_part[1u * KFG_PARTS + kfg_j]"), "{text}");
    assert!(
        text.contains("kfg_part[1u * KFG_PARTS + kfg_wid.x]"),
        "{text}"
    );
}

#[test]
fn leaves_other_kernels_alone() {
    // Several workgroups already (a row per workgroup).
    let rows = "sizes(n = 5000), bind(x = input(n), y = output, u = uniform(n, 0, 0, 0)), workgroups = (4)";
    assert!(skip(rows, &sum_kernel("acc += x[i];")).contains("not one workgroup"));
    // A sum that does not start at zero would be counted once per partial.
    let src = sum_kernel("acc += x[i];").replace("var acc = 0.0;", "var acc = 1.0;");
    assert!(
        skip(SPEC, &src).contains("does not start from zero"),
        "{src}"
    );
    // The loop reads the lane besides its counter.
    let src = sum_kernel("acc += x[i] * f32(t);");
    skip(SPEC, &src);
    // A step other than the workgroup size.
    let src = sum_kernel("acc += x[i];").replace("i += 128u", "i += 64u");
    skip(SPEC, &src);
    // An update under a test.
    let src = sum_kernel("if (x[i] > 0.0) { acc += x[i]; }");
    skip(SPEC, &src);
    // The partial read after the loop other than stored at the lane's slot.
    let src = sum_kernel("acc += x[i];").replace("part[t] = acc;", "part[0] = acc;");
    skip(SPEC, &src);
    // An update reading another accumulator (`big` is then loop-carried, not an accumulator:
    // the first launch would read a workgroup's own running maximum).
    let src = sum_kernel("acc += x[i];")
        .replace("var acc = 0.0;", "var acc = 0.0;\n    var big = 0.0;")
        .replace(
            "acc += x[i];",
            "big = max(big, x[i]);\n        acc += x[i] / (big + 1.0);",
        );
    assert!(
        skip(SPEC, &src).contains("does more than update accumulators"),
        "{src}"
    );
    // A product is not spread.
    let src = sum_kernel("acc *= x[i];").replace("var acc = 0.0;", "var acc = 1.0;");
    skip(SPEC, &src);
}

/// A workgroup size set by an override (which the parameter search may move on the variant): the
/// combining loop steps by the override, not by today's value.
#[test]
fn an_override_workgroup_size_stays_the_combining_step() {
    let src = sum_kernel("acc += x[i];")
        .replace(
            "@compute @workgroup_size(128)",
            "override WG: u32 = 128u;\n@compute @workgroup_size(WG)",
        )
        .replace("i += 128u", "i += WG");
    let (_, text) = spread(SPEC, &src);
    assert!(text.contains("kfg_j = kfg_j + u32(WG)"), "{text}");
}

/// An `i32` counter cast from the lane, a bound read with `arrayLength`, an `i32` sum.
#[test]
fn spreads_an_i32_sum_to_an_array_length() {
    let spec =
        "sizes(n = 5000), bind(x = input(n, range(0, 100)), y = output(1)), workgroups = (1)";
    let src = "@group(0) @binding(0) var<storage, read> x: array<i32>;
@group(0) @binding(1) var<storage, read_write> y: array<i32>;
var<workgroup> part: array<i32, 64>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_id) lid: vec3<u32>) {
    var acc: i32 = 0;
    for (var i: i32 = i32(lid.x); i < i32(arrayLength(&x)); i += 64) {
        acc = acc + x[i];
    }
    part[lid.x] = acc;
    workgroupBarrier();
    if (lid.x == 0u) {
        var t = 0;
        for (var k = 0u; k < 64u; k++) { t += part[k]; }
        y[0] = t;
    }
}
";
    let (step, text) = spread(spec, src);
    assert_eq!(step, "grid-reduce(add)");
    assert!(
        text.contains("var kfg_i: i32 = i32(kfg_wid.x * 256u + kfg_lid.x)"),
        "{text}"
    );
    assert!(text.contains("arrayLength(&x)"), "{text}");
}

/// The lanes' partials folded across each subgroup (`subgroupMax`), the subgroups' results through
/// workgroup memory: the spelling of reductions written for adapters with subgroups.
#[test]
fn spreads_a_max_folded_by_subgroups() {
    let src = format!(
        "{HEAD}
@compute @workgroup_size(128)
fn main(@builtin(local_invocation_index) t: u32, @builtin(subgroup_invocation_id) sl: u32, @builtin(subgroup_size) sn: u32) {{
    var m = -3.0e38;
    for (var i = t; i < u.x; i += 128u) {{
        m = max(m, x[i]);
    }}
    let s = subgroupMax(m);
    if (sl == 0u) {{
        part[t / sn] = s;
    }}
    workgroupBarrier();
    if (t == 0u) {{
        var r = part[0];
        for (var k = 1u; k < 128u / sn; k++) {{ r = max(r, part[k]); }}
        y = r;
    }}
}}
"
    );
    let (step, text) = spread(SPEC, &src);
    assert_eq!(step, "grid-reduce(max)");
    assert!(text.contains("let s = subgroupMax(m);"), "{text}");
    // Folded across subgroups by another operator: left alone.
    let other = src.replace("subgroupMax(m)", "subgroupAdd(m)");
    assert!(
        skip(SPEC, &other).contains("folded by its own operator"),
        "{other}"
    );
}

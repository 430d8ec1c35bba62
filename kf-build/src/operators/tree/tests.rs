//! Tests of `subgroup-tree`: the spellings it folds alike (for/while/loop-break counters, steps
//! written out or called per stride, several arrays, lanes read several ways) and the trees it
//! must leave alone (other slots read after, strides that do not halve to 1, missing barriers).

use super::SubgroupTree;
use crate::operators::testkit::{apply, check_valid, h200, own_step, plain, resolve};

const ROWS: &str = "sizes(rows = 40, cols = 300), bind(x = input(rows * cols), y = output(rows)), workgroups = (rows)";

fn fold(wgsl: &str) -> String {
    let k = resolve("TREE", ROWS, wgsl);
    let out = apply(&SubgroupTree, &k, &h200()).unwrap_or_else(|e| panic!("skipped: {e}\n{wgsl}"));
    assert_eq!(out.len(), 1);
    check_valid(&k, &out[0]);
    format!("{}\n{}", own_step(&out[0]), out[0].program.wgsl)
}

fn skip(wgsl: &str) -> String {
    let k = resolve("TREE", ROWS, wgsl);
    match apply(&SubgroupTree, &k, &h200()) {
        Ok(r) => panic!("fired: {}\n{}", r[0].step, r[0].program.wgsl),
        Err(e) => e.0,
    }
}

const HEAD: &str = "@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
var<workgroup> part: array<f32, 128>;
";

/// The `for` spelling with a shifting counter and `+=`, the barrier after each step.
#[test]
fn folds_a_for_loop_tree() {
    let k = format!(
        "{HEAD}
@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {{
    let row = wid.x;
    let t = lid.x;
    var acc = 0.0;
    for (var c = t; c < 300u; c += 128u) {{
        acc += x[row * 300u + c];
    }}
    part[t] = acc;
    workgroupBarrier();
    for (var s = 64u; s > 0u; s >>= 1u) {{
        if (t < s) {{
            part[t] += part[t + s];
        }}
        workgroupBarrier();
    }}
    if (t == 0u) {{
        y[row] = part[0];
    }}
}}
"
    );
    let out = fold(&k);
    assert!(
        out.starts_with("subgroup-tree(add part; float sums reassociated)"),
        "{out}"
    );
    assert!(
        out.contains("kf_tree_add_f32(part[lid.x], kf_tree_sg, kf_tree_sg_lane, kf_tree_n_sg)"),
        "{out}"
    );
    assert!(!out.contains("s >>= 1u"), "the tree is gone:\n{out}");
    assert!(out.contains("y[row] = part[0];"), "{out}");
}

/// A `while` over a counter declared before it and reused by a second tree, the sum written
/// out, a `let` for the workgroup size: the counter keeps its final value.
#[test]
fn folds_two_while_trees_over_one_counter() {
    let k = format!(
        "{HEAD}
var<workgroup> mean: f32;
@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32) {{
    let n = 128u;
    var sum = 0.0;
    for (var c = li; c < 300u; c = c + n) {{ sum = sum + x[wid.x * 300u + c]; }}
    part[li] = sum;
    workgroupBarrier();
    var stride: u32 = n / 2u;
    while (stride > 0u) {{
        if (li < stride) {{
            part[li] = part[li] + part[li + stride];
        }}
        workgroupBarrier();
        stride = stride / 2u;
    }}
    if (li == 0u) {{ mean = part[0] / 300.0; }}
    workgroupBarrier();
    var sq = 0.0;
    for (var c = li; c < 300u; c = c + n) {{ let d = x[wid.x * 300u + c] - mean; sq = sq + d * d; }}
    part[li] = sq;
    workgroupBarrier();
    stride = n / 2u;
    while (stride > 0u) {{
        if (li < stride) {{
            part[li] = part[li] + part[li + stride];
        }}
        workgroupBarrier();
        stride = stride / 2u;
    }}
    if (li == 0u) {{ y[wid.x] = part[0]; }}
}}
"
    );
    let out = fold(&k);
    assert_eq!(out.matches("kf_tree_add_f32(part[li]").count(), 2, "{out}");
    assert!(
        out.contains("var stride: u32 = 0u;"),
        "the counter, used after the first tree, is declared with its final value:\n{out}"
    );
}

/// Steps written as calls of a helper, one per stride, `max` over `vec4`, the barrier first.
#[test]
fn folds_helper_steps_of_vec4_max() {
    let k = "@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
var<workgroup> sketch: array<vec4<f32>, 32>;

fn reduce_max(lane: u32, stride: u32) {
    workgroupBarrier();
    if lane < stride {
        sketch[lane] = max(sketch[lane], sketch[lane + stride]);
    }
}

@compute @workgroup_size(32, 1, 1)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    var m = vec4<f32>(-1.0e30);
    for (var c = lid.x; c < 75u; c += 32u) {
        m = max(m, vec4<f32>(x[wid.x * 300u + 4u * c], x[wid.x * 300u + 4u * c + 1u], x[wid.x * 300u + 4u * c + 2u], x[wid.x * 300u + 4u * c + 3u]));
    }
    sketch[lid.x] = m;
    workgroupBarrier();
    reduce_max(lid.x, 16u);
    reduce_max(lid.x, 8u);
    reduce_max(lid.x, 4u);
    reduce_max(lid.x, 2u);
    reduce_max(lid.x, 1u);
    if lid.x == 0u {
        let v = sketch[0];
        y[wid.x] = max(max(v.x, v.y), max(v.z, v.w));
    }
}
";
    let out = fold(k);
    assert!(
        out.starts_with("subgroup-tree(max sketch)"),
        "max is exact: {out}"
    );
    assert!(out.contains("subgroupMax(value)"), "{out}");
    assert!(!out.contains("reduce_max(lid.x, 16u)"), "{out}");
}

/// `loop { if s == 0u { break; } .. s >>= 1u; }` with the steps' operands swapped.
#[test]
fn folds_a_loop_with_a_break() {
    let k = format!(
        "{HEAD}
@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {{
    let t = lid.x;
    part[t] = x[wid.x * 300u + t];
    workgroupBarrier();
    var s = 64u;
    loop {{
        if s == 0u {{ break; }}
        if s > t {{
            part[t] = part[t + s] + part[t];
        }}
        workgroupBarrier();
        s >>= 1u;
    }}
    y[wid.x] = part[0];
}}
"
    );
    let out = fold(&k);
    assert!(out.contains("kf_tree_add_f32(part[lid.x]"), "{out}");
}

#[test]
fn leaves_trees_whose_other_slots_are_read() {
    let k = format!(
        "{HEAD}
@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {{
    let t = lid.x;
    part[t] = x[wid.x * 300u + t];
    workgroupBarrier();
    for (var s = 64u; s > 0u; s >>= 1u) {{
        if (t < s) {{ part[t] += part[t + s]; }}
        workgroupBarrier();
    }}
    if (t == 0u) {{ y[wid.x] = part[0] + part[1]; }}
}}
"
    );
    let why = skip(&k);
    assert!(why.contains("read at an index other than 0"), "{why}");
}

#[test]
fn leaves_steps_that_do_not_halve_to_one() {
    let k = format!(
        "{HEAD}
@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {{
    let t = lid.x;
    part[t] = x[wid.x * 300u + t];
    workgroupBarrier();
    for (var s = 32u; s > 0u; s >>= 1u) {{
        if (t < s) {{ part[t] += part[t + s]; }}
        workgroupBarrier();
    }}
    if (t == 0u) {{ y[wid.x] = part[0]; }}
}}
"
    );
    let why = skip(&k);
    assert!(why.contains("do not halve from 64"), "{why}");
}

#[test]
fn leaves_steps_without_barriers_between_them() {
    let k = format!(
        "{HEAD}
@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {{
    let t = lid.x;
    part[t] = x[wid.x * 300u + t];
    workgroupBarrier();
    for (var s = 64u; s > 0u; s >>= 1u) {{
        if (t < s) {{ part[t] += part[t + s]; }}
    }}
    if (t == 0u) {{ y[wid.x] = part[0]; }}
}}
"
    );
    let why = skip(&k);
    assert!(why.contains("without a barrier"), "{why}");
}

#[test]
fn needs_subgroups() {
    let k = format!(
        "{HEAD}
@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {{
    part[lid.x] = x[wid.x * 300u + lid.x];
    workgroupBarrier();
    for (var s = 64u; s > 0u; s >>= 1u) {{
        if (lid.x < s) {{ part[lid.x] += part[lid.x + s]; }}
        workgroupBarrier();
    }}
    y[wid.x] = part[0];
}}
"
    );
    let kernel = resolve("TREE", ROWS, &k);
    let why = apply(&SubgroupTree, &kernel, &plain()).unwrap_err().0;
    assert!(why.contains("no subgroup operations"), "{why}");
}

/// The lane read as `global_invocation_id.x` of a launch with one workgroup along x (rows along
/// y), the steps in a helper with the barrier first and `if (!(..)) { break; }` loops around.
#[test]
fn folds_a_tree_over_the_global_id_of_one_workgroup() {
    let k = "@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
var<workgroup> sketch: array<f32, 64>;

fn reduce_sum(index: u32, stride: u32) {
    if index < stride {
        sketch[index] += sketch[index + stride];
    }
    workgroupBarrier();
}

@compute @workgroup_size(64, 1, 1)
fn main(@builtin(global_invocation_id) invocation_id: vec3<u32>) {
    let index = invocation_id.x;
    let row = invocation_id.y;
    var s = 0.0;
    for (var i = index; i < 300u; i += 64u) {
        s += x[row * 300u + i];
    }
    sketch[index] = s;
    workgroupBarrier();
    var stride = 32u;
    loop {
        if (!(stride >= 1u)) { break; }
        reduce_sum(index, stride);
        stride = stride / 2u;
    }
    if index == 0u {
        y[row] = sketch[0];
    }
}
";
    let spec =
        "sizes(rows = 40), bind(x = input(rows * 300), y = output(rows)), workgroups = (1, rows)";
    let kernel = resolve("TREE", spec, k);
    let out = apply(&SubgroupTree, &kernel, &h200()).unwrap_or_else(|e| panic!("skipped: {e}"));
    check_valid(&kernel, &out[0]);
    let text = &out[0].program.wgsl;
    assert!(
        text.contains("@builtin(local_invocation_index) kf_tree_lane: u32"),
        "{text}"
    );
    assert!(
        text.contains("kf_tree_add_f32(sketch[kf_tree_lane]"),
        "{text}"
    );
    // Launched with several workgroups along x, the global id is not the lane.
    let spread =
        "sizes(rows = 40), bind(x = input(rows * 300), y = output(rows)), workgroups = (2, rows)";
    let kernel = resolve("TREE", spread, k);
    assert!(apply(&SubgroupTree, &kernel, &h200()).is_err());
}

/// The lane as `global_invocation_id.x % WG`, rows as `global_invocation_id.x / WG`.
#[test]
fn folds_a_tree_over_the_global_id_modulo_the_workgroup() {
    let k = format!(
        "{HEAD}
@compute @workgroup_size(128)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {{
    let t = g.x % 128u;
    let row = g.x / 128u;
    part[t] = x[row * 300u + t];
    workgroupBarrier();
    for (var s = 64u; s > 0u; s >>= 1u) {{
        if (t < s) {{ part[t] += part[t + s]; }}
        workgroupBarrier();
    }}
    if (t == 0u) {{ y[row] = part[0]; }}
}}
"
    );
    let out = fold(&k);
    assert!(out.contains("kf_tree_add_f32(part[kf_tree_lane]"), "{out}");
}

//! Tests of `subgroup-scan`: the spellings of a Hillis–Steele scan it replaces alike (a copy in a
//! temporary or the running register, strides doubled or shifted, `for`, `while` and an
//! `if`/`else`) and the scans it must leave alone (a missing barrier, strides that stop short,
//! a read below lane 0, a tree reduction).

use super::SubgroupScan;
use crate::operators::testkit::{apply, check_valid, h200, own_step, plain, resolve};

const BLOCKS: &str = "sizes(n = 3000), bind(x = input(n, range(0, 16)), y = output(n)), grid = (n)";

fn scan(wgsl: &str) -> String {
    let k = resolve("SCAN", BLOCKS, wgsl);
    let out = apply(&SubgroupScan, &k, &h200()).unwrap_or_else(|e| panic!("skipped: {e}\n{wgsl}"));
    assert_eq!(out.len(), 1);
    check_valid(&k, &out[0]);
    format!("{}\n{}", own_step(&out[0]), out[0].program.wgsl)
}

fn skip(wgsl: &str) -> String {
    let k = resolve("SCAN", BLOCKS, wgsl);
    match apply(&SubgroupScan, &k, &h200()) {
        Ok(r) => panic!("fired: {}\n{}", r[0].step, r[0].program.wgsl),
        Err(e) => e.0,
    }
}

/// brush's spelling: a copy in a temporary, the stride doubled, the scan in a helper the
/// canonical form spells out (here written in the entry point).
const TEMP: &str = "@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read_write> y: array<u32>;
const WG: u32 = 256u;
var<workgroup> bucket: array<u32, WG>;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) gi: u32) {
    let id = gid.x;
    var v = 0u;
    if (id < arrayLength(&x)) {
        v = x[id];
    }
    bucket[gi] = v;
    for (var t = 1u; t < WG; t = t * 2u) {
        workgroupBarrier();
        var temp = bucket[gi];
        if (gi >= t) {
            temp += bucket[gi - t];
        }
        workgroupBarrier();
        bucket[gi] = temp;
    }
    if (id < arrayLength(&y)) {
        y[id] = bucket[gi];
    }
}
";

#[test]
fn replaces_a_scan_through_a_temporary() {
    let out = scan(TEMP);
    assert!(out.starts_with("subgroup-scan(add bucket)\n"), "{out}");
    assert!(out.contains("subgroupInclusiveAdd(value)"), "{out}");
    assert!(
        out.contains("let kf_scan_0 = kf_scan_add_u32(bucket[gi]"),
        "{out}"
    );
    assert!(!out.contains("bucket[gi - t]"), "{out}");
    // The store that starts the scan and what reads its result are kept.
    assert!(out.contains("bucket[gi] = v;"), "{out}");
    assert!(out.contains("y[id] = bucket[gi];"), "{out}");
}

/// brush's radix-sort spelling: the running register itself, strides `1u << i` for eight trips,
/// a barrier after the loop, and the neighbour's slot read after it (every slot must hold its
/// prefix, not only one).
#[test]
fn replaces_a_scan_in_the_running_register_and_restates_it() {
    let k = "@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read_write> y: array<u32>;
var<workgroup> sums: array<u32, 256>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_id) local_id: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let base = wid.x * 256u;
    var sum = 0u;
    if (base + local_id.x < 3000u) {
        sum = x[base + local_id.x];
    }
    sums[local_id.x] = sum;
    for (var i = 0u; i < 8u; i++) {
        workgroupBarrier();
        if local_id.x >= (1u << i) {
            sum += sums[local_id.x - (1u << i)];
        }
        workgroupBarrier();
        sums[local_id.x] = sum;
    }
    workgroupBarrier();
    var before = 0u;
    if local_id.x > 0u {
        before = sums[local_id.x - 1u];
    }
    if (base + local_id.x < 3000u) {
        y[base + local_id.x] = before + sum - sum;
    }
}
";
    let out = scan(k);
    assert!(out.starts_with("subgroup-scan(add sums)\n"), "{out}");
    assert!(out.contains("sum = kf_scan_0;"), "{out}");
    assert!(out.contains("sums[local_id.x] = kf_scan_0;"), "{out}");
    assert!(out.contains("before = sums[local_id.x - 1u];"), "{out}");
}

/// f32 values, a `while` loop, an `if`/`else` that reads both slots, and a barrier at the end
/// of each trip (so the rewrite ends with one too).
#[test]
fn replaces_a_float_scan_written_with_while_and_else() {
    let k = "@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
var<workgroup> part: array<f32, 128>;

@compute @workgroup_size(128)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let lane = lid.x;
    part[lane] = select(0.0, x[gid.x], gid.x < 3000u);
    workgroupBarrier();
    var s = 1u;
    while (s < 128u) {
        var r: f32;
        if (lane >= s) {
            r = part[lane] + part[lane - s];
        } else {
            r = part[lane];
        }
        workgroupBarrier();
        part[lane] = r;
        workgroupBarrier();
        s = s << 1u;
    }
    if (gid.x < 3000u) {
        y[gid.x] = part[127u - lane] + f32(s);
    }
}
";
    let out = scan(k);
    assert!(
        out.starts_with("subgroup-scan(add part; float sums reassociated)\n"),
        "{out}"
    );
    assert!(
        out.contains("part[lid.x] = kf_scan_0;\n    workgroupBarrier();"),
        "{out}"
    );
    // The counter declared in the region and read after it is declared again, at its final value.
    assert!(out.contains("var s: u32 = 128u;"), "{out}");
}

#[test]
fn leaves_scans_that_are_not_whole_alone() {
    // No barrier between the reads of other lanes' slots and the store: a race.
    let racy = TEMP.replacen(
        "        workgroupBarrier();\n        bucket[gi] = temp;",
        "        bucket[gi] = temp;",
        1,
    );
    assert!(
        skip(&racy).contains("no barrier after reads"),
        "{}",
        skip(&racy)
    );
    // Strides that stop at WG / 4: no lane holds its whole prefix.
    let short = TEMP.replacen("t < WG;", "t < WG / 4u;", 1);
    assert!(skip(&short).contains("never holds"), "{}", skip(&short));
    // A read below the lane without an `if` that proves the slot exists.
    let unguarded = TEMP.replacen(
        "        if (gi >= t) {\n            temp += bucket[gi - t];\n        }",
        "        temp += bucket[gi - t];",
        1,
    );
    skip(&unguarded);
    // A guard too weak for the stride.
    let weak = TEMP.replacen("if (gi >= t)", "if (gi >= 1u)", 1);
    skip(&weak);
    // No barrier between the first store and the first read of another lane's slot.
    let unpublished = TEMP.replacen(
        "    for (var t = 1u; t < WG; t = t * 2u) {\n        workgroupBarrier();\n        var temp",
        "    for (var t = 1u; t < WG; t = t * 2u) {\n        var temp",
        1,
    );
    skip(&unpublished);
}

#[test]
fn leaves_a_tree_reduction_and_adapters_without_subgroups_alone() {
    let tree = "@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
var<workgroup> part: array<f32, 128>;

@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let t = lid.x;
    part[t] = x[min(wid.x * 128u + t, 2999u)];
    workgroupBarrier();
    for (var s = 64u; s > 0u; s >>= 1u) {
        if (t < s) {
            part[t] += part[t + s];
        }
        workgroupBarrier();
    }
    if (t == 0u) {
        y[wid.x] = part[0];
    }
}
";
    skip(tree);
    let k = resolve("SCAN", BLOCKS, TEMP);
    let why = apply(&SubgroupScan, &k, &plain()).unwrap_err().0;
    assert!(why.contains("no subgroup operations"), "{why}");
}

//! Tests of the canonical form, and the metamorphic test of every operator: respellings of the
//! corpus (`super::super::respell`) must make the same operators fire as the original.

use super::*;
use crate::operators::respell::{self, Spelling};
use crate::operators::testkit::{self, check_valid};

const ATTR: &str = "sizes(n = 4, d = 100), bind(x = input(n * d), y = output(n), dims = uniform(n, d)), grid = (n)";

/// The text of a rewrite's entry point onwards, comment lines left out (an inlined helper leaves
/// `// name(..), inlined` behind).
fn entry_code(r: &Rewrite) -> String {
    let text = r.program.wgsl.to_string();
    text[text.find("@compute").expect("an entry point")..]
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A row kernel over `x` (rows of `dims.d`, one per invocation, guarded) whose body after the
/// guard is `body`.
fn row_kernel(body: &str) -> kf_runtime::resolve::ResolvedKernel {
    row_kernel_with(ATTR, body)
}

/// [`row_kernel`] under the spec `spec`.
fn row_kernel_with(spec: &str, body: &str) -> kf_runtime::resolve::ResolvedKernel {
    let wgsl = format!(
        "struct Dims {{ n: u32, d: u32 }}
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> dims: Dims;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
    let r = gid.x;
    if (r >= dims.n) {{ return; }}
{body}
}}
"
    );
    testkit::resolve("k.wgsl", spec, &wgsl)
}

/// `kernel`'s canonical form, checked valid when there is one.
fn canonical_of(k: &kf_runtime::resolve::ResolvedKernel) -> Option<Rewrite> {
    let target = testkit::lavapipe();
    let r = canonicalise(&Subject {
        kernel: k,
        program: &k.baseline,
        target: &target,
    });
    if let Some(r) = &r {
        check_valid(k, r);
    }
    r
}

/// A running maximum over a row with `body` as the loop's update of `m` from `v`.
fn kernel_with(body: &str) -> kf_runtime::resolve::ResolvedKernel {
    row_kernel(&format!(
        "    var m = x[r * dims.d];
    for (var j = 1u; j < dims.d; j++) {{
        let v = x[r * dims.d + j];
{body}
    }}
    y[r] = m;"
    ))
}

fn canonical(body: &str) -> Option<Rewrite> {
    canonical_of(&kernel_with(body))
}

#[test]
fn an_if_that_keeps_the_larger_value_becomes_max() {
    for (body, want, step) in [
        ("if (v > m) { m = v; }", "m = max(m, v);", "canon(max)"),
        ("if (v >= m) {\n m = v;\n }", "m = max(m, v);", "canon(max)"),
        ("if m < v { m = v; }", "m = max(m, v);", "canon(max)"),
        ("if (v < m) { m = v; }", "m = min(m, v);", "canon(min)"),
        ("if (m > v) { m = v; }", "m = min(m, v);", "canon(min)"),
        (
            "if (x[r * dims.d + j] > m) { m = x[r * dims.d + j]; }",
            "m = max(m, x[",
            // The loop's `let v` is read by nothing.
            "canon(max, unused-let)",
        ),
        ("m = select(m, v, v > m);", "m = max(m, v);", "canon(max)"),
        ("m = select(m, v, m > v);", "m = min(m, v);", "canon(min)"),
    ] {
        let r = canonical(body).unwrap_or_else(|| panic!("`{body}` was not normalised"));
        assert!(r.program.wgsl.contains(want), "{body}:\n{}", r.program.wgsl);
        assert!(!r.program.wgsl.contains("if (v"), "{body}");
        assert_eq!(r.step, step);
    }
}

#[test]
fn what_is_not_an_extremum_is_left_alone() {
    for body in [
        // Another value stored than the one compared.
        "if (v > m) { m = v * 2.0; }",
        // Two statements.
        "if (v > m) { m = v; y[0] = v; }",
        // An `else`.
        "if (v > m) { m = v; } else { m = m + 1.0; }",
        // Compared with something else.
        "if (v > 0.0) { m = v; }",
        // `select` keeping the other value.
        "m = select(v, m, v > m);",
        // Already canonical.
        "m = max(m, v);",
    ] {
        assert!(canonical(body).is_none(), "`{body}` was normalised");
    }
}

#[test]
fn the_canonical_form_is_canonical() {
    let target = testkit::lavapipe();
    let mut normalised = 0;
    for k in testkit::corpus() {
        let subject = Subject {
            kernel: &k.kernel,
            program: &k.kernel.baseline,
            target: &target,
        };
        let Some(r) = canonicalise(&subject) else {
            continue;
        };
        normalised += 1;
        check_valid(&k.kernel, &r);
        let again = canonicalise(&Subject {
            program: &r.program,
            ..subject
        });
        assert!(again.is_none(), "{}: {:?}", k.name, again.map(|a| a.step));
    }
    assert!(normalised >= 1);
}

/// Which operators fire on `kernel` (through the canonical form, as the search applies them).
fn fired(kernel: &kf_runtime::resolve::ResolvedKernel) -> Vec<&'static str> {
    let target = testkit::lavapipe();
    crate::operators::all()
        .iter()
        .filter(|op| testkit::apply(op.as_ref(), kernel, &target).is_ok())
        .map(|op| op.name())
        .collect()
}

#[test]
fn respelled_kernels_make_the_same_operators_fire() {
    let corpus = testkit::corpus();
    let spellings: Vec<Option<Spelling>> = Spelling::ALL
        .iter()
        .copied()
        .map(Some)
        .chain([None])
        .collect();
    let mut table = format!("{:<28}", "kernel \\ spelling");
    for &s in &spellings {
        table.push_str(&format!(" {:>10}", respell::name(s)));
    }
    table.push('\n');
    let mut failures = Vec::new();
    let mut changed = vec![0usize; spellings.len()];
    for k in &corpus {
        let original = fired(&k.kernel);
        let text = k.kernel.baseline.wgsl.to_string();
        let entry = k.kernel.baseline.entry.to_string();
        table.push_str(&format!("{:<28}", k.name));
        for (i, &s) in spellings.iter().enumerate() {
            let name = respell::name(s);
            let respelled = respell::respell(s, &text, &entry);
            if respelled == text {
                table.push_str(&format!(" {:>10}", "-"));
                continue;
            }
            changed[i] += 1;
            let kernel = testkit::resolve(&k.name, &k.spec, &respelled);
            let now = fired(&kernel);
            if now == original {
                table.push_str(&format!(" {:>10}", "same"));
            } else {
                table.push_str(&format!(" {:>10}", "DIFFERENT"));
                failures.push(format!(
                    "{} spelled `{name}`: {original:?} fire on the original, {now:?} on\n{respelled}",
                    k.name
                ));
            }
        }
        table.push('\n');
    }
    eprintln!("operators that fire, original against each spelling:\n{table}");
    for (&s, n) in spellings.iter().zip(&changed) {
        assert!(
            *n >= 2,
            "spelling `{}` changed only {n} corpus kernels",
            respell::name(s)
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn a_pair_of_selects_becomes_the_arg_reduction_if() {
    let pair = |update: &str| {
        let wgsl = format!(
            "struct Dims {{ n: u32, d: u32 }}
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> dims: Dims;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
    let r = gid.x;
    if (r >= dims.n) {{ return; }}
    var m = x[r * dims.d];
    var k = 0u;
    for (var j = 1u; j < dims.d; j++) {{
        let v = x[r * dims.d + j];
        {update}
    }}
    y[r] = f32(k) + m;
}}
"
        );
        let k = testkit::resolve("k.wgsl", ATTR, &wgsl);
        let target = testkit::lavapipe();
        let r = canonicalise(&Subject {
            kernel: &k,
            program: &k.baseline,
            target: &target,
        });
        if let Some(r) = &r {
            check_valid(&k, r);
        }
        r.map(|r| (r.step, r.program.wgsl.to_string()))
    };
    for (update, want) in [
        (
            "k = select(k, j, v > m);\n        m = select(m, v, v > m);",
            "if (v > m) { m = v; k = j; }",
        ),
        (
            "let take = m <= v;\n        m = select(m, v, take);\n        k = select(k, j, take);",
            "if (take) { m = v; k = j; }",
        ),
        (
            "let take = v < m;\n        k = select(k, j, take); // index first\n        m = select(m, v, take);",
            "if (take) { m = v; k = j; }",
        ),
    ] {
        let (step, text) = pair(update).unwrap_or_else(|| panic!("`{update}` was not normalised"));
        assert_eq!(step, "canon(arg-if)");
        assert!(text.contains(want), "{update}:\n{text}");
    }
    // The value first, each with its own test: not an arg-reduction; the value's select alone
    // becomes a `max`, the index's stays.
    let (step, text) = pair("m = select(m, v, v > m);\n        k = select(k, j, v > m);").unwrap();
    assert_eq!(step, "canon(max)");
    assert!(text.contains("k = select(k, j, v > m);"), "{text}");
}

/// A row sum over `x` spelled with `body` (which declares and runs the loop over `j`), and what the
/// canonical form makes of it.
fn canonical_loop(body: &str) -> (kf_runtime::resolve::ResolvedKernel, Option<Rewrite>) {
    let k = row_kernel(&format!("    var acc = 0.0;\n{body}\n    y[r] = acc;"));
    let r = canonical_of(&k);
    (k, r)
}

#[test]
fn every_counted_loop_spelling_becomes_a_for_loop() {
    let header = "for (var j: u32 = 0u; j < dims.d; j++)";
    for (body, want) in [
        (
            "var j = 0u;\n    while (j < dims.d) { acc += x[r * dims.d + j]; j++; }",
            header,
        ),
        (
            "var j: u32 = 0u;\n    while j < dims.d {\n        acc = acc + x[r * dims.d + j];\n        j += 1u;\n    }",
            "for (var j: u32 = 0u; j < dims.d; j += 1u)",
        ),
        (
            "var j = 0u;\n    loop {\n        if (j >= dims.d) { break; }\n        acc += x[r * dims.d + j];\n        continuing { j++; }\n    }",
            header,
        ),
        (
            "var j = 0u;\n    loop {\n        if j >= dims.d - 1u { break; }\n        acc += x[r * dims.d + j];\n        j = j + 1u;\n    }",
            "for (var j: u32 = 0u; j < (dims.d - 1u); j = j + 1u)",
        ),
        // A declaration without a value, other declarations and a local assignment in between.
        (
            "var j: u32;\n    var k = 2.0;\n    acc = 1.0;\n    while (j < dims.d) { acc += k * x[r * dims.d + j]; j++; }",
            "for (var j: u32 = u32(); j < dims.d; j++)",
        ),
        // A non-constant start.
        (
            "var j = r % 3u;\n    while (j < dims.d) { acc += x[r * dims.d + j]; j += 2u; }",
            "for (var j: u32 = r % 3u; j < dims.d; j += 2u)",
        ),
    ] {
        let (_, r) = canonical_loop(body);
        let r = r.unwrap_or_else(|| panic!("`{body}` was not normalised"));
        let text = r.program.wgsl.to_string();
        assert!(text.contains(want), "{body}:\n{text}");
        assert!(
            !text.contains("while") && !text.contains("loop {"),
            "{text}"
        );
        assert!(
            !text.contains("break") && !text.contains("continuing"),
            "{text}"
        );
        assert_eq!(text.matches("var j").count(), 1, "{text}");
        // A counter declared without a value is first given its zero.
        let want_step = if body.starts_with("var j: u32;") {
            "canon(for, zero-init)"
        } else {
            "canon(for)"
        };
        assert_eq!(r.step, want_step);
    }
}

#[test]
fn a_counter_reset_for_a_second_loop_gives_each_loop_its_own() {
    let (_, r) = canonical_loop(
        "var i = 0u;
    while (i < dims.d) { acc += x[r * dims.d + i]; i++; }
    i = 1u;
    while (i < dims.d) { acc -= x[r * dims.d + i]; i += 1u; }",
    );
    let text = r.expect("normalised").program.wgsl.to_string();
    assert!(
        text.contains("for (var i: u32 = 0u; i < dims.d; i++)")
            && text.contains("for (var i: u32 = 1u; i < dims.d; i += 1u)"),
        "{text}"
    );
    assert!(!text.contains("i = 1u;"), "{text}");
}

#[test]
fn loops_whose_counter_matters_elsewhere_stay_as_written() {
    for body in [
        // Read after the loop.
        "var j = 0u;\n    while (j < dims.d) { acc += x[r * dims.d + j]; j++; }\n    acc += f32(j);",
        // A `continue` would skip the update.
        "var j = 0u;\n    while (j < dims.d) { if (acc > 5.0) { j++; continue; } acc += x[j]; j++; }",
        // The update is not last.
        "var j = 0u;\n    while (j < dims.d) { j++; acc += x[r * dims.d + j - 1u]; }",
        // The start is read from a variable assigned between the declaration and the loop.
        "var s = 1u;\n    var j = s;\n    s = 2u;\n    while (j < dims.d) { acc += x[j] * f32(s); j++; }",
        // A statement before the test runs once more than the body.
        "var j = 0u;\n    loop {\n        acc += 1.0;\n        if (j >= dims.d) { break; }\n        acc += x[j];\n        continuing { j++; }\n    }",
        // Declared outside the block of the loop.
        "var j = 0u;\n    if (r > 0u) { while (j < dims.d) { acc += x[j]; j++; } }",
    ] {
        let (_, r) = canonical_loop(body);
        if let Some(r) = r {
            let text = r.program.wgsl.to_string();
            assert!(!text.contains("for (var j"), "`{body}` became\n{text}");
        }
    }
}

#[test]
fn unroll_and_hoist_fire_on_every_loop_spelling() {
    for body in [
        "var j = 0u;\n    while (j < dims.d) { acc += x[r * dims.d + j] * x[dims.n]; j++; }",
        "var j = 0u;\n    loop {\n        if (j >= dims.d) { break; }\n        acc += x[r * dims.d + j] * x[dims.n];\n        continuing { j++; }\n    }",
    ] {
        let (k, _) = canonical_loop(body);
        let now = fired(&k);
        for op in ["unroll", "hoist"] {
            assert!(
                now.contains(&op),
                "{op} does not fire on\n{body}\n({now:?})"
            );
        }
        // Without the canonical form, the loop operators do not see the loop.
        let target = testkit::lavapipe();
        let subject = Subject {
            kernel: &k,
            program: &k.baseline,
            target: &target,
        };
        let unroll = crate::operators::all()
            .into_iter()
            .find(|op| op.name() == "unroll")
            .unwrap();
        assert!(unroll.apply(&subject).is_err(), "{body}");
    }
}

#[test]
fn a_continue_guard_becomes_a_wrapping_if() {
    let (k, r) = canonical_loop(
        "for (var j = 0u; j < 3u; j++) {
        let c = r + j;
        if (c < 1u || c > dims.n) {
            continue;
        }
        acc += x[(c - 1u) * dims.d];
    }",
    );
    let r = r.expect("normalised");
    let text = r.program.wgsl.to_string();
    assert!(!text.contains("continue"), "{text}");
    assert!(text.contains("if (!((c < 1u || c > dims.n))) {"), "{text}");
    assert_eq!(r.step, "canon(continue-if)");
    // The loop now unrolls fully.
    assert!(fired(&k).contains(&"unroll"), "{text}");
    // A `continue` in a nested `if`, or followed by nothing, stays.
    for body in [
        "for (var j = 0u; j < 3u; j++) { if (j > 0u) { if (acc > 1.0) { continue; } acc += 1.0; } acc += x[j]; }",
        "for (var j = 0u; j < 3u; j++) { acc += x[j]; if (acc > 1.0) { continue; } }",
        "for (var j = 0u; j < 3u; j++) { if (acc > 1.0) { continue; } else { acc += 2.0; } acc += x[j]; }",
    ] {
        let (_, r) = canonical_loop(body);
        assert!(r.is_none(), "`{body}` became\n{}", r.unwrap().program.wgsl);
    }
}

#[test]
fn a_continue_guard_in_a_helper_function_becomes_a_wrapping_if() {
    let wgsl = "struct Dims { n: u32, d: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> dims: Dims;

fn taps(r: u32) -> f32 {
    var acc = 0.0;
    for (var j = 0u; j < 3u; j++) {
        let c = r + j;
        if (c < 1u || c > dims.n) {
            continue;
        }
        acc += x[(c - 1u) * dims.d];
    }
    return acc;
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let r = gid.x;
    if (r >= dims.n) { return; }
    y[r] = taps(r);
}
";
    let k = testkit::resolve("k.wgsl", ATTR, wgsl);
    let r = canonical_of(&k).expect("normalised");
    let text = r.program.wgsl.to_string();
    assert!(!text.contains("continue"), "{text}");
    assert!(text.contains("if (!((c < 1u || c > dims.n))) {"), "{text}");
    // The helper is also inlined (its names renamed apart), and the copy normalised in turn.
    assert!(text.contains("if (!((kf"), "{text}");
    assert_eq!(r.step, "canon(continue-if ×2, inline-fn)");
    assert!(fired(&k).contains(&"unroll"), "{text}");
}

#[test]
fn an_index_built_from_workgroup_and_local_ids_is_the_global_id() {
    let kernel = |params: &str, index: &str, wg: &str| {
        let wgsl = format!(
            "struct P {{ n: u32 }}
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> p: P;

@compute @workgroup_size({wg})
fn main({params}) {{
    let i = {index};
    if (i < p.n) {{ y[i] = x[i] * 2.0; }}
}}
"
        );
        testkit::resolve(
            "ids.wgsl",
            "sizes(n = 100), bind(x = input(n), y = output(n), p = uniform(n)), grid = (n)",
            &wgsl,
        )
    };
    let ids = "@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>";
    for (params, index) in [
        (ids, "wid.x * 64u + lid.x"),
        (ids, "lid.x + 64u * wid.x"),
        (
            "@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32",
            "wid.x * 64u + li",
        ),
    ] {
        let r = canonical_of(&kernel(params, index, "64")).expect("canonicalised");
        assert!(r.step.contains("global-id"), "{index}: {}", r.step);
        assert!(
            r.program.wgsl.contains("let i = kf_global_id.x;")
                && r.program
                    .wgsl
                    .contains("@builtin(global_invocation_id) kf_global_id: vec3<u32>"),
            "{index}:\n{}",
            r.program.wgsl
        );
    }
    // An existing global id parameter is reused.
    let r = canonical_of(&kernel(
        &format!("{ids}, @builtin(global_invocation_id) g: vec3<u32>"),
        "wid.x * 64u + lid.x + 0u * g.x",
        "64",
    ));
    if let Some(r) = r {
        assert!(
            !r.program.wgsl.contains("kf_global_id"),
            "{}",
            r.program.wgsl
        );
    }
    // Another multiplier than the workgroup size is another value; so is the local index in a
    // two-dimensional workgroup.
    for (params, index, wg) in [
        (ids, "wid.x * 32u + lid.x", "64"),
        (
            "@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32",
            "wid.x * 64u + li",
            "64, 2",
        ),
    ] {
        let r = canonical_of(&kernel(params, index, wg));
        assert!(
            r.is_none_or(|r| !r.step.contains("global-id")),
            "{index} with {wg}"
        );
    }
}

#[test]
fn every_call_of_several_helpers_with_loops_is_inlined() {
    // Four helpers with loops written as `while`, each called once: one is spelled out per round,
    // and their loops become `for` loops after that; every call must be gone in the end.
    let wgsl = "struct Dims { n: u32, d: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> dims: Dims;

fn row_sum(r: u32) -> f32 {
    var s = 0.0;
    var j = 0u;
    while (j < dims.d) { s += x[r * dims.d + j]; j++; }
    return s;
}
fn row_max(r: u32) -> f32 {
    var m = -1e30;
    var j = 0u;
    while (j < dims.d) { m = max(m, x[r * dims.d + j]); j++; }
    return m;
}
fn row_sq(r: u32) -> f32 {
    var s = 0.0;
    var j = 0u;
    while (j < dims.d) { s += x[r * dims.d + j] * x[r * dims.d + j]; j++; }
    return s;
}
fn row_abs(r: u32) -> f32 {
    var s = 0.0;
    var j = 0u;
    while (j < dims.d) { s += abs(x[r * dims.d + j]); j++; }
    return s;
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let r = gid.x;
    if (r >= dims.n) { return; }
    let a = row_sum(r);
    let b = row_max(r);
    let c = row_sq(r);
    let e = row_abs(r);
    y[r] = a + b + c + e;
}
";
    let k = testkit::resolve("k.wgsl", ATTR, wgsl);
    let r = canonical_of(&k).expect("normalised");
    let text = r.program.wgsl.to_string();
    let entry = &text[text.find("@compute").unwrap()..];
    for helper in ["row_sum(r)", "row_max(r)", "row_sq(r)", "row_abs(r)"] {
        assert!(!entry.contains(helper), "{helper} still called in\n{entry}");
    }
    assert!(!entry.contains("while"), "{entry}");
    assert!(r.step.contains("inline-fn ×4"), "{}", r.step);
}

/// A row kernel launched by workgroups, `@workgroup_size(ws)`, whose entry point takes
/// `params` and runs `body`.
fn by_workgroups(
    ws: &str,
    params: &str,
    body: &str,
    launch: &str,
) -> kf_runtime::resolve::ResolvedKernel {
    let wgsl = format!(
        "struct Dims {{ n: u32, d: u32 }}
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> dims: Dims;

{shared}
@compute @workgroup_size({ws})
fn main({params}) {{
{body}
}}
",
        shared = if body.contains("tile") {
            "var<workgroup> tile: array<f32, 64>;\n"
        } else {
            ""
        }
    );
    let spec = format!(
        "sizes(n = 70, d = 100), bind(x = input(n * d), y = output(n), dims = uniform(n, d)), {launch}"
    );
    testkit::resolve("k.wgsl", &spec, &wgsl)
}

const ROW_SUM: &str = "    if (row >= dims.n) { return; }
    var s = 0.0;
    for (var c = 0u; c < dims.d; c++) { s += x[row * dims.d + c]; }
    y[row] = s;";

#[test]
fn workgroup_and_local_ids_read_apart_become_the_global_id() {
    // A row per workgroup of one invocation.
    let k = by_workgroups(
        "1",
        "@builtin(workgroup_id) wid: vec3<u32>",
        &format!("    let row = wid.x;\n{ROW_SUM}"),
        "workgroups = (n)",
    );
    let r = canonical_of(&k).expect("canonical");
    let text = r.program.wgsl.to_string();
    assert!(r.step.contains("lone-ids"), "{}", r.step);
    assert!(text.contains("let row = kf_global_id.x;"), "{text}");
    // The packed-grid guard and the row apart, in a workgroup of 64.
    let k = by_workgroups(
        "64",
        "@builtin(workgroup_id) b: vec3<u32>, @builtin(local_invocation_id) t: vec3<u32>",
        &format!(
            "    if (b.x > (dims.n + 63u) / 64u) {{ return; }}\n    let q = b.x;\n    let row = q * 64u + t.x;\n{ROW_SUM}"
        ),
        "workgroups = ((n + 63) / 64)",
    );
    let r = canonical_of(&k).expect("canonical");
    let text = r.program.wgsl.to_string();
    assert!(
        !text.contains("b.x") && !text.contains("t.x"),
        "{}\n{text}",
        r.step
    );
    // Invocations that share workgroup memory keep their ids.
    let k = by_workgroups(
        "64",
        "@builtin(workgroup_id) b: vec3<u32>, @builtin(local_invocation_id) t: vec3<u32>",
        "    tile[t.x] = x[b.x];\n    workgroupBarrier();\n    y[b.x] = tile[0];",
        "workgroups = (n)",
    );
    assert!(canonical_of(&k).is_none());
}

#[test]
fn one_element_arrays_become_registers_and_shifts_of_ids_divisions() {
    // TVM's spelling: a register as `array<f32, 1>`, a fused id split by `>>` and `&`.
    let k = by_workgroups(
        "64",
        "@builtin(global_invocation_id) gid: vec3<u32>",
        "    let fused : i32 = i32(gid.x);
    let row = u32(fused >> 1) ;
    if (row >= dims.n) { return; }
    var s_local : array<f32, 1>;
    s_local[0] = 0.0;
    for (var c = 0u; c < dims.d; c++) { s_local[0] = s_local[0] + x[row * dims.d + c] * f32(fused & 1); }
    y[row] = s_local[0];",
        "grid = (2 * n)",
    );
    let r = canonical_of(&k).expect("canonical");
    let text = r.program.wgsl.to_string();
    assert!(
        r.step.contains("array-1") && r.step.contains("shift-div"),
        "{}",
        r.step
    );
    assert!(text.contains("var s_local : f32 = f32();"), "{text}");
    assert!(!text.contains("s_local[0]"), "{text}");
    assert!(
        text.contains("((fused) / 2)") && text.contains("((fused) % 2)"),
        "{text}"
    );
    // A shift of a value that may be negative is not a division, and an array read whole or at
    // another index stays an array.
    let k = by_workgroups(
        "64",
        "@builtin(global_invocation_id) gid: vec3<u32>",
        "    let row = gid.x;
    if (row >= dims.n) { return; }
    var s : array<f32, 1> = array<f32, 1>(0.0);
    let t = s;
    let m : i32 = i32(x[row]) >> 1;
    y[row] = t[0] + f32(m);",
        "grid = (n)",
    );
    assert!(canonical_of(&k).is_none());
}

#[test]
fn unrolled_terms_summed_in_one_update_are_split_and_rolled_up() {
    let spec = "sizes(n = 4, d = 100), bind(x = input(n * d), y = output(n), dims = uniform(n, d)), grid = (n), constraints(d % 4 == 0)";
    let wgsl = |body: &str| {
        format!(
            "    var s = 0.0;
    for (var k = 0u; k < dims.d; k += 4u) {{
{body}
    }}
    y[r] = s;"
        )
    };
    let base = "        let x0 = x[r * dims.d + k];\n        let x1 = x[r * dims.d + k + 1u];\n        let x2 = x[r * dims.d + k + 2u];\n        let x3 = x[r * dims.d + k + 3u];\n";
    let k = row_kernel_with(
        spec,
        &wgsl(&format!(
            "{base}        s += x0 * x0 + x1 * x1 + x2 * x2 + x3 * x3;"
        )),
    );
    let r = canonical_of(&k).expect("canonical");
    assert!(
        r.step.contains("reassociate-sum") && r.step.contains("reroll"),
        "{}",
        r.step
    );
    let text = r.program.wgsl.to_string();
    assert!(text.contains("k += 1"), "{text}");
    assert_eq!(text.matches("s = s + (").count(), 1, "{text}");
    // Terms that are not the first moved by one step each, or fewer terms than the step, stay.
    for body in [
        format!("{base}        s += x0 * x0 + x1 * x1 + x3 * x3 + x2 * x2;"),
        format!("{base}        s += x0 * x0 + x1 * x1 + x2 * x2;"),
    ] {
        let k = row_kernel_with(spec, &wgsl(&body));
        if let Some(r) = canonical_of(&k) {
            assert!(!r.step.contains("reassociate-sum"), "{}", r.step);
        }
    }
}

const FLAT_IDS: &str =
    "@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>";

#[test]
fn a_flat_id_over_a_square_workgroup_becomes_the_id_of_a_flat_one() {
    // burn's ABSOLUTE_POS, its factors and terms in another order, over (8, 8, 4).
    let flat = "    let row = g.x + 8u * nw.x * g.y + (nw.y * 8u) * g.z * (8u * nw.x);";
    let k = by_workgroups(
        "8, 8, 4",
        FLAT_IDS,
        &format!("{flat}\n{ROW_SUM}"),
        "workgroups = ((n + 255) / 256)",
    );
    let r = canonical_of(&k).expect("canonical");
    let text = r.program.wgsl.to_string();
    assert!(r.step.contains("flat-workgroup"), "{}", r.step);
    assert!(
        text.contains("@workgroup_size(256)") && text.contains("let row = g.x;"),
        "{text}"
    );
    let refused = |ws: &str, body: String, launch: &str| {
        let k = by_workgroups(ws, FLAT_IDS, &body, launch);
        let step = canonical_of(&k).map(|r| r.step).unwrap_or_default();
        assert!(!step.contains("flat-workgroup"), "{step}\n{body}");
    };
    // An id read besides the flat one.
    refused(
        "8, 8, 4",
        format!("{flat}\n    if (g.y == 3u) {{ return; }}\n{ROW_SUM}"),
        "workgroups = ((n + 255) / 256)",
    );
    // A launch two workgroups high, or counted in invocations.
    refused(
        "8, 8, 4",
        format!("{flat}\n{ROW_SUM}"),
        "workgroups = ((n + 255) / 256, 2)",
    );
    refused("8, 8, 4", format!("{flat}\n{ROW_SUM}"), "grid = (n)");
    // Not the linearisation: the z term missing over a workgroup four deep.
    refused(
        "8, 8, 4",
        format!("    let row = g.x + 8u * nw.x * g.y;\n{ROW_SUM}"),
        "workgroups = ((n + 255) / 256)",
    );
}

#[test]
fn a_workgroup_major_flat_id_becomes_the_id_of_a_flat_workgroup() {
    // Each workgroup's invocations numbered in a run of their own, over a square workgroup,
    // with the y term of a launch that could be two-dimensional: by the flat local index, and
    // by the local id's components, the group's offset in a `let` read nowhere else.
    let params = "@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wg: vec3<u32>, \
                  @builtin(num_workgroups) nw: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>";
    for flat in [
        "    let start = wg.x * 64u;\n    let row = (wg.y * nw.x * 64u) + start + li;",
        "    let row = lid.x + 8u * lid.y + 64u * wg.x;",
    ] {
        let k = by_workgroups(
            "8, 8, 1",
            params,
            &format!("{flat}\n{ROW_SUM}"),
            "workgroups = ((n + 63) / 64)",
        );
        let r = canonical_of(&k).expect("canonical");
        let text = r.program.wgsl.to_string();
        assert!(r.step.contains("flat-workgroup"), "{flat}: {}", r.step);
        assert!(
            text.contains("@workgroup_size(64)")
                && text.contains("let row = kf_global_id.x;")
                && !text.contains("start"),
            "{text}"
        );
        // Two workgroups high, the y term is not zero.
        let k = by_workgroups(
            "8, 8, 1",
            params,
            &format!("{flat}\n{ROW_SUM}"),
            "workgroups = ((n + 127) / 128, 2)",
        );
        let step = canonical_of(&k).map(|r| r.step).unwrap_or_default();
        assert!(!step.contains("flat-workgroup"), "{step}");
    }
    // The local ids in the other order are not a numbering of the workgroup's invocations.
    let k = by_workgroups(
        "8, 8, 1",
        params,
        &format!("    let row = lid.y + 8u * lid.x + 64u * wg.x + 1u;\n{ROW_SUM}"),
        "workgroups = ((n + 63) / 64)",
    );
    let step = canonical_of(&k).map(|r| r.step).unwrap_or_default();
    assert!(!step.contains("flat-workgroup"), "{step}");
}

#[test]
fn a_variable_declared_with_its_only_value_becomes_a_let() {
    // webgpu-blas's sizes, read as `var K: u32 = u32(meta.K);` and never assigned again, with
    // and without the type, then used as a loop bound.
    for decl in ["var len: u32 = dims.d;", "var   len = dims.d;"] {
        let k = row_kernel(&format!(
            "    {decl}
    var s = 0.0;
    for (var c = 0u; c < len; c++) {{ s += x[r * dims.d + c]; }}
    y[r] = s;"
        ));
        let r = canonical_of(&k).expect("canonical");
        let text = r.program.wgsl.to_string();
        assert!(r.step.contains("var-let"), "{}", r.step);
        assert!(
            text.contains("let") && !text.contains("var len") && !text.contains("var   len"),
            "{text}"
        );
        // The accumulator and the counter are stored again: they stay variables.
        assert!(text.contains("var s = 0.0;"), "{text}");
    }
    // Assigned again after the declaration: a variable.
    let k = row_kernel(
        "    var len: u32 = dims.d;
    if (r > 2u) { len = 1u; }
    y[r] = f32(len);",
    );
    let step = canonical_of(&k).map(|r| r.step).unwrap_or_default();
    assert!(!step.contains("var-let"), "{step}");
}

#[test]
fn a_variable_assigned_once_becomes_a_let() {
    // burn's temporaries, declared first and assigned later.
    let k = row_kernel(
        "    var len: u32;
    var past: bool;
    len = dims.d;
    past = len == 0u;
    if past { return; }
    var s = 0.0;
    for (var c = 0u; c < len; c++) { s += x[r * dims.d + c]; }
    y[r] = s;",
    );
    let r = canonical_of(&k).expect("canonical");
    let text = r.program.wgsl.to_string();
    assert!(r.step.contains("var-let"), "{}", r.step);
    assert!(
        text.contains("let len: u32 = dims.d;")
            && text.contains("let past: bool = len == 0u;")
            && !text.contains("var len")
            && !text.contains("var past"),
        "{text}"
    );
    // Stored under a condition and read after it, read before the store, or stored twice: the
    // variable holds other values at some reads.
    for body in [
        "    var t: f32;\n    if (r > 1u) { t = 1.0; }\n    y[r] = t;",
        "    var t: f32;\n    y[r] = t;\n    t = 2.0;\n    y[r] = y[r] + t;",
        "    var t: f32 = 0.0;\n    t = 1.0;\n    t = t + x[r];\n    y[r] = t;",
    ] {
        let step = canonical_of(&row_kernel(body))
            .map(|r| r.step)
            .unwrap_or_default();
        assert!(!step.contains("var-let"), "{step}\n{body}");
    }
}

#[test]
fn index_helpers_with_lets_a_store_helper_and_an_integer_dot_are_spelled_out() {
    // tfjs's helpers: coordinates from a flat index through `let`s, the output index as a `dot`,
    // the store in a helper without a result.
    let wgsl = "struct Dims { n: u32, d: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> dims: Dims;

fn coords_of(index: i32) -> vec2<i32> {
    let r = index / 1;
    let c = index - r;
    return vec2<i32>(r, c);
}
fn flat(coords: vec2<i32>) -> i32 {
    return dot(coords, vec2<i32>(1, 0));
}
fn put(at: i32, v: f32) {
    if (at >= 0) {
        y[at] = v;
    }
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let r = i32(gid.x);
    if (r >= i32(dims.n)) { return; }
    var s = 0.0;
    for (var j = 0u; j < dims.d; j++) { s += x[u32(r) * dims.d + j]; }
    let c = coords_of(r);
    put(flat(c), s);
}
";
    let k = testkit::resolve("k.wgsl", ATTR, wgsl);
    let r = canonical_of(&k).expect("normalised");
    let entry = entry_code(&r);
    for helper in ["coords_of(", "flat(", "put(", "dot("] {
        assert!(!entry.contains(helper), "{helper} still in\n{entry}");
    }
    assert!(
        r.step.contains("int-dot") && r.step.contains("inline-fn"),
        "{}",
        r.step
    );
    // A helper that returns early would return from the entry point once spelled out, and a
    // float `dot` is not reordered.
    let wgsl = wgsl
        .replace(
            "if (at >= 0) {\n        y[at] = v;\n    }",
            "if (at < 0) { return; }\n    y[at] = v;",
        )
        .replace(
            "put(flat(c), s);",
            "put(flat(c), dot(vec2<f32>(s), vec2<f32>(2.0)));",
        );
    let k = testkit::resolve("k.wgsl", ATTR, &wgsl);
    let r = canonical_of(&k).expect("normalised");
    let text = r.program.wgsl.to_string();
    let entry = &text[text.find("@compute").unwrap()..];
    assert!(entry.contains("    put("), "{entry}");
    assert!(entry.contains("dot(vec2<f32>"), "{entry}");
}

/// TVM's argmax update over a row, its counter from `start`, the index first set to `first`
/// and kept on `keep`.
fn tvm_argmax(start: &str, first: &str, keep: &str) -> kf_runtime::resolve::ResolvedKernel {
    row_kernel(&format!(
        "    var bi : i32;
    var bv : f32;
    bi = {first};
    bv = -3.402823e+38f;
    for (var k : i32 = {start}; k < i32(dims.d); k++) {{
        let v : f32 = x[r * dims.d + u32(k)];
        let keep : bool = {keep};
        let bi_next : i32 = select(k, bi, keep);
        let bv_next : f32 = select(v, bv, keep);
        bi = bi_next;
        bv = bv_next;
    }}
    y[r] = f32(bi);"
    ))
}

#[test]
fn a_tie_break_predicate_over_the_running_index_becomes_the_arg_if() {
    let keep = "((bv > v) || ((bv == v) && (bi < k)))";
    let r = canonical_of(&tvm_argmax("0", "-1", keep)).expect("canonical");
    let text = r.program.wgsl.to_string();
    assert!(r.step.contains("arg-tie"), "{}", r.step);
    assert!(
        text.contains("if (v > bv) { bv = v; bi = k; }") && !text.contains("keep"),
        "{text}"
    );
    // The mirrored spellings of each comparison.
    let r = canonical_of(&tvm_argmax(
        "0",
        "-1",
        "((v < bv) || ((v == bv) && (k > bi)))",
    ))
    .expect("canonical");
    assert!(r.step.contains("arg-tie"), "{}", r.step);
    // Where the index may reach the counter the predicate is not `bv >= v`: an index first set
    // at the counter's start, or a tie rule on the other side.
    for (start, first, keep) in [
        ("0", "0", keep),
        ("0", "-1", "((bv > v) || ((bv == v) && (bi > k)))"),
        ("0", "-1", "((bv > v) || ((bv != v) && (bi < k)))"),
    ] {
        let step = canonical_of(&tvm_argmax(start, first, keep))
            .map(|r| r.step)
            .unwrap_or_default();
        assert!(!step.contains("arg-tie"), "{step}: {start} {first} {keep}");
    }
}

#[test]
fn a_vector_of_loads_is_not_read_again_after_a_store() {
    // wgml's rotary embedding: a pair rotated into a vector of loads, then stored back in place.
    // Reading `q.y` as its expression after `x[j] = q.x;` would load the new `x[j]`.
    let wgsl = "@group(0) @binding(0) var<storage, read_write> x: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let j = 2u * i;
    let q = vec2(0.6 * x[j] - 0.8 * x[j + 1u], 0.8 * x[j] + 0.6 * x[j + 1u]);
    x[j] = q.x;
    x[j + 1u] = q.y;
}
";
    let k = testkit::resolve(
        "k.wgsl",
        "sizes(n = 64), bind(x = inout(2 * n)), grid = (n)",
        wgsl,
    );
    let step = canonical_of(&k).map(|r| r.step).unwrap_or_default();
    assert!(!step.contains("id-components"), "{step}");
    // A vector of the id's components alone is still read component by component.
    let wgsl = "@group(0) @binding(0) var<storage, read_write> x: array<f32>;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let p = vec2<u32>(gid.x, gid.y * 2u);
    x[p.y * 8u + p.x] = 1.0;
}
";
    let k = testkit::resolve(
        "k.wgsl",
        "sizes(n = 8), bind(x = output(16 * n)), grid = (n, n)",
        wgsl,
    );
    let step = canonical_of(&k).map(|r| r.step).unwrap_or_default();
    assert!(step.contains("id-components"), "{step}");
}

#[test]
fn helpers_calling_pure_helpers_are_inlined_through_a_shadowing_let() {
    // wgmath's shape views: `let v = halved(v);` shadows the uniform it is built from, and the
    // index helper calls another helper.
    let kernel = |extra: &str, at_body: &str| {
        format!(
            "struct V {{ n: u32, s: u32 }}
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> v: V;
{extra}
fn half(a: u32) -> u32 {{ return (a + 1u) / 2u; }}
fn halved(w: V) -> V {{ return V(w.n, half(w.s)); }}
fn at(w: V, i: u32) -> u32 {{ return {at_body}; }}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
    let v = halved(v);
    if (gid.x >= v.n) {{ return; }}
    y[gid.x] = x[at(v, gid.x)];
}}
"
        )
    };
    let spec =
        "sizes(n = 50), bind(x = input(2 * n), y = output(n), v = uniform(n, 4)), grid = (n)";
    let k = testkit::resolve("k.wgsl", spec, &kernel("", "i * w.s / 2u + half(0u)"));
    let r = canonical_of(&k).expect("canonical");
    let text = r.program.wgsl.to_string();
    let main = &text[text.find("fn main").expect("main")..];
    assert!(r.step.contains("inline-fn"), "{}", r.step);
    assert!(
        !main.contains("halved(") && !main.contains("at(") && !main.contains("half("),
        "{main}"
    );
    // The view's initialiser still reads the uniform; the index reads the view by its name.
    assert!(main.contains("let v = (V((v).n"), "{main}");
    // A nested helper that writes memory is not moved into the caller's expression.
    let k = testkit::resolve(
        "k.wgsl",
        spec,
        &kernel(
            "fn mark() -> u32 { y[0] = 1.0; return 0u; }",
            "i * w.s / 2u + mark()",
        ),
    );
    let main_of = |k: &kf_runtime::resolve::ResolvedKernel| {
        let text = canonical_of(k)
            .map(|r| r.program.wgsl.to_string())
            .unwrap_or_else(|| k.baseline.wgsl.to_string());
        text[text.find("fn main").expect("main")..].to_owned()
    };
    assert!(main_of(&k).contains("at("), "{}", main_of(&k));
}

/// A workgroup reduction written as helpers: one that returns the total and one per step, each
/// step ending with a barrier and combining through a third helper. `receive` is the statement
/// that receives the total as `t`.
fn helper_tree_kernel(receive: &str) -> kf_runtime::resolve::ResolvedKernel {
    let wgsl = format!(
        "@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
var<workgroup> part: array<f32, 64>;

fn plus(a: f32, b: f32) -> f32 {{ return a + b; }}

fn halve(lane: u32, s: u32) {{
    if (lane < s) {{
        part[lane] = plus(part[lane], part[lane + s]);
    }}
    workgroupBarrier();
}}

fn block_sum(lane: u32, v: f32) -> f32 {{
    part[lane] = v;
    workgroupBarrier();
    for (var s = 32u; s > 0u; s = s / 2u) {{
        halve(lane, s);
    }}
    return part[0];
}}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {{
    let v = x[wid.x * 64u + lid.x];
    {receive}
    if (lid.x == 0u) {{ y[wid.x] = t; }}
}}
"
    );
    testkit::resolve(
        "k.wgsl",
        "sizes(n = 5), bind(x = input(n * 64), y = output(n)), workgroups = (n)",
        &wgsl,
    )
}

#[test]
fn helpers_that_wait_at_barriers_are_spelled_out_where_they_are_the_whole_value() {
    // The total's helper, each step's helper (called in a loop) and the combine all end up in
    // the entry point, where subgroup-tree reads the tree.
    let k = helper_tree_kernel("let t = block_sum(lid.x, v);");
    let r = canonical_of(&k).expect("normalised");
    let entry = entry_code(&r);
    for call in ["block_sum(", "halve(", "plus("] {
        assert!(!entry.contains(call), "{call} still called in\n{entry}");
    }
    assert_eq!(entry.matches("workgroupBarrier()").count(), 2, "{entry}");
    assert!(r.step.contains("inline-fn"), "{}", r.step);
    let fired = testkit::apply(&crate::operators::tree::SubgroupTree, &k, &testkit::h200())
        .expect("the tree is found once spelled out");
    assert_eq!(fired.len(), 1);
    check_valid(&k, &fired[0]);

    // Where the call is only part of the value, a load before it would be evaluated after the
    // helper's stores once spelled out: the call stays.
    let k = helper_tree_kernel("let t = part[5] + block_sum(lid.x, v);");
    let entry = canonical_of(&k).map_or_else(
        || k.baseline.wgsl.to_string(),
        |r| r.program.wgsl.to_string(),
    );
    let entry = &entry[entry.find("@compute").unwrap()..];
    assert!(entry.contains("block_sum(lid.x, v)"), "{entry}");
}

/// A row kernel whose output row `y[r * d ..]` is summed over an outer loop, with `inner` as the
/// inner loop's body (web-llm's attention sums its value rows so).
fn outer_sum_kernel(lets: &str, header: &str, inner: &str) -> kf_runtime::resolve::ResolvedKernel {
    row_kernel_with(
        "sizes(n = 4, d = 100), bind(x = input(n * d), y = output(n * d), dims = uniform(n, d)), grid = (n)",
        &format!(
            "    for (var j = 0u; j < dims.d; j++) {{ y[r * dims.d + j] = 0.0; }}
    for (var t = 0u; t < dims.d; t++) {{
        // the weight of this position
        let w = x[r * dims.d + t];
{lets}
        {header} {{
            {inner}
        }}
        // the row is summed
    }}"
        ),
    )
}

#[test]
fn an_accumulation_into_the_output_over_an_outer_loop_is_interchanged_into_a_register() {
    let plain = "y[r * dims.d + j] += w * x[r * dims.d + (t + j) % dims.d];";
    for (lets, header, inner) in [
        ("", "for (var j = 0u; j < dims.d; j++)", plain),
        // The counter on the left of the index, the update spelled out, a second let.
        (
            "        let s = w * 0.5;",
            "for (var j = 0u; j < dims.d; j += 1u)",
            "y[j + r * dims.d] = y[j + r * dims.d] + s * x[r * dims.d + (t + j) % dims.d];",
        ),
    ] {
        let k = outer_sum_kernel(lets, header, inner);
        let r = canonical_of(&k).expect("normalised");
        assert!(r.step.contains("interchange"), "{}", r.step);
        assert!(r.step.contains("register-acc"), "{}", r.step);
        let entry = entry_code(&r);
        let (j, t) = (
            entry.rfind("for (var j").unwrap(),
            entry.find("for (var t").unwrap(),
        );
        assert!(j < t, "the element loop is outside:\n{entry}");
        assert!(entry.contains("kf_acc"), "{entry}");
    }
}

#[test]
fn an_outer_accumulation_is_not_interchanged_where_the_order_or_the_values_could_change() {
    let refused = [
        // The element depends on the outer counter.
        (
            "",
            "for (var j = 0u; j < dims.d; j++)",
            "y[r * dims.d + (t + j) % dims.d] += w;",
        ),
        // Two counters reach one element (`j / 2`): the updates of an element would reorder.
        (
            "",
            "for (var j = 0u; j < dims.d; j++)",
            "y[r * dims.d + j / 2u] += w;",
        ),
        // A triangular range: the inner bound moves with the outer counter.
        (
            "",
            "for (var j = 0u; j < t; j++)",
            "y[r * dims.d + j] += w;",
        ),
        // A let reads the output, which the inner loop changes.
        (
            "        let u = y[r * dims.d];",
            "for (var j = 0u; j < dims.d; j++)",
            "y[r * dims.d + j] += u;",
        ),
    ];
    for (lets, header, inner) in refused {
        let k = outer_sum_kernel(lets, header, inner);
        let step = canonical_of(&k).map(|r| r.step).unwrap_or_default();
        assert!(!step.contains("interchange"), "{inner}: {step}");
    }
}

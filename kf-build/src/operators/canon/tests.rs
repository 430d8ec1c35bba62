//! Tests of the canonical form, and the metamorphic test of every operator: respellings of the
//! corpus (`super::super::respell`) must make the same operators fire as the original.

use super::*;
use crate::operators::respell::{self, Spelling};
use crate::operators::testkit::{self, check_valid};

const ATTR: &str = "sizes(n = 4, d = 100), bind(x = input(n * d), y = output(n), dims = uniform(n, d)), grid = (n)";

fn kernel_with(body: &str) -> kf_runtime::resolve::ResolvedKernel {
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
    for (var j = 1u; j < dims.d; j++) {{
        let v = x[r * dims.d + j];
{body}
    }}
    y[r] = m;
}}
"
    );
    testkit::resolve("k.wgsl", ATTR, &wgsl)
}

fn canonical(body: &str) -> Option<Rewrite> {
    let k = kernel_with(body);
    let target = testkit::lavapipe();
    let r = canonicalise(&Subject {
        kernel: &k,
        program: &k.baseline,
        target: &target,
    });
    if let Some(r) = &r {
        check_valid(&k, r);
    }
    r
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
            "canon(max)",
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

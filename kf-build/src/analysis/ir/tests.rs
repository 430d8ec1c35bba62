//! Tests of the IR analysis on kernels written the ways people write them.

use super::*;
use naga::common::wgsl::TryToWgsl;

const SOFTMAX: &str = include_str!("../../../../examples/quickstart/src/shaders/softmax.wgsl");

fn analyse(src: &str, f: impl FnOnce(&Analysis<'_>)) {
    let parsed = parse(src).unwrap_or_else(|e| panic!("{e}"));
    let entry = parsed.module.entry_points[0].name.clone();
    let a = parsed.analyse(&entry).unwrap();
    f(&a);
}

fn text<'a>(a: &Analysis<'a>, r: &Option<TextRange>) -> &'a str {
    a.text(r.as_ref().expect("a span"))
}

fn counted<'x>(a: &'x Analysis<'_>, i: usize) -> &'x ForLoop {
    a.loops[i]
        .for_loop
        .as_ref()
        .unwrap_or_else(|| panic!("loop {i}: {:?}", a.loops[i].not_counted))
}

fn form_text(a: &Analysis<'_>, f: &IndexForm) -> String {
    let mut parts: Vec<String> = f
        .terms
        .iter()
        .map(|(v, c)| {
            let v = match v {
                Var::Builtin(b, c) => format!(
                    "{}.{}",
                    b.try_to_wgsl().unwrap(),
                    ["x", "y", "z", "w"][*c as usize]
                ),
                Var::Loop(l) => a.function.local_variables[*l].name.clone().unwrap(),
                Var::Digit(b, c, i) => format!(
                    "{}.{}#{i}",
                    b.try_to_wgsl().unwrap(),
                    ["x", "y", "z", "w"][*c as usize]
                ),
            };
            format!("({c})*{v}")
        })
        .collect();
    if !f.offset.is_zero() {
        parts.push(f.offset.to_string());
    }
    parts.join(" + ")
}

fn store_forms(a: &Analysis<'_>) -> Vec<String> {
    a.accesses
        .iter()
        .filter(|x| x.write)
        .map(|x| {
            format!(
                "{}[{}]",
                x.name,
                x.form.as_ref().map_or("?".into(), |f| form_text(a, f))
            )
        })
        .collect()
}

#[test]
fn softmax_loops_accumulators_and_forms() {
    analyse(SOFTMAX, |a| {
        let gid = a.builtin(BuiltIn::GlobalInvocationId).unwrap();
        assert_eq!(gid.name, "gid");
        assert_eq!(gid.components, [true, false, false, false]);
        assert!(!gid.whole);
        assert_eq!(a.loops.len(), 3);
        for i in 0..3 {
            let l = counted(a, i);
            assert_eq!(l.kind, LoopKind::For);
            assert_eq!(l.var_name, "c");
            assert!(l.declared_in_header);
            assert_eq!(text(a, &l.init_span), "var c = 0u");
            assert_eq!(text(a, &l.init_value_span), "0u");
            assert_eq!(text(a, &l.cond_span), "c < shape.cols");
            assert_eq!(text(a, &l.step_span), "c++");
            assert_eq!(
                text(a, &l.header_span).trim_end(),
                "for (var c = 0u; c < shape.cols; c++)"
            );
            assert!(text(a, &l.body_span).starts_with('{'));
            assert_eq!(l.bounds.len(), 1);
            assert_eq!(l.bounds[0].cmp, Cmp::Lt);
            assert_eq!(
                a.expr_wgsl(l.bounds[0].bound, Naming::Names).unwrap(),
                "shape.cols"
            );
            assert_eq!(a.const_int(l.step), Some(1));
            assert_eq!(l.init.and_then(|i| a.const_int(i)), Some(0));
        }
        let fx: Vec<LoopEffects> = (0..3).map(|i| a.loop_effects(i)).collect();
        assert_eq!(fx[0].accumulators.len(), 1);
        assert_eq!(fx[0].accumulators[0].name, "m");
        assert_eq!(fx[0].accumulators[0].op, AccOp::Max);
        assert_eq!(fx[1].accumulators[0].name, "s");
        assert_eq!(fx[1].accumulators[0].op, AccOp::Add);
        assert!(fx[2].accumulators.is_empty() && fx[2].carried.is_empty());
        assert_eq!(fx[2].global_writes.len(), 1);
        assert!(
            fx.iter()
                .all(|f| f.other.is_empty() && f.carried.is_empty())
        );
        assert_eq!(
            store_forms(a),
            ["output[(shape.cols)*global_invocation_id.x + (1)*c]"]
        );
        // Loads of the input use the same form.
        let input_forms: Vec<String> = a
            .accesses
            .iter()
            .filter(|x| x.name == "input")
            .map(|x| form_text(a, x.form.as_ref().unwrap()))
            .collect();
        assert_eq!(input_forms.len(), 3);
        assert!(
            input_forms
                .iter()
                .all(|f| f == "(shape.cols)*global_invocation_id.x + (1)*c")
        );
        // The guard's `let` statement and the entry signature.
        let row = a
            .function
            .named_expressions
            .iter()
            .find(|(_, n)| *n == "row")
            .map(|(h, _)| *h)
            .unwrap();
        let (range, name) = a.let_statement(row).unwrap();
        assert_eq!((a.text(&range), name.as_str()), ("let row = gid.x;", "row"));
        let sig = a.entry_signature().unwrap();
        assert_eq!(
            a.text(&sig.params),
            "@builtin(global_invocation_id) gid: vec3<u32>"
        );
        assert_eq!(a.text(&sig.workgroup_size), "WG");
        assert_eq!(a.text(&sig.attributes), "@compute @workgroup_size(WG)\n");
        assert_eq!(a.text(&sig.name), "main");
        assert!(a.text(&sig.body).starts_with('{') && a.text(&sig.body).ends_with('}'));
    });
}

const SPELLINGS: &str = r#"
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
struct P { n: u32, c: u32 }
@group(0) @binding(2) var<uniform> p: P;
fn helper(v: f32) -> f32 { return v * 2.0; }
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let r: u32 = g.y;
    var acc: f32 = 0.0;
    var i = r * p.c;
    while (i < (r + 1u) * p.c) {
        acc = acc + f32(x[i]) * 2.0 + helper(x[i]);
        i = i + 1u;
    }
    var j = 0u;
    loop {
        if j >= p.c { break; }
        acc -= select(1.0, -x[j], x[j] > 0.0);
        continuing { j++; }
    }
    for (var k = i32(r); k < i32(p.c); k += 2) { acc = max(acc, vec4<f32>(x[k]).y); }
    y[r] = acc; // done
    helper(1.0);
}
"#;

#[test]
fn while_loop_and_continuing_spellings() {
    analyse(SPELLINGS, |a| {
        let g = a.builtin(BuiltIn::GlobalInvocationId).unwrap();
        assert_eq!(g.components, [false, true, false, false]);
        let w = counted(a, 0);
        assert_eq!(w.kind, LoopKind::While);
        assert_eq!(w.var_name, "i");
        assert!(!w.declared_in_header);
        assert_eq!(text(a, &w.init_span), "var i = r * p.c");
        assert_eq!(text(a, &w.init_value_span), "r * p.c");
        assert_eq!(text(a, &w.step_span), "i = i + 1u");
        assert_eq!(text(a, &w.cond_span), "(i < (r + 1u) * p.c)");
        assert_eq!(
            text(a, &w.header_span).trim_end(),
            "while (i < (r + 1u) * p.c)"
        );
        assert_eq!(
            a.expr_wgsl(w.bounds[0].bound, Naming::Names).unwrap(),
            "((r + 1u) * p.c)"
        );
        let l = counted(a, 1);
        assert_eq!(l.kind, LoopKind::Loop);
        assert!(l.cond_negated);
        assert_eq!(l.bounds[0].cmp, Cmp::Lt);
        assert_eq!(text(a, &l.cond_span), "j >= p.c");
        assert_eq!(text(a, &l.step_span), "j++");
        assert_eq!(text(a, &l.init_span), "var j = 0u");
        let f = counted(a, 2);
        assert_eq!(f.kind, LoopKind::For);
        assert_eq!(text(a, &f.init_span), "var k = i32(r)");
        assert_eq!(text(a, &f.init_value_span), "i32(r)");
        assert_eq!(a.const_int(f.step), Some(2));
        for (i, op) in [(0, AccOp::Add), (1, AccOp::Add), (2, AccOp::Max)] {
            let fx = a.loop_effects(i);
            assert_eq!(fx.accumulators.len(), 1, "loop {i}: {fx:?}");
            assert_eq!(
                (fx.accumulators[0].name.as_str(), fx.accumulators[0].op),
                ("acc", op)
            );
        }
        // The per-row store and the load forms through `let`, `var` and casts.
        assert_eq!(store_forms(a), ["y[(1)*global_invocation_id.y]"]);
        let x_forms: Vec<String> = a
            .accesses
            .iter()
            .filter(|x| x.name == "x")
            .map(|x| form_text(a, x.form.as_ref().unwrap()))
            .collect();
        assert_eq!(x_forms[0], "(1)*i");
        assert!(x_forms.contains(&"(1)*k".to_string()));
        // `max(acc, ..)` is recorded as `max`; the widened range covers the call.
        let max = a
            .function
            .expressions
            .iter()
            .find(|(_, e)| {
                matches!(
                    e,
                    Expression::Math {
                        fun: MathFunction::Max,
                        ..
                    }
                )
            })
            .unwrap()
            .0;
        assert_eq!(a.text(&a.expr_span(max).unwrap()), "max");
        assert_eq!(
            a.text(&a.expr_range(max).unwrap()),
            "max(acc, vec4<f32>(x[k]).y)"
        );
        assert_eq!(
            a.expr_wgsl(max, Naming::Names).unwrap(),
            "max(acc, vec4<f32>(x[k]).y)"
        );
    });
}

#[test]
fn loop_carried_values_are_not_accumulators() {
    let src = r#"
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> n: u32;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.x;
    var run = 0.0;
    for (var i = 0u; i < n; i++) {
        run += x[row * n + i];
        y[row * n + i] = run;          // prefix sum: reads the running value
    }
    var ema = 0.0;
    for (var i = 0u; i < n; i++) {
        ema = ema * 0.5 + x[row * n + i]; // not associative
    }
    var p = 1.0;
    var q = 0.0;
    for (var i = 0u; i < n; i = i + 1u) {
        p *= x[i] * 2.0;
        q = x[i] - q;                  // acc on the wrong side of `-`
    }
    y[row] = ema + p + q;
}
"#;
    analyse(src, |a| {
        let fx0 = a.loop_effects(0);
        assert!(fx0.accumulators.is_empty());
        assert_eq!(fx0.carried.len(), 1);
        assert!(
            fx0.carried[0].1.contains("read in the loop"),
            "{:?}",
            fx0.carried
        );
        let fx1 = a.loop_effects(1);
        assert!(fx1.accumulators.is_empty(), "{fx1:?}");
        assert_eq!(fx1.carried.len(), 1);
        let fx2 = a.loop_effects(2);
        assert_eq!(fx2.accumulators.len(), 1);
        assert_eq!(
            (fx2.accumulators[0].name.as_str(), fx2.accumulators[0].op),
            ("p", AccOp::Mul)
        );
        assert_eq!(fx2.carried.len(), 1, "{fx2:?}");
    });
}

#[test]
fn index_forms_see_through_shifts_constants_and_single_assignments() {
    let src = r#"
@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
struct Buf { n: u32, data: array<f32> }
@group(0) @binding(2) var<storage, read_write> z: Buf;
override BLOCK: u32 = 4u;
const K: u32 = 3u;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>) {
    let m = max(x[g.x].x, 1.0);
    let q = (g.x << 2u) + K * BLOCK;
    y[q] += x[g.x + 1u].y * m;
    z.data[arrayLength(&z.data) - 1u] = f32(z.n);
    var t: u32;
    t = l.x;
    y[t] = 1.0;
    y[g.x * g.y] = 0.0;
}
"#;
    analyse(src, |a| {
        assert_eq!(
            store_forms(a),
            [
                "y[(4)*global_invocation_id.x + 3*BLOCK]",
                "z[-1 + arrayLength(&z.data)]",
                "y[(1)*local_invocation_id.x]",
                "y[?]",
            ]
        );
        let x_loads: Vec<&Access> = a.accesses.iter().filter(|x| x.name == "x").collect();
        assert_eq!(x_loads[0].component, Some(0));
        assert_eq!(x_loads[1].component, Some(1));
        assert_eq!(
            form_text(a, x_loads[1].form.as_ref().unwrap()),
            "(1)*global_invocation_id.x + 1"
        );
        let l = a.builtin(BuiltIn::LocalInvocationId).unwrap();
        assert_eq!(l.components, [true, false, false, false]);
        let m = a
            .function
            .named_expressions
            .iter()
            .find(|(_, n)| *n == "m")
            .unwrap()
            .0;
        let (range, _) = a.let_statement(*m).unwrap();
        assert_eq!(a.text(&range), "let m = max(x[g.x].x, 1.0);");
    });
}

#[test]
fn struct_builtins_and_uniform_values() {
    let src = r#"
struct In {
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_index) li: u32,
}
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> b: array<f32>;
@group(0) @binding(2) var<storage, read> dims: array<u32, 2>;
@compute @workgroup_size(8, 8)
fn k(input: In) {
    let cols = dims[1];
    b[input.gid.y * cols + input.gid.x] = a[input.li];
}
"#;
    analyse(src, |a| {
        let g = a.builtin(BuiltIn::GlobalInvocationId).unwrap();
        assert_eq!((g.name.as_str(), g.member), ("input.gid", Some(0)));
        assert_eq!(g.components, [true, true, false, false]);
        let li = a.builtin(BuiltIn::LocalInvocationIndex).unwrap();
        assert_eq!(li.components, [true, false, false, false]);
        assert_eq!(
            store_forms(a),
            ["b[(1)*global_invocation_id.x + (dims[1])*global_invocation_id.y]"]
        );
    });
}

#[test]
fn loops_that_are_not_counted_say_why() {
    let src = r#"
@group(0) @binding(0) var<storage, read_write> y: array<u32>;
@compute @workgroup_size(1)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    var i = 0u;
    loop {
        y[i] = i;
        i += 1u;
        continuing { break if i >= 8u; }
    }
    var j = 0u;
    while (j < 8u) {
        if (y[j] == 0u) { j += 2u; continue; }
        j += 1u;
    }
    for (var k = 0u; k < 16u; k += 4u) { y[k] = k; }
    for (var k = 10; k > 0; k--) { y[k] = 1u; }
}
"#;
    analyse(src, |a| {
        assert!(
            a.loops[0]
                .not_counted
                .as_ref()
                .unwrap()
                .contains("break if")
        );
        assert!(
            a.loops[1]
                .not_counted
                .as_ref()
                .unwrap()
                .contains("assigned in the body")
                || a.loops[1]
                    .not_counted
                    .as_ref()
                    .unwrap()
                    .contains("continue"),
            "{:?}",
            a.loops[1].not_counted
        );
        let k = counted(a, 2);
        assert_eq!(a.const_trip_count(k), Some(4));
        let d = counted(a, 3);
        assert!(d.decreasing);
        assert_eq!(d.bounds[0].cmp, Cmp::Gt);
        assert_eq!(a.const_trip_count(d), Some(10));
    });
}

#[test]
fn short_circuit_conditions_are_seen_through() {
    let src = r#"
@group(0) @binding(0) var<storage, read_write> y: array<u32>;
@group(0) @binding(1) var<uniform> n: vec2<u32>;
@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x >= n.x || g.y >= n.y) { return; }
    for (var i = 0u; i < n.x && i + 2u <= n.y; i++) { y[g.y * n.x + i] = i; }
}
"#;
    analyse(src, |a| {
        let guard = a
            .stmts
            .iter()
            .find_map(|s| match s.stmt {
                Statement::If {
                    condition, accept, ..
                } if accept.iter().any(|x| matches!(x, Statement::Return { .. })) => {
                    Some(*condition)
                }
                _ => None,
            })
            .unwrap();
        let (op, left, right) = a.short_circuit(guard).unwrap();
        assert_eq!(op, BinaryOperator::LogicalOr);
        assert_eq!(a.expr_wgsl(left, Naming::Names).unwrap(), "(g.x >= n.x)");
        assert_eq!(a.expr_wgsl(right, Naming::Names).unwrap(), "(g.y >= n.y)");
        let l = counted(a, 0);
        assert_eq!(l.bounds.len(), 2);
        assert_eq!(l.bounds[1].cmp, Cmp::Le);
        assert!(l.bounds[1].offset.is_some());
        // The temporary naga introduces is private to the loop, not a loop-carried value.
        let fx = a.loop_effects(0);
        assert!(fx.carried.is_empty(), "{fx:?}");
    });
}

#[test]
fn value_index_pairs_are_arg_accumulators() {
    let kernel = |update: &str, start: &str, index_init: &str| {
        format!(
            r#"
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {{
    var m = x[g.x * 64u];
    var k = {index_init};
    for (var i = {start}; i < 64u; i++) {{
        let v = x[g.x * 64u + i];
        {update}
    }}
    y[g.x] = k;
}}
"#
        )
    };
    for (update, start, init, want) in [
        (
            "if (v > m) { m = v; k = i; }",
            "1u",
            "0u",
            Some((AccOp::Max, Ties::First)),
        ),
        (
            "if (m < v) { k = i; m = v; }",
            "1u",
            "0u",
            Some((AccOp::Max, Ties::First)),
        ),
        (
            "if (v >= m) { m = v; k = i; }",
            "1u",
            "0u",
            Some((AccOp::Max, Ties::Last)),
        ),
        (
            "if (v <= m) { m = v; k = i; }",
            "1u",
            "0u",
            Some((AccOp::Min, Ties::Last)),
        ),
        (
            "if (m > v) { m = v; k = i; }",
            "0u",
            "7u",
            Some((AccOp::Min, Ties::First)),
        ),
        // Nested in another `if` of the loop.
        (
            "if (v == v) { if (v > m) { m = v; k = i; } }",
            "1u",
            "0u",
            Some((AccOp::Max, Ties::First)),
        ),
        // The last of equal values needs an index below the loop's start.
        ("if (v >= m) { m = v; k = i; }", "0u", "0u", None),
        ("if (v > m) { m = v; k = i + 1u; }", "1u", "0u", None),
        ("if (v > m) { m = v + 1.0; k = i; }", "1u", "0u", None),
        (
            "if (v > m) { m = v; k = i; } else { k = 0u; }",
            "1u",
            "0u",
            None,
        ),
        (
            "if (v > m) { m = v; k = i; }\n        k = k + 0u;",
            "1u",
            "0u",
            None,
        ),
        ("if (v > f32(k)) { m = v; k = i; }", "1u", "0u", None),
    ] {
        let src = kernel(update, start, init);
        analyse(&src, |a| {
            let fx = a.loop_effects(0);
            let got = fx.args.first().map(|p| (p.op, p.ties));
            assert_eq!(got, want, "{update} from {start}: {fx:?}");
            if want.is_some() {
                let p = &fx.args[0];
                assert_eq!((p.value_name.as_str(), p.index_name.as_str()), ("m", "k"));
                // The pair is in no other list.
                assert!(
                    fx.carried.is_empty() && fx.accumulators.is_empty(),
                    "{fx:?}"
                );
            } else {
                assert!(fx.args.is_empty());
            }
        });
    }
}

#[test]
fn a_flat_id_reads_as_its_digits_however_the_split_is_spelled() {
    const SRC: &str = r#"
struct P { m: u32, n: u32 }
@group(0) @binding(0) var<storage, read_write> o: array<u32>;
@group(0) @binding(1) var<uniform> p: P;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let q = i / p.n;
    o[i % p.n] = 0u;
    o[i - q * p.n] = 1u;
    o[(i / p.n) % p.m] = 2u;
    o[i / (p.m * p.n)] = 3u;
    o[q / p.m] = 4u;
    o[i] = 5u;
}
"#;
    analyse(SRC, |a| {
        let d = a.digits(BuiltIn::GlobalInvocationId, 0).expect("a chain");
        assert_eq!(d.count(), 3);
        let forms: Vec<String> = a
            .accesses
            .iter()
            .filter(|x| x.write)
            .map(|x| form_text(a, &a.split_index_form(x.index.unwrap()).unwrap()))
            .collect();
        assert_eq!(
            forms,
            [
                "(1)*global_invocation_id.x#0",
                "(1)*global_invocation_id.x#0",
                "(1)*global_invocation_id.x#1",
                "(1)*global_invocation_id.x#2",
                "(1)*global_invocation_id.x#2",
                "(1)*global_invocation_id.x#0 + (p.n)*global_invocation_id.x#1 + (p.m*p.n)*global_invocation_id.x#2",
            ]
        );
        // The plain reading knows nothing of digits.
        let plain = a.accesses.iter().rfind(|x| x.write).unwrap();
        assert_eq!(
            form_text(a, plain.form.as_ref().unwrap()),
            "(1)*global_invocation_id.x"
        );
    });
}

#[test]
fn a_poly_is_an_integer_multiple_of_another_only_term_by_term() {
    let n = Poly::atom("n".into());
    let m = Poly::atom("m".into());
    assert_eq!(n.scale(3).integer_multiple_of(&n), Some(3));
    assert_eq!(n.scale(-2).integer_multiple_of(&n.scale(2)), Some(-1));
    assert_eq!(Poly::default().integer_multiple_of(&n), None);
    assert_eq!(n.add(&Poly::constant(1)).integer_multiple_of(&n), None);
    assert_eq!(n.scale(3).integer_multiple_of(&n.scale(2)), None);
    assert_eq!(n.add(&m).scale(2).integer_multiple_of(&n.add(&m)), Some(2));
    assert_eq!(m.integer_multiple_of(&n), None);
}

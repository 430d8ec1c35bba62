//! Tests of values the spec fixes, decided once.
//!
//! A kernel written for several callers often carries a mode in its uniforms and branches on it:
//! favicon-diffusion's matrix product reads `dims.flagTranspose` and stages `B` one way or the
//! other. The spec says what the app writes there: `dims = uniform(m, k, n, 1)` is a promise
//! that the flag is always 1, exactly as `uniform(m, k, n)` is a promise that those members hold
//! the sizes (which variants already rely on for their extents). So an `if` whose condition
//! compares such values, or constants, is decided here: the statement becomes the branch it takes,
//! as a block (`{ .. }`, so its declarations keep their scope), or nothing when it takes an absent
//! `else`. The operators then see the one layout the kernel runs with; a hand-tiled product whose
//! staging was behind the flag reaches `destage` and the tilings.
//!
//! Every other read of such a member becomes the literal (`params.kernel_h` → `3u`): a pooling
//! window, a stride or a padding the spec fixes is then a constant the loop operators unroll and
//! fold.
//!
//! Only integer values count: `u32`/`i32` members the spec gives as an integer literal, and
//! constants. A size (`uniform(m, ..)`) is not fixed, nor is a float literal (a `1e-5` epsilon is
//! a value, not a mode).

use crate::analysis::ir::{self, Analysis, Edit};
use kf_runtime::resolve::ResolvedKernel;
use naga::{BinaryOperator, Expression, Handle, Literal, Statement, UnaryOperator};

/// The edits of the normalisation: the tests the spec fixes decided ([`fixed_tests`]), and every
/// other read of an integer uniform member the spec fills with a literal written as that literal
/// (`params.kernel_h` → `3u`), so loop bounds, strides and paddings the spec fixes are constants
/// for the operators (a 3×3 window unrolls whole).
pub(super) fn fixed_uniforms(a: &Analysis<'_>, kernel: &ResolvedKernel) -> Vec<Edit> {
    let mut out = fixed_tests(a, kernel);
    let decided: Vec<std::ops::Range<usize>> = out.iter().map(|e| e.range.clone()).collect();
    let mut seen: Vec<std::ops::Range<usize>> = Vec::new();
    for (h, e) in a.function.expressions.iter() {
        if !matches!(e, Expression::Load { .. }) {
            continue;
        }
        let suffix = match a.type_of(h) {
            naga::TypeInner::Scalar(naga::Scalar {
                kind: naga::ScalarKind::Uint,
                width: 4,
            }) => "u",
            naga::TypeInner::Scalar(naga::Scalar {
                kind: naga::ScalarKind::Sint,
                width: 4,
            }) => "i",
            _ => continue,
        };
        let Some(k) = fixed_int(a, kernel, h).filter(|_| a.const_int(h).is_none()) else {
            continue;
        };
        let Some(range) = a.expr_range(h) else {
            continue;
        };
        let text = &a.code()[range.clone()];
        let chain = !text.is_empty()
            && text
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c.is_whitespace());
        if !chain
            || seen.contains(&range)
            || decided
                .iter()
                .any(|d| d.start <= range.start && range.end <= d.end)
        {
            continue;
        }
        seen.push(range.clone());
        let literal = if k < 0 {
            format!("({k}{suffix})")
        } else {
            format!("{k}{suffix}")
        };
        out.push(Edit::replace(range, literal));
    }
    out
}

/// The edits deciding every `if` of the entry point whose condition the spec fixes (outermost
/// first; one inside a decided one waits for the next round).
fn fixed_tests(a: &Analysis<'_>, kernel: &ResolvedKernel) -> Vec<Edit> {
    let mut out: Vec<Edit> = Vec::new();
    for st in &a.stmts {
        let Statement::If { condition, .. } = *st.stmt else {
            continue;
        };
        // naga's lowering of `&&`/`||` tests the first operand in an `if` of its own: deciding
        // it would decide the user's whole test.
        if a.is_short_circuit_if(st.stmt) {
            continue;
        }
        let Some(value) = fixed_bool(a, kernel, condition) else {
            continue;
        };
        let Some(span) = st.span.clone() else {
            continue;
        };
        if out
            .iter()
            .any(|e| e.range.start <= span.start && span.end <= e.range.end)
        {
            continue;
        }
        if let Some(text) = branch_text(a, span.clone(), value) {
            out.push(Edit::replace(span, text));
        }
    }
    out
}

/// The value of the boolean `h` when the spec or the module fixes it.
fn fixed_bool(a: &Analysis<'_>, kernel: &ResolvedKernel, h: Handle<Expression>) -> Option<bool> {
    match a.function.expressions[h] {
        Expression::Literal(Literal::Bool(b)) => Some(b),
        Expression::Unary {
            op: UnaryOperator::LogicalNot,
            expr,
        } => fixed_bool(a, kernel, expr).map(|b| !b),
        Expression::Binary { op, left, right } => {
            let (l, r) = (fixed_int(a, kernel, left)?, fixed_int(a, kernel, right)?);
            Some(match op {
                BinaryOperator::Equal => l == r,
                BinaryOperator::NotEqual => l != r,
                BinaryOperator::Less => l < r,
                BinaryOperator::LessEqual => l <= r,
                BinaryOperator::Greater => l > r,
                BinaryOperator::GreaterEqual => l >= r,
                _ => return None,
            })
        }
        _ => None,
    }
}

/// The value of the integer `h` when it is a constant, or a uniform member the spec fills with an
/// integer literal.
fn fixed_int(a: &Analysis<'_>, kernel: &ResolvedKernel, h: Handle<Expression>) -> Option<i64> {
    if let Some(k) = a.const_int(h) {
        return Some(k);
    }
    if !matches!(
        a.function.expressions[h],
        Expression::Load { .. } | Expression::AccessIndex { .. }
    ) {
        return None;
    }
    let size = a.spec_size(kernel, h)?;
    i64::try_from(size.as_constant()?).ok()
}

/// The text the `if` statement at `span` becomes when its condition is `value`: the block it
/// takes (an `else if` chain wrapped in braces), or nothing.
fn branch_text(a: &Analysis<'_>, span: ir::TextRange, value: bool) -> Option<String> {
    let code = a.code();
    let open = span.start + code[span.clone()].find('{')?;
    let close = ir::matching(code, open, b'{', b'}')?;
    if value {
        return Some(unwrapped(a, &span, open..close + 1));
    }
    let rest = &code[close + 1..span.end];
    let trimmed = rest.trim_start();
    if trimmed.is_empty() {
        return Some(String::new());
    }
    let after_else = trimmed.strip_prefix("else")?;
    if !after_else.starts_with(|c: char| c.is_whitespace() || c == '{') {
        return None;
    }
    let at = span.end - after_else.trim_start().len();
    if code[at..].starts_with('{') {
        let end = ir::matching(code, at, b'{', b'}')?;
        return Some(unwrapped(a, &span, at..end + 1));
    }
    // `else if ..`: the chain as a block of its own.
    Some(format!("{{\n{}\n}}", &a.source[at..span.end]))
}

/// The block at `block` (braces included) of the `if` at `span`, as its statements alone when
/// nothing it declares is named elsewhere in the entry point (the code reads as if the test had
/// never been written: a template's mode wrapped around the whole body), else as the block.
fn unwrapped(a: &Analysis<'_>, span: &ir::TextRange, block: std::ops::Range<usize>) -> String {
    let code = a.code();
    let inner = &code[block.start + 1..block.end - 1];
    let declared: Vec<&str> = super::identifiers(inner)
        .windows(2)
        .filter(|w| matches!(w[0], "let" | "var" | "const"))
        .map(|w| w[1])
        .collect();
    let clash = a.entry_range().map_or(true, |entry| {
        let outside = format!(
            "{} {}",
            &code[entry.start..span.start],
            &code[span.end..entry.end]
        );
        let names = super::identifiers(&outside);
        declared.iter().any(|d| names.contains(d))
    });
    if clash {
        a.source[block].to_owned()
    } else {
        a.source[block.start + 1..block.end - 1].to_owned()
    }
}

#[cfg(test)]
mod tests {
    use crate::operators::testkit;

    const SPEC: &str =
        "sizes(n = 64), bind(x = input(n), y = output(n), u = uniform(n, 1, 2)), grid = (n)";

    fn canon(spec: &str, body: &str) -> Option<String> {
        let src = format!(
            "struct U {{ n: u32, mode: u32, other: u32 }}
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> u: U;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
    let i = gid.x;
    if (i >= u.n) {{ return; }}
{body}
}}
"
        );
        testkit::canonical_text(spec, &src).map(|(step, text)| format!("{step}\n{text}"))
    }

    #[test]
    fn a_test_of_a_member_the_spec_fixes_takes_its_branch() {
        let out = canon(
            SPEC,
            "    if (u.mode == 1u) {\n        let v = x[i] * 2.0;\n        y[i] = v;\n    } else {\n        let v = x[i];\n        y[i] = v;\n    }",
        )
        .expect("a canonical form");
        assert!(out.starts_with("canon(fixed-uniform)"), "{out}");
        assert!(!out.contains("u.mode"), "{out}");
        assert!(out.contains("let v = x[i] * 2.0;"), "{out}");
        assert!(!out.contains("let v = x[i];"), "{out}");
        // The branch not taken, an `else if` chain, and a test without `else`.
        let out = canon(
            SPEC,
            "    if (u.mode != 1u) {\n        y[i] = 0.0;\n    } else if (u.other > 1u) {\n        y[i] = x[i];\n    } else {\n        y[i] = 1.0;\n    }\n    if (u.mode == 0u) {\n        y[i] = 5.0;\n    }",
        )
        .expect("a canonical form");
        assert!(!out.contains("y[i] = 0.0;"), "{out}");
        assert!(!out.contains("y[i] = 5.0;"), "{out}");
        assert!(out.contains("y[i] = x[i];"), "{out}");
        assert!(!out.contains("y[i] = 1.0;"), "{out}");
        assert!(!out.contains("u.other"), "{out}");
    }

    #[test]
    fn a_member_the_spec_fixes_reads_as_its_literal() {
        let out = canon(
            SPEC,
            "    var acc = 0.0;\n    for (var k = 0u; k < u.mode + u.other; k++) {\n        acc += x[(i + k * u.other) % u.n];\n    }\n    y[i] = acc;",
        )
        .expect("a canonical form");
        assert!(out.contains("k < 1u + 2u;"), "{out}");
        assert!(out.contains("x[(i + k * 2u) % u.n]"), "{out}");
    }

    /// `&&` and `||`, which naga lowers to an `if` on the first operand that sets a hidden
    /// variable: only a whole condition the spec fixes decides a test.
    #[test]
    fn a_fixed_operand_of_and_or_decides_nothing_alone() {
        for (cond, keep) in [
            ("u.mode == 1u && i < 10u", "i < 10u"),
            ("u.mode == 0u || i < 10u", "i < 10u"),
        ] {
            let body = format!("    if ({cond}) {{\n        y[i] = x[i];\n    }}");
            let out = canon(SPEC, &body).unwrap_or_default();
            assert!(out.is_empty() || out.contains(keep), "{cond}:\n{out}");
        }
    }

    #[test]
    fn sizes_floats_and_invocation_values_are_not_fixed() {
        // The member holds a size: a test of it is the kernel's own.
        let spec = "sizes(n = 64, mode = 1), bind(x = input(n), y = output(n), u = uniform(n, mode, 2)), grid = (n)";
        let body = "    if (u.mode == 1u) {\n        y[i] = x[i];\n    } else {\n        y[i] = 0.0;\n    }";
        assert!(canon(spec, body).is_none_or(|o| o.contains("u.mode")));
        // A test of the invocation's own value.
        let body = "    if (i == 1u) {\n        y[i] = x[i];\n    }";
        assert!(canon(SPEC, body).is_none_or(|o| o.contains("i == 1u")));
    }
}

//! Size expressions: the arithmetic over named sizes that a spec uses for buffer lengths, uniform
//! values and dispatch grids (`rows * cols`, `(n + 3) / 4`, `cdiv(n, 256)`, `min(n, 65535)`).
//!
//! One representation serves three places: the attribute (parsed from syn tokens), the cache file
//! (written and read as an infix string, so a human can read a committed entry) and the embedded
//! kernel in a user's binary (a `&'static` postfix program built by the macro in a const context).
//! That is why the program is a `Cow<'static, [Op]>`: borrowed when embedded, owned when parsed.
//!
//! Invariant: evaluation never panics. Overflow, underflow, division by zero and unknown names are
//! errors carrying the offending expression.

use std::borrow::Cow;
use std::fmt;

/// One step of a postfix program.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// Push an integer literal.
    Lit(u64),
    /// Push the value of a named size.
    Size(Cow<'static, str>),
    /// Pop `b`, pop `a`, push `a + b`.
    Add,
    /// Pop `b`, pop `a`, push `a - b` (an error if it would go below zero).
    Sub,
    /// Pop `b`, pop `a`, push `a * b`.
    Mul,
    /// Pop `b`, pop `a`, push `a / b` rounded down.
    Div,
    /// Pop `b`, pop `a`, push `a % b`.
    Rem,
    /// Pop `b`, pop `a`, push the smaller; written `min(a, b)`.
    Min,
    /// Pop `b`, pop `a`, push the larger; written `max(a, b)`.
    Max,
    /// Pop `b`, pop `a`, push `a / b` rounded up; written `cdiv(a, b)`.
    CeilDiv,
}

impl Op {
    /// The function name of an operator written as a call (`min`, `max`, `cdiv`).
    pub fn function_name(&self) -> Option<&'static str> {
        match self {
            Op::Min => Some("min"),
            Op::Max => Some("max"),
            Op::CeilDiv => Some("cdiv"),
            _ => None,
        }
    }

    /// The operator a call to `name` stands for.
    pub fn function(name: &str) -> Option<Op> {
        match name {
            "min" => Some(Op::Min),
            "max" => Some(Op::Max),
            "cdiv" => Some(Op::CeilDiv),
            _ => None,
        }
    }
}

/// An arithmetic expression over named sizes, evaluated to an unsigned integer.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SizeExpr {
    ops: Cow<'static, [Op]>,
}

/// Why a size expression could not be parsed or evaluated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExprError {
    /// A name in the expression has no value in the shape it is evaluated on.
    #[error("`{name}` used in `{expr}` has no value")]
    UnknownSize {
        /// The missing name.
        name: String,
        /// The expression, as written.
        expr: String,
    },
    /// Arithmetic left the range of `u64` or divided by zero.
    #[error("`{expr}` does not evaluate to a non-negative integer ({what})")]
    Arithmetic {
        /// The expression, as written.
        expr: String,
        /// What went wrong: overflow, underflow or division by zero.
        what: &'static str,
    },
    /// The text is not an expression of the grammar `term (('+'|'-') term)*`, etc.
    #[error("cannot parse size expression `{text}`: {message}")]
    Parse {
        /// The text given.
        text: String,
        /// What the parser expected.
        message: String,
    },
    /// The postfix program is malformed (only possible for hand-built programs).
    #[error("malformed size expression program")]
    Malformed,
}

impl SizeExpr {
    /// An expression from a static postfix program. Used by the macro's expansion.
    pub const fn from_static(ops: &'static [Op]) -> Self {
        SizeExpr {
            ops: Cow::Borrowed(ops),
        }
    }

    /// An expression from an owned postfix program.
    pub fn from_ops(ops: Vec<Op>) -> Self {
        SizeExpr {
            ops: Cow::Owned(ops),
        }
    }

    /// The constant `value`.
    pub fn lit(value: u64) -> Self {
        SizeExpr::from_ops(vec![Op::Lit(value)])
    }

    /// The named size `name`.
    pub fn size(name: &str) -> Self {
        SizeExpr::from_ops(vec![Op::Size(Cow::Owned(name.to_owned()))])
    }

    /// The postfix program.
    pub fn ops(&self) -> &[Op] {
        &self.ops
    }

    /// The constant this expression always evaluates to, if it names no size.
    pub fn as_constant(&self) -> Option<u64> {
        if self.names().next().is_some() {
            return None;
        }
        self.eval(|_| None).ok()
    }

    /// Every size name the expression uses, in order of appearance (with repeats).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.ops.iter().filter_map(|op| match op {
            Op::Size(name) => Some(name.as_ref()),
            _ => None,
        })
    }

    /// Evaluates with `lookup` giving each named size's value.
    pub fn eval(&self, lookup: impl Fn(&str) -> Option<u64>) -> Result<u64, ExprError> {
        let mut stack: Vec<u64> = Vec::with_capacity(4);
        let arith = |what| ExprError::Arithmetic {
            expr: self.to_string(),
            what,
        };
        for op in self.ops.iter() {
            match op {
                Op::Lit(v) => stack.push(*v),
                Op::Size(name) => {
                    stack.push(lookup(name).ok_or_else(|| ExprError::UnknownSize {
                        name: name.to_string(),
                        expr: self.to_string(),
                    })?)
                }
                _ => {
                    let b = stack.pop().ok_or(ExprError::Malformed)?;
                    let a = stack.pop().ok_or(ExprError::Malformed)?;
                    let v = match op {
                        Op::Add => a.checked_add(b).ok_or_else(|| arith("overflow"))?,
                        Op::Sub => a.checked_sub(b).ok_or_else(|| arith("underflow"))?,
                        Op::Mul => a.checked_mul(b).ok_or_else(|| arith("overflow"))?,
                        Op::Div => a.checked_div(b).ok_or_else(|| arith("division by zero"))?,
                        Op::Rem => a.checked_rem(b).ok_or_else(|| arith("division by zero"))?,
                        Op::Min => a.min(b),
                        Op::Max => a.max(b),
                        Op::CeilDiv => {
                            if b == 0 {
                                return Err(arith("division by zero"));
                            }
                            a.div_ceil(b)
                        }
                        Op::Lit(_) | Op::Size(_) => unreachable!("handled above"),
                    };
                    stack.push(v);
                }
            }
        }
        match stack.as_slice() {
            [v] => Ok(*v),
            _ => Err(ExprError::Malformed),
        }
    }

    /// Evaluates against a list of `(name, value)` pairs.
    pub fn eval_with(&self, sizes: &[(&str, u64)]) -> Result<u64, ExprError> {
        self.eval(|name| sizes.iter().find(|(n, _)| *n == name).map(|(_, v)| *v))
    }

    /// Parses the infix form written by [`Display`](fmt::Display): integers, identifiers,
    /// `+ - * / %` with the usual precedence, parentheses, and the calls `min(a, b)`,
    /// `max(a, b)` and `cdiv(a, b)` (division rounded up).
    pub fn parse(text: &str) -> Result<SizeExpr, ExprError> {
        let mut parser = Parser {
            text,
            pos: 0,
            ops: Vec::new(),
        };
        parser.expr()?;
        parser.skip_ws();
        if parser.pos != text.len() {
            return Err(parser.error("unexpected trailing input"));
        }
        Ok(SizeExpr::from_ops(parser.ops))
    }
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
    ops: Vec<Op>,
}

impl Parser<'_> {
    fn error(&self, message: &str) -> ExprError {
        ExprError::Parse {
            text: self.text.to_owned(),
            message: format!("{message} at byte {}", self.pos),
        }
    }

    fn skip_ws(&mut self) {
        while self.text[self.pos..].starts_with(char::is_whitespace) {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_ws();
        self.text[self.pos..].chars().next()
    }

    fn expr(&mut self) -> Result<(), ExprError> {
        self.term()?;
        while let Some(c @ ('+' | '-')) = self.peek() {
            self.pos += 1;
            self.term()?;
            self.ops.push(if c == '+' { Op::Add } else { Op::Sub });
        }
        Ok(())
    }

    fn term(&mut self) -> Result<(), ExprError> {
        self.atom()?;
        while let Some(c @ ('*' | '/' | '%')) = self.peek() {
            self.pos += 1;
            self.atom()?;
            self.ops.push(match c {
                '*' => Op::Mul,
                '/' => Op::Div,
                _ => Op::Rem,
            });
        }
        Ok(())
    }

    fn atom(&mut self) -> Result<(), ExprError> {
        match self.peek() {
            Some('(') => {
                self.pos += 1;
                self.expr()?;
                if self.peek() != Some(')') {
                    return Err(self.error("expected `)`"));
                }
                self.pos += 1;
                Ok(())
            }
            Some(c) if c.is_ascii_digit() => {
                let start = self.pos;
                while self.text[self.pos..].starts_with(|c: char| c.is_ascii_digit() || c == '_') {
                    self.pos += 1;
                }
                let digits: String = self.text[start..self.pos]
                    .chars()
                    .filter(|c| *c != '_')
                    .collect();
                let value = digits
                    .parse()
                    .map_err(|_| self.error("integer literal out of range"))?;
                self.ops.push(Op::Lit(value));
                Ok(())
            }
            Some(c) if c.is_alphabetic() || c == '_' => {
                let start = self.pos;
                while self.text[self.pos..].starts_with(|c: char| c.is_alphanumeric() || c == '_') {
                    self.pos += 1;
                }
                let name = &self.text[start..self.pos];
                if let Some(op) = Op::function(name)
                    && self.peek() == Some('(')
                {
                    self.pos += 1;
                    self.expr()?;
                    if self.peek() != Some(',') {
                        return Err(self.error("expected `,` between the two arguments"));
                    }
                    self.pos += 1;
                    self.expr()?;
                    if self.peek() != Some(')') {
                        return Err(self.error("expected `)`"));
                    }
                    self.pos += 1;
                    self.ops.push(op);
                    return Ok(());
                }
                self.ops.push(Op::Size(Cow::Owned(name.to_owned())));
                Ok(())
            }
            _ => Err(self.error("expected a number, a size name or `(`")),
        }
    }
}

/// Precedence of the node on top of a rendering stack: 3 for atoms, 2 for `* / %`, 1 for `+ -`.
fn precedence(op: &Op) -> u8 {
    match op {
        Op::Lit(_) | Op::Size(_) | Op::Min | Op::Max | Op::CeilDiv => 3,
        Op::Mul | Op::Div | Op::Rem => 2,
        Op::Add | Op::Sub => 1,
    }
}

impl fmt::Display for SizeExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Rebuild infix text with the fewest parentheses that keep the meaning. Each entry is
        // the text, its precedence, its outermost operator (`None`: an atom or a call), and
        // whether its outermost chain of `*`, `/` and `%` holds nothing but `*`.
        let mut stack: Vec<(String, u8, Option<&Op>, bool)> = Vec::new();
        for op in self.ops.iter() {
            match op {
                Op::Lit(v) => stack.push((v.to_string(), 3, None, true)),
                Op::Size(name) => stack.push((name.to_string(), 3, None, true)),
                _ => {
                    let (Some((b, pb, ob, b_product)), Some((a, pa, _, a_product))) =
                        (stack.pop(), stack.pop())
                    else {
                        return f.write_str("<malformed>");
                    };
                    if let Some(name) = op.function_name() {
                        stack.push((format!("{name}({a}, {b})"), 3, None, true));
                        continue;
                    }
                    let p = precedence(op);
                    let sym = match op {
                        Op::Add => "+",
                        Op::Sub => "-",
                        Op::Mul => "*",
                        Op::Div => "/",
                        _ => "%",
                    };
                    let left = if pa < p { format!("({a})") } else { a };
                    // The right operand needs parentheses at equal precedence too: a - (b - c),
                    // and a * (b / c), which integer division makes other than a * b / c. Only a
                    // sum added, or a product of nothing but products multiplied, may drop them
                    // (a * (b / c * d) is not a * b / c * d either).
                    let same = ob == Some(op)
                        && match op {
                            Op::Add => true,
                            Op::Mul => b_product,
                            _ => false,
                        };
                    let bracketed = pb < p || (pb == p && !same);
                    let right = if bracketed { format!("({b})") } else { b };
                    let product = *op == Op::Mul
                        && (pa != p || a_product)
                        && (bracketed || pb != p || b_product);
                    stack.push((format!("{left} {sym} {right}"), p, Some(op), product));
                }
            }
        }
        match stack.as_slice() {
            [(s, _, _, _)] => f.write_str(s),
            _ => f.write_str("<malformed>"),
        }
    }
}

impl SizeExpr {
    /// The expression as WGSL `u32` arithmetic, for a rewrite that must compute a size inside a
    /// kernel (a bound it adds): literals as `7u`, each size as the text `size` gives it (a
    /// uniform the kernel binds), `cdiv(a, b)` as `(a + b - 1u) / b`. `Err` names the first size
    /// `size` has no text for.
    pub fn to_wgsl(&self, size: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
        let mut stack: Vec<String> = Vec::new();
        for op in self.ops.iter() {
            let text = match op {
                Op::Lit(v) => format!("{v}u"),
                Op::Size(name) => size(name).ok_or_else(|| name.to_string())?,
                _ => {
                    let (Some(b), Some(a)) = (stack.pop(), stack.pop()) else {
                        return Err(self.to_string());
                    };
                    match op {
                        Op::Add => format!("({a} + {b})"),
                        Op::Sub => format!("({a} - {b})"),
                        Op::Mul => format!("({a} * {b})"),
                        Op::Div => format!("({a} / {b})"),
                        Op::Rem => format!("({a} % {b})"),
                        Op::Min => format!("min({a}, {b})"),
                        Op::Max => format!("max({a}, {b})"),
                        Op::CeilDiv => format!("(({a} + {b} - 1u) / {b})"),
                        Op::Lit(_) | Op::Size(_) => unreachable!("handled above"),
                    }
                }
            };
            stack.push(text);
        }
        match <[String; 1]>::try_from(stack) {
            Ok([t]) => Ok(t),
            Err(_) => Err(self.to_string()),
        }
    }
}

impl serde::Serialize for SizeExpr {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for SizeExpr {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <Cow<'de, str>>::deserialize(deserializer)?;
        SizeExpr::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_size_expression_is_written_as_wgsl_over_the_texts_of_its_sizes() {
        let text = |n: &str| (n != "k").then(|| format!("u32(d.{n})"));
        let e = SizeExpr::parse("cdiv(m * n, 64) + max(n, 2)").unwrap();
        assert_eq!(
            e.to_wgsl(&text).unwrap(),
            "((((u32(d.m) * u32(d.n)) + 64u - 1u) / 64u) + max(u32(d.n), 2u))"
        );
        assert_eq!(
            SizeExpr::parse("m - k").unwrap().to_wgsl(&text),
            Err("k".to_owned())
        );
    }

    #[track_caller]
    fn check(text: &str, sizes: &[(&str, u64)], expected: Result<u64, &str>, display: &str) {
        let expr = SizeExpr::parse(text).expect("parses");
        assert_eq!(expr.to_string(), display);
        assert_eq!(
            SizeExpr::parse(display).unwrap(),
            expr,
            "display round-trips"
        );
        match (expr.eval_with(sizes), expected) {
            (Ok(v), Ok(e)) => assert_eq!(v, e),
            (Err(err), Err(e)) => assert!(err.to_string().contains(e), "{err}"),
            (got, want) => panic!("got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn a_quotient_or_remainder_on_the_right_of_a_product_keeps_its_parentheses() {
        // Integer division makes `a * (b / c)` other than `a * b / c`: printed without the
        // parentheses, a launch rule `8 * ((128 + 127) / 128)` was read back as 15, not 8.
        let sizes = [("b", 8), ("c", 128)];
        check(
            "b * ((c + 127) / 128)",
            &sizes,
            Ok(8),
            "b * ((c + 127) / 128)",
        );
        check("b * (c % 100)", &sizes, Ok(224), "b * (c % 100)");
        check("b / (c / 64)", &sizes, Ok(4), "b / (c / 64)");
        // A product multiplied and a sum added drop them: the same value.
        for (text, display) in [("b * (c * 2)", "b * c * 2"), ("b + (c + 2)", "b + c + 2")] {
            let e = SizeExpr::parse(text).unwrap();
            assert_eq!(e.to_string(), display);
            let back = SizeExpr::parse(display).unwrap();
            assert_eq!(back.eval_with(&sizes), e.eval_with(&sizes));
        }
        check("b + (c - 2)", &sizes, Ok(134), "b + (c - 2)");
        check("b * c / 64", &sizes, Ok(16), "b * c / 64");
        // Built as the launch rules build it, postfix: cdiv(b * c, c) * ((c + 63) / 64).
        let rule = SizeExpr::from_ops(vec![
            Op::Size("b".into()),
            Op::Size("c".into()),
            Op::Mul,
            Op::Size("c".into()),
            Op::CeilDiv,
            Op::Size("c".into()),
            Op::Lit(63),
            Op::Add,
            Op::Lit(64),
            Op::Div,
            Op::Mul,
        ]);
        let text = rule.to_string();
        assert_eq!(text, "cdiv(b * c, c) * ((c + 63) / 64)");
        let back = SizeExpr::parse(&text).unwrap();
        assert_eq!(back.eval_with(&sizes), rule.eval_with(&sizes));
        assert_eq!(rule.eval_with(&sizes), Ok(16));
    }

    /// Random expressions over every operator: each one's text reads back as the same value on
    /// several sizes (where it has one), the property cache entries and workers rely on.
    #[test]
    fn every_expression_reads_back_from_its_text_as_its_value() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let binary = [
            Op::Add,
            Op::Sub,
            Op::Mul,
            Op::Div,
            Op::Rem,
            Op::Min,
            Op::Max,
            Op::CeilDiv,
        ];
        let size_sets: [[(&str, u64); 3]; 3] = [
            [("a", 7), ("b", 64), ("c", 5)],
            [("a", 1000), ("b", 3), ("c", 17)],
            [("a", 129), ("b", 128), ("c", 2)],
        ];
        let mut compared = 0;
        for _ in 0..4000 {
            // A postfix program of 1 to 7 leaves.
            let leaves = 1 + next(7);
            let mut ops = Vec::new();
            let mut depth = 0u64;
            let mut placed = 0;
            while placed < leaves || depth > 1 {
                if placed < leaves && (depth < 2 || next(2) == 0) {
                    ops.push(match next(4) {
                        0 => Op::Size("a".into()),
                        1 => Op::Size("b".into()),
                        2 => Op::Size("c".into()),
                        _ => Op::Lit(1 + next(130)),
                    });
                    placed += 1;
                    depth += 1;
                } else {
                    ops.push(binary[next(binary.len() as u64) as usize].clone());
                    depth -= 1;
                }
            }
            let e = SizeExpr::from_ops(ops);
            let text = e.to_string();
            let back = SizeExpr::parse(&text).unwrap_or_else(|err| panic!("{text}: {err}"));
            for sizes in &size_sets {
                if let Ok(v) = e.eval_with(sizes) {
                    assert_eq!(back.eval_with(sizes), Ok(v), "{text} on {sizes:?}: {e:?}");
                    compared += 1;
                }
            }
        }
        assert!(compared > 3000, "{compared}");
    }

    #[test]
    fn arithmetic_and_display() {
        check(
            "rows*cols",
            &[("rows", 3), ("cols", 5)],
            Ok(15),
            "rows * cols",
        );
        check("(n + 3) / 4", &[("n", 9)], Ok(3), "(n + 3) / 4");
        check(
            "a - (b - c)",
            &[("a", 9), ("b", 5), ("c", 2)],
            Ok(6),
            "a - (b - c)",
        );
        check(
            "a - b - c",
            &[("a", 9), ("b", 5), ("c", 2)],
            Ok(2),
            "a - b - c",
        );
        check(
            "2 * (a + b) % 7",
            &[("a", 9), ("b", 5)],
            Ok(0),
            "2 * (a + b) % 7",
        );
        check("1_024", &[], Ok(1024), "1024");
        check("cdiv(n, 256)", &[("n", 1000)], Ok(4), "cdiv(n, 256)");
        check("cdiv(n,4)*4", &[("n", 9)], Ok(12), "cdiv(n, 4) * 4");
        check(
            "min(cdiv(n, 64), 65535)",
            &[("n", 1 << 30)],
            Ok(65535),
            "min(cdiv(n, 64), 65535)",
        );
        check(
            "max(rows - 1, 1) + 2",
            &[("rows", 0)],
            Err("underflow"),
            "max(rows - 1, 1) + 2",
        );
        check(
            "max(rows, cols)",
            &[("rows", 3), ("cols", 5)],
            Ok(5),
            "max(rows, cols)",
        );
        check(
            "cdiv(n, m)",
            &[("n", 3), ("m", 0)],
            Err("division by zero"),
            "cdiv(n, m)",
        );
        // A size may still be called `min` when it is not called as a function.
        check("min + 1", &[("min", 2)], Ok(3), "min + 1");
        assert!(SizeExpr::parse("min(n)").is_err());
        assert!(SizeExpr::parse("cdiv(n, 4").is_err());
    }

    #[test]
    fn errors_name_the_expression() {
        check("n - 5", &[("n", 3)], Err("underflow"), "n - 5");
        check(
            "n / m",
            &[("n", 3), ("m", 0)],
            Err("division by zero"),
            "n / m",
        );
        check("n * k", &[("n", 3)], Err("`k` used in `n * k`"), "n * k");
        assert!(SizeExpr::parse("n +").is_err());
        assert!(SizeExpr::parse("(n").is_err());
        assert!(SizeExpr::parse("n m").is_err());
    }

    #[test]
    fn serde_is_the_infix_string() {
        let expr = SizeExpr::parse("rows * (cols + 1)").unwrap();
        let json = serde_json::to_string(&expr).unwrap();
        assert_eq!(json, "\"rows * (cols + 1)\"");
        assert_eq!(serde_json::from_str::<SizeExpr>(&json).unwrap(), expr);
        assert!(serde_json::from_str::<SizeExpr>("\"rows *\"").is_err());
    }

    #[test]
    fn static_programs_evaluate() {
        static OPS: [Op; 3] = [Op::Size(Cow::Borrowed("n")), Op::Lit(2), Op::Mul];
        const E: SizeExpr = SizeExpr::from_static(&OPS);
        assert_eq!(E.eval_with(&[("n", 21)]), Ok(42));
        assert_eq!(E.as_constant(), None);
        assert_eq!(SizeExpr::parse("4*8").unwrap().as_constant(), Some(32));
    }
}

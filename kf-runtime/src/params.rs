//! Expressions over template parameters: derived parameter values (`THREADS = X * Y`) and
//! constraints between parameters and sizes (`ITEMS == 2 * THREADS`, `pow2(TILE)`,
//! `n % TILE == 0`).
//!
//! A kernel's `override`s are rarely independent: a workgroup is `X * Y` invocations, a tile must
//! divide a size, an unroll factor must be a power of two. Written in the attribute, these let the
//! search enumerate only points that can be right instead of spending its budget on ones that
//! cannot. Expressions are integer arithmetic (bools are 0 and 1) and live in the spec and the
//! resolved kernel as plain data; they are never embedded in a user's binary.
//!
//! Invariant: evaluation never panics; overflow, division by zero and unknown names are errors
//! that name the expression.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A unary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UnOp {
    /// `-a`.
    Neg,
    /// `!a` (1 when `a` is 0, else 0).
    Not,
}

/// A binary operator; comparisons and logic give 1 or 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BinOp {
    /// `+`.
    Add,
    /// `-`.
    Sub,
    /// `*`.
    Mul,
    /// `/`, rounded toward zero.
    Div,
    /// `%`.
    Rem,
    /// `<<`.
    Shl,
    /// `==`.
    Eq,
    /// `!=`.
    Ne,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
    /// `&&`.
    And,
    /// `||`.
    Or,
}

impl BinOp {
    fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Shl => "<<",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }
}

/// A function an expression may call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Func {
    /// `min(a, b)`.
    Min,
    /// `max(a, b)`.
    Max,
    /// `cdiv(a, b)`: division rounded up.
    Cdiv,
    /// `pow2(a)`: 1 when `a` is a power of two, else 0.
    Pow2,
}

impl Func {
    /// Every function by name, for parsing and hints.
    pub const ALL: [(&'static str, Func, usize); 4] = [
        ("min", Func::Min, 2),
        ("max", Func::Max, 2),
        ("cdiv", Func::Cdiv, 2),
        ("pow2", Func::Pow2, 1),
    ];

    /// The function called `name` and its argument count.
    pub fn named(name: &str) -> Option<(Func, usize)> {
        Func::ALL
            .iter()
            .find(|(n, _, _)| *n == name)
            .map(|(_, f, arity)| (*f, *arity))
    }

    fn name(self) -> &'static str {
        Func::ALL
            .iter()
            .find(|(_, f, _)| *f == self)
            .map_or("?", |(n, _, _)| n)
    }
}

/// An integer expression over parameter (override) names and size names.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ParamExpr {
    /// An integer literal (`true` is 1, `false` 0).
    Int(i64),
    /// An override or a size, by name.
    Name(String),
    /// `-a` or `!a`.
    Unary(UnOp, Box<ParamExpr>),
    /// `a op b`.
    Binary(BinOp, Box<ParamExpr>, Box<ParamExpr>),
    /// `f(args..)`.
    Call(Func, Vec<ParamExpr>),
}

/// Why an expression could not be evaluated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParamExprError {
    /// A name has no value.
    #[error("`{name}` in `{expr}` has no value")]
    Unknown {
        /// The name.
        name: String,
        /// The expression.
        expr: String,
    },
    /// Overflow or division by zero.
    #[error("`{expr}` cannot be evaluated ({what})")]
    Arithmetic {
        /// The expression.
        expr: String,
        /// What went wrong.
        what: &'static str,
    },
}

impl ParamExpr {
    /// Every name the expression uses, in order (with repeats).
    pub fn names(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.collect_names(&mut out);
        out
    }

    fn collect_names<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            ParamExpr::Int(_) => {}
            ParamExpr::Name(n) => out.push(n),
            ParamExpr::Unary(_, a) => a.collect_names(out),
            ParamExpr::Binary(_, a, b) => {
                a.collect_names(out);
                b.collect_names(out);
            }
            ParamExpr::Call(_, args) => args.iter().for_each(|a| a.collect_names(out)),
        }
    }

    /// Evaluates with `lookup` giving each name's value.
    pub fn eval(&self, lookup: &dyn Fn(&str) -> Option<i64>) -> Result<i64, ParamExprError> {
        self.eval_in(self, lookup)
    }

    /// Evaluates `self`, a part of `root` (which errors name).
    fn eval_in(
        &self,
        root: &ParamExpr,
        lookup: &dyn Fn(&str) -> Option<i64>,
    ) -> Result<i64, ParamExprError> {
        let arith = |what| ParamExprError::Arithmetic {
            expr: root.to_string(),
            what,
        };
        let bool_of = |b: bool| i64::from(b);
        Ok(match self {
            ParamExpr::Int(v) => *v,
            ParamExpr::Name(n) => lookup(n).ok_or_else(|| ParamExprError::Unknown {
                name: n.clone(),
                expr: root.to_string(),
            })?,
            ParamExpr::Unary(UnOp::Neg, a) => a
                .eval_in(root, lookup)?
                .checked_neg()
                .ok_or(arith("overflow"))?,
            ParamExpr::Unary(UnOp::Not, a) => bool_of(a.eval_in(root, lookup)? == 0),
            ParamExpr::Binary(op, a, b) => {
                let x = a.eval_in(root, lookup)?;
                // `&&` and `||` short-circuit, so `d != 0 && n % d == 0` is safe.
                match op {
                    BinOp::And if x == 0 => return Ok(0),
                    BinOp::Or if x != 0 => return Ok(1),
                    _ => {}
                }
                let y = b.eval_in(root, lookup)?;
                match op {
                    BinOp::Add => x.checked_add(y).ok_or(arith("overflow"))?,
                    BinOp::Sub => x.checked_sub(y).ok_or(arith("overflow"))?,
                    BinOp::Mul => x.checked_mul(y).ok_or(arith("overflow"))?,
                    BinOp::Div => x.checked_div(y).ok_or(arith("division by zero"))?,
                    BinOp::Rem => x.checked_rem(y).ok_or(arith("division by zero"))?,
                    BinOp::Shl => u32::try_from(y)
                        .ok()
                        .and_then(|s| x.checked_shl(s))
                        .ok_or(arith("overflow"))?,
                    BinOp::Eq => bool_of(x == y),
                    BinOp::Ne => bool_of(x != y),
                    BinOp::Lt => bool_of(x < y),
                    BinOp::Le => bool_of(x <= y),
                    BinOp::Gt => bool_of(x > y),
                    BinOp::Ge => bool_of(x >= y),
                    BinOp::And | BinOp::Or => bool_of(y != 0),
                }
            }
            ParamExpr::Call(f, args) => {
                let v: Vec<i64> = args
                    .iter()
                    .map(|a| a.eval_in(root, lookup))
                    .collect::<Result<_, _>>()?;
                match (f, v.as_slice()) {
                    (Func::Min, [a, b]) => *a.min(b),
                    (Func::Max, [a, b]) => *a.max(b),
                    (Func::Cdiv, [a, b]) => {
                        if *b == 0 {
                            return Err(arith("division by zero"));
                        }
                        a.checked_add(b - b.signum())
                            .ok_or(arith("overflow"))?
                            .div_euclid(*b)
                    }
                    (Func::Pow2, [a]) => bool_of(*a > 0 && (*a & (*a - 1)) == 0),
                    _ => return Err(arith("wrong number of arguments")),
                }
            }
        })
    }
}

fn precedence(e: &ParamExpr) -> u8 {
    match e {
        ParamExpr::Binary(op, _, _) => match op {
            BinOp::Or => 1,
            BinOp::And => 2,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => 3,
            BinOp::Shl => 4,
            BinOp::Add | BinOp::Sub => 5,
            BinOp::Mul | BinOp::Div | BinOp::Rem => 6,
        },
        ParamExpr::Unary(..) => 7,
        _ => 8,
    }
}

impl fmt::Display for ParamExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let wrap = |f: &mut fmt::Formatter<'_>, e: &ParamExpr, min: u8| {
            if precedence(e) < min {
                write!(f, "({e})")
            } else {
                write!(f, "{e}")
            }
        };
        match self {
            ParamExpr::Int(v) => write!(f, "{v}"),
            ParamExpr::Name(n) => f.write_str(n),
            ParamExpr::Unary(op, a) => {
                f.write_str(if *op == UnOp::Neg { "-" } else { "!" })?;
                wrap(f, a, 7)
            }
            ParamExpr::Binary(op, a, b) => {
                let p = precedence(self);
                wrap(f, a, p)?;
                write!(f, " {} ", op.symbol())?;
                wrap(f, b, p + 1)
            }
            ParamExpr::Call(func, args) => {
                write!(f, "{}(", func.name())?;
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{a}")?;
                }
                f.write_str(")")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(n: &str) -> Box<ParamExpr> {
        Box::new(ParamExpr::Name(n.into()))
    }

    fn bin(op: BinOp, a: ParamExpr, b: ParamExpr) -> ParamExpr {
        ParamExpr::Binary(op, Box::new(a), Box::new(b))
    }

    #[track_caller]
    fn check(e: &ParamExpr, vars: &[(&str, i64)], want: Result<i64, &str>, text: &str) {
        assert_eq!(e.to_string(), text);
        let lookup = |n: &str| vars.iter().find(|(k, _)| *k == n).map(|(_, v)| *v);
        match (e.eval(&lookup), want) {
            (Ok(v), Ok(w)) => assert_eq!(v, w, "{text}"),
            (Err(err), Err(w)) => assert!(err.to_string().contains(w), "{err}"),
            (got, want) => panic!("{text}: got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn arithmetic_logic_and_functions() {
        let threads = bin(BinOp::Mul, *name("X"), *name("Y"));
        check(&threads, &[("X", 8), ("Y", 4)], Ok(32), "X * Y");
        let divides = bin(
            BinOp::Eq,
            bin(BinOp::Rem, *name("n"), threads.clone()),
            ParamExpr::Int(0),
        );
        check(
            &divides,
            &[("X", 8), ("Y", 4), ("n", 96)],
            Ok(1),
            "n % (X * Y) == 0",
        );
        check(
            &divides,
            &[("X", 8), ("Y", 4), ("n", 97)],
            Ok(0),
            "n % (X * Y) == 0",
        );
        let pow2 = ParamExpr::Call(Func::Pow2, vec![*name("T")]);
        check(&pow2, &[("T", 64)], Ok(1), "pow2(T)");
        check(&pow2, &[("T", 48)], Ok(0), "pow2(T)");
        check(&pow2, &[("T", 0)], Ok(0), "pow2(T)");
        let cdiv = ParamExpr::Call(Func::Cdiv, vec![*name("n"), ParamExpr::Int(4)]);
        check(&cdiv, &[("n", 9)], Ok(3), "cdiv(n, 4)");
        let guarded = bin(
            BinOp::And,
            bin(BinOp::Ne, *name("d"), ParamExpr::Int(0)),
            bin(BinOp::Rem, *name("n"), *name("d")),
        );
        check(&guarded, &[("d", 0), ("n", 5)], Ok(0), "d != 0 && n % d");
        let unsafe_rem = bin(BinOp::Rem, *name("n"), *name("d"));
        check(
            &unsafe_rem,
            &[("d", 0), ("n", 5)],
            Err("division by zero"),
            "n % d",
        );
        check(
            &unsafe_rem,
            &[("n", 5)],
            Err("`d` in `n % d` has no value"),
            "n % d",
        );
        let not = ParamExpr::Unary(UnOp::Not, Box::new(bin(BinOp::Lt, *name("a"), *name("b"))));
        check(&not, &[("a", 1), ("b", 2)], Ok(0), "!(a < b)");
        let sub = bin(
            BinOp::Sub,
            *name("a"),
            bin(BinOp::Sub, *name("b"), *name("c")),
        );
        check(&sub, &[("a", 9), ("b", 5), ("c", 2)], Ok(6), "a - (b - c)");
    }

    #[test]
    fn serde_round_trips() {
        let e = bin(
            BinOp::Le,
            bin(BinOp::Mul, *name("X"), ParamExpr::Int(2)),
            *name("N"),
        );
        let json = serde_json::to_string(&e).unwrap();
        assert_eq!(serde_json::from_str::<ParamExpr>(&json).unwrap(), e);
    }
}

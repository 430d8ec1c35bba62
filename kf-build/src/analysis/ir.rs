//! The IR analysis every rewrite operator stands on: what a kernel's entry point does, recovered
//! from naga's IR, with the byte ranges of the WGSL text each piece came from.
//!
//! Operators prove their patterns here (never with regexes over the source) and then edit the
//! user's text at the ranges this module reports. What it recovers:
//!
//! - the compute entry point and its builtin arguments, with the vector components the body uses
//!   ([`BuiltinArg`]);
//! - every statement, flattened in text order with its enclosing statement and loops ([`Stmt`]);
//! - every loop, and for the loops naga lowered from WGSL `for`, `while` and
//!   `loop { if c { break; } .. continuing { i++; } }`, a [`ForLoop`]: loop variable, initial
//!   value, bounds, step, and the text of the header, condition, step and body;
//! - an affine "index form" of integer expressions ([`IndexForm`]): a sum of invocation-id
//!   components and loop variables, each with a coefficient that is a polynomial over uniform
//!   values (literals, constants, overrides, uniform-buffer and read-only-storage loads at uniform
//!   indices, `arrayLength`), seeing through `let`s, casts and variables assigned once;
//! - loads and stores of global buffers with their index forms ([`Access`]);
//! - the accumulators of a loop: local variables only ever updated as `acc = acc ⊕ f(..)` with ⊕
//!   one of `+`/`-`, `*`, `max`, `min`, `&`, `|`, `^` ([`Accumulator`], [`LoopEffects`]), and the
//!   (value, index) pairs of an arg-reduction, `if (v > m) { m = v; k = i; }` ([`ArgAccumulator`]);
//! - a WGSL printer for IR expressions ([`Analysis::expr_wgsl`]), used for canonical keys and for
//!   writing new code that refers to the user's values.
//!
//! What naga 30's WGSL front end records as spans (tested below, and why some helpers exist):
//! a statement's span covers its text without the trailing `;` (`m = max(m, x[i])`); a `var`
//! with a constant initializer produces no statement at all (the initializer moves into
//! `LocalVariable::init`, and the variable's span is `var c = 0u`); a `let` produces no statement
//! either, only its initializer expression, whose span does not cover `let name =`
//! ([`Analysis::let_statement`] finds it); the span of a call-like expression (`max(a, b)`,
//! `select(..)`) covers only the function name, while casts and constructors cover the whole call
//! ([`Analysis::expr_range`] widens the former); a `for` loop's initializer is a statement *before*
//! the `Loop` (a `Store` with span `var k = i32(r)`) unless it is constant; the span of the loop
//! head's `if (!cond) { break; }` is the condition text (` c < n;` for `for`, ` (c < n)` for
//! `while`).
//!
//! Invariant: analysis never fails on valid WGSL. Whatever is not recognised is reported as not
//! recognised (a `None`, or a reason string), never guessed; operators must `Skip` on it.

use super::Skip;
use super::access::for_each_stmt;
use super::print::{Leaf, Leaves, Wgsl, pointee};
pub use super::text::{Edit, apply_edits};
use naga::common::wgsl::TypeContext;
use naga::{
    BinaryOperator, Block, BuiltIn, Expression, Handle, LocalVariable, MathFunction, ScalarKind,
    Statement, TypeInner,
};
use std::ops::Range;

/// A byte range of the WGSL text.
pub type TextRange = Range<usize>;

/// Why WGSL could not be analysed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum IrError {
    /// The text is not WGSL.
    #[error("the WGSL does not parse: {0}")]
    Parse(String),
    /// The WGSL parses but naga rejects it.
    #[error("the WGSL is not valid: {0}")]
    Validation(String),
    /// No compute entry point of that name.
    #[error("no compute entry point `{0}`")]
    Entry(String),
}

/// A parsed and validated WGSL module, owning what [`Analysis`] borrows.
pub struct Parsed {
    /// The WGSL text the spans refer to.
    pub source: String,
    /// naga's IR.
    pub module: naga::Module,
    /// naga's validation results (expression types, uniformity).
    pub info: naga::valid::ModuleInfo,
}

/// Parses and validates `wgsl` with every capability naga knows (the adapter decides later).
pub fn parse(wgsl: &str) -> Result<Parsed, IrError> {
    let module =
        naga::front::wgsl::parse_str(wgsl).map_err(|e| IrError::Parse(e.emit_to_string(wgsl)))?;
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .map_err(|e| IrError::Validation(e.emit_to_string(wgsl)))?;
    Ok(Parsed {
        source: wgsl.to_owned(),
        module,
        info,
    })
}

/// Where the entry point's declaration sits in the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntrySignature {
    /// The attributes before `fn` (`@compute @workgroup_size(64)`), up to `fn`.
    pub attributes: TextRange,
    /// The function's name.
    pub name: TextRange,
    /// The parameter list, parentheses excluded.
    pub params: TextRange,
    /// The arguments of `@workgroup_size(..)`, parentheses excluded.
    pub workgroup_size: TextRange,
    /// The body, braces included.
    pub body: TextRange,
}

/// A builtin argument of the entry point (a plain argument, or a member of a struct argument).
#[derive(Clone, Debug, PartialEq)]
pub struct BuiltinArg {
    /// Which builtin.
    pub builtin: BuiltIn,
    /// The argument's index in the entry point's parameter list.
    pub arg: usize,
    /// The struct member, when the argument is a struct of builtins.
    pub member: Option<u32>,
    /// How the body names it: `gid`, or `input.gid` for a struct member.
    pub name: String,
    /// Vector components the body reads (`.x` → `[true, false, false, false]`); for a scalar
    /// builtin, `[used, false, false, false]`.
    pub components: [bool; 4],
    /// Whether the body uses the value other than through single components (passes `gid` whole,
    /// swizzles `gid.xy`, compares vectors).
    pub whole: bool,
}

impl BuiltinArg {
    /// Whether the body reads it at all.
    pub fn used(&self) -> bool {
        self.whole || self.components.iter().any(|&c| c)
    }
}

/// Which part of its parent statement a statement sits in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// The function body itself.
    Function,
    /// A `{ .. }` block statement.
    Block,
    /// The accept branch of an `if`.
    Accept,
    /// The reject branch of an `if`.
    Reject,
    /// The body of switch case `n`.
    Case(usize),
    /// The body of a loop.
    LoopBody,
    /// The `continuing` block of a loop.
    Continuing,
}

/// One statement, in text order.
#[derive(Clone, Debug)]
pub struct Stmt<'a> {
    /// The IR statement.
    pub stmt: &'a Statement,
    /// Its text, when naga recorded one (without the trailing `;`).
    pub span: Option<TextRange>,
    /// The enclosing compound statement (index into [`Analysis::stmts`]).
    pub parent: Option<usize>,
    /// Which part of the parent it sits in.
    pub part: Part,
    /// Its position in its block.
    pub index_in_block: usize,
    /// Enclosing loops, outermost first (indices into [`Analysis::loops`]).
    pub loops: Vec<usize>,
}

/// A comparison of a loop variable with its bound, normalised so the variable is on the left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    /// `i < bound`
    Lt,
    /// `i <= bound`
    Le,
    /// `i > bound`
    Gt,
    /// `i >= bound`
    Ge,
    /// `i != bound`
    Ne,
}

impl Cmp {
    fn of(op: BinaryOperator) -> Option<Cmp> {
        Some(match op {
            BinaryOperator::Less => Cmp::Lt,
            BinaryOperator::LessEqual => Cmp::Le,
            BinaryOperator::Greater => Cmp::Gt,
            BinaryOperator::GreaterEqual => Cmp::Ge,
            BinaryOperator::NotEqual => Cmp::Ne,
            _ => return None,
        })
    }
    /// `a op b` ⇔ `b flip(op) a`.
    fn flip(self) -> Cmp {
        match self {
            Cmp::Lt => Cmp::Gt,
            Cmp::Le => Cmp::Ge,
            Cmp::Gt => Cmp::Lt,
            Cmp::Ge => Cmp::Le,
            Cmp::Ne => Cmp::Ne,
        }
    }
    /// `!(a op b)` ⇔ `a negate(op) b`; `None` for `==`, whose negation is `!=` but whose
    /// un-negated form is not a bound.
    fn negate(op: BinaryOperator) -> Option<Cmp> {
        Some(match op {
            BinaryOperator::Less => Cmp::Ge,
            BinaryOperator::LessEqual => Cmp::Gt,
            BinaryOperator::Greater => Cmp::Le,
            BinaryOperator::GreaterEqual => Cmp::Lt,
            BinaryOperator::Equal => Cmp::Ne,
            _ => return None,
        })
    }
    /// The WGSL operator.
    pub fn wgsl(self) -> &'static str {
        match self {
            Cmp::Lt => "<",
            Cmp::Le => "<=",
            Cmp::Gt => ">",
            Cmp::Ge => ">=",
            Cmp::Ne => "!=",
        }
    }
}

/// One conjunct of a loop condition: `var (+ offset) cmp bound`.
#[derive(Clone, Debug, PartialEq)]
pub struct Bound {
    /// The comparison, with the variable on the left.
    pub cmp: Cmp,
    /// The loop-invariant side.
    pub bound: Handle<Expression>,
    /// A loop-invariant amount added to the variable before comparing (`i + 3u < n`).
    pub offset: Option<Handle<Expression>>,
}

/// How the loop was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoopKind {
    /// `for (init; cond; update) { body }`
    For,
    /// `while cond { body; update }`, or a `for` with the update written in the body.
    While,
    /// `loop { if c { break; } ..; continuing { update } }` (or the update last in the body).
    Loop,
}

/// A counted loop: `for (var i = init; i cmp bound; i += step) { body }` in any of its spellings.
#[derive(Clone, Debug, PartialEq)]
pub struct ForLoop {
    /// How it was written.
    pub kind: LoopKind,
    /// The loop variable.
    pub var: Handle<LocalVariable>,
    /// Its name.
    pub var_name: String,
    /// Its type.
    pub var_ty: Handle<naga::Type>,
    /// Its value on entry; `None` means the zero value (`var i: u32;`).
    pub init: Option<Handle<Expression>>,
    /// The text that gives the initial value: `var c = 0u` (in a `for` header or before a
    /// `while`) or `c = 0u`.
    pub init_span: Option<TextRange>,
    /// The initial value's text within `init_span` (`0u`), when it has one.
    pub init_value_span: Option<TextRange>,
    /// Whether the variable is declared in the `for` header (so it is not visible after the loop).
    pub declared_in_header: bool,
    /// The condition's conjuncts (the loop runs while all hold).
    pub bounds: Vec<Bound>,
    /// The condition as written (`c < n`), or its negation for `if c >= n { break; }`.
    pub cond: Handle<Expression>,
    /// Whether `cond` is the break condition (the loop runs while it is false).
    pub cond_negated: bool,
    /// The condition's text (without `;` and surrounding blanks).
    pub cond_span: Option<TextRange>,
    /// The amount the step adds (or subtracts, see `decreasing`).
    pub step: Handle<Expression>,
    /// Whether the step subtracts.
    pub decreasing: bool,
    /// The update statement's text (`c++`, `i = i + 1u`), without `;`.
    pub step_span: Option<TextRange>,
    /// The update statement (index into [`Analysis::stmts`]).
    pub step_stmt: usize,
    /// `for (..)` or `while cond`, up to the body's `{`.
    pub header_span: Option<TextRange>,
    /// The user's body block, braces included (the whole `loop { .. }` for [`LoopKind::Loop`]).
    pub body_span: Option<TextRange>,
}

/// One naga `Loop` statement.
#[derive(Clone, Debug)]
pub struct LoopInfo<'a> {
    /// The `Loop` statement (index into [`Analysis::stmts`]).
    pub stmt: usize,
    /// Its text (the whole `for`/`while`/`loop` statement).
    pub span: Option<TextRange>,
    /// naga's loop body.
    pub body: &'a Block,
    /// naga's continuing block.
    pub continuing: &'a Block,
    /// The enclosing loop.
    pub parent: Option<usize>,
    /// 0 for a loop not nested in another.
    pub depth: usize,
    /// The counted-loop view, when the loop is one.
    pub for_loop: Option<ForLoop>,
    /// Why it is not a counted loop, when it is not.
    pub not_counted: Option<String>,
}

/// The greatest common divisor (`gcd(0, b)` is `b`).
pub fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// A value an index form is built over: an invocation-id component or a loop variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Var {
    /// A component of a builtin (`global_invocation_id.x` is `(GlobalInvocationId, 0)`; scalar
    /// builtins use component 0).
    Builtin(BuiltIn, u32),
    /// The variable of a counted loop.
    Loop(Handle<LocalVariable>),
    /// Digit `i` of a builtin component in the mixed radix its divisions and remainders spell
    /// ([`Analysis::digits`]): for `col = id.x % n`, `row = (id.x / n) % m`, `b = id.x / (m * n)`
    /// digit 0 is the column, 1 the row and 2 the batch. Only [`Analysis::split_index_form`]
    /// produces it.
    Digit(BuiltIn, u32, u8),
}

/// A product of an integer and uniform atoms (canonical WGSL text of uniform leaves, sorted).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Mono {
    /// The uniform factors, e.g. `["shape.cols"]`.
    pub atoms: Vec<String>,
    /// The integer factor.
    pub k: i64,
}

/// A polynomial over uniform atoms: a sum of [`Mono`]s with distinct atom lists and non-zero `k`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Poly(pub Vec<Mono>);

impl Poly {
    /// The constant `k`.
    pub fn constant(k: i64) -> Poly {
        Poly(vec![Mono {
            atoms: Vec::new(),
            k,
        }])
        .normal()
    }

    /// The uniform atom `text`.
    pub fn atom(text: String) -> Poly {
        Poly(vec![Mono {
            atoms: vec![text],
            k: 1,
        }])
    }

    fn normal(mut self) -> Poly {
        for m in &mut self.0 {
            m.atoms.sort();
        }
        self.0.sort();
        let mut out: Vec<Mono> = Vec::new();
        for m in self.0 {
            match out.last_mut() {
                Some(last) if last.atoms == m.atoms => last.k += m.k,
                _ => out.push(m),
            }
        }
        out.retain(|m| m.k != 0);
        Poly(out)
    }

    /// Whether it is zero.
    pub fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    /// The integer it is, if it has no atoms.
    pub fn as_constant(&self) -> Option<i64> {
        match self.0.as_slice() {
            [] => Some(0),
            [m] if m.atoms.is_empty() => Some(m.k),
            _ => None,
        }
    }

    /// The integer `c` with `self = c · p`, for a non-zero `p` (`2 * n` of `n`: 2).
    pub fn integer_multiple_of(&self, p: &Poly) -> Option<i64> {
        let first = p.0.first()?;
        let matching = self.0.iter().find(|m| m.atoms == first.atoms)?;
        if first.k == 0 || matching.k % first.k != 0 {
            return None;
        }
        let c = matching.k / first.k;
        (p.scale(c) == *self).then_some(c)
    }

    /// Sum.
    pub fn add(&self, other: &Poly) -> Poly {
        Poly(self.0.iter().chain(&other.0).cloned().collect()).normal()
    }

    /// Product with an integer.
    pub fn scale(&self, k: i64) -> Poly {
        Poly(
            self.0
                .iter()
                .map(|m| Mono {
                    atoms: m.atoms.clone(),
                    k: m.k.saturating_mul(k),
                })
                .collect(),
        )
        .normal()
    }

    /// Product.
    pub fn mul(&self, other: &Poly) -> Poly {
        let mut out = Vec::new();
        for a in &self.0 {
            for b in &other.0 {
                out.push(Mono {
                    atoms: a.atoms.iter().chain(&b.atoms).cloned().collect(),
                    k: a.k.saturating_mul(b.k),
                });
            }
        }
        Poly(out).normal()
    }
}

impl std::fmt::Display for Poly {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_empty() {
            return f.write_str("0");
        }
        for (i, m) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" + ")?;
            }
            match (m.k, m.atoms.is_empty()) {
                (k, true) => write!(f, "{k}")?,
                (1, false) => {}
                (k, false) => write!(f, "{k}*")?,
            }
            f.write_str(&m.atoms.join("*"))?;
        }
        Ok(())
    }
}

/// A sort key that orders builtins before loop variables, each by kind and component.
fn var_key(v: Var) -> (u8, String, u32) {
    match v {
        Var::Builtin(b, c) => (0, format!("{b:?}"), c),
        Var::Loop(l) => (1, String::new(), l.index() as u32),
        Var::Digit(b, c, i) => (2, format!("{b:?}"), c * 256 + u32::from(i)),
    }
}

/// An integer expression as `Σ coefficient·var + offset`, coefficients and offset uniform.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IndexForm {
    /// Terms with non-zero coefficients: builtins (by kind, then component), then loop variables.
    pub terms: Vec<(Var, Poly)>,
    /// The uniform part.
    pub offset: Poly,
}

impl IndexForm {
    fn uniform(p: Poly) -> IndexForm {
        IndexForm {
            terms: Vec::new(),
            offset: p,
        }
    }

    fn var(v: Var) -> IndexForm {
        IndexForm {
            terms: vec![(v, Poly::constant(1))],
            offset: Poly::default(),
        }
    }

    /// The coefficient of `v` (zero when absent).
    pub fn coeff(&self, v: Var) -> Poly {
        self.terms
            .iter()
            .find(|(w, _)| *w == v)
            .map(|(_, c)| c.clone())
            .unwrap_or_default()
    }

    /// Whether no invocation id or loop variable appears.
    pub fn is_uniform(&self) -> bool {
        self.terms.is_empty()
    }

    /// Whether no loop variable appears (invocation ids may): the same on every lane of a
    /// workgroup that stands for one invocation.
    pub fn reads_no_loop_counter(&self) -> bool {
        self.terms.iter().all(|(v, _)| !matches!(v, Var::Loop(_)))
    }

    /// The variables it depends on.
    pub fn vars(&self) -> impl Iterator<Item = Var> + '_ {
        self.terms.iter().map(|(v, _)| *v)
    }

    /// Sum.
    pub fn add(&self, other: &IndexForm) -> IndexForm {
        let mut out = self.clone();
        for (v, c) in &other.terms {
            match out.terms.iter_mut().find(|(w, _)| w == v) {
                Some((_, d)) => *d = d.add(c),
                None => out.terms.push((*v, c.clone())),
            }
        }
        out.terms.retain(|(_, c)| !c.is_zero());
        out.terms.sort_by_key(|(v, _)| var_key(*v));
        out.offset = out.offset.add(&other.offset);
        out
    }

    /// Product with a uniform polynomial.
    pub fn scale(&self, p: &Poly) -> IndexForm {
        let mut out = IndexForm {
            terms: self
                .terms
                .iter()
                .map(|(v, c)| (*v, c.mul(p)))
                .filter(|(_, c)| !c.is_zero())
                .collect(),
            offset: self.offset.mul(p),
        };
        out.terms.retain(|(_, c)| !c.is_zero());
        out
    }

    /// This form minus `other`.
    pub fn sub(&self, other: &IndexForm) -> IndexForm {
        self.add(&other.scale(&Poly::constant(-1)))
    }
}

/// A load or store of a global variable (storage, uniform, workgroup or private).
#[derive(Clone, Debug, PartialEq)]
pub struct Access {
    /// The global.
    pub global: Handle<naga::GlobalVariable>,
    /// Its name.
    pub name: String,
    /// Its address space.
    pub space: naga::AddressSpace,
    /// A store (or an atomic) rather than a load.
    pub write: bool,
    /// The pointer expression.
    pub pointer: Handle<Expression>,
    /// The first array index expression on the path (the element index), if any.
    pub index: Option<Handle<Expression>>,
    /// The element index's affine form (also for a constant index), when it has one.
    pub form: Option<IndexForm>,
    /// A vector component selected after the element, if any (`x[i].y` → 1).
    pub component: Option<u32>,
    /// The statement that performs it (an `Emit` for loads, the `Store` for stores).
    pub stmt: usize,
    /// The pointer's text (`input[base + c]`).
    pub span: Option<TextRange>,
    /// For a load, the `Load` expression (its value).
    pub load: Option<Handle<Expression>>,
}

/// How an accumulator combines values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccOp {
    /// `acc = acc + f` and `acc = acc - f` (partials combine by addition).
    Add,
    /// `acc = acc * f`.
    Mul,
    /// `acc = max(acc, f)`.
    Max,
    /// `acc = min(acc, f)`.
    Min,
    /// `acc = acc & f`.
    And,
    /// `acc = acc | f`.
    Or,
    /// `acc = acc ^ f`.
    Xor,
}

impl AccOp {
    /// Whether combining a value with itself leaves it unchanged (so partials may all start from
    /// the accumulator's initial value).
    pub fn idempotent(self) -> bool {
        matches!(self, AccOp::Max | AccOp::Min | AccOp::And | AccOp::Or)
    }
}

/// A local variable a loop only updates as `acc = acc ⊕ f(..)`, with `f` not reading `acc`.
#[derive(Clone, Debug, PartialEq)]
pub struct Accumulator {
    /// The variable.
    pub var: Handle<LocalVariable>,
    /// Its name.
    pub name: String,
    /// Its type.
    pub ty: Handle<naga::Type>,
    /// How it combines.
    pub op: AccOp,
    /// The update statements (indices into [`Analysis::stmts`]).
    pub updates: Vec<usize>,
}

/// Which of several equal values an arg-reduction keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ties {
    /// The first (a strict comparison: `v > m`).
    First,
    /// The last (`v >= m`).
    Last,
}

/// A (value, index) pair a loop updates together under a comparison of the value with the
/// element, the canonical `if (x > m) { m = x; k = i; }` of an argmax (either store first; `>`,
/// `>=`, `<`, `<=`, either operand order), with `i` the loop variable.
///
/// The pair reduces like a `max` (or `min`) whose ties are broken by the index, so partial pairs
/// over interleaved iterations combine to exactly the loop's result: prefer the better value, and
/// of equal values the smaller index ([`Ties::First`]) or the larger ([`Ties::Last`]). For
/// [`Ties::Last`] the index's value before the loop is a constant below the loop's start (so a
/// partial that kept it never beats an element of equal value); for [`Ties::First`] any starting
/// pair combines exactly, since an element equal to it is never taken.
#[derive(Clone, Debug, PartialEq)]
pub struct ArgAccumulator {
    /// The value variable (`m`).
    pub value: Handle<LocalVariable>,
    /// Its name.
    pub value_name: String,
    /// Its type (a scalar number).
    pub value_ty: Handle<naga::Type>,
    /// The index variable (`k`).
    pub index: Handle<LocalVariable>,
    /// Its name.
    pub index_name: String,
    /// Its type (`u32` or `i32`).
    pub index_ty: Handle<naga::Type>,
    /// [`AccOp::Max`] or [`AccOp::Min`]: the value kept.
    pub op: AccOp,
    /// Which of equal values wins.
    pub ties: Ties,
    /// The `if` statement that updates the pair (index into [`Analysis::stmts`]).
    pub update: usize,
}

/// What a loop's iterations write, classified.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LoopEffects {
    /// Variables the loop accumulates into.
    pub accumulators: Vec<Accumulator>,
    /// (value, index) pairs the loop arg-reduces into; their variables are in no other list.
    pub args: Vec<ArgAccumulator>,
    /// Variables declared inside the loop body (fresh each iteration).
    pub private: Vec<Handle<LocalVariable>>,
    /// Other variables written in the loop (loop-carried), with the reason.
    pub carried: Vec<(Handle<LocalVariable>, String)>,
    /// Global writes in the loop (indices into [`Analysis::accesses`]).
    pub global_writes: Vec<usize>,
    /// Global reads in the loop (indices into [`Analysis::accesses`]).
    pub global_reads: Vec<usize>,
    /// Calls in the loop to functions that write globals or use barriers/atomics.
    pub effectful_calls: Vec<usize>,
    /// Barriers, atomics, `return`s or other statements the loop cannot be split around.
    pub other: Vec<String>,
}

/// A local's value at some point (see [`Analysis::value_before`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InitialValue {
    /// The value of this expression.
    Expr(Handle<Expression>),
    /// The zero value of its type (`var x: f32;`).
    Zero,
}

/// How [`Analysis::expr_wgsl`] prints named values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Naming {
    /// `let` values and arguments by their names (what the user reads).
    Names,
    /// Everything expanded down to globals, literals and variables (canonical keys).
    Inline,
}

/// The analysis of one compute entry point.
pub struct Analysis<'a> {
    /// The WGSL text.
    pub source: &'a str,
    /// The module.
    pub module: &'a naga::Module,
    /// Validation results of the entry point's function.
    pub info: &'a naga::valid::FunctionInfo,
    /// The entry point.
    pub entry: &'a naga::EntryPoint,
    /// Its function.
    pub function: &'a naga::Function,
    /// Builtin arguments.
    pub builtins: Vec<BuiltinArg>,
    /// Every statement, in text order (pre-order).
    pub stmts: Vec<Stmt<'a>>,
    /// Every loop, in text order.
    pub loops: Vec<LoopInfo<'a>>,
    /// Every global load and store.
    pub accesses: Vec<Access>,
    /// For each expression, the statement that evaluates it (its `Emit`, or the `Call`).
    emitted_at: Vec<Option<usize>>,
    /// For each local variable, the statements that store to it.
    local_stores: Vec<Vec<usize>>,
    /// For each local variable, its `Load` expressions.
    local_loads: Vec<Vec<Handle<Expression>>>,
    /// Functions (by index in `module.functions`) that write globals, use barriers or atomics.
    effectful_functions: Vec<bool>,
    /// Blanked-comment copy of the source, for lexical scans.
    code: String,
}

impl Parsed {
    /// Analyses the compute entry point `entry`.
    pub fn analyse(&self, entry: &str) -> Result<Analysis<'_>, IrError> {
        Analysis::new(self, entry)
    }
}

impl<'a> Analysis<'a> {
    /// Analyses the compute entry point `entry` of `parsed`.
    pub fn new(parsed: &'a Parsed, entry: &str) -> Result<Self, IrError> {
        let module = &parsed.module;
        let (index, ep) = module
            .entry_points
            .iter()
            .enumerate()
            .find(|(_, e)| e.name == entry && e.stage == naga::ShaderStage::Compute)
            .ok_or_else(|| IrError::Entry(entry.to_owned()))?;
        let function = &ep.function;
        let mut a = Analysis {
            source: &parsed.source,
            module,
            info: parsed.info.get_entry_point(index),
            entry: ep,
            function,
            builtins: Vec::new(),
            stmts: Vec::new(),
            loops: Vec::new(),
            accesses: Vec::new(),
            emitted_at: vec![None; function.expressions.len()],
            local_stores: vec![Vec::new(); function.local_variables.len()],
            local_loads: vec![Vec::new(); function.local_variables.len()],
            effectful_functions: Vec::new(),
            code: super::text::blank_comments(&parsed.source),
        };
        a.effectful_functions = effectful_functions(module);
        a.walk(&function.body, None, Part::Function, &[]);
        for (h, e) in function.expressions.iter() {
            if let Expression::Load { pointer } = *e
                && let Expression::LocalVariable(v) = function.expressions[pointer]
            {
                a.local_loads[v.index()].push(h);
            }
        }
        a.builtins = a.find_builtins();
        for id in 0..a.loops.len() {
            match a.recognise(id) {
                Ok(f) => a.loops[id].for_loop = Some(f),
                Err(why) => a.loops[id].not_counted = Some(why),
            }
        }
        a.accesses = a.find_accesses();
        Ok(a)
    }

    fn walk(&mut self, block: &'a Block, parent: Option<usize>, part: Part, loops: &[usize]) {
        for (i, (stmt, span)) in block.span_iter().enumerate() {
            let id = self.stmts.len();
            self.stmts.push(Stmt {
                stmt,
                span: span.to_range(),
                parent,
                part,
                index_in_block: i,
                loops: loops.to_vec(),
            });
            match stmt {
                Statement::Emit(range) => {
                    for h in range.clone() {
                        self.emitted_at[h.index()] = Some(id);
                    }
                }
                Statement::Call {
                    result: Some(r), ..
                } => self.emitted_at[r.index()] = Some(id),
                Statement::Store { pointer, .. } => {
                    if let Expression::LocalVariable(v) = self.function.expressions[*pointer] {
                        self.local_stores[v.index()].push(id);
                    }
                }
                _ => {}
            }
            match stmt {
                Statement::Block(b) => self.walk(b, Some(id), Part::Block, loops),
                Statement::If { accept, reject, .. } => {
                    self.walk(accept, Some(id), Part::Accept, loops);
                    self.walk(reject, Some(id), Part::Reject, loops);
                }
                Statement::Switch { cases, .. } => {
                    for (c, case) in cases.iter().enumerate() {
                        self.walk(&case.body, Some(id), Part::Case(c), loops);
                    }
                }
                Statement::Loop {
                    body, continuing, ..
                } => {
                    let lid = self.loops.len();
                    self.loops.push(LoopInfo {
                        stmt: id,
                        span: span.to_range(),
                        body,
                        continuing,
                        parent: loops.last().copied(),
                        depth: loops.len(),
                        for_loop: None,
                        not_counted: None,
                    });
                    let mut inner = loops.to_vec();
                    inner.push(lid);
                    self.walk(body, Some(id), Part::LoopBody, &inner);
                    self.walk(continuing, Some(id), Part::Continuing, &inner);
                }
                _ => {}
            }
        }
    }

    // ----- text -------------------------------------------------------------------------------

    /// The text of `range`.
    pub fn text(&self, range: &TextRange) -> &'a str {
        &self.source[range.clone()]
    }

    /// The source with comments replaced by spaces (same byte offsets), for lexical scans.
    pub fn code(&self) -> &str {
        &self.code
    }

    /// `range` extended over blanks and comments to include a following `;`, if there is one.
    pub fn with_semicolon(&self, range: &TextRange) -> TextRange {
        let range = &self.with_arguments(range);
        let rest = &self.code[range.end..];
        let trimmed = rest.trim_start();
        if trimmed.starts_with(';') {
            range.start..range.end + (rest.len() - trimmed.len()) + 1
        } else {
            range.clone()
        }
    }

    /// `range` widened over the argument list that follows it where it is only a name: naga
    /// records a barrier statement (`workgroupBarrier();`) by its name alone.
    fn with_arguments(&self, range: &TextRange) -> TextRange {
        let name = &self.code[range.clone()];
        let rest = &self.code[range.end..];
        let trimmed = rest.trim_start();
        if name.is_empty()
            || !name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
            || !trimmed.starts_with('(')
        {
            return range.clone();
        }
        let open = range.end + (rest.len() - trimmed.len());
        let mut depth = 0usize;
        for (i, c) in self.code[open..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        return range.start..open + i + 1;
                    }
                }
                _ => {}
            }
        }
        range.clone()
    }

    /// The start of the line `pos` is on, and the blanks that indent it.
    pub fn indent_at(&self, pos: usize) -> &'a str {
        let line_start = self.source[..pos].rfind('\n').map_or(0, |p| p + 1);
        let line = &self.source[line_start..];
        &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
    }

    /// The text of expression `h` as naga recorded it.
    pub fn expr_span(&self, h: Handle<Expression>) -> Option<TextRange> {
        self.function.expressions.get_span(h).to_range()
    }

    /// The full text of expression `h`: naga's span, widened over the argument list where naga
    /// records only a function's name (`max` → `max(a, b)`).
    pub fn expr_range(&self, h: Handle<Expression>) -> Option<TextRange> {
        let r = self.expr_span(h)?;
        let widen = matches!(
            self.function.expressions[h],
            Expression::Math { .. }
                | Expression::Select { .. }
                | Expression::Relational { .. }
                | Expression::ArrayLength(_)
                | Expression::As { .. }
                | Expression::Compose { .. }
                | Expression::Splat { .. }
        );
        if !widen {
            return Some(r);
        }
        let bytes = self.code.as_bytes();
        let mut i = r.end;
        // A template list (`vec4<f32>`) may follow the name.
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if i < bytes.len()
            && bytes[i] == b'<'
            && self.code[r.clone()].ends_with(char::is_alphanumeric)
        {
            let close = matching(&self.code, i, b'<', b'>')?;
            i = close + 1;
            while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                i += 1;
            }
        }
        if i < bytes.len() && bytes[i] == b'(' {
            let close = matching(&self.code, i, b'(', b')')?;
            return Some(r.start..close + 1);
        }
        Some(r)
    }

    /// The whole `let name = value;` statement (with `;`) that names expression `h`, and the
    /// name, found by scanning the text before the initializer's span for `let <name> (: T)? =`.
    pub fn let_statement(&self, h: Handle<Expression>) -> Option<(TextRange, String)> {
        let name = self.function.named_expressions.get(&h)?;
        let init = self.expr_range(h)?;
        let eq = self.code[..init.start].trim_end().strip_suffix('=')?.len();
        let mut search_end = eq;
        while let Some(at) = self.code[..search_end].rfind("let") {
            search_end = at;
            let word_start = at == 0 || !is_ident_byte(self.code.as_bytes()[at - 1]);
            let after = &self.code[at + 3..eq];
            let rest = after.trim_start();
            if !word_start || after.len() == rest.len() || !rest.starts_with(name.as_str()) {
                continue;
            }
            let tail = rest[name.len()..].trim();
            // Nothing but an optional `: type` between the name and `=`.
            if tail.is_empty() || (tail.starts_with(':') && !tail.contains([';', '{', '}', '='])) {
                let end = self.statement_end(init.end)?;
                return Some((at..end, name.clone()));
            }
            return None;
        }
        None
    }

    /// The byte after the `;` that ends the statement containing `pos` (brackets balanced).
    pub fn statement_end(&self, pos: usize) -> Option<usize> {
        let bytes = self.code.as_bytes();
        let mut depth = 0i32;
        for (i, &b) in bytes.iter().enumerate().skip(pos) {
            match b {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => {
                    depth -= 1;
                    if depth < 0 {
                        return None;
                    }
                }
                b';' if depth == 0 => return Some(i + 1),
                _ => {}
            }
        }
        None
    }

    /// The text range of the entry point's whole function, attributes included: what an
    /// operator that writes a new entry point replaces.
    pub fn entry_range(&self) -> Result<std::ops::Range<usize>, crate::analysis::Skip> {
        let signature = self
            .entry_signature()
            .ok_or_else(|| crate::analysis::Skip("cannot find the entry point's text".into()))?;
        Ok(signature.attributes.start..signature.body.end)
    }

    /// Where the entry point's declaration sits in the text, found lexically around
    /// `fn <entry>(` (naga records no span for entry points).
    pub fn entry_signature(&self) -> Option<EntrySignature> {
        let code = &self.code;
        let name = self.entry.name.as_str();
        let (at, name_start, open) = super::text::fn_declaration(code, name)?;
        let close = matching(code, open, b'(', b')')?;
        // The attributes between the previous item and `fn`.
        let item_start = code[..at].rfind(['}', ';']).map_or(0, |p| p + 1);
        let attrs_start = item_start + code[item_start..at].find('@')?;
        let attrs = &code[item_start..at];
        let rel = attrs.find("@workgroup_size")?;
        let wg_open = item_start + rel + attrs[rel..].find('(')?;
        let wg_close = matching(code, wg_open, b'(', b')')?;
        let body_open = close + code[close..].find('{')?;
        let body_close = matching(code, body_open, b'{', b'}')?;
        Some(EntrySignature {
            attributes: attrs_start..at,
            name: name_start..name_start + name.len(),
            params: open + 1..close,
            workgroup_size: wg_open + 1..wg_close,
            body: body_open..body_close + 1,
        })
    }

    // ----- builtins ---------------------------------------------------------------------------

    fn find_builtins(&self) -> Vec<BuiltinArg> {
        let f = self.function;
        let mut out = Vec::new();
        for (i, arg) in f.arguments.iter().enumerate() {
            let arg_name = arg.name.clone().unwrap_or_default();
            match (&arg.binding, &self.module.types[arg.ty].inner) {
                (Some(naga::Binding::BuiltIn(b)), _) => out.push(BuiltinArg {
                    builtin: *b,
                    arg: i,
                    member: None,
                    name: arg_name,
                    components: [false; 4],
                    whole: false,
                }),
                (None, TypeInner::Struct { members, .. }) => {
                    for (m, member) in members.iter().enumerate() {
                        if let Some(naga::Binding::BuiltIn(b)) = &member.binding {
                            out.push(BuiltinArg {
                                builtin: *b,
                                arg: i,
                                member: Some(m as u32),
                                name: format!(
                                    "{arg_name}.{}",
                                    member.name.clone().unwrap_or_default()
                                ),
                                components: [false; 4],
                                whole: false,
                            });
                        }
                    }
                }
                _ => {}
            }
        }
        // Uses: `arg`, `arg.c`, `arg.member`, `arg.member.c`.
        let exprs = &f.expressions;
        let is_vector = |b: &BuiltinArg| {
            let ty = match b.member {
                None => f.arguments[b.arg].ty,
                Some(m) => match &self.module.types[f.arguments[b.arg].ty].inner {
                    TypeInner::Struct { members, .. } => members[m as usize].ty,
                    _ => return false,
                },
            };
            matches!(self.module.types[ty].inner, TypeInner::Vector { .. })
        };
        for b in &mut out {
            let vector = is_vector(b);
            let root = exprs
                .iter()
                .find(|(_, e)| matches!(e, Expression::FunctionArgument(i) if *i as usize == b.arg))
                .map(|(h, _)| h);
            let Some(root) = root else { continue };
            // The expressions that stand for this builtin's value.
            let values: Vec<Handle<Expression>> = match b.member {
                None => vec![root],
                Some(m) => exprs
                    .iter()
                    .filter(|(_, e)| matches!(e, Expression::AccessIndex { base, index } if *base == root && *index == m))
                    .map(|(h, _)| h)
                    .collect(),
            };
            for v in values {
                for (_, e) in exprs.iter() {
                    match e {
                        Expression::AccessIndex { base, index } if *base == v && vector => {
                            b.components[(*index as usize).min(3)] = true;
                        }
                        Expression::Swizzle {
                            vector: base,
                            pattern,
                            size,
                        } if *base == v => {
                            for c in &pattern[..*size as usize] {
                                b.components[*c as usize] = true;
                            }
                            b.whole = true;
                        }
                        _ => {}
                    }
                }
                if self.expr_is_used_directly(v) {
                    if vector {
                        b.whole = true;
                    } else {
                        b.components[0] = true;
                    }
                }
            }
        }
        out
    }

    /// Whether `v` is used other than as the base of an `AccessIndex`/`Swizzle`.
    fn expr_is_used_directly(&self, v: Handle<Expression>) -> bool {
        let f = self.function;
        let mut used = false;
        let mut check = |h: Handle<Expression>| used |= h == v;
        for (_, e) in f.expressions.iter() {
            match e {
                Expression::AccessIndex { .. } | Expression::Swizzle { .. } => {}
                other => for_each_operand(other, &mut check),
            }
        }
        for s in &self.stmts {
            for_each_stmt_operand(s.stmt, &mut check);
        }
        used
    }

    /// The builtin argument of kind `b`, if the entry point has one.
    pub fn builtin(&self, b: BuiltIn) -> Option<&BuiltinArg> {
        self.builtins.iter().find(|a| a.builtin == b)
    }

    // ----- loops ------------------------------------------------------------------------------

    /// Statements (indices) strictly inside loop `id`.
    pub fn loop_stmts(&self, id: usize) -> impl Iterator<Item = usize> + '_ {
        (0..self.stmts.len()).filter(move |&s| self.stmts[s].loops.contains(&id))
    }

    /// Whether statement `s` is inside loop `id`.
    pub fn in_loop(&self, s: usize, id: usize) -> bool {
        self.stmts[s].loops.contains(&id)
    }

    /// Whether expression `h` is evaluated inside loop `id`.
    pub fn expr_in_loop(&self, h: Handle<Expression>, id: usize) -> bool {
        self.emitted_at[h.index()].is_some_and(|s| self.in_loop(s, id))
    }

    /// The statement that evaluates expression `h` (its `Emit`, or the `Call` of a call result).
    pub fn evaluated_at(&self, h: Handle<Expression>) -> Option<usize> {
        self.emitted_at[h.index()]
    }

    /// Statements that store to local `v`.
    pub fn stores_to(&self, v: Handle<LocalVariable>) -> &[usize] {
        &self.local_stores[v.index()]
    }

    /// `Load` expressions of local `v`.
    pub fn loads_of(&self, v: Handle<LocalVariable>) -> &[Handle<Expression>] {
        &self.local_loads[v.index()]
    }

    /// The text of local `v`'s declaration (`var c = 0u`).
    pub fn local_span(&self, v: Handle<LocalVariable>) -> Option<TextRange> {
        self.function.local_variables.get_span(v).to_range()
    }

    /// Whether local `v` is declared inside the text of loop `id`'s body (so each iteration gets a
    /// fresh one).
    pub fn declared_in_loop(&self, v: Handle<LocalVariable>, id: usize) -> bool {
        let (Some(decl), Some(span)) = (self.local_span(v), self.loops[id].span.clone()) else {
            return false;
        };
        span.start <= decl.start && decl.end <= span.end
    }

    fn local_of_load(&self, h: Handle<Expression>) -> Option<Handle<LocalVariable>> {
        match self.function.expressions[h] {
            Expression::Load { pointer } => match self.function.expressions[pointer] {
                Expression::LocalVariable(v) => Some(v),
                _ => None,
            },
            _ => None,
        }
    }

    fn recognise(&self, id: usize) -> Result<ForLoop, String> {
        let l = &self.loops[id];
        let Statement::Loop { break_if, .. } = self.stmts[l.stmt].stmt else {
            unreachable!("loops are Loop statements")
        };
        if break_if.is_some() {
            return Err("a `break if` loop runs its body before testing".into());
        }
        let body: Vec<(usize, &Statement)> = l
            .body
            .iter()
            .enumerate()
            .filter(|(_, s)| !matches!(s, Statement::Emit(_)))
            .collect();
        // naga evaluates `a && b` into a temporary with an `if` before the test: skip those.
        let lowering = body
            .iter()
            .take_while(|(_, s)| self.is_short_circuit_if(s))
            .count();
        let body = body[lowering..].to_vec();
        let Some(&(head_pos, head)) = body.first() else {
            return Err("empty loop".into());
        };
        let (cond, negated) = match head {
            Statement::If {
                condition,
                accept,
                reject,
            } if is_empty(accept) && is_break(reject) => (*condition, false),
            Statement::If {
                condition,
                accept,
                reject,
            } if is_empty(reject) && is_break(accept) => (*condition, true),
            _ => return Err("the loop does not start with `if (!cond) { break; }`".into()),
        };
        let head_stmt = self.child_stmt(l.stmt, Part::LoopBody, head_pos);
        let rest: Vec<(usize, &Statement)> = body[1..].to_vec();
        // The user's body: a single trailing Block for `for`/`while`.
        let user_block = match rest.as_slice() {
            [(pos, Statement::Block(b))] => {
                Some((self.child_stmt(l.stmt, Part::LoopBody, *pos), b))
            }
            _ => None,
        };
        let continuing: Vec<(usize, &Statement)> = l
            .continuing
            .iter()
            .enumerate()
            .filter(|(_, s)| !matches!(s, Statement::Emit(_)))
            .collect();
        let (step_stmt, kind) = match (continuing.as_slice(), user_block) {
            ([(pos, Statement::Store { .. })], Some(_)) => (
                self.child_stmt(l.stmt, Part::Continuing, *pos),
                LoopKind::For,
            ),
            ([(pos, Statement::Store { .. })], None) => (
                self.child_stmt(l.stmt, Part::Continuing, *pos),
                LoopKind::Loop,
            ),
            ([], Some((block_stmt, b))) => {
                let last = b
                    .iter()
                    .enumerate()
                    .rfind(|(_, s)| !matches!(s, Statement::Emit(_)))
                    .ok_or("empty loop body")?
                    .0;
                (
                    self.child_stmt(block_stmt, Part::Block, last),
                    LoopKind::While,
                )
            }
            ([], None) => {
                let (pos, _) = *rest.last().ok_or("empty loop body")?;
                (self.child_stmt(l.stmt, Part::LoopBody, pos), LoopKind::Loop)
            }
            _ => return Err("the continuing block does more than one update".into()),
        };
        let Statement::Store { pointer, value } = *self.stmts[step_stmt].stmt else {
            return Err("the loop does not end with an update of its variable".into());
        };
        let Expression::LocalVariable(var) = self.function.expressions[pointer] else {
            return Err("the update does not assign a local variable".into());
        };
        let (step, decreasing) = match self.function.expressions[value] {
            Expression::Binary {
                op: BinaryOperator::Add,
                left,
                right,
            } if self.local_of_load(left) == Some(var) => (right, false),
            Expression::Binary {
                op: BinaryOperator::Add,
                left,
                right,
            } if self.local_of_load(right) == Some(var) => (left, false),
            Expression::Binary {
                op: BinaryOperator::Subtract,
                left,
                right,
            } if self.local_of_load(left) == Some(var) => (right, true),
            _ => return Err("the update is not `i += step` or `i -= step`".into()),
        };
        if !self.loop_invariant(step, id) {
            return Err("the step changes inside the loop".into());
        }
        if kind != LoopKind::For {
            // A `continue` would skip an update written in the body.
            let continues = self.loop_stmts(id).any(|s| {
                matches!(self.stmts[s].stmt, Statement::Continue)
                    && self.stmts[s].loops.last() == Some(&id)
            });
            if continues {
                return Err("a `continue` skips the update at the end of the body".into());
            }
        }
        let other_stores = self
            .stores_to(var)
            .iter()
            .any(|&s| s != step_stmt && self.in_loop(s, id));
        if other_stores {
            return Err("the loop variable is assigned in the body".into());
        }
        // Condition: a conjunction of comparisons of the variable with invariant bounds.
        let mut bounds = Vec::new();
        self.collect_bounds(cond, negated, var, id, &mut bounds)?;
        if bounds.is_empty() {
            return Err("the condition does not bound the loop variable".into());
        }
        // Initial value: the last assignment before the loop in its block (statements in between
        // must not write the variable), else the declaration's, if nothing before the loop
        // assigns it and the loop is not nested (a variable declared outside an enclosing loop
        // keeps its value from one iteration of that loop to the next; outside any loop, a store
        // after this loop cannot reach its entry).
        let decl = self.local_span(var);
        let mut init_store = None;
        let mut prev = self.previous_sibling(l.stmt);
        while let Some(p) = prev {
            if let Statement::Store { pointer, value } = *self.stmts[p].stmt
                && matches!(self.function.expressions[pointer], Expression::LocalVariable(v) if v == var)
            {
                init_store = Some((value, self.stmts[p].span.clone()));
                break;
            }
            if self.stmt_may_write_local(p, var) {
                return Err("the loop variable's value on entry is not known".into());
            }
            prev = self.previous_sibling(p);
        }
        let (init, init_span) = match init_store {
            Some(found) => (Some(found.0), found.1),
            None => {
                let outside = self
                    .stores_to(var)
                    .iter()
                    .any(|&s| !self.in_loop(s, id) && s < l.stmt);
                if outside || !self.stmts[l.stmt].loops.is_empty() {
                    return Err("the loop variable's value on entry is not known".into());
                }
                (self.function.local_variables[var].init, decl.clone())
            }
        };
        let init_value_span = init_span.as_ref().and_then(|r| {
            let text = &self.code[r.clone()];
            let eq = find_assign(text)?;
            let value = &text[eq + 1..];
            let lead = value.len() - value.trim_start().len();
            let start = r.start + eq + 1 + lead;
            (start < r.end).then_some(start..r.end)
        });
        let span = l.span.clone();
        let declared_in_header = match (&decl, &span) {
            (Some(d), Some(s)) => s.start <= d.start && d.end <= s.end,
            _ => false,
        };
        let body_span = match (kind, user_block) {
            (LoopKind::For | LoopKind::While, Some((b, _))) => self.stmts[b].span.clone(),
            _ => span.clone(),
        };
        let header_span = match (kind, &span, &body_span) {
            (LoopKind::For | LoopKind::While, Some(s), Some(b)) => Some(s.start..b.start),
            _ => None,
        };
        let cond_span = self.stmts[head_stmt].span.clone().map(|r| {
            if negated {
                // `if c { break; }`: the If's span is the whole statement; the condition's is
                // the expression's.
                self.expr_range(cond).unwrap_or(r)
            } else {
                trim_range(&self.code, r, &[';'])
            }
        });
        let decl_var = &self.function.local_variables[var];
        Ok(ForLoop {
            kind,
            var,
            var_name: decl_var.name.clone().unwrap_or_default(),
            var_ty: decl_var.ty,
            init,
            init_span,
            init_value_span,
            declared_in_header,
            bounds,
            cond,
            cond_negated: negated,
            cond_span,
            step,
            decreasing,
            step_span: self.stmts[step_stmt].span.clone(),
            step_stmt,
            header_span,
            body_span,
        })
    }

    fn collect_bounds(
        &self,
        cond: Handle<Expression>,
        negated: bool,
        var: Handle<LocalVariable>,
        id: usize,
        out: &mut Vec<Bound>,
    ) -> Result<(), String> {
        if let Some((op, left, right)) = self.short_circuit(cond) {
            let conjunction = match op {
                BinaryOperator::LogicalAnd => !negated,
                _ => negated,
            };
            if !conjunction {
                return Err("the condition is a disjunction".into());
            }
            self.collect_bounds(left, negated, var, id, out)?;
            return self.collect_bounds(right, negated, var, id, out);
        }
        match self.function.expressions[cond] {
            Expression::Unary {
                op: naga::UnaryOperator::LogicalNot,
                expr,
            } => self.collect_bounds(expr, !negated, var, id, out),
            Expression::Binary {
                op: BinaryOperator::LogicalAnd,
                left,
                right,
            } if !negated => {
                self.collect_bounds(left, negated, var, id, out)?;
                self.collect_bounds(right, negated, var, id, out)
            }
            Expression::Binary {
                op: BinaryOperator::LogicalOr,
                left,
                right,
            } if negated => {
                self.collect_bounds(left, negated, var, id, out)?;
                self.collect_bounds(right, negated, var, id, out)
            }
            Expression::Binary { op, left, right } => {
                let cmp = if negated {
                    Cmp::negate(op)
                } else {
                    Cmp::of(op)
                }
                .ok_or("the condition is not a comparison")?;
                let side = |e: Handle<Expression>| -> Option<Option<Handle<Expression>>> {
                    if self.local_of_load(e) == Some(var) {
                        return Some(None);
                    }
                    match self.function.expressions[e] {
                        Expression::Binary {
                            op: BinaryOperator::Add,
                            left,
                            right,
                        } if self.local_of_load(left) == Some(var)
                            && self.loop_invariant(right, id) =>
                        {
                            Some(Some(right))
                        }
                        Expression::Binary {
                            op: BinaryOperator::Add,
                            left,
                            right,
                        } if self.local_of_load(right) == Some(var)
                            && self.loop_invariant(left, id) =>
                        {
                            Some(Some(left))
                        }
                        _ => None,
                    }
                };
                let (cmp, bound, offset) = match (side(left), side(right)) {
                    (Some(off), None) => (cmp, right, off),
                    (None, Some(off)) => (cmp.flip(), left, off),
                    _ => return Err("the condition does not compare the loop variable".into()),
                };
                if !self.loop_invariant(bound, id) {
                    return Err("the loop bound changes inside the loop".into());
                }
                out.push(Bound { cmp, bound, offset });
                Ok(())
            }
            _ => Err("the condition is not a comparison".into()),
        }
    }

    /// Whether `h` is a load of the counter `v`, or that plus a value that is the same in every
    /// iteration of loop `id` ([`Analysis::loop_invariant`]), as in `head_offset / 4u + i`:
    /// distinct values of the counter give distinct indices, whatever the other term is.
    pub fn counter_plus_invariant(
        &self,
        h: Handle<Expression>,
        v: Handle<LocalVariable>,
        id: usize,
    ) -> bool {
        self.counter_offset(h, v, id).is_some()
    }

    /// For `h` spelled as [`Analysis::counter_plus_invariant`] accepts: the term added to the
    /// counter (`None` for the counter alone).
    pub fn counter_offset(
        &self,
        h: Handle<Expression>,
        v: Handle<LocalVariable>,
        id: usize,
    ) -> Option<Option<Handle<Expression>>> {
        let e = &self.function.expressions;
        let counter = |x: Handle<Expression>| {
            matches!(e[x], Expression::Load { pointer }
                if matches!(e[pointer], Expression::LocalVariable(w) if w == v))
        };
        match e[h] {
            _ if counter(h) => Some(None),
            Expression::Binary {
                op: naga::BinaryOperator::Add,
                left,
                right,
            } => {
                if counter(left) && self.loop_invariant(right, id) {
                    Some(Some(right))
                } else if counter(right) && self.loop_invariant(left, id) {
                    Some(Some(left))
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    /// Whether expression `h` has the same value in every iteration of loop `id`: it reads no
    /// local written in the loop, no call result, and no global the loop (or a call in it)
    /// writes.
    pub fn loop_invariant(&self, h: Handle<Expression>, id: usize) -> bool {
        let mut ok = true;
        self.visit(h, &mut |e| match *e {
            Expression::LocalVariable(v)
                if self.stores_to(v).iter().any(|&s| self.in_loop(s, id)) =>
            {
                ok = false;
            }
            Expression::CallResult(_) | Expression::AtomicResult { .. } => ok = false,
            Expression::GlobalVariable(g) => {
                let written = self.loop_stmts(id).any(|s| match self.stmts[s].stmt {
                    Statement::Store { pointer, .. } | Statement::Atomic { pointer, .. } => {
                        self.root_global(*pointer) == Some(g)
                    }
                    Statement::Call { function, .. } => self.effectful_functions[function.index()],
                    _ => false,
                });
                let var = &self.module.global_variables[g];
                if written && var.space != naga::AddressSpace::Uniform {
                    ok = false;
                }
            }
            _ => {}
        });
        ok
    }

    /// Calls `f` on `h` and every expression it depends on (through lets; not through variables).
    pub fn visit(&self, h: Handle<Expression>, f: &mut dyn FnMut(&Expression)) {
        self.visit_handles(h, &mut |_, e| {
            f(e);
            true
        });
    }

    /// Calls `f` on `h` and, where `f` answers `true`, on the expressions it depends on (through
    /// lets; not through variables), each once, with its handle.
    pub fn visit_handles(
        &self,
        h: Handle<Expression>,
        f: &mut dyn FnMut(Handle<Expression>, &Expression) -> bool,
    ) {
        let mut stack = vec![h];
        let mut seen = vec![false; self.function.expressions.len()];
        while let Some(h) = stack.pop() {
            if std::mem::replace(&mut seen[h.index()], true) {
                continue;
            }
            let e = &self.function.expressions[h];
            if f(h, e) {
                for_each_operand(e, &mut |o| stack.push(o));
            }
        }
    }

    /// Whether statement `s` is counted loop `f`'s test: the `if` on its condition that starts
    /// the body (naga's lowering of the header), or the `break` inside that `if`.
    pub fn is_header_test(&self, s: usize, f: &ForLoop) -> bool {
        match *self.stmts[s].stmt {
            Statement::If { condition, .. } => condition == f.cond,
            Statement::Break => self.stmts[s].parent.is_some_and(|p| {
                matches!(*self.stmts[p].stmt, Statement::If { condition, .. } if condition == f.cond)
            }),
            _ => false,
        }
    }

    /// Whether `needle` is `h` or one of the expressions `h` depends on (through lets).
    pub fn visit_contains(&self, h: Handle<Expression>, needle: Handle<Expression>) -> bool {
        let mut stack = vec![h];
        let mut seen = vec![false; self.function.expressions.len()];
        while let Some(x) = stack.pop() {
            if x == needle {
                return true;
            }
            if std::mem::replace(&mut seen[x.index()], true) {
                continue;
            }
            for_each_operand(&self.function.expressions[x], &mut |o| stack.push(o));
        }
        false
    }

    /// Locals whose value `h` reads (through lets).
    pub fn locals_read(&self, h: Handle<Expression>) -> Vec<Handle<LocalVariable>> {
        let mut out = Vec::new();
        self.visit(h, &mut |e| {
            if let Expression::Load { pointer } = *e
                && let Expression::LocalVariable(v) = self.function.expressions[pointer]
                && !out.contains(&v)
            {
                out.push(v);
            }
        });
        out
    }

    /// Whether `h` reads local `v` (through lets; a `Load` of it, or a pointer to it).
    pub fn reads_local(&self, h: Handle<Expression>, v: Handle<LocalVariable>) -> bool {
        let mut found = false;
        self.visit(h, &mut |e| {
            if matches!(*e, Expression::LocalVariable(w) if w == v) {
                found = true;
            }
        });
        found
    }

    /// The value local `v` holds when statement `s` starts, when one assignment provably reaches
    /// it: the last store before `s` in its block (or, walking out, in enclosing blocks other
    /// than loop bodies), or the declaration's initializer at the start of the function.
    pub fn value_before(&self, s: usize, v: Handle<LocalVariable>) -> Option<InitialValue> {
        let mut at = s;
        loop {
            let mut prev = self.previous_sibling(at);
            while let Some(p) = prev {
                if let Statement::Store { pointer, value } = *self.stmts[p].stmt
                    && matches!(self.function.expressions[pointer], Expression::LocalVariable(w) if w == v)
                {
                    return Some(InitialValue::Expr(value));
                }
                if self.stmt_may_write_local(p, v) {
                    return None;
                }
                prev = self.previous_sibling(p);
            }
            match self.stmts[at].parent {
                None => {
                    return Some(match self.function.local_variables[v].init {
                        Some(init) => InitialValue::Expr(init),
                        None => InitialValue::Zero,
                    });
                }
                Some(parent) => {
                    if matches!(self.stmts[parent].stmt, Statement::Loop { .. }) {
                        return None;
                    }
                    at = parent;
                }
            }
        }
    }

    /// Whether statement `s` (or anything nested in it) may write local `v`: a store to it or
    /// into it, or a call that is given a pointer to it.
    pub fn stmt_may_write_local(&self, s: usize, v: Handle<LocalVariable>) -> bool {
        (s..self.stmts.len())
            .take_while(|&o| self.within(o, s))
            .any(|o| match *self.stmts[o].stmt {
                Statement::Store { pointer, .. } => self.local_root(pointer) == Some(v),
                Statement::Call { ref arguments, .. } => {
                    arguments.iter().any(|&a| self.local_root(a) == Some(v))
                }
                Statement::Atomic { pointer, .. } => self.local_root(pointer) == Some(v),
                _ => false,
            })
    }

    fn child_stmt(&self, parent: usize, part: Part, index: usize) -> usize {
        (parent + 1..self.stmts.len())
            .find(|&s| {
                self.stmts[s].parent == Some(parent)
                    && self.stmts[s].part == part
                    && self.stmts[s].index_in_block == index
            })
            .expect("children are flattened after their parent")
    }

    /// The statements of the block that statement `s` sits in, in order.
    pub fn siblings(&self, s: usize) -> Vec<usize> {
        let st = &self.stmts[s];
        (0..self.stmts.len())
            .filter(|&o| self.stmts[o].parent == st.parent && self.stmts[o].part == st.part)
            .collect()
    }

    /// The previous statement in the same block that is not an `Emit`.
    pub fn previous_sibling(&self, s: usize) -> Option<usize> {
        self.siblings(s).into_iter().rfind(|&o| {
            self.stmts[o].index_in_block < self.stmts[s].index_in_block
                && !matches!(self.stmts[o].stmt, Statement::Emit(_))
        })
    }

    /// Whether statement `s` sits in statement `outer` (`None`: the function's body) through
    /// nothing but blocks: it runs whenever `outer`'s block does.
    pub fn in_blocks_of(&self, s: usize, outer: Option<usize>) -> bool {
        let mut at = s;
        loop {
            let p = self.stmts[at].parent;
            if p == outer {
                return true;
            }
            match p {
                Some(p) if matches!(self.stmts[p].stmt, Statement::Block(_)) => at = p,
                _ => return false,
            }
        }
    }

    /// Whether statement `inner` is `outer` or nested inside it.
    pub fn within(&self, inner: usize, outer: usize) -> bool {
        let mut s = Some(inner);
        while let Some(x) = s {
            if x == outer {
                return true;
            }
            s = self.stmts[x].parent;
        }
        false
    }

    /// A constant trip count: literal (or constant) init, bound and step, one bound.
    pub fn const_trip_count(&self, l: &ForLoop) -> Option<u64> {
        let [b] = l.bounds.as_slice() else {
            return None;
        };
        let init = match l.init {
            Some(h) => self.const_int(h)?,
            None => 0,
        };
        let bound = self.const_int(b.bound)? - b.offset.map_or(Some(0), |o| self.const_int(o))?;
        let step = self.const_int(l.step)?;
        if step <= 0 {
            return None;
        }
        let n = match (l.decreasing, b.cmp) {
            (false, Cmp::Lt) => (bound - init + step - 1).div_euclid(step),
            (false, Cmp::Le) => (bound - init + step).div_euclid(step),
            (true, Cmp::Gt) => (init - bound + step - 1).div_euclid(step),
            (true, Cmp::Ge) => (init - bound + step).div_euclid(step),
            _ => return None,
        };
        Some(n.max(0) as u64)
    }

    // ----- values -----------------------------------------------------------------------------

    /// The integer value of a literal or `const` expression (overrides are not constant here).
    pub fn const_int(&self, h: Handle<Expression>) -> Option<i64> {
        const_int_in(self.module, &self.function.expressions, h)
    }

    /// The integer value of `h`, taking overrides from `constants` (a program's pipeline
    /// constants) or their defaults.
    pub fn const_int_with(
        &self,
        h: Handle<Expression>,
        constants: &[(impl AsRef<str>, f64)],
    ) -> Option<i64> {
        self.eval_int(h, &|name| {
            constants
                .iter()
                .find(|(k, _)| k.as_ref() == name)
                .map(|(_, v)| *v)
        })
    }

    fn eval_int(&self, h: Handle<Expression>, lookup: &dyn Fn(&str) -> Option<f64>) -> Option<i64> {
        if let Some(v) = self.const_int(h) {
            return Some(v);
        }
        match self.function.expressions[h] {
            Expression::Override(o) => override_int(self.module, o, lookup),
            Expression::Binary { op, left, right } => int_binary(
                op,
                self.eval_int(left, lookup)?,
                self.eval_int(right, lookup)?,
            ),
            Expression::As { expr, .. } => self.eval_int(expr, lookup),
            _ => None,
        }
    }

    /// The type of expression `h`.
    pub fn type_of(&self, h: Handle<Expression>) -> &TypeInner {
        self.info[h].ty.inner_with(&self.module.types)
    }

    /// The WGSL spelling of type `ty`.
    pub fn type_name(&self, ty: Handle<naga::Type>) -> String {
        self.module.to_ctx().type_to_string(ty)
    }

    /// The WGSL spelling of expression `h`'s type.
    pub fn type_name_of(&self, h: Handle<Expression>) -> String {
        self.module
            .to_ctx()
            .type_resolution_to_string(&self.info[h].ty)
    }

    /// The text of the array `access` indexes, as the kernel names it: `input` for
    /// `input[i]`, `Input.data` for a storage struct's array member (`Input.data[i]`). `None`
    /// when the access has no element index or the array cannot be restated.
    pub fn array_text(&self, access: &Access) -> Option<String> {
        let index = access.index?;
        let mut p = access.pointer;
        loop {
            match self.function.expressions[p] {
                Expression::Access { base, index: i } if i == index => {
                    return self.expr_wgsl(base, Naming::Inline);
                }
                Expression::Access { base, .. } | Expression::AccessIndex { base, .. } => p = base,
                _ => return None,
            }
        }
    }

    /// The global a pointer expression is rooted at.
    pub fn root_global(&self, mut h: Handle<Expression>) -> Option<Handle<naga::GlobalVariable>> {
        loop {
            match self.function.expressions[h] {
                Expression::GlobalVariable(g) => return Some(g),
                Expression::Access { base, .. } | Expression::AccessIndex { base, .. } => h = base,
                _ => return None,
            }
        }
    }

    /// The value local `v` holds wherever it is read, if it is assigned exactly once (by its
    /// declaration, or by one store that every read comes after and is enclosed by whatever
    /// encloses the store: the same loop, the same branch of an `if`) and every read comes after
    /// that assignment. A declared zero (`var x: u32 = u32();`, what WGSL gives `var x: u32;`)
    /// that no read can see does not count as an assignment.
    pub fn single_value(&self, v: Handle<LocalVariable>) -> Option<Handle<Expression>> {
        let stores = self.stores_to(v);
        let loads = self.loads_of(v);
        let init = self.function.local_variables[v].init;
        match stores {
            [] => init,
            [s] if init.is_none_or(|i| self.is_zero_value(i)) => {
                let Statement::Store { value, .. } = *self.stmts[*s].stmt else {
                    return None;
                };
                let enclosing = self.enclosing(*s);
                let ok = loads.iter().all(|&l| {
                    self.emitted_at[l.index()].is_some_and(|at| {
                        let around = self.enclosing(at);
                        at > *s && enclosing.iter().all(|p| around.contains(p))
                    })
                });
                ok.then_some(value)
            }
            _ => None,
        }
    }

    /// The compound statements around statement `s` (its `if`s, loops, switches, blocks),
    /// innermost first, each with the part of it that holds `s`.
    fn enclosing(&self, mut s: usize) -> Vec<(usize, Part)> {
        let mut out = Vec::new();
        while let Some(p) = self.stmts[s].parent {
            out.push((p, self.stmts[s].part));
            s = p;
        }
        out
    }

    /// Whether `h` is a zero of its type: `T()`, `0`, `0.0`, `false`.
    pub fn is_zero_value(&self, h: Handle<Expression>) -> bool {
        match self.function.expressions[h] {
            Expression::ZeroValue(_) => true,
            Expression::Literal(l) => {
                matches!(
                    l,
                    naga::Literal::U32(0)
                        | naga::Literal::I32(0)
                        | naga::Literal::Bool(false)
                        | naga::Literal::AbstractInt(0)
                ) || matches!(l, naga::Literal::F32(x) if x == 0.0)
                    || matches!(l, naga::Literal::AbstractFloat(x) if x == 0.0)
            }
            _ => false,
        }
    }

    /// Whether `h` is the same for every invocation of a dispatch: built from literals,
    /// constants, overrides, uniform-buffer loads, read-only storage loads at such indices,
    /// `arrayLength`, and locals assigned once from such values.
    pub fn is_dispatch_uniform(&self, h: Handle<Expression>) -> bool {
        self.uniform_depth(h, 0)
    }

    fn uniform_depth(&self, h: Handle<Expression>, depth: u32) -> bool {
        if depth > 64 {
            return false;
        }
        let f = self.function;
        match f.expressions[h] {
            Expression::Literal(_)
            | Expression::Constant(_)
            | Expression::Override(_)
            | Expression::ZeroValue(_)
            | Expression::ArrayLength(_) => true,
            Expression::GlobalVariable(g) => super::access::read_only(self.module, g),
            Expression::Load { pointer } => match f.expressions[pointer] {
                Expression::LocalVariable(v) => self
                    .single_value(v)
                    .is_some_and(|value| self.uniform_depth(value, depth + 1)),
                _ => self.uniform_depth(pointer, depth + 1),
            },
            Expression::FunctionArgument(_)
            | Expression::LocalVariable(_)
            | Expression::CallResult(_)
            | Expression::AtomicResult { .. }
            | Expression::WorkGroupUniformLoadResult { .. } => false,
            ref e => {
                let mut ok = true;
                for_each_operand(e, &mut |o| ok &= self.uniform_depth(o, depth + 1));
                ok
            }
        }
    }

    /// Whether `h` is the same for every invocation of a workgroup: built from the workgroup id,
    /// the workgroup count and values the same for the whole dispatch
    /// ([`Self::is_dispatch_uniform`]), through `let`s, locals assigned once and naga's lowering
    /// of `&&`/`||`.
    pub fn is_workgroup_uniform(&self, h: Handle<Expression>) -> bool {
        self.workgroup_uniform_depth(h, 0)
    }

    fn workgroup_uniform_depth(&self, h: Handle<Expression>, depth: u32) -> bool {
        if depth > 64 {
            return false;
        }
        if self.is_dispatch_uniform(h) {
            return true;
        }
        let f = self.function;
        let of_workgroup =
            |b: Option<BuiltIn>| matches!(b, Some(BuiltIn::WorkGroupId | BuiltIn::NumWorkGroups));
        match f.expressions[h] {
            Expression::FunctionArgument(_) => of_workgroup(self.builtin_of(h)),
            Expression::AccessIndex { base, .. } if self.builtin_of(base).is_some() => {
                of_workgroup(self.builtin_of(base))
            }
            Expression::Load { pointer } => match f.expressions[pointer] {
                Expression::LocalVariable(v) => match self.short_circuit(h) {
                    Some((_, l, r)) => {
                        self.workgroup_uniform_depth(l, depth + 1)
                            && self.workgroup_uniform_depth(r, depth + 1)
                    }
                    None => self
                        .single_value(v)
                        .is_some_and(|x| self.workgroup_uniform_depth(x, depth + 1)),
                },
                _ => false,
            },
            Expression::GlobalVariable(_) | Expression::LocalVariable(_) => false,
            ref e if super::expr::is_effect_result(e) => false,
            ref e => {
                let mut ok = true;
                for_each_operand(e, &mut |o| ok &= self.workgroup_uniform_depth(o, depth + 1));
                ok
            }
        }
    }

    // ----- index forms ------------------------------------------------------------------------

    /// The affine form of integer expression `h`, if it has one.
    pub fn index_form(&self, h: Handle<Expression>) -> Option<IndexForm> {
        self.form_depth(h, 0, false)
    }

    /// Like [`Self::index_form`], and a flat id taken apart by `/` and `%` is read as its digits:
    /// where a builtin component's divisions and remainders form a chain ([`Self::digits`],
    /// boundaries `1 = B₀ | B₁ | … | Bₙ`), the component is `Σ Digit(i)·Bᵢ`, and a run of its
    /// digits (`id.x % n`, `(id.x / n) % m`, `id.x / (m * n)`) is `Σ Digit(i)·Bᵢ / B_lo` over
    /// the digits it reads, so `id - (id / n) * n` reads as digit 0 by algebra alone. Callers
    /// that read these forms must know [`Var::Digit`]; plain [`Self::index_form`] never produces
    /// it.
    pub fn split_index_form(&self, h: Handle<Expression>) -> Option<IndexForm> {
        self.form_depth(h, 0, true)
    }

    /// What `h` converts, when it is a conversion between 32-bit integer types (`i32(gid.x)`),
    /// which index arithmetic reads through.
    pub fn int_cast_of(&self, h: Handle<Expression>) -> Option<Handle<Expression>> {
        match self.function.expressions[h] {
            Expression::As {
                expr,
                kind: ScalarKind::Sint | ScalarKind::Uint,
                convert: Some(4),
            } if matches!(
                self.type_of(expr).scalar_kind(),
                Some(ScalarKind::Sint | ScalarKind::Uint)
            ) =>
            {
                Some(expr)
            }
            _ => None,
        }
    }

    /// Builtin component `(b, c)` as an index form: itself, or in the split reading, where its
    /// divisions spell digits, `Σ Digit(i)·Bᵢ`.
    fn component_form(&self, b: BuiltIn, c: u32, split: bool) -> IndexForm {
        let whole = IndexForm::var(Var::Builtin(b, c));
        if !split {
            return whole;
        }
        match self.digits(b, c) {
            Some(d) => Self::digits_form(&d, 0, d.count()),
            None => whole,
        }
    }

    /// Digits `lo..hi` of `d` as one value: `Σ Digit(i)·Bᵢ / B_lo`.
    fn digits_form(d: &Digits, lo: usize, hi: usize) -> IndexForm {
        let base = d.bound(lo);
        let mut terms: Vec<(Var, Poly)> = (lo..hi)
            .filter_map(|i| {
                let weight = d.bound(i).over(&base)?;
                Some((
                    Var::Digit(d.builtin, d.component, u8::try_from(i).ok()?),
                    Poly(vec![weight]).normal(),
                ))
            })
            .collect();
        terms.sort_by_key(|(v, _)| var_key(*v));
        IndexForm {
            terms,
            offset: Poly::default(),
        }
    }

    fn form_depth(&self, h: Handle<Expression>, depth: u32, split: bool) -> Option<IndexForm> {
        if depth > 64 {
            return None;
        }
        let f = self.function;
        let atom = || {
            if self.is_dispatch_uniform(h) {
                Some(IndexForm::uniform(Poly::atom(
                    self.expr_wgsl(h, Naming::Inline)?,
                )))
            } else {
                None
            }
        };
        if let Some(k) = self.const_int(h) {
            return Some(IndexForm::uniform(Poly::constant(k)));
        }
        match f.expressions[h] {
            Expression::AccessIndex { base, index } => match self.builtin_of(base) {
                Some(b) => Some(self.component_form(b, index, split)),
                None => atom(),
            },
            Expression::FunctionArgument(_) => {
                let b = self.builtin_of(h)?;
                match self.type_of(h) {
                    TypeInner::Scalar(_) => Some(self.component_form(b, 0, split)),
                    _ => None,
                }
            }
            Expression::Load { pointer } => match f.expressions[pointer] {
                Expression::LocalVariable(v) if self.is_loop_var(v) => {
                    Some(IndexForm::var(Var::Loop(v)))
                }
                Expression::LocalVariable(v) => {
                    self.form_depth(self.single_value(v)?, depth + 1, split)
                }
                _ => atom(),
            },
            Expression::As { .. } if self.int_cast_of(h).is_some() => {
                self.form_depth(self.int_cast_of(h)?, depth + 1, split)
            }
            Expression::Binary {
                op: op @ (BinaryOperator::Add | BinaryOperator::Subtract | BinaryOperator::Multiply),
                left,
                right,
            } => {
                let l = self.form_depth(left, depth + 1, split)?;
                let r = self.form_depth(right, depth + 1, split)?;
                match op {
                    BinaryOperator::Add => Some(l.add(&r)),
                    BinaryOperator::Subtract => Some(l.sub(&r)),
                    _ if r.is_uniform() => Some(l.scale(&r.offset)),
                    _ if l.is_uniform() => Some(r.scale(&l.offset)),
                    _ => None,
                }
            }
            Expression::Binary {
                op: BinaryOperator::Divide | BinaryOperator::Modulo,
                ..
            } if split && !self.is_dispatch_uniform(h) => {
                // A run of a component's digits, or nothing affine.
                let (d, lo, hi) = self.run_digits(h)?;
                Some(Self::digits_form(&d, lo, hi))
            }
            Expression::Binary {
                op: BinaryOperator::ShiftLeft,
                left,
                right,
            } => match self.const_int(right) {
                Some(k) if (0..31).contains(&k) => Some(
                    self.form_depth(left, depth + 1, split)?
                        .scale(&Poly::constant(1 << k)),
                ),
                _ => atom(),
            },
            _ => atom(),
        }
    }

    /// The operands of a short-circuit `a && b` or `a || b`, which naga lowers to an unnamed
    /// variable set in an `if`: `if (a) { t = b; } else { t = false; }` and
    /// `if (!a) { t = b; } else { t = true; }`. `h` is the load of that variable.
    pub fn short_circuit(
        &self,
        h: Handle<Expression>,
    ) -> Option<(BinaryOperator, Handle<Expression>, Handle<Expression>)> {
        let v = self.local_of_load(h)?;
        if self.function.local_variables[v].name.is_some() {
            return None;
        }
        let [s1, s2] = self.stores_to(v) else {
            return None;
        };
        let parent = self.stmts[*s1].parent?;
        if self.stmts[*s2].parent != Some(parent) {
            return None;
        }
        let Statement::If { condition, .. } = *self.stmts[parent].stmt else {
            return None;
        };
        let value_in = |part: Part| {
            [*s1, *s2]
                .into_iter()
                .find_map(|s| match *self.stmts[s].stmt {
                    Statement::Store { value, .. } if self.stmts[s].part == part => Some(value),
                    _ => None,
                })
        };
        let (accept, reject) = (value_in(Part::Accept)?, value_in(Part::Reject)?);
        let literal = match self.function.expressions[reject] {
            Expression::Literal(naga::Literal::Bool(b)) => b,
            _ => return None,
        };
        match (literal, &self.function.expressions[condition]) {
            (false, _) => Some((BinaryOperator::LogicalAnd, condition, accept)),
            (
                true,
                Expression::Unary {
                    op: naga::UnaryOperator::LogicalNot,
                    expr,
                },
            ) => Some((BinaryOperator::LogicalOr, *expr, accept)),
            _ => None,
        }
    }

    /// Whether `s` is an `if` naga made to evaluate a short-circuit operator: it only stores into
    /// unnamed temporaries (and nests such `if`s).
    pub fn is_short_circuit_if(&self, s: &Statement) -> bool {
        let Statement::If { accept, reject, .. } = s else {
            return false;
        };
        let ok = |b: &Block| {
            b.iter().all(|x| match *x {
                Statement::Emit(_) => true,
                Statement::Store { pointer, .. } => matches!(
                    self.function.expressions[pointer],
                    Expression::LocalVariable(v) if self.function.local_variables[v].name.is_none()
                ),
                ref other => self.is_short_circuit_if(other),
            })
        };
        ok(accept) && ok(reject)
    }

    /// Whether `v` is the variable of a counted loop.
    pub fn is_loop_var(&self, v: Handle<LocalVariable>) -> bool {
        self.loops
            .iter()
            .any(|l| l.for_loop.as_ref().is_some_and(|f| f.var == v))
    }

    /// The counted loop whose variable is `v`.
    pub fn loop_of_var(&self, v: Handle<LocalVariable>) -> Option<usize> {
        self.loops
            .iter()
            .position(|l| l.for_loop.as_ref().is_some_and(|f| f.var == v))
    }

    /// The builtin a value expression (`gid`, or `input.gid` of a struct argument) stands for.
    pub fn builtin_of(&self, h: Handle<Expression>) -> Option<BuiltIn> {
        let f = self.function;
        match f.expressions[h] {
            Expression::FunctionArgument(i) => match &f.arguments[i as usize].binding {
                Some(naga::Binding::BuiltIn(b)) => Some(*b),
                _ => None,
            },
            Expression::AccessIndex { base, index } => {
                let Expression::FunctionArgument(i) = f.expressions[base] else {
                    return None;
                };
                let arg = &f.arguments[i as usize];
                match (&arg.binding, &self.module.types[arg.ty].inner) {
                    (None, TypeInner::Struct { members, .. }) => {
                        match &members.get(index as usize)?.binding {
                            Some(naga::Binding::BuiltIn(b)) => Some(*b),
                            _ => None,
                        }
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    // ----- accesses ---------------------------------------------------------------------------

    fn find_accesses(&self) -> Vec<Access> {
        let f = self.function;
        let mut out = Vec::new();
        let mut push = |pointer: Handle<Expression>,
                        write: bool,
                        stmt: usize,
                        load: Option<Handle<Expression>>| {
            let Some(g) = self.root_global(pointer) else {
                return;
            };
            let var = &self.module.global_variables[g];
            let (index, const_index, component) = self.element_index(pointer);
            let form = match (index, const_index) {
                (Some(i), _) => self.index_form(i),
                (None, Some(k)) => Some(IndexForm::uniform(Poly::constant(i64::from(k)))),
                (None, None) => None,
            };
            out.push(Access {
                global: g,
                name: var.name.clone().unwrap_or_default(),
                space: var.space,
                write,
                pointer,
                index,
                form,
                component,
                stmt,
                span: self.expr_range(pointer),
                load,
            });
        };
        for (h, e) in f.expressions.iter() {
            if let Expression::Load { pointer } = *e
                && let Some(stmt) = self.emitted_at[h.index()]
            {
                push(pointer, false, stmt, Some(h));
            }
        }
        for (s, st) in self.stmts.iter().enumerate() {
            match *st.stmt {
                Statement::Store { pointer, .. } => push(pointer, true, s, None),
                Statement::Atomic { pointer, .. } => push(pointer, true, s, None),
                _ => {}
            }
        }
        out.sort_by_key(|a| (a.stmt, a.write));
        out
    }

    /// The element index of a pointer path (the first index into an array: an expression, or a
    /// constant of an `AccessIndex`), and a vector component selected after it.
    fn element_index(
        &self,
        pointer: Handle<Expression>,
    ) -> (Option<Handle<Expression>>, Option<u32>, Option<u32>) {
        let f = self.function;
        let mut path = Vec::new();
        let mut h = pointer;
        while let Expression::Access { base, .. } | Expression::AccessIndex { base, .. } =
            f.expressions[h]
        {
            path.push(h);
            h = base;
        }
        path.reverse();
        let (mut index, mut const_index, mut component) = (None, None, None);
        for &step in &path {
            let (Expression::Access { base, .. } | Expression::AccessIndex { base, .. }) =
                f.expressions[step]
            else {
                unreachable!("the path holds accesses only")
            };
            let base_ty = pointee(self.module, self.type_of(base));
            let is_array = matches!(base_ty, Some(TypeInner::Array { .. }));
            let is_vector = matches!(base_ty, Some(TypeInner::Vector { .. }));
            let found = index.is_some() || const_index.is_some();
            match f.expressions[step] {
                Expression::Access { index: i, .. } if !found && is_array => index = Some(i),
                Expression::AccessIndex { index: i, .. } if !found && is_array => {
                    const_index = Some(i)
                }
                Expression::AccessIndex { index: c, .. } if found && is_vector => {
                    component = Some(c)
                }
                _ => {}
            }
        }
        (index, const_index, component)
    }

    /// Accesses performed by statements inside loop `id`.
    pub fn accesses_in_loop(&self, id: usize) -> impl Iterator<Item = (usize, &Access)> + '_ {
        self.accesses
            .iter()
            .enumerate()
            .filter(move |(_, a)| self.in_loop(a.stmt, id))
    }

    /// Whether module function `f` writes globals or pointer arguments, or uses barriers, atomics
    /// or subgroup operations (directly or through calls).
    pub fn function_is_effectful(&self, f: Handle<naga::Function>) -> bool {
        self.effectful_functions[f.index()]
    }

    /// Whether module function `f` (or one it calls) writes global `g` (or a pointer argument).
    pub fn function_writes_global(
        &self,
        f: Handle<naga::Function>,
        g: Handle<naga::GlobalVariable>,
    ) -> bool {
        super::access::function_writes(self.module, f, g)
    }

    /// Whether the entry point (or a function it calls) writes global `g`.
    pub fn writes_global(&self, g: Handle<naga::GlobalVariable>) -> bool {
        self.accesses.iter().any(|a| a.write && a.global == g)
            || self.stmts.iter().any(|s| match s.stmt {
                Statement::Call { function, .. } => {
                    super::access::function_writes(self.module, *function, g)
                }
                _ => false,
            })
    }

    // ----- accumulators -----------------------------------------------------------------------

    /// What the iterations of loop `id` write, with accumulators recognised.
    pub fn loop_effects(&self, id: usize) -> LoopEffects {
        let mut fx = LoopEffects::default();
        let for_var = self.loops[id].for_loop.as_ref().map(|f| f.var);
        // Locals written in the loop.
        let mut written: Vec<Handle<LocalVariable>> = Vec::new();
        for s in self.loop_stmts(id) {
            if let Statement::Store { pointer, .. } = *self.stmts[s].stmt
                && let Some(v) = self.local_root(pointer)
                && !written.contains(&v)
            {
                written.push(v);
            }
        }
        fx.args = self.arg_accumulators(id);
        for v in written {
            if Some(v) == for_var || fx.args.iter().any(|p| p.value == v || p.index == v) {
                continue;
            }
            if self.declared_in_loop(v, id) {
                fx.private.push(v);
                continue;
            }
            match self.accumulator(v, id) {
                Ok(acc) => fx.accumulators.push(acc),
                Err(why) => fx.carried.push((v, why)),
            }
        }
        for (i, a) in self.accesses_in_loop(id) {
            if a.write {
                fx.global_writes.push(i);
            } else {
                fx.global_reads.push(i);
            }
        }
        for s in self.loop_stmts(id) {
            match self.stmts[s].stmt {
                Statement::Call { function, .. } if self.effectful_functions[function.index()] => {
                    fx.effectful_calls.push(s)
                }
                Statement::ControlBarrier(_) | Statement::MemoryBarrier(_) => {
                    fx.other.push("a barrier".into())
                }
                Statement::WorkGroupUniformLoad { .. } => {
                    fx.other.push("a workgroupUniformLoad".into())
                }
                Statement::Atomic { .. } => fx.other.push("an atomic".into()),
                Statement::Return { .. } => fx.other.push("a `return`".into()),
                Statement::Kill => fx.other.push("a `discard`".into()),
                Statement::Break if self.stmts[s].loops.last() == Some(&id) => {
                    let head = self.is_loop_head_break(s, id);
                    if !head {
                        fx.other.push("a `break` other than the loop test".into())
                    }
                }
                Statement::SubgroupBallot { .. }
                | Statement::SubgroupCollectiveOperation { .. }
                | Statement::SubgroupGather { .. } => fx.other.push("a subgroup operation".into()),
                _ => {}
            }
        }
        fx
    }

    fn is_loop_head_break(&self, s: usize, id: usize) -> bool {
        // The `break` inside the head `if` of a counted loop.
        let Some(parent) = self.stmts[s].parent else {
            return false;
        };
        self.stmts[parent].parent == Some(self.loops[id].stmt)
            && self.stmts[parent].part == Part::LoopBody
            && self.loops[id].for_loop.is_some()
            && self.previous_sibling(parent).is_none()
    }

    /// The local variable a pointer (a local, or an element or member of one) is rooted in.
    pub fn local_root(&self, mut h: Handle<Expression>) -> Option<Handle<LocalVariable>> {
        loop {
            match self.function.expressions[h] {
                Expression::LocalVariable(v) => return Some(v),
                Expression::Access { base, .. } | Expression::AccessIndex { base, .. } => h = base,
                _ => return None,
            }
        }
    }

    /// Whether local `v` is an accumulator of loop `id`, and how it combines.
    pub fn accumulator(&self, v: Handle<LocalVariable>, id: usize) -> Result<Accumulator, String> {
        let f = self.function;
        let name = f.local_variables[v].name.clone().unwrap_or_default();
        let mut op: Option<AccOp> = None;
        let mut updates = Vec::new();
        let mut update_loads = Vec::new();
        for s in self.loop_stmts(id) {
            let Statement::Store { pointer, value } = *self.stmts[s].stmt else {
                continue;
            };
            if self.local_root(pointer) != Some(v) {
                continue;
            }
            if !matches!(f.expressions[pointer], Expression::LocalVariable(_)) {
                return Err(format!("`{name}` is written element by element"));
            }
            let (this_op, load, terms) = self
                .update_form(value, v)
                .ok_or_else(|| format!("`{name}` is assigned other than `{name} = {name} ⊕ f`"))?;
            if terms.iter().any(|&t| self.reads_local(t, v)) {
                return Err(format!("`{name}`'s update reads `{name}` again"));
            }
            match op {
                None => op = Some(this_op),
                Some(o) if o == this_op => {}
                Some(_) => return Err(format!("`{name}` is combined with different operators")),
            }
            updates.push(s);
            update_loads.push(load);
        }
        let op = op.ok_or_else(|| format!("`{name}` is not written in the loop"))?;
        // No other read of `v` in the loop.
        for &l in self.loads_of(v) {
            if self.expr_in_loop(l, id) && !update_loads.contains(&l) {
                return Err(format!(
                    "`{name}` is read in the loop (a loop-carried value)"
                ));
            }
        }
        // Pointers to `v` passed anywhere in the loop.
        for s in self.loop_stmts(id) {
            if let Statement::Call { arguments, .. } = self.stmts[s].stmt
                && arguments.iter().any(|&a| self.reads_local(a, v))
            {
                return Err(format!("`{name}` is passed to a function in the loop"));
            }
        }
        let ty = f.local_variables[v].ty;
        let scalar_ok = match &self.module.types[ty].inner {
            TypeInner::Scalar(s) | TypeInner::Vector { scalar: s, .. } => match op {
                AccOp::And | AccOp::Or | AccOp::Xor => {
                    matches!(
                        s.kind,
                        ScalarKind::Sint | ScalarKind::Uint | ScalarKind::Bool
                    )
                }
                _ => matches!(
                    s.kind,
                    ScalarKind::Float | ScalarKind::Sint | ScalarKind::Uint
                ),
            },
            _ => false,
        };
        if !scalar_ok {
            return Err(format!("`{name}` is not a scalar or vector of numbers"));
        }
        Ok(Accumulator {
            var: v,
            name,
            ty,
            op,
            updates,
        })
    }

    /// The (value, index) pairs loop `id` arg-reduces into (see [`ArgAccumulator`]).
    pub fn arg_accumulators(&self, id: usize) -> Vec<ArgAccumulator> {
        let stmts: Vec<usize> = self
            .loop_stmts(id)
            .filter(|&s| self.stmts[s].loops.last() == Some(&id))
            .collect();
        stmts
            .into_iter()
            .filter_map(|s| self.arg_update(s, id))
            .collect()
    }

    /// The pair that `if` statement `s` (directly in loop `id`, or nested in `if`s there) updates,
    /// when every condition of [`ArgAccumulator`] holds.
    fn arg_update(&self, s: usize, id: usize) -> Option<ArgAccumulator> {
        let f = self.function;
        let l = self.loops[id].for_loop.as_ref()?;
        let Statement::If {
            condition,
            ref accept,
            ref reject,
        } = *self.stmts[s].stmt
        else {
            return None;
        };
        if reject.iter().any(|r| !matches!(r, Statement::Emit(_))) {
            return None;
        }
        let mut stores = Vec::new();
        for st in accept.iter() {
            match *st {
                Statement::Emit(_) => {}
                Statement::Store { pointer, value } => match f.expressions[pointer] {
                    Expression::LocalVariable(v) => stores.push((v, value)),
                    _ => return None,
                },
                _ => return None,
            }
        }
        let [(v0, x0), (v1, x1)] = stores[..] else {
            return None;
        };
        // The comparison: a load of the value variable against the element.
        let Expression::Binary { op, left, right } = f.expressions[condition] else {
            return None;
        };
        let (greater, strict) = match op {
            BinaryOperator::Greater => (true, true),
            BinaryOperator::GreaterEqual => (true, false),
            BinaryOperator::Less => (false, true),
            BinaryOperator::LessEqual => (false, false),
            _ => return None,
        };
        let pick = |m: Handle<LocalVariable>| -> Option<(Handle<Expression>, bool)> {
            match (
                self.local_of_load(left) == Some(m),
                self.local_of_load(right) == Some(m),
            ) {
                (false, true) => Some((left, true)),
                (true, false) => Some((right, false)),
                _ => None,
            }
        };
        let ((m, stored), (k, j), (element, element_left)) = if let Some(p) = pick(v0) {
            ((v0, x0), (v1, x1), p)
        } else {
            ((v1, x1), (v0, x0), pick(v1)?)
        };
        if m == k || m == l.var || k == l.var {
            return None;
        }
        // `x > m` and `m < x` both take the larger element.
        let max = greater == element_left;
        let same = stored == element
            || matches!(
                (self.expr_wgsl(stored, Naming::Inline), self.expr_wgsl(element, Naming::Inline)),
                (Some(p), Some(q)) if p == q
            );
        if !same || self.reads_local(element, m) || self.reads_local(element, k) {
            return None;
        }
        // The index is the loop variable itself, or its conversion to another integer type
        // (`u32(c)` of an `i32` counter) when the counter rises from a start of at least zero,
        // so the conversion keeps every value and their order.
        let via_cast = matches!(f.expressions[j], Expression::As { .. });
        let index_var = match f.expressions[j] {
            Expression::As {
                expr,
                kind: ScalarKind::Sint | ScalarKind::Uint,
                convert: Some(4),
            } if !l.decreasing
                && l.init
                    .is_none_or(|h| self.const_int(h).is_some_and(|v| v >= 0)) =>
            {
                self.local_of_load(expr)
            }
            _ => self.local_of_load(j),
        };
        if index_var != Some(l.var) {
            return None;
        }
        let scalar =
            |v: Handle<LocalVariable>| match self.module.types[f.local_variables[v].ty].inner {
                TypeInner::Scalar(s) => Some(s),
                _ => None,
            };
        let (vs, ks) = (scalar(m)?, scalar(k)?);
        if !matches!(
            vs.kind,
            ScalarKind::Float | ScalarKind::Sint | ScalarKind::Uint
        ) || !matches!(ks.kind, ScalarKind::Sint | ScalarKind::Uint)
            || ks.width != 4
            || (!via_cast && f.local_variables[k].ty != l.var_ty)
        {
            return None;
        }
        for v in [m, k] {
            if self.declared_in_loop(v, id) {
                return None;
            }
            // No other store in the loop, no other read, no pointer passed.
            let other_store = self
                .stores_to(v)
                .iter()
                .any(|&w| self.in_loop(w, id) && self.stmts[w].parent != Some(s));
            let other_load = self
                .loads_of(v)
                .iter()
                .any(|&h| self.expr_in_loop(h, id) && !(v == m && (h == left || h == right)));
            let passed = self.loop_stmts(id).any(|w| match self.stmts[w].stmt {
                Statement::Call { arguments, .. } => {
                    arguments.iter().any(|&a| self.reads_local(a, v))
                }
                _ => false,
            });
            if other_store || other_load || passed {
                return None;
            }
        }
        let ties = if strict { Ties::First } else { Ties::Last };
        if ties == Ties::Last {
            let before = match self.value_before(self.loops[id].stmt, k)? {
                InitialValue::Zero => 0,
                InitialValue::Expr(h) => self.const_int(h)?,
            };
            let start = match l.init {
                None => 0,
                Some(h) => self.const_int(h)?,
            };
            if before >= start {
                return None;
            }
        }
        let name = |v: Handle<LocalVariable>| f.local_variables[v].name.clone().unwrap_or_default();
        Some(ArgAccumulator {
            value: m,
            value_name: name(m),
            value_ty: f.local_variables[m].ty,
            index: k,
            index_name: name(k),
            index_ty: f.local_variables[k].ty,
            op: if max { AccOp::Max } else { AccOp::Min },
            ties,
            update: s,
        })
    }

    /// `value` as `load(v) ⊕ terms`: the operator, the load of `v`, and the other terms (for
    /// `fma(a, b, v)`, `a` and `b`: the terms the update reads). Chains
    /// (`acc + a - b`, `acc * a * b`) are flattened, through parentheses but not through `let`s.
    fn update_form(
        &self,
        value: Handle<Expression>,
        v: Handle<LocalVariable>,
    ) -> Option<(AccOp, Handle<Expression>, Vec<Handle<Expression>>)> {
        let f = self.function;
        let is_v = |h: Handle<Expression>| self.local_of_load(h) == Some(v);
        match f.expressions[value] {
            Expression::Binary { op, .. } => {
                let acc_op = match op {
                    BinaryOperator::Add | BinaryOperator::Subtract => AccOp::Add,
                    BinaryOperator::Multiply => AccOp::Mul,
                    BinaryOperator::And | BinaryOperator::LogicalAnd => AccOp::And,
                    BinaryOperator::InclusiveOr | BinaryOperator::LogicalOr => AccOp::Or,
                    BinaryOperator::ExclusiveOr => AccOp::Xor,
                    _ => return None,
                };
                let mut terms = Vec::new();
                self.chain(value, acc_op, true, true, &mut terms);
                let mut load = None;
                let mut rest = Vec::new();
                for (positive, t) in terms {
                    if is_v(t) && load.is_none() {
                        if !positive {
                            return None;
                        }
                        load = Some(t);
                    } else {
                        rest.push(t);
                    }
                }
                Some((acc_op, load?, rest))
            }
            // `acc = fma(a, b, acc)`: a sum, each product added with one rounding.
            Expression::Math {
                fun: MathFunction::Fma,
                arg,
                arg1: Some(arg1),
                arg2: Some(arg2),
                ..
            } if is_v(arg2) => Some((AccOp::Add, arg2, vec![arg, arg1])),
            Expression::Math {
                fun,
                arg,
                arg1: Some(arg1),
                arg2: None,
                ..
            } => {
                let acc_op = match fun {
                    MathFunction::Max => AccOp::Max,
                    MathFunction::Min => AccOp::Min,
                    _ => return None,
                };
                if is_v(arg) {
                    Some((acc_op, arg, vec![arg1]))
                } else if is_v(arg1) {
                    Some((acc_op, arg1, vec![arg]))
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    /// Flattens a chain of `op` (for [`AccOp::Add`], `+` and `-`) into signed terms; a `let`
    /// inside the chain is one term.
    fn chain(
        &self,
        h: Handle<Expression>,
        op: AccOp,
        positive: bool,
        root: bool,
        out: &mut Vec<(bool, Handle<Expression>)>,
    ) {
        let descend = |o: BinaryOperator| match op {
            AccOp::Add => matches!(o, BinaryOperator::Add | BinaryOperator::Subtract),
            AccOp::Mul => o == BinaryOperator::Multiply,
            AccOp::And => matches!(o, BinaryOperator::And | BinaryOperator::LogicalAnd),
            AccOp::Or => matches!(o, BinaryOperator::InclusiveOr | BinaryOperator::LogicalOr),
            AccOp::Xor => o == BinaryOperator::ExclusiveOr,
            AccOp::Max | AccOp::Min => false,
        };
        match self.function.expressions[h] {
            Expression::Binary { op: o, left, right } if descend(o) && (root || !self.named(h)) => {
                self.chain(left, op, positive, false, out);
                let right_positive = if o == BinaryOperator::Subtract {
                    !positive
                } else {
                    positive
                };
                self.chain(right, op, right_positive, false, out);
            }
            _ => out.push((positive, h)),
        }
    }

    fn named(&self, h: Handle<Expression>) -> bool {
        self.function.named_expressions.contains_key(&h)
    }

    // ----- printing ---------------------------------------------------------------------------

    /// WGSL text for expression `h`, or `None` for what cannot be re-stated (a call result, an
    /// atomic, a float literal that is not finite).
    pub fn expr_wgsl(&self, h: Handle<Expression>, naming: Naming) -> Option<String> {
        Wgsl {
            module: self.module,
            func: self.function,
            info: self.info,
            leaves: IrLeaves { a: self, naming },
            max_depth: 64,
        }
        .print(h)
        .ok()
    }
}

/// The leaves of [`Analysis::expr_wgsl`]: names as the user wrote them, or (inlining) the single
/// value a local holds.
struct IrLeaves<'r, 'a> {
    a: &'r Analysis<'a>,
    naming: Naming,
}

impl Leaves for IrLeaves<'_, '_> {
    fn leaf(&self, w: &Wgsl<'_, Self>, h: Handle<Expression>, depth: u32) -> Leaf {
        let f = self.a.function;
        if self.naming == Naming::Names
            && let Some(name) = f.named_expressions.get(&h)
            && name != "phony"
        {
            return Some(Ok(name.clone()));
        }
        let unnamed = || Skip("an unnamed argument or local".into());
        match f.expressions[h] {
            Expression::FunctionArgument(i) => {
                Some(f.arguments[i as usize].name.clone().ok_or_else(unnamed))
            }
            Expression::LocalVariable(v) => {
                Some(f.local_variables[v].name.clone().ok_or_else(unnamed))
            }
            Expression::Load { pointer } if self.naming == Naming::Inline => {
                match f.expressions[pointer] {
                    Expression::LocalVariable(v) if !self.a.is_loop_var(v) => {
                        self.a.single_value(v).map(|value| w.at(value, depth + 1))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

fn is_empty(b: &Block) -> bool {
    b.iter().all(|s| matches!(s, Statement::Emit(_)))
}

fn is_break(b: &Block) -> bool {
    let real: Vec<&Statement> = b
        .iter()
        .filter(|s| !matches!(s, Statement::Emit(_)))
        .collect();
    matches!(real.as_slice(), [Statement::Break])
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The index of the bracket `c` closing the bracket `o` at `open` (in comment-blanked text).
pub fn matching(code: &str, open: usize, o: u8, c: u8) -> Option<usize> {
    let bytes = code.as_bytes();
    let mut depth = 0i32;
    for (i, &b) in bytes.iter().enumerate().skip(open) {
        if b == o {
            depth += 1;
        } else if b == c {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// The position of the assignment `=` in a declaration or assignment text (not `==`, `<=`, ..).
fn find_assign(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let mut depth = 0i32;
    for i in 0..b.len() {
        match b[i] {
            b'(' | b'[' | b'<' => depth += 1,
            b')' | b']' | b'>' => depth -= 1,
            b'=' if depth <= 0 => {
                let prev = if i > 0 { b[i - 1] } else { b' ' };
                let next = b.get(i + 1).copied().unwrap_or(b' ');
                if next != b'=' && !matches!(prev, b'=' | b'!' | b'<' | b'>') {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

fn trim_range(code: &str, r: TextRange, extra: &[char]) -> TextRange {
    let text = &code[r.clone()];
    let start_trim = text.len() - text.trim_start().len();
    let trimmed_end = text.trim_end_matches(|c: char| c.is_whitespace() || extra.contains(&c));
    r.start + start_trim..r.start + trimmed_end.len().max(start_trim)
}

fn int_binary(op: BinaryOperator, a: i64, b: i64) -> Option<i64> {
    use BinaryOperator as B;
    match op {
        B::Add => a.checked_add(b),
        B::Subtract => a.checked_sub(b),
        B::Multiply => a.checked_mul(b),
        B::Divide => a.checked_div(b),
        B::Modulo => a.checked_rem(b),
        B::ShiftLeft => (0..63).contains(&b).then(|| a << b),
        B::ShiftRight => (0..63).contains(&b).then(|| a >> b),
        _ => None,
    }
}

fn const_int_in(
    module: &naga::Module,
    exprs: &naga::Arena<Expression>,
    h: Handle<Expression>,
) -> Option<i64> {
    match exprs[h] {
        Expression::Literal(l) => super::expr::literal_int(&l),
        Expression::Constant(c) => {
            const_int_in(module, &module.global_expressions, module.constants[c].init)
        }
        Expression::Binary { op, left, right } => int_binary(
            op,
            const_int_in(module, exprs, left)?,
            const_int_in(module, exprs, right)?,
        ),
        Expression::As {
            expr,
            kind: ScalarKind::Sint | ScalarKind::Uint,
            ..
        } => const_int_in(module, exprs, expr),
        _ => None,
    }
}

fn override_int(
    module: &naga::Module,
    o: Handle<naga::Override>,
    lookup: &dyn Fn(&str) -> Option<f64>,
) -> Option<i64> {
    let ov = &module.overrides[o];
    if let Some(v) = ov.name.as_deref().and_then(lookup) {
        return (v.fract() == 0.0).then_some(v as i64);
    }
    const_int_in(module, &module.global_expressions, ov.init?)
}

/// Which functions of the module write globals or images, use barriers, atomics or subgroup
/// operations (directly or through calls).
fn effectful_functions(module: &naga::Module) -> Vec<bool> {
    let mut out = vec![false; module.functions.len()];
    // Functions can only call functions declared before them, so one pass in order suffices.
    for (h, f) in module.functions.iter() {
        let mut fx = false;
        for_each_stmt(&f.body, &mut |s| match s {
            Statement::Store { pointer, .. } => {
                let mut p = *pointer;
                loop {
                    match f.expressions[p] {
                        Expression::GlobalVariable(_) => {
                            fx = true;
                            break;
                        }
                        Expression::FunctionArgument(_) => {
                            // A pointer argument may point at a global.
                            fx = true;
                            break;
                        }
                        Expression::Access { base, .. } | Expression::AccessIndex { base, .. } => {
                            p = base
                        }
                        _ => break,
                    }
                }
            }
            Statement::Call { function, .. } => fx |= out[function.index()],
            Statement::Atomic { .. }
            | Statement::ImageStore { .. }
            | Statement::ControlBarrier(_)
            | Statement::MemoryBarrier(_)
            | Statement::WorkGroupUniformLoad { .. }
            | Statement::SubgroupBallot { .. }
            | Statement::SubgroupCollectiveOperation { .. }
            | Statement::SubgroupGather { .. } => fx = true,
            _ => {}
        });
        out[h.index()] = fx;
    }
    out
}

/// Calls `f` on every operand of expression `e` ([`super::expr::operands`]).
pub fn for_each_operand(e: &Expression, f: &mut dyn FnMut(Handle<Expression>)) {
    super::expr::operands(e).into_iter().for_each(f);
}

/// Calls `f` on every expression statement `s` uses directly (not those of nested blocks).
pub fn for_each_stmt_operand(s: &Statement, f: &mut dyn FnMut(Handle<Expression>)) {
    match *s {
        Statement::If { condition, .. } => f(condition),
        Statement::Switch { selector, .. } => f(selector),
        Statement::Loop { break_if, .. } => break_if.into_iter().for_each(&mut *f),
        Statement::Return { value } => value.into_iter().for_each(&mut *f),
        Statement::Store { pointer, value } => {
            f(pointer);
            f(value);
        }
        Statement::Call { ref arguments, .. } => arguments.iter().for_each(|&a| f(a)),
        Statement::Atomic { pointer, value, .. } => {
            f(pointer);
            f(value);
        }
        Statement::WorkGroupUniformLoad { pointer, .. } => f(pointer),
        Statement::SubgroupBallot { predicate, .. } => predicate.into_iter().for_each(&mut *f),
        Statement::SubgroupCollectiveOperation { argument, .. } => f(argument),
        Statement::SubgroupGather { argument, .. } => f(argument),
        _ => {}
    }
}

mod digits;
pub use digits::Digits;

#[cfg(test)]
mod tests;

//! A flat invocation id read as mixed-radix digits.
//!
//! Naive kernels launch one invocation per output over a flat id and take the output's
//! coordinates apart with `/` and `%`: `t = idx % L`, `co = (idx / L) % C`, `b = idx / (L * C)`
//! (or `(idx / L) / C`). Each of these reads a contiguous run of the id's digits in the mixed
//! radix its divisors spell, here the boundaries `1 | L | L·C`. [`Analysis::digits`] collects a
//! component's boundaries from every division and remainder of it in the function and proves they
//! divide one another (a chain); [`Analysis::digit_run`] says which digits an expression reads.
//! An operator that rebuilds the id from parts (implicit-gemm puts the output channel on an axis
//! of its own) then knows where every coordinate lives, however the kernel spelled the split,
//! instead of matching one spelling per operator.
//!
//! The boundaries are uniform monomials ([`Mono`]: an integer times uniform atoms), so `L * C`
//! written at once and `L` then `C` written as two steps name the same boundary.

use super::{Analysis, Mono, Naming, Var};
use naga::{BinaryOperator, BuiltIn, Expression, Handle};

/// The digit boundaries of one builtin component: `1 = B₀ | B₁ | … | Bₙ`. Digit `i < n` is
/// `(id / Bᵢ) % (Bᵢ₊₁ / Bᵢ)`; digit `n`, `id / Bₙ`, is unbounded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Digits {
    /// The builtin and its component.
    pub builtin: BuiltIn,
    /// The component (0 for x).
    pub component: u32,
    /// `B₁ … Bₙ`, each dividing the next, each with a positive integer factor.
    pub bounds: Vec<Mono>,
}

impl Digits {
    /// How many digits: one more than the boundaries.
    pub fn count(&self) -> usize {
        self.bounds.len() + 1
    }

    /// Boundary `i` (`B₀` is one).
    pub fn bound(&self, i: usize) -> Mono {
        if i == 0 {
            Mono::one()
        } else {
            self.bounds[i - 1].clone()
        }
    }

    /// The radix of digit `i`, `Bᵢ₊₁ / Bᵢ`; `None` for the last, unbounded digit.
    pub fn radix(&self, i: usize) -> Option<Mono> {
        (i + 1 < self.count())
            .then(|| self.bound(i + 1).over(&self.bound(i)))
            .flatten()
    }

    fn index_of(&self, m: &Mono) -> Option<usize> {
        if *m == Mono::one() {
            return Some(0);
        }
        self.bounds.iter().position(|b| b == m).map(|i| i + 1)
    }
}

impl Mono {
    /// The monomial one.
    pub fn one() -> Mono {
        Mono {
            atoms: Vec::new(),
            k: 1,
        }
    }

    /// The product.
    pub fn times(&self, other: &Mono) -> Option<Mono> {
        let mut atoms: Vec<String> = self.atoms.iter().chain(&other.atoms).cloned().collect();
        atoms.sort();
        Some(Mono {
            atoms,
            k: self.k.checked_mul(other.k)?,
        })
    }

    /// `other / self`, when `self` divides `other` (its factor divides, its atoms are among
    /// `other`'s counted with multiplicity).
    pub fn divides(&self, other: &Mono) -> bool {
        other.over(self).is_some()
    }

    /// `self / other`, when `other` divides `self`.
    pub fn over(&self, other: &Mono) -> Option<Mono> {
        if other.k <= 0 || self.k % other.k != 0 {
            return None;
        }
        let mut rest = self.atoms.clone();
        for a in &other.atoms {
            let i = rest.iter().position(|r| r == a)?;
            rest.remove(i);
        }
        Some(Mono {
            atoms: rest,
            k: self.k / other.k,
        })
    }
}

/// A run of digits of one component: `(id / lo) % (hi / lo)`, or `id / lo` without `hi`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Run {
    builtin: BuiltIn,
    component: u32,
    lo: Mono,
    hi: Option<Mono>,
}

impl Analysis<'_> {
    /// The digits of builtin component `(b, c)` as the function's divisions and remainders of
    /// it spell them (see the module documentation), or `None` when it is never divided, or
    /// its divisors do not form a chain (`idx % 6u` and `idx / 4u`), or one is not uniform.
    pub fn digits(&self, b: BuiltIn, c: u32) -> Option<Digits> {
        let mut bounds: Vec<Mono> = Vec::new();
        for (h, e) in self.function.expressions.iter() {
            let Expression::Binary {
                op: BinaryOperator::Divide | BinaryOperator::Modulo,
                left,
                ..
            } = *e
            else {
                continue;
            };
            let Some(l) = self.run_of(left, 0) else {
                continue;
            };
            if (l.builtin, l.component) != (b, c) {
                continue;
            }
            let run = self.run_of(h, 0)?;
            bounds.push(run.lo);
            bounds.extend(run.hi);
        }
        bounds.retain(|m| *m != Mono::one());
        bounds.sort_by(|x, y| (x.atoms.len(), x.k, &x.atoms).cmp(&(y.atoms.len(), y.k, &y.atoms)));
        bounds.dedup();
        if bounds.is_empty() || bounds.windows(2).any(|w| !w[0].divides(&w[1])) {
            return None;
        }
        Some(Digits {
            builtin: b,
            component: c,
            bounds,
        })
    }

    /// The digits `h` reads exactly, `lo..hi` (digit indices of `d`), when `h` is a run of
    /// them: the component itself (`0..count`), `id % B`, `id / B`, `(id / B) % R`, through
    /// `let`s, locals with one value and integer casts.
    pub fn digit_run(&self, h: Handle<Expression>, d: &Digits) -> Option<(usize, usize)> {
        let run = self.run_of(h, 0)?;
        if (run.builtin, run.component) != (d.builtin, d.component) {
            return None;
        }
        let lo = d.index_of(&run.lo)?;
        let hi = match &run.hi {
            None => d.count(),
            Some(m) => d.index_of(m)?,
        };
        (lo < hi).then_some((lo, hi))
    }

    /// The digits of the component `h` reads and which of them, when `h` is a run of them
    /// ([`Self::digit_run`] over the component's [`Self::digits`]).
    pub fn run_digits(&self, h: Handle<Expression>) -> Option<(Digits, usize, usize)> {
        let run = self.run_of(h, 0)?;
        let d = self.digits(run.builtin, run.component)?;
        let (lo, hi) = self.digit_run(h, &d)?;
        Some((d, lo, hi))
    }

    /// The expressions whose inlined text is `atom` (an atom of a [`Mono`]), for callers that
    /// need the value behind the text (a size the spec gives it).
    pub fn atom_exprs(&self, atom: &str) -> Vec<Handle<Expression>> {
        self.function
            .expressions
            .iter()
            .filter(|(h, _)| {
                self.is_dispatch_uniform(*h)
                    && self.expr_wgsl(*h, Naming::Inline).as_deref() == Some(atom)
            })
            .map(|(h, _)| h)
            .collect()
    }

    fn run_of(&self, h: Handle<Expression>, depth: u32) -> Option<Run> {
        if depth > 64 {
            return None;
        }
        if let Some(f) = self.form_depth(h, 0, false)
            && f.offset.is_zero()
            && let [(Var::Builtin(builtin, component), ref k)] = f.terms[..]
            && k.as_constant() == Some(1)
        {
            return Some(Run {
                builtin,
                component,
                lo: Mono::one(),
                hi: None,
            });
        }
        if let Some(inner) = self.int_cast_of(h) {
            return self.run_of(inner, depth + 1);
        }
        match self.function.expressions[h] {
            Expression::Load { pointer } => match self.function.expressions[pointer] {
                Expression::LocalVariable(v) if !self.is_loop_var(v) => {
                    self.run_of(self.single_value(v)?, depth + 1)
                }
                _ => None,
            },
            Expression::Binary {
                op: op @ (BinaryOperator::Divide | BinaryOperator::Modulo),
                left,
                right,
            } => {
                let run = self.run_of(left, depth + 1)?;
                let r = self.radix_of(right)?;
                let top = run.lo.times(&r)?;
                if op == BinaryOperator::Divide {
                    // ((id / lo) % (hi / lo)) / r = (id / (lo·r)) % (hi / (lo·r)) when lo·r | hi.
                    if run.hi.as_ref().is_some_and(|hi| !top.divides(hi)) {
                        return None;
                    }
                    Some(Run { lo: top, ..run })
                } else {
                    // ((id / lo) % (hi / lo)) % r keeps the smaller of the two when one divides
                    // the other.
                    let hi = match run.hi {
                        None => top,
                        Some(hi) if top.divides(&hi) => top,
                        Some(hi) if hi.divides(&top) => hi,
                        Some(_) => return None,
                    };
                    Some(Run {
                        hi: Some(hi),
                        ..run
                    })
                }
            }
            Expression::Binary {
                op: BinaryOperator::Subtract,
                left,
                right,
            } => {
                // x - (x / r) * r is x % r.
                let x = self.run_of(left, depth + 1)?;
                let Expression::Binary {
                    op: BinaryOperator::Multiply,
                    left: p,
                    right: q,
                } = self.function.expressions[right]
                else {
                    return None;
                };
                [(p, q), (q, p)].into_iter().find_map(|(quotient, factor)| {
                    let r = self.radix_of(factor)?;
                    let quotient = self.run_of(quotient, depth + 1)?;
                    let top = x.lo.times(&r)?;
                    ((quotient.builtin, quotient.component) == (x.builtin, x.component)
                        && quotient.hi == x.hi
                        && quotient.lo == top)
                        .then(|| Run {
                            hi: Some(top),
                            ..x.clone()
                        })
                })
            }
            _ => None,
        }
    }

    /// A divisor as a monomial: a dispatch-uniform value whose form is one product with a
    /// positive factor.
    fn radix_of(&self, h: Handle<Expression>) -> Option<Mono> {
        if !self.is_dispatch_uniform(h) {
            return None;
        }
        let f = self.form_depth(h, 0, false)?;
        if !f.terms.is_empty() {
            return None;
        }
        match f.offset.0.as_slice() {
            [m] if m.k > 0 => Some(m.clone()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::analysis::ir;
    use naga::BuiltIn;

    const CONV1D: &str = r#"
struct P { batch: u32, c_in: u32, c_out: u32, l_out: u32 }
@group(0) @binding(0) var<storage, read_write> y: array<f32>;
@group(0) @binding(1) var<uniform> p: P;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let idx = gid.x;
    let t = idx % p.l_out;
    let co = (idx / p.l_out) % p.c_out;
    let b = idx / (p.l_out * p.c_out);
    let b2 = (idx / p.l_out) / p.c_out;
    let t2 = idx - (idx / p.l_out) * p.l_out;
    let q = idx / p.l_out;
    let co2 = q - p.c_out * (q / p.c_out);
    y[idx] = f32(t + co + b + b2 + t2 + co2);
}
"#;

    /// The digit run of the `let` named `name`.
    fn run_of(a: &ir::Analysis<'_>, d: &super::Digits, name: &str) -> Option<(usize, usize)> {
        let (h, _) = a
            .function
            .named_expressions
            .iter()
            .find(|(_, n)| n.as_str() == name)
            .expect("named");
        a.digit_run(*h, d)
    }

    #[test]
    fn a_flat_id_split_three_ways_has_three_digits() {
        let parsed = ir::parse(CONV1D).unwrap();
        let a = parsed.analyse("main").unwrap();
        let d = a.digits(BuiltIn::GlobalInvocationId, 0).expect("a chain");
        assert_eq!(d.count(), 3, "{d:?}");
        assert_eq!(d.bounds[0].atoms, vec!["p.l_out".to_owned()]);
        assert_eq!(d.bounds[1].atoms.len(), 2);
        assert_eq!(run_of(&a, &d, "t"), Some((0, 1)));
        assert_eq!(run_of(&a, &d, "co"), Some((1, 2)));
        // `idx / (L * C)` and `(idx / L) / C` are the same digit.
        assert_eq!(run_of(&a, &d, "b"), Some((2, 3)));
        assert_eq!(run_of(&a, &d, "b2"), Some((2, 3)));
        // A remainder spelled as a subtraction.
        assert_eq!(run_of(&a, &d, "t2"), Some((0, 1)));
        assert_eq!(run_of(&a, &d, "co2"), Some((1, 2)));
        assert_eq!(run_of(&a, &d, "idx"), Some((0, 3)));
        assert_eq!(d.radix(1).unwrap().atoms, vec!["p.c_out".to_owned()]);
        assert_eq!(d.radix(2), None);
        assert!(!a.atom_exprs("p.c_out").is_empty());
        assert!(a.digits(BuiltIn::GlobalInvocationId, 1).is_none());
    }

    #[test]
    fn literal_radices_and_casts() {
        let src = r#"
@group(0) @binding(0) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = i32(gid.x);
    let w = i % 8;
    let h = (i / 8) % 4;
    let c = i / 32;
    y[gid.x] = f32(w + h + c);
}
"#;
        let parsed = ir::parse(src).unwrap();
        let a = parsed.analyse("main").unwrap();
        let d = a.digits(BuiltIn::GlobalInvocationId, 0).expect("a chain");
        assert_eq!(d.count(), 3);
        assert_eq!((d.bounds[0].k, d.bounds[1].k), (8, 32));
        assert_eq!(run_of(&a, &d, "h"), Some((1, 2)));
        assert_eq!(run_of(&a, &d, "c"), Some((2, 3)));
    }

    #[test]
    fn divisors_that_do_not_divide_one_another_are_not_digits() {
        let src = r#"
@group(0) @binding(0) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    y[gid.x] = f32(gid.x % 6u + gid.x / 4u);
}
"#;
        let parsed = ir::parse(src).unwrap();
        let a = parsed.analyse("main").unwrap();
        assert!(a.digits(BuiltIn::GlobalInvocationId, 0).is_none());
        // A quotient by a value that varies is not a digit either.
        let src = src.replace("gid.x / 4u", "gid.x / u32(y[0])");
        let parsed = ir::parse(&src).unwrap();
        let a = parsed.analyse("main").unwrap();
        assert!(a.digits(BuiltIn::GlobalInvocationId, 0).is_none());
    }
}

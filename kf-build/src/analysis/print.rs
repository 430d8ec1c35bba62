//! The one printer: an IR expression back to WGSL text.
//!
//! Two kinds of caller need WGSL text for an expression of the user's program. Edits in place
//! (`ir::Analysis::expr_wgsl`) print the user's `let` names, or everything expanded into a
//! canonical key for comparing two expressions; rewrites that generate a function from scratch
//! (`flow::Printer`) print every expression fully inlined for another invocation id and other
//! loop-carried values. They differ only at the leaves: what a named expression, an argument, a
//! local's load or a call's result stands for. So the structure (operators, literals, accesses,
//! constructors, conversions, built-in functions) is printed here, once, and a caller states its
//! leaves through [`Leaves`]: the two can never disagree on how WGSL spells an expression.
//!
//! Every compound expression is parenthesised (`(a + b)`, `-(x)`), so the text can stand after
//! any operator whatever the caller substitutes at a leaf; a negative integer literal is
//! parenthesised for the same reason.
//!
//! Invariant: refuses (`Err`) what it cannot restate exactly: a non-finite float, a 64-bit
//! integer, `isNan`/`isInf`, an unnamed constant or member, and any kind of expression it does
//! not know.

use super::Skip;
use super::expr::{binary_op_wgsl, literal_wgsl, relational_wgsl};
use naga::{Expression, Handle, TypeInner};

/// What a caller's [`Leaves::leaf`] answers: the text standing for an expression, a refusal, or
/// `None` to print the expression from its parts.
pub type Leaf = Option<Result<String, Skip>>;

/// What a caller says about the leaves of an expression tree.
pub trait Leaves: Sized {
    /// The text standing for `h` where the caller decides it (a named expression, an argument, a
    /// local variable or its load, a call's result), `None` to print `h` from its parts. `depth`
    /// is passed back to [`Wgsl::at`] for operands the caller prints itself.
    fn leaf(&self, w: &Wgsl<'_, Self>, h: Handle<Expression>, depth: u32) -> Leaf;
}

/// Prints expressions of one function.
pub struct Wgsl<'a, L> {
    /// The module (types, constants, globals).
    pub module: &'a naga::Module,
    /// The function the expressions belong to.
    pub func: &'a naga::Function,
    /// naga's analysis of that function (expression types).
    pub info: &'a naga::valid::FunctionInfo,
    /// The caller's leaves.
    pub leaves: L,
    /// Deepest nesting printed; deeper is refused.
    pub max_depth: u32,
}

impl<L: Leaves> Wgsl<'_, L> {
    /// WGSL text for `h`.
    pub fn print(&self, h: Handle<Expression>) -> Result<String, Skip> {
        self.at(h, 0)
    }

    fn no(what: &str) -> Skip {
        Skip(format!("cannot re-emit {what}"))
    }

    fn ty(&self, h: Handle<Expression>) -> &TypeInner {
        self.info[h].ty.inner_with(&self.module.types)
    }

    /// The WGSL spelling of `h`'s type.
    pub fn type_name_of(&self, h: Handle<Expression>) -> String {
        use naga::common::wgsl::TypeContext;
        self.module
            .to_ctx()
            .type_resolution_to_string(&self.info[h].ty)
    }

    /// WGSL text for `h` at nesting `depth`.
    pub fn at(&self, h: Handle<Expression>, depth: u32) -> Result<String, Skip> {
        use naga::common::wgsl::{TryToWgsl, TypeContext};
        if depth > self.max_depth {
            return Err(Self::no("an expression nested this deep"));
        }
        if let Some(text) = self.leaves.leaf(self, h, depth) {
            return text;
        }
        let p = |e: Handle<Expression>| self.at(e, depth + 1);
        let list = |hs: &mut dyn Iterator<Item = Handle<Expression>>| -> Result<String, Skip> {
            Ok(hs.map(p).collect::<Result<Vec<_>, _>>()?.join(", "))
        };
        let ctx = self.module.to_ctx();
        Ok(match self.func.expressions[h] {
            Expression::Literal(l) => literal(l).ok_or_else(|| Self::no("this literal"))?,
            Expression::Constant(c) => self.module.constants[c]
                .name
                .clone()
                .ok_or_else(|| Self::no("an unnamed constant"))?,
            Expression::Override(o) => self.module.overrides[o]
                .name
                .clone()
                .ok_or_else(|| Self::no("an unnamed override"))?,
            Expression::ZeroValue(ty) => format!("{}()", ctx.type_to_string(ty)),
            Expression::Compose { ty, ref components } => format!(
                "{}({})",
                ctx.type_to_string(ty),
                list(&mut components.iter().copied())?
            ),
            Expression::Splat { value, .. } => format!("{}({})", self.type_name_of(h), p(value)?),
            Expression::Swizzle {
                size,
                vector,
                pattern,
            } => {
                let letters: String = pattern[..size as usize]
                    .iter()
                    .map(|c| ['x', 'y', 'z', 'w'][*c as usize])
                    .collect();
                format!("{}.{letters}", p(vector)?)
            }
            Expression::Access { base, index } => format!("{}[{}]", p(base)?, p(index)?),
            Expression::AccessIndex { base, index } => {
                let base_text = p(base)?;
                match pointee(self.module, self.ty(base)) {
                    Some(TypeInner::Struct { members, .. }) => {
                        let member = members
                            .get(index as usize)
                            .and_then(|m| m.name.clone())
                            .ok_or_else(|| Self::no("an unnamed struct member"))?;
                        format!("{base_text}.{member}")
                    }
                    Some(TypeInner::Vector { .. }) if index < 4 => {
                        format!("{base_text}.{}", ['x', 'y', 'z', 'w'][index as usize])
                    }
                    _ => format!("{base_text}[{index}]"),
                }
            }
            Expression::GlobalVariable(g) => self.module.global_variables[g]
                .name
                .clone()
                .ok_or_else(|| Self::no("an unnamed global"))?,
            Expression::Load { pointer } => p(pointer)?,
            Expression::Unary { op, expr } => {
                let o = match op {
                    naga::UnaryOperator::Negate => "-",
                    naga::UnaryOperator::LogicalNot => "!",
                    naga::UnaryOperator::BitwiseNot => "~",
                };
                format!("{o}({})", p(expr)?)
            }
            Expression::Binary { op, left, right } => {
                format!("({} {} {})", p(left)?, binary_op_wgsl(op), p(right)?)
            }
            Expression::Select {
                condition,
                accept,
                reject,
            } => format!("select({}, {}, {})", p(reject)?, p(accept)?, p(condition)?),
            Expression::Relational { fun, argument } => {
                let name = relational_wgsl(fun).ok_or_else(|| Self::no("isNan/isInf"))?;
                format!("{name}({})", p(argument)?)
            }
            Expression::Math {
                fun,
                arg,
                arg1,
                arg2,
                arg3,
            } => {
                let name = fun
                    .try_to_wgsl()
                    .ok_or_else(|| Self::no("a math function"))?;
                let args = list(&mut [Some(arg), arg1, arg2, arg3].into_iter().flatten())?;
                format!("{name}({args})")
            }
            Expression::As {
                expr,
                convert: Some(_),
                ..
            } => format!("{}({})", self.type_name_of(h), p(expr)?),
            Expression::As {
                expr,
                convert: None,
                ..
            } => format!("bitcast<{}>({})", self.type_name_of(h), p(expr)?),
            Expression::ArrayLength(e) => format!("arrayLength(&{})", p(e)?),
            _ => return Err(Self::no("this kind of expression")),
        })
    }
}

/// A literal that can stand after any operator: negative integers parenthesised (and `i32::MIN`,
/// which has no literal, as a conversion).
fn literal(l: naga::Literal) -> Option<String> {
    match l {
        naga::Literal::I32(i32::MIN) => Some("i32(-2147483648)".to_owned()),
        naga::Literal::I32(v) if v < 0 => Some(format!("({v}i)")),
        naga::Literal::AbstractInt(v) if v < 0 => Some(format!("({v})")),
        naga::Literal::F32(v) if v.is_finite() && v.is_sign_negative() => Some(format!("({v:?}f)")),
        l => literal_wgsl(l),
    }
}

/// The type a pointer (or value) of type `ty` refers to.
pub fn pointee<'t>(module: &'t naga::Module, ty: &'t TypeInner) -> Option<&'t TypeInner> {
    match ty {
        TypeInner::Pointer { base, .. } => Some(&module.types[*base].inner),
        TypeInner::ValuePointer { size: Some(_), .. } => Some(ty),
        TypeInner::ValuePointer { .. } => None,
        other => Some(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Prints every name as written and nothing else: the structural rules alone.
    struct Names;

    impl Leaves for Names {
        fn leaf(&self, w: &Wgsl<'_, Self>, h: Handle<Expression>, _: u32) -> Leaf {
            match w.func.expressions[h] {
                Expression::FunctionArgument(i) => {
                    w.func.arguments[i as usize].name.clone().map(Ok)
                }
                Expression::LocalVariable(v) => w.func.local_variables[v].name.clone().map(Ok),
                _ => None,
            }
        }
    }

    /// The text of the value stored by the last store of the entry point of `src`.
    fn stored(src: &str) -> String {
        let module = naga::front::wgsl::parse_str(src).unwrap();
        let info = naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::all(),
        )
        .validate(&module)
        .unwrap();
        let ep = &module.entry_points[0];
        let value = ep
            .function
            .body
            .iter()
            .filter_map(|s| match s {
                naga::Statement::Store { value, .. } => Some(*value),
                _ => None,
            })
            .next_back()
            .unwrap();
        Wgsl {
            module: &module,
            func: &ep.function,
            info: info.get_entry_point(0),
            leaves: Names,
            max_depth: 64,
        }
        .print(value)
        .unwrap()
    }

    const HEAD: &str = "struct D { n: u32, s: f32 }\n@group(0) @binding(0) var<uniform> d: D;\n@group(0) @binding(1) var<storage, read_write> o: array<f32>;\n";

    #[test]
    fn compound_expressions_are_parenthesised_so_they_stand_anywhere() {
        let src = format!(
            "{HEAD}@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) gid: vec3<u32>) {{\n    var v = vec2<f32>(1.0, 2.0);\n    o[gid.x] = -(v.y * d.s) - f32(gid.x % d.n) + max(v, vec2(0.5)).x;\n}}\n"
        );
        assert_eq!(
            stored(&src),
            "((-((v.y * d.s)) - f32((gid.x % d.n))) + max(v, vec2<f32>(0.5f)).x)"
        );
    }

    #[test]
    fn negative_literals_keep_their_sign_after_an_operator() {
        let src = format!(
            "{HEAD}@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) gid: vec3<u32>) {{\n    let i = i32(gid.x);\n    o[gid.x] = f32(i - -3i) * -1.5;\n}}\n"
        );
        let text = stored(&src);
        assert!(text.contains("- (-3i)"), "{text}");
        assert!(text.contains("(-1.5f)"), "{text}");
        assert!(!text.contains("--"), "{text}");
    }
}

//! What every analysis asks of a single naga expression: its operands, the value of an integer
//! literal, and how WGSL spells a literal or an operator. One implementation here, so the analyses agree on what an expression reads.

use naga::{BinaryOperator, Expression, Handle, Literal};

/// The direct operands of an expression (what it reads), for every kind naga has: the one operand
/// walker of the analysis layer. Callers that model only some kinds filter by kind first.
pub fn operands(e: &Expression) -> Vec<Handle<Expression>> {
    match e {
        Expression::Literal(_)
        | Expression::Constant(_)
        | Expression::Override(_)
        | Expression::ZeroValue(_)
        | Expression::FunctionArgument(_)
        | Expression::GlobalVariable(_)
        | Expression::LocalVariable(_)
        | Expression::CallResult(_)
        | Expression::AtomicResult { .. }
        | Expression::WorkGroupUniformLoadResult { .. }
        | Expression::RayQueryProceedResult
        | Expression::SubgroupBallotResult
        | Expression::SubgroupOperationResult { .. } => Vec::new(),
        Expression::Compose { components, .. } => components.clone(),
        Expression::Access { base, index } => vec![*base, *index],
        Expression::AccessIndex { base, .. } => vec![*base],
        Expression::Splat { value, .. } => vec![*value],
        Expression::Swizzle { vector, .. } => vec![*vector],
        Expression::Load { pointer } => vec![*pointer],
        Expression::ImageSample {
            image,
            sampler,
            coordinate,
            array_index,
            offset,
            depth_ref,
            ..
        } => [
            Some(*image),
            Some(*sampler),
            Some(*coordinate),
            *array_index,
            *offset,
            *depth_ref,
        ]
        .into_iter()
        .flatten()
        .collect(),
        Expression::ImageLoad {
            image,
            coordinate,
            array_index,
            sample,
            level,
        } => [
            Some(*image),
            Some(*coordinate),
            *array_index,
            *sample,
            *level,
        ]
        .into_iter()
        .flatten()
        .collect(),
        Expression::ImageQuery { image, .. } => vec![*image],
        Expression::Unary { expr, .. } => vec![*expr],
        Expression::Binary { left, right, .. } => vec![*left, *right],
        Expression::Select {
            condition,
            accept,
            reject,
        } => vec![*condition, *accept, *reject],
        Expression::Derivative { expr, .. } => vec![*expr],
        Expression::Relational { argument, .. } => vec![*argument],
        Expression::Math {
            arg,
            arg1,
            arg2,
            arg3,
            ..
        } => [Some(*arg), *arg1, *arg2, *arg3]
            .into_iter()
            .flatten()
            .collect(),
        Expression::As { expr, .. } => vec![*expr],
        Expression::ArrayLength(e) => vec![*e],
        Expression::RayQueryVertexPositions { query, .. }
        | Expression::RayQueryGetIntersection { query, .. } => vec![*query],
        Expression::CooperativeLoad { data, .. } => vec![data.pointer, data.stride],
        Expression::CooperativeMultiplyAdd { a, b, c } => vec![*a, *b, *c],
    }
}

/// Whether `e` is the result of something other than its operands: a call, an atomic, a load
/// through `workgroupUniformLoad`, a subgroup operation, an image read or query, a derivative, a
/// ray query or a cooperative-matrix operation. Such a value is never loop-invariant, and a
/// function that computes one is not pure.
pub fn is_effect_result(e: &Expression) -> bool {
    matches!(
        e,
        Expression::CallResult(_)
            | Expression::AtomicResult { .. }
            | Expression::WorkGroupUniformLoadResult { .. }
            | Expression::SubgroupBallotResult
            | Expression::SubgroupOperationResult { .. }
            | Expression::ImageSample { .. }
            | Expression::ImageLoad { .. }
            | Expression::ImageQuery { .. }
            | Expression::Derivative { .. }
            | Expression::RayQueryProceedResult
            | Expression::RayQueryGetIntersection { .. }
            | Expression::RayQueryVertexPositions { .. }
            | Expression::CooperativeLoad { .. }
            | Expression::CooperativeMultiplyAdd { .. }
    )
}

/// How WGSL spells a binary operator.
pub fn binary_op_wgsl(op: BinaryOperator) -> &'static str {
    use BinaryOperator as B;
    match op {
        B::Add => "+",
        B::Subtract => "-",
        B::Multiply => "*",
        B::Divide => "/",
        B::Modulo => "%",
        B::Equal => "==",
        B::NotEqual => "!=",
        B::Less => "<",
        B::LessEqual => "<=",
        B::Greater => ">",
        B::GreaterEqual => ">=",
        B::And => "&",
        B::ExclusiveOr => "^",
        B::InclusiveOr => "|",
        B::LogicalAnd => "&&",
        B::LogicalOr => "||",
        B::ShiftLeft => "<<",
        B::ShiftRight => ">>",
    }
}

/// An integer literal's value.
pub fn literal_int(l: &Literal) -> Option<i64> {
    match *l {
        Literal::U32(v) => Some(i64::from(v)),
        Literal::I32(v) => Some(i64::from(v)),
        Literal::U64(v) => i64::try_from(v).ok(),
        Literal::I64(v) | Literal::AbstractInt(v) => Some(v),
        _ => None,
    }
}

/// A literal as WGSL source, with its type suffix; `None` for a non-finite float or a 64-bit
/// integer.
pub fn literal_wgsl(l: naga::Literal) -> Option<String> {
    Some(match l {
        naga::Literal::F32(v) if v.is_finite() => format!("{v:?}f"),
        naga::Literal::F16(v) if v.is_finite() => format!("{:?}h", f32::from(v)),
        naga::Literal::F64(v) if v.is_finite() => format!("{v:?}lf"),
        naga::Literal::AbstractFloat(v) if v.is_finite() => format!("{v:?}"),
        naga::Literal::U32(v) => format!("{v}u"),
        naga::Literal::I32(v) => format!("{v}i"),
        naga::Literal::AbstractInt(v) => format!("{v}"),
        naga::Literal::Bool(v) => format!("{v}"),
        _ => return None,
    })
}

/// How WGSL spells a relational function; `None` for naga's `isNan`/`isInf`, which WGSL lacks.
pub fn relational_wgsl(fun: naga::RelationalFunction) -> Option<&'static str> {
    match fun {
        naga::RelationalFunction::All => Some("all"),
        naga::RelationalFunction::Any => Some("any"),
        _ => None,
    }
}

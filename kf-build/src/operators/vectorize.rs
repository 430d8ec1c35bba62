//! Vectorized access: loads of several components of one vector element become one vector load.
//!
//! What is legal. A variant must keep the baseline's binding types exactly
//! (`Interface::mismatches` compares type and layout), and WGSL has no way to read an
//! `array<f32>` sixteen bytes at a time: there are no pointer casts, `bitcast` applies to values,
//! and an `array<vec4<f32>>` view of the same buffer would be a different binding type. So for
//! buffers of scalars this operator always skips, and says so. What remains legal is to use the
//! vector loads a vector-typed binding already allows: a kernel that reads `pos[i].x`, `pos[i].y`
//! and `pos[i].z` as three scalar loads (each with its own bounds check under robust buffer
//! access) can read `pos[i]` once and take the components from the value.
//!
//! What it proves, from the IR: the loads are of components of the same element (the same index,
//! printed canonically) of a binding whose element type is a vector, they sit in the same block
//! (so one `let` placed before the first dominates them all), none is in a loop header, and the
//! kernel never writes that binding (so no store can come between the loads and change the
//! element).
//!
//! Invariant: only the grouped loads and the inserted `let` change; every other byte is kept.

use super::{Moves, Operator, Rewrite, Skip, Subject};
use crate::analysis::ir::{self, Analysis, Edit, Naming, TextRange};
use crate::evolve::descriptor::Dim;
use naga::TypeInner;
use std::borrow::Cow;

/// The vectorized-access operator (see the module documentation).
#[derive(Clone, Copy, Debug, Default)]
pub struct VectorizedAccess;

impl Operator for VectorizedAccess {
    fn name(&self) -> &'static str {
        "vectorize"
    }

    fn moves(&self) -> Moves {
        &[(Dim::Memory, 1)]
    }

    fn apply(&self, subject: &Subject<'_>) -> Result<Vec<Rewrite>, Skip> {
        let parsed = ir::parse(&subject.program.wgsl).map_err(|e| Skip(e.to_string()))?;
        let a = parsed
            .analyse(&subject.program.entry)
            .map_err(|e| Skip(e.to_string()))?;
        if a.code().contains("kf_vec") {
            return Err(Skip("the kernel already has grouped vector loads".into()));
        }
        let groups = groups(&a);
        if groups.is_empty() {
            let scalar_only = a.accesses.iter().all(|x| !element_is_vector(&a, x.global));
            return Err(Skip(if scalar_only {
                "every buffer has scalar elements: a wider load would change the binding's type, which the baseline's bind groups fix, and WGSL cannot reinterpret a buffer".into()
            } else {
                "no element has several components loaded in one block".into()
            }));
        }
        let mut edits = Vec::new();
        for (n, g) in groups.iter().enumerate() {
            let name = format!("kf_vec{n}");
            let indent = a.indent_at(g.insert_at);
            edits.push(Edit::insert(
                g.insert_at,
                format!("let {name} = {};\n{indent}", g.element),
            ));
            for (range, component) in &g.loads {
                edits.push(Edit::replace(range.clone(), format!("{name}.{component}")));
            }
        }
        let text = ir::apply_edits(a.source, &edits)
            .ok_or_else(|| Skip("the rewrite's edits overlap".into()))?;
        let reflected =
            kf_runtime::resolve::reflect(&text, Some(&subject.program.entry), "vectorize")
                .map_err(|e| Skip(format!("the vectorized kernel is not valid WGSL: {e}")))?;
        let mismatches = subject.kernel.mismatches(&reflected.interface);
        if !mismatches.is_empty() {
            return Err(Skip(mismatches.join("; ")));
        }
        let mut program = subject.program.clone();
        program.wgsl = Cow::Owned(text);
        Ok(vec![Rewrite {
            program,
            step: format!("vectorize({} grouped loads)", groups.len()),
            params: Vec::new(),
        }])
    }
}

struct Group {
    /// The text of the element (`pos[i]`).
    element: String,
    /// Where the `let` goes: the start of the statement holding the first load.
    insert_at: usize,
    /// Each load's text and the component it selects.
    loads: Vec<(TextRange, &'static str)>,
}

fn element_is_vector(a: &Analysis<'_>, g: naga::Handle<naga::GlobalVariable>) -> bool {
    let ty = a.module.global_variables[g].ty;
    let elem = match &a.module.types[ty].inner {
        TypeInner::Array { base, .. } => *base,
        TypeInner::Struct { members, .. } => {
            match members.last().map(|m| &a.module.types[m.ty].inner) {
                Some(TypeInner::Array { base, .. }) => *base,
                _ => return false,
            }
        }
        _ => return false,
    };
    matches!(a.module.types[elem].inner, TypeInner::Vector { .. })
}

fn groups(a: &Analysis<'_>) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    let mut keys: Vec<(
        naga::Handle<naga::GlobalVariable>,
        String,
        Option<usize>,
        ir::Part,
    )> = Vec::new();
    let headers: Vec<TextRange> = a
        .loops
        .iter()
        .filter_map(|l| l.for_loop.as_ref().and_then(|f| f.header_span.clone()))
        .collect();
    for x in &a.accesses {
        let (false, Some(index), Some(c)) = (x.write, x.index, x.component) else {
            continue;
        };
        if !element_is_vector(a, x.global) || a.writes_global(x.global) {
            continue;
        }
        let Some(range) = x.span.clone() else {
            continue;
        };
        if headers
            .iter()
            .any(|h| h.start <= range.start && range.end <= h.end)
        {
            continue;
        }
        let Some(index_text) = a.expr_wgsl(index, Naming::Inline) else {
            continue;
        };
        // The element's own text, from the pointer's text up to the component.
        let text = a.text(&range);
        let Some(dot) = text.rfind('.') else { continue };
        let element = text[..dot].trim().to_owned();
        let st = &a.stmts[x.stmt];
        let key = (x.global, index_text, st.parent, st.part);
        let component = ["x", "y", "z", "w"][c.min(3) as usize];
        match keys.iter().position(|k| *k == key) {
            Some(i) => out[i].loads.push((range, component)),
            None => {
                let Some(insert_at) = statement_start(a, range.start) else {
                    continue;
                };
                keys.push(key);
                out.push(Group {
                    element,
                    insert_at,
                    loads: vec![(range, component)],
                });
            }
        }
    }
    out.retain(|g| g.loads.len() >= 2);
    out
}

/// The start of the statement that contains byte `pos`: after the previous `;`, `{` or `}` at
/// the same bracket depth, blanks skipped.
fn statement_start(a: &Analysis<'_>, pos: usize) -> Option<usize> {
    let bytes = a.code().as_bytes();
    let mut depth = 0i32;
    let mut i = pos;
    while i > 0 {
        i -= 1;
        match bytes[i] {
            b')' | b']' => depth += 1,
            // An opening bracket never closed before `pos`: the load is inside it (an `if`
            // condition, a call); the statement starts further back.
            b'(' | b'[' => depth = (depth - 1).max(0),
            b';' | b'{' | b'}' if depth == 0 => {
                let mut j = i + 1;
                while j < pos && bytes[j].is_ascii_whitespace() {
                    j += 1;
                }
                // `} else if (..)`: no statement can go between `}` and `else`.
                let rest = &a.code()[j..];
                if rest.starts_with("else") || rest.starts_with("continuing") {
                    return None;
                }
                return Some(j);
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests;

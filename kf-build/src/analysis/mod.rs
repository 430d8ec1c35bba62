//! The analysis layer: what a WGSL program is, read once from naga's IR, for every part of the
//! tuner that needs to know.
//!
//! Modelled on naga's `proc` (queries over a validated `Module` that every backend shares instead
//! of each writing its own) and rust-analyzer's `ide-db` (one database of facts under every IDE
//! feature): a program is parsed and validated once, and the rewrite operators, the behaviour
//! descriptor and the search all read the same facts from here. A new spelling of a pattern is
//! then taught once, in this layer, instead of to each consumer on its own, and two consumers can
//! never disagree about what a loop or an index is.
//!
//! Layering: `analysis` depends on naga and `kf-runtime`'s model only. The operators
//! (`crate::operators`), the descriptor (`crate::evolve`) and the search (`crate::search`) build
//! on it; operators never import the search, and the search uses operators only through their
//! public API (`operators::all`, `Operator`, `Subject`, ...). The tidy test checks both rules.
//!
//! - [`ir`]: the entry point's statements, loops in one form, accumulators, guards, index
//!   expressions as polynomials over invocation ids, what each statement reads and writes.
//! - [`loops`]: loop and workgroup queries over the entry point and the functions it calls.
//! - [`flow`]: flow-sensitive values of locals, dependencies, and a printer for new contexts.
//! - [`facts`]: the memory, compute and parallelism facts behind the behaviour descriptor.
//! - [`print`]: the one printer of IR expressions as WGSL, with the leaves each caller states.
//! - [`text`]: the one edit type, edits at naga's spans and one-token reads of the source.
//! - [`expr`]: the one operand walker and operator spelling of naga expressions.
//! - [`uniforms`]: which size of the spec a uniform value holds.
//! - [`workgroup`]: lifting a literal `@workgroup_size` into overrides.
//! - [`access`]: which buffers a program only reads, whatever access mode it declares.
//! - [`axes`]: a program's template parameters: the axes of its parameter space, derived values
//!   and constraints.
//!
//! Invariant: every query is conservative: when the IR does not have the expected shape the
//! answer is "not recognised", never a guess.

pub mod access;
pub mod axes;
pub mod expr;
pub mod facts;
pub mod flow;
pub mod ir;
pub mod loops;
pub mod print;
pub mod text;
pub mod uniforms;
pub mod workgroup;

/// Why a pattern is not recognised (or an operator does not apply), in a few words: the premise
/// that broke (`no loop with a known trip count`). Operators return it as their reason to skip.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Skip(pub String);

//! The evaluator: how a candidate kernel is compiled, verified against the baseline, and timed.
//!
//! Everything that crosses the worker boundary is plain serializable data in [`protocol`]:
//! [`EvalRequest`] in, [`EvalReport`] out. The search never touches the GPU itself; it asks an
//! [`Evaluator`] (today a local worker process, later possibly a remote one) and reads the report.
//!
//! Candidates are untrusted code. The ladder of [`Reason`]s is the fitness ladder of the paper:
//! 0 no code / parse, 1 validation, 2 pipeline / limits / runtime / timeout, 3 interface or shape
//! mismatch, 4 wrong values, 5 correct (score 5 + speedup).
//!
//! Invariant: a report with level 5 lists the checks of [`CHECKS`] that ran, and all of them passed
//! on this adapter; a check that could not run is left out (never claimed), and anything that
//! could not be checked among the required ones is a failure, never a pass.

pub mod compare;
pub mod gpu_compare;
pub mod inputs;
mod parts;
pub mod probe;
pub mod process;
pub mod protocol;
mod resources;
pub mod runner;
pub mod traffic;

pub use protocol::*;

//! LLM-guided evolution: an OpenAI-compatible endpoint proposes kernels, steered by the archive,
//! the gradients and the adapter's measured limits, while the prompts evolve with the kernels.
//!
//! Stages, data flowing one way: [`config`] (endpoint, models, limits; the key from the
//! environment only) → [`prompt`] (seed / repair / optimize / template prompts from the search
//! state, the kernel's spec and the adapter's spec sheet) → [`client`] (retries, the response
//! cache, concurrency, token accounting) over a transport (`http`, reqwest with rustls, behind
//! the `llm` feature) → [`parse`] (the fenced WGSL block and the JSON block with the launch rule
//! and override candidates) → candidates judged by the evaluator like any rewrite. [`genome`] is
//! the meta-prompt evolution, and [`source`] ties it together as the evolution strategy's
//! [`crate::search::qd::Proposer`].
//!
//! Invariant: the search's core types never see an async runtime or a socket: the client runs
//! blocking requests on its own threads behind [`client::Ticket`]s.
//! Invariant: the API key appears in no log, run file, cache entry, report or error message.

pub mod client;
pub mod config;
pub mod genome;
#[cfg(feature = "llm")]
pub mod http;
pub mod parse;
pub mod prompt;
pub mod protocol;
pub mod source;

pub use config::{ApiKey, LlmConfig, redact};
pub use source::{LlmProposer, LlmReport, Session, first_request};

//! End-to-end tests: the real `cargo-kernelfoundry` binary on a real wgpu adapter (lavapipe in
//! CI), real copies of the example crates, real builds. One test binary, one module per area.

mod adversarial;
mod broker;
mod cache_state;
mod cache_tools;
mod cli;
mod e2e;
mod evolve;
mod examples;
mod inputs;
mod kernels;
mod launch;
mod llm;
mod measure;
mod near_miss;
mod operators;
mod report;
mod respell;
mod rewrites;
mod roofline;
mod stages;
mod tidy;
mod tiling;
mod tune_shapes;
mod unseen;

use std::sync::Mutex;

/// Serialises tests that build and run a copy of a crate: copies share the target directory and
/// the binary name, so a build in one test must not replace the binary another is about to run.
pub static BUILD_AND_RUN: Mutex<()> = Mutex::new(());

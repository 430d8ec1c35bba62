//! Evaluation on another machine: the same worker protocol carried over a pipe or a broker.
//!
//! - [`relay`]: `worker --stdio`, the far end of `--worker-cmd` (e.g. over ssh).
//! - [`broker`] (feature `broker`): the workers of each adapter key behind a NATS JetStream broker.

#[cfg(feature = "broker")]
pub mod broker;
pub mod relay;

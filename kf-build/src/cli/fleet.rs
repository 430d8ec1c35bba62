//! The options that say where evaluations run: `--adapter` (`AdapterArgs`) and the fleet options
//! `--broker`, `--adapter-key`, `--broker-timeout` and `--worker-cmd` (`FleetArgs`).

use crate::gpu::AdapterSelector;
use clap::Args;

/// Where evaluations run, for the verbs that can send them elsewhere than a local worker.
#[derive(Args, Debug, Clone)]
pub(crate) struct FleetArgs {
    /// Send the evaluations to the workers on this broker (`cargo kernelfoundry worker --broker
    /// URL` on the GPU machines) instead of a local worker: `nats://[user:password@]host[:port]`,
    /// `tls://…` for TLS. Credentials may come from KERNELFOUNDRY_BROKER_USER and
    /// KERNELFOUNDRY_BROKER_PASSWORD (or KERNELFOUNDRY_BROKER_TOKEN) instead; they are never
    /// printed. This machine needs no GPU.
    #[arg(
        long,
        value_name = "URL",
        env = "KERNELFOUNDRY_BROKER",
        hide_env_values = true,
        help_heading = "Fleet"
    )]
    pub broker: Option<String>,
    /// Use the workers of this adapter key (may be repeated; `tune`: one archive, run and cache
    /// entry per key). Default: every key a worker on the broker serves.
    #[arg(long = "adapter-key", value_name = "KEY", help_heading = "Fleet")]
    pub adapter_keys: Vec<String>,
    /// Seconds to wait for the workers of each adapter key to announce themselves, and for a
    /// worker to take an evaluation, before the command stops and names the key nobody serves.
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = 60.0,
        help_heading = "Fleet"
    )]
    pub broker_timeout: f64,
    /// Run the evaluation worker through this command (by `sh -c`) instead of locally, e.g.
    /// `ssh gpu-box cargo-kernelfoundry worker --stdio`; it speaks the worker protocol on
    /// stdin/stdout and kills a candidate at its deadline itself.
    #[arg(long, value_name = "COMMAND", help_heading = "Fleet")]
    pub worker_cmd: Option<String>,
}

impl FleetArgs {
    /// The library's view of these options.
    pub fn options(&self) -> crate::session::FleetOptions {
        crate::session::FleetOptions {
            broker: self.broker.clone(),
            adapter_keys: self.adapter_keys.clone(),
            broker_timeout_s: self.broker_timeout,
            worker_cmd: self.worker_cmd.clone(),
        }
    }
}

/// The adapter option shared by the verbs that use the GPU.
#[derive(Args, Debug, Clone)]
pub(crate) struct AdapterArgs {
    /// Adapter to use: an index or key from `cargo kernelfoundry adapters`, or part of its name
    /// (case-insensitive) or a backend (`vulkan`, `gl`). Default: wgpu's high-performance choice.
    #[arg(long, value_name = "INDEX|KEY|NAME", env = "KERNELFOUNDRY_ADAPTER")]
    pub(crate) adapter: Option<String>,
}

impl AdapterArgs {
    pub(crate) fn selector(&self) -> AdapterSelector {
        AdapterSelector(self.adapter.clone())
    }
}

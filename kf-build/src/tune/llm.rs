//! The LLM side of a tune: whether this tune asks an LLM (`--llm`, `--llm-replay-only`, or
//! `enabled = true` in the manifest without `--no-llm`), the session with its response cache, and
//! the first request as `--dry-run` shows it.

use crate::discover::Workspace;
use crate::evaluate::{AdapterReport, Ceilings};
use crate::llm::config::ConfigError;
use crate::llm::{LlmConfig, Session};
use kf_runtime::resolve::ResolvedKernel;

/// The LLM options of `tune`.
#[derive(Clone, Copy, Debug, Default)]
pub struct LlmFlags {
    /// `--llm`.
    pub llm: bool,
    /// `--no-llm`.
    pub no_llm: bool,
    /// `--llm-replay-only`.
    pub replay_only: bool,
}

/// The LLM configuration when this tune uses the LLM, from the workspace's and the current
/// package's manifests and the environment.
pub fn config(flags: LlmFlags, ws: &Workspace) -> Result<Option<LlmConfig>, ConfigError> {
    let package_manifest = ws.current.as_ref().and_then(|name| {
        ws.packages
            .iter()
            .find(|p| &p.name == name)
            .map(|p| p.root.join("Cargo.toml"))
    });
    let workspace_manifest = ws.root.join("Cargo.toml");
    let mut config = LlmConfig::load(
        workspace_manifest
            .is_file()
            .then_some(workspace_manifest.as_path()),
        package_manifest.as_deref().filter(|p| p.is_file()),
        &|name| std::env::var(name).ok(),
    )?;
    let wanted = flags.llm || flags.replay_only || (config.enabled && !flags.no_llm);
    if !wanted {
        return Ok(None);
    }
    config.replay_only |= flags.replay_only;
    Ok(Some(config))
}

/// What `--dry-run` prints: where the first request would go, and its messages.
pub fn dry_run(
    config: &LlmConfig,
    kernel: &ResolvedKernel,
    adapter: &AdapterReport,
    ceilings: Option<&Ceilings>,
) -> String {
    let request = crate::llm::first_request(config, kernel, adapter, ceilings);
    let mut out = format!(
        "dry run: the first request would go to {} (model {}, temperature {}, max_tokens {}; API key {}); nothing was sent\n",
        crate::llm::protocol::endpoint(&config.url),
        request.model,
        request.temperature,
        request.max_tokens,
        if config.api_key.is_some() {
            "set"
        } else {
            "not set"
        },
    );
    for m in &request.messages {
        out.push_str(&format!("\n----- {} -----\n{}\n", m.role, m.content));
    }
    out
}

/// The session, its response cache under the workspace's target directory unless configured,
/// and the line that says whom the tune asks.
pub fn open(config: LlmConfig, ws: &Workspace) -> Result<(Session, String), String> {
    let cache = match &config.cache_dir {
        Some(d) if d.is_relative() => ws.root.join(d),
        Some(d) => d.clone(),
        None => ws.target_dir.join("kernelfoundry").join("llm-cache"),
    };
    let session = Session::new(config, &cache)?;
    let c = session.config();
    let note = format!(
        "asking {} ({}) for kernels too{}; answers cached in {}",
        c.models
            .iter()
            .map(|m| m.name.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        crate::llm::protocol::endpoint(&c.url),
        if c.replay_only {
            ", replaying only"
        } else {
            ""
        },
        cache.display()
    );
    Ok((session, note))
}

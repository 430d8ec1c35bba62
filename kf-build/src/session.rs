//! Where evaluations run: one call that opens the backends of a verb.
//!
//! `tune` and `bench` (and, in time, every verb that evaluates) send their evaluations to the same
//! kinds of place: a worker process of this executable on a local adapter, a worker reached
//! through a command (`--worker-cmd`, e.g. over ssh), or the workers of each adapter key behind a
//! broker (`--broker`). Opening them — checking the adapter first so a missing GPU is a typed
//! error, giving a remote worker grace to kill a candidate at its deadline, waiting for a broker's
//! workers to announce themselves — was written inside `tune`; it lives here so every verb opens
//! its backends the same way and only handles its arguments.

use crate::evaluate::Evaluator;
use crate::evaluate::process::{WorkerError, WorkerProcess};
use crate::gpu::AdapterSelector;
use std::time::Duration;

/// Where to evaluate, as the verbs' fleet options give it.
#[derive(Clone, Debug, Default)]
pub struct FleetOptions {
    /// `--broker URL`: the workers behind this broker.
    pub broker: Option<String>,
    /// `--adapter-key`: the keys to use among the broker's workers (all when empty).
    pub adapter_keys: Vec<String>,
    /// Seconds to wait for a key's workers to announce themselves and to take an evaluation.
    pub broker_timeout_s: f64,
    /// `--worker-cmd`: run the worker through this shell command.
    pub worker_cmd: Option<String>,
}

/// Why the backends cannot be opened.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// Both a worker command and a broker were given.
    #[error(
        "--worker-cmd and --broker exclude each other (KERNELFOUNDRY_BROKER may be set in the environment)"
    )]
    Exclusive,
    /// `--adapter-key` without a broker.
    #[error("--adapter-key chooses among the workers of a broker; it needs --broker URL")]
    KeyWithoutBroker,
    /// The selected local adapter does not exist.
    #[error(transparent)]
    Gpu(#[from] crate::gpu::GpuError),
    /// The worker process or command could not be started.
    #[error("cannot start the evaluation worker{}: {source}", command.as_ref().map(|c| format!(" command `{c}`")).unwrap_or_default())]
    Worker {
        /// The `--worker-cmd`, when one was given.
        command: Option<String>,
        /// Why.
        source: WorkerError,
    },
    /// The broker is unusable.
    #[cfg(feature = "broker")]
    #[error(transparent)]
    Broker(#[from] crate::remote::broker::BrokerError),
    /// An `--adapter-key` that is not a key.
    #[error("`{0}` is not an adapter key (16 hex digits, as `cargo kernelfoundry adapters` shows)")]
    BadKey(String),
    /// A verb that measures on one adapter was given a broker serving several.
    #[error(
        "the broker serves {} adapter keys ({}); this command measures on one: choose it with --adapter-key",
        .0.len(),
        .0.join(", ")
    )]
    SeveralKeys(Vec<String>),
    /// This build has no broker client.
    #[error("this build has no broker client (kf-build's `broker` feature is off)")]
    NoBrokerClient,
}

/// Where the evaluations of one adapter run.
pub enum Backend {
    /// A worker process: the current executable, or `--worker-cmd`.
    Process(Box<WorkerProcess>),
    /// The workers of one adapter key behind a broker (and the broker's address as shown).
    #[cfg(feature = "broker")]
    Fleet(Box<crate::remote::broker::FleetEvaluator>, String),
}

impl Backend {
    /// The evaluator.
    pub fn evaluator(&mut self) -> &mut dyn Evaluator {
        match self {
            Backend::Process(w) => w.as_mut(),
            #[cfg(feature = "broker")]
            Backend::Fleet(f, _) => f.as_mut(),
        }
    }

    /// The ceilings the workers measured, when they did.
    pub fn measured(&self) -> Option<&crate::evaluate::Ceilings> {
        match self {
            Backend::Process(w) => w.measured.as_ref(),
            #[cfg(feature = "broker")]
            Backend::Fleet(f, _) => f.measured.as_ref(),
        }
    }

    /// Where the evaluations go, for a verb's "… on" line (empty for a local worker).
    pub fn describe(&self) -> String {
        match self {
            Backend::Process(_) => String::new(),
            #[cfg(feature = "broker")]
            Backend::Fleet(f, url) => {
                format!(" through {} worker(s) on {url}", f.parallelism())
            }
        }
    }

    /// What the user should know afterwards: restarts, which workers answered, redeliveries.
    pub fn notes(&self) -> Vec<String> {
        match self {
            Backend::Process(w) if w.restarts > 0 => vec![format!(
                "the evaluation worker was restarted {} time(s) after timeouts or crashes",
                w.restarts
            )],
            Backend::Process(_) => Vec::new(),
            #[cfg(feature = "broker")]
            Backend::Fleet(f, _) => {
                let mut notes = Vec::new();
                if !f.workers_seen.is_empty() {
                    let by: Vec<String> = f
                        .workers_seen
                        .iter()
                        .map(|(w, n)| format!("{w} {n}"))
                        .collect();
                    notes.push(format!(
                        "reports from the workers of {}: {}",
                        f.key(),
                        by.join(", ")
                    ));
                }
                if f.redelivered > 0 {
                    notes.push(format!(
                        "{} evaluation(s) went to another worker after the first stopped answering",
                        f.redelivered
                    ));
                }
                notes
            }
        }
    }
}

/// The backends to evaluate with: a local worker on `selector`'s adapter, the `--worker-cmd`
/// command, or the workers of each adapter key on the broker. `Ok(Err(message))` when the broker
/// has no worker for a key (a verb exits with its no-GPU code and the message).
pub fn open(
    fleet: &FleetOptions,
    selector: AdapterSelector,
    timeout: Duration,
) -> Result<Result<Vec<Backend>, String>, SessionError> {
    if fleet.worker_cmd.is_some() && fleet.broker.is_some() {
        return Err(SessionError::Exclusive);
    }
    if !fleet.adapter_keys.is_empty() && fleet.broker.is_none() {
        return Err(SessionError::KeyWithoutBroker);
    }
    if let Some(url) = &fleet.broker {
        return open_fleet(fleet, url);
    }
    let worker = match &fleet.worker_cmd {
        Some(cmd) => WorkerProcess::start_command(
            vec!["sh".into(), "-c".into(), cmd.into()],
            // The far end kills a candidate at its deadline and answers; give it time to.
            Duration::from_secs(30),
            selector,
            timeout,
        )
        .map_err(|source| SessionError::Worker {
            command: Some(cmd.clone()),
            source,
        })?,
        None => {
            // Check the adapter here first, so a missing GPU or a bad selector is a typed error.
            crate::gpu::select(&crate::gpu::instance(), &selector)?;
            WorkerProcess::start(selector, timeout).map_err(|source| SessionError::Worker {
                command: None,
                source,
            })?
        }
    };
    Ok(Ok(vec![Backend::Process(Box::new(worker))]))
}

/// Like [`open`], for a verb that measures on one adapter (`bench`, `eval`): a broker serving
/// several keys is [`SessionError::SeveralKeys`].
pub fn open_one(
    fleet: &FleetOptions,
    selector: AdapterSelector,
    timeout: Duration,
) -> Result<Result<Backend, String>, SessionError> {
    let mut backends = match open(fleet, selector, timeout)? {
        Ok(b) => b,
        Err(unserved) => return Ok(Err(unserved)),
    };
    if backends.len() > 1 {
        return Err(SessionError::SeveralKeys(
            backends
                .iter_mut()
                .map(|b| b.evaluator().adapter().key.to_string())
                .collect(),
        ));
    }
    Ok(Ok(backends
        .pop()
        .expect("open gives a backend per key, at least one")))
}

#[cfg(feature = "broker")]
fn open_fleet(
    fleet: &FleetOptions,
    url: &str,
) -> Result<Result<Vec<Backend>, String>, SessionError> {
    use crate::remote::broker::{BrokerAddress, BrokerError, Fleet};
    let address = BrokerAddress::parse(url, &|name| std::env::var(name).ok())?;
    let mut keys = Vec::new();
    for k in &fleet.adapter_keys {
        keys.push(kf_runtime::AdapterKey::parse(k).ok_or_else(|| SessionError::BadKey(k.clone()))?);
    }
    let shown = address.to_string();
    let broker = Fleet::connect(address)?;
    let wait = Duration::from_secs_f64(fleet.broker_timeout_s.max(0.0));
    let targets = match broker.targets(&keys, wait) {
        Ok(t) => t,
        Err(e @ BrokerError::NoWorker { .. }) => return Ok(Err(e.to_string())),
        Err(e) => return Err(e.into()),
    };
    let mut backends = Vec::new();
    for target in &targets {
        backends.push(Backend::Fleet(
            Box::new(broker.evaluator(target, wait.max(Duration::from_secs(1)))?),
            shown.clone(),
        ));
    }
    Ok(Ok(backends))
}

#[cfg(not(feature = "broker"))]
fn open_fleet(_: &FleetOptions, _: &str) -> Result<Result<Vec<Backend>, String>, SessionError> {
    Err(SessionError::NoBrokerClient)
}

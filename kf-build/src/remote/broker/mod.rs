//! Remote evaluation through a NATS JetStream broker: GPU machines run
//! `cargo kernelfoundry worker --broker URL`, and `tune --broker URL` sends its evaluations to the
//! workers of an adapter key instead of a local worker process.
//!
//! Why NATS: one small server binary (packaged in Debian as `nats-server`) gives work-queue
//! streams with explicit acknowledgement, an acknowledgement deadline that a worker can extend
//! while it works, a bound on deliveries, and the delivery count on every message — exactly the
//! guarantees below — and `async-nats` is its maintained Rust client (rustls for TLS).
//!
//! - [`address`]: the URL and the login; secrets never print.
//! - [`protocol`]: subjects and the messages around `EvalRequest`/`EvalReport`.
//! - [`fleet`]: the tuner's side, a [`crate::evaluate::Evaluator`] that publishes a whole batch at
//!   once so that several workers evaluate it in parallel.
//! - [`serve`]: the worker's side, which runs every request in the killable local worker process
//!   (`evaluate::process::WorkerProcess`), exactly like a local tune.
//! - [`stop`]: SIGTERM and SIGINT stop a worker at once in every state, the broker gone included.
//!
//! Invariants:
//! - A request is acknowledged only after its report was stored by the broker: a worker killed
//!   mid-evaluation leaves the request unacknowledged, and the broker hands it to another worker
//!   once the acknowledgement deadline passes. Reports carry the request's id as their message id,
//!   and the tuner keeps the first report of each request, so a redelivery never yields two.
//! - Deliveries are bounded: a request handed to workers `max_deliveries` times without a report is
//!   recorded as a crash by the next worker that takes it, without running it again.
//! - A password or token appears in no output, log line, run file or cache entry
//!   ([`address::BrokerAddress::redact`] scrubs the client library's messages).
//! - The tokio runtime lives only in this module; the search stays synchronous and sees an
//!   ordinary `Evaluator`.

pub mod address;
pub mod fleet;
pub mod protocol;
pub mod serve;
pub(crate) mod stop;

pub use address::BrokerAddress;
pub use fleet::{Fleet, FleetEvaluator};

use async_nats::jetstream::{self, stream};
use futures_util::StreamExt;
use protocol::Announcement;
use std::time::Duration;
use stop::Stop;

/// What can go wrong with the broker.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BrokerError {
    /// The `--broker` URL is unusable.
    #[error("invalid broker URL: {0}")]
    Address(String),
    /// The broker cannot be reached or refused the login.
    #[error("cannot connect to the broker at {url}: {message}")]
    Connect {
        /// The servers, without credentials.
        url: String,
        /// Why (redacted).
        message: String,
    },
    /// A broker operation failed.
    #[error("broker {what} failed: {message}")]
    Operation {
        /// Which operation.
        what: &'static str,
        /// Why (redacted).
        message: String,
    },
    /// No worker serves an adapter key that was asked for.
    #[error(
        "no worker serves adapter key {key} on the broker at {url} (waited {waited_s:.0} s){known}; start `cargo kernelfoundry worker --broker URL` on a machine with that adapter"
    )]
    NoWorker {
        /// The key.
        key: String,
        /// The servers.
        url: String,
        /// Seconds waited for one to announce itself.
        waited_s: f64,
        /// What does announce itself, as `; workers announce …`.
        known: String,
    },
    /// A signal stopped the worker before it was connected.
    #[error("stopped by a signal before the broker answered")]
    Stopped,
    /// The workers speak another protocol.
    #[error("{0}")]
    Protocol(String),
    /// The local worker process (on the worker's machine) could not start.
    #[error("{0}")]
    Worker(String),
}

/// A connection to the broker, with the runtime that drives it.
pub(crate) struct Broker {
    rt: tokio::runtime::Runtime,
    client: async_nats::Client,
    js: jetstream::Context,
    address: BrokerAddress,
    streams: Streams,
    /// Set by a signal when connected with [`StopOn::Signals`].
    stop: Stop,
}

/// What stops a broker connection's work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StopOn {
    /// Nothing (the tuner, which handles Ctrl-C itself).
    Never,
    /// SIGTERM or SIGINT, from before the connection is opened (a worker).
    Signals,
}

impl Broker {
    /// Connects to `address` as `name` and makes sure the streams exist; with
    /// [`StopOn::Signals`], a signal meanwhile gives [`BrokerError::Stopped`] at once.
    pub(crate) fn connect(
        address: BrokerAddress,
        name: &str,
        stop_on: StopOn,
    ) -> Result<Broker, BrokerError> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("kf-broker")
            .enable_all()
            .build()
            .map_err(|e| BrokerError::Connect {
                url: address.to_string(),
                message: format!("cannot start the async runtime: {e}"),
            })?;
        let stop = match stop_on {
            StopOn::Never => Stop::never(),
            StopOn::Signals => {
                let _inside = rt.enter();
                Stop::on_signals().map_err(|e| BrokerError::Connect {
                    url: address.to_string(),
                    message: format!("cannot listen for signals: {e}"),
                })?
            }
        };
        let mut options = async_nats::ConnectOptions::new()
            .name(name)
            .connection_timeout(Duration::from_secs(10))
            .event_callback(|event| async move {
                // Events name no server address or credential.
                log::info!("broker connection: {event}");
            });
        match &address.auth {
            address::Auth::None => {}
            address::Auth::UserPassword { user, password } => {
                options = options.user_and_password(user.clone(), password.expose().to_owned());
            }
            address::Auth::Token(t) => options = options.token(t.expose().to_owned()),
        }
        if address.tls {
            options = options.require_tls(true);
        }
        if let Some(ca) = &address.ca {
            options = options.add_root_certificates(ca.clone());
        }
        let connected = rt.block_on(async {
            let client = stop
                .until(options.connect(address.servers.as_slice()))
                .await
                .ok_or(BrokerError::Stopped)?
                .map_err(|e| BrokerError::Connect {
                    url: address.to_string(),
                    message: address.redact(&e.to_string()),
                })?;
            // The context spawns its acknowledgement task on the runtime.
            let js = jetstream::new(client.clone());
            let streams = stop
                .until(create_streams(&js, &address))
                .await
                .ok_or(BrokerError::Stopped)??;
            Ok((client, js, streams))
        });
        match connected {
            Ok((client, js, streams)) => Ok(Broker {
                rt,
                client,
                js,
                address,
                streams,
                stop,
            }),
            Err(e) => {
                // A connection attempt may still be resolving the host in a blocking thread.
                rt.shutdown_background();
                Err(e)
            }
        }
    }

    /// Whether the client is connected now (not reconnecting).
    pub(crate) fn connected(&self) -> bool {
        self.client.connection_state() == async_nats::connection::State::Connected
    }

    /// The error of a failed operation, redacted.
    pub(crate) fn fail(&self, what: &'static str, e: impl std::fmt::Display) -> BrokerError {
        BrokerError::Operation {
            what,
            message: self.address.redact(&e.to_string()),
        }
    }

    /// The announcements of the workers alive now.
    pub(crate) async fn announcements(&self) -> Result<Vec<Announcement>, BrokerError> {
        let workers = &self.streams.workers;
        let mut subjects = workers
            .info_with_subjects(protocol::WORKER_FILTER)
            .await
            .map_err(|e| self.fail("listing the workers", e))?;
        let mut names = Vec::new();
        while let Some(s) = subjects.next().await {
            let (subject, _) = s.map_err(|e| self.fail("listing the workers", e))?;
            names.push(subject);
        }
        names.sort();
        let mut out = Vec::new();
        for subject in names {
            // An announcement may expire between the listing and the read.
            let Ok(message) = workers.get_last_raw_message_by_subject(&subject).await else {
                continue;
            };
            match serde_json::from_slice::<Announcement>(&message.payload) {
                Ok(a) => out.push(a),
                Err(e) => log::warn!("unreadable worker announcement on {subject}: {e}"),
            }
        }
        Ok(out)
    }
}

/// The three streams, created when missing (an existing stream keeps its settings).
async fn create_streams(
    js: &jetstream::Context,
    address: &BrokerAddress,
) -> Result<Streams, BrokerError> {
    let eval = stream_of(
        js,
        address,
        "creating the request stream",
        stream::Config {
            name: protocol::EVAL_STREAM.into(),
            subjects: vec!["kf.eval.>".into()],
            retention: stream::RetentionPolicy::WorkQueue,
            max_age: Duration::from_secs(24 * 3600),
            duplicate_window: Duration::from_secs(120),
            ..Default::default()
        },
    )
    .await?;
    let reports = stream_of(
        js,
        address,
        "creating the report stream",
        stream::Config {
            name: protocol::REPORT_STREAM.into(),
            subjects: vec!["kf.report.>".into()],
            max_age: Duration::from_secs(3600),
            duplicate_window: Duration::from_secs(120),
            ..Default::default()
        },
    )
    .await?;
    let workers = stream_of(
        js,
        address,
        "creating the worker stream",
        stream::Config {
            name: protocol::WORKER_STREAM.into(),
            subjects: vec![protocol::WORKER_FILTER.into()],
            max_messages_per_subject: 1,
            max_age: protocol::ANNOUNCEMENT_TTL,
            ..Default::default()
        },
    )
    .await?;
    Ok(Streams {
        eval,
        reports,
        workers,
    })
}

/// The stream `config` names, created when missing. Two processes that start together both find
/// it missing and both create it; the server refuses the second ("stream name already in use",
/// or "subjects overlap with an existing stream"), which then reads the stream the first made.
async fn stream_of(
    js: &jetstream::Context,
    address: &BrokerAddress,
    what: &'static str,
    config: stream::Config,
) -> Result<stream::Stream, BrokerError> {
    let name = config.name.clone();
    match js.get_or_create_stream(config).await {
        Ok(s) => Ok(s),
        Err(created) => js
            .get_stream(&name)
            .await
            .map_err(|_| BrokerError::Operation {
                what,
                message: address.redact(&created.to_string()),
            }),
    }
}

/// The streams of the protocol.
#[derive(Clone)]
pub(crate) struct Streams {
    eval: stream::Stream,
    reports: stream::Stream,
    workers: stream::Stream,
}

/// A name for this process on the broker: the host name and the process id.
pub fn default_worker_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "worker".into());
    protocol::token(&format!("{host}-{}", std::process::id()))
}

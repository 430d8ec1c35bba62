//! What travels through the broker, and under which subjects: plain serializable data around the
//! worker protocol's [`EvalRequest`] and [`EvalReport`], versioned with the same
//! [`PROTOCOL_VERSION`].
//!
//! Subjects (every token an adapter key, a session or a worker name, all `[A-Za-z0-9_-]`):
//!
//! - `kf.eval.<adapter-key>.<session>`: [`Envelope`]s, in the work-queue stream [`EVAL_STREAM`];
//!   the workers of one adapter key share its durable consumer `kf-eval-<adapter-key>`.
//! - `kf.report.<session>.<seq>`: one [`Reply`] per request, in the stream [`REPORT_STREAM`], so a
//!   tuner that missed it live can read it back by subject.
//! - `kf.notice.<session>`: [`Notice`]s (taken, still running), plain NATS: a missed one costs
//!   nothing.
//! - `kf.worker.<adapter-key>.<worker>`: [`Announcement`]s, in the stream [`WORKER_STREAM`] that
//!   keeps one per subject for [`ANNOUNCEMENT_TTL`]; a worker repeats its own every
//!   [`HEARTBEAT`], so what the stream holds is who is alive.

use crate::evaluate::{AdapterReport, Ceilings, EvalReport, EvalRequest, PROTOCOL_VERSION};
use kf_runtime::AdapterKey;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The work-queue stream of evaluation requests.
pub const EVAL_STREAM: &str = "KF_EVAL";
/// The stream of reports.
pub const REPORT_STREAM: &str = "KF_REPORTS";
/// The stream of worker announcements.
pub const WORKER_STREAM: &str = "KF_WORKERS";
/// How often a worker repeats its announcement.
pub const HEARTBEAT: Duration = Duration::from_secs(5);
/// How long an announcement lives without being repeated: a worker silent for this long (killed,
/// cut off) is no longer counted.
pub const ANNOUNCEMENT_TTL: Duration = Duration::from_secs(15);

/// Requests for `key` from the tuner session `session`.
pub fn eval_subject(key: &AdapterKey, session: &str) -> String {
    format!("kf.eval.{}.{session}", key.as_str())
}

/// Every request for `key` (the filter of its consumer).
pub fn eval_filter(key: &AdapterKey) -> String {
    format!("kf.eval.{}.>", key.as_str())
}

/// The durable consumer the workers of `key` share.
pub fn consumer_name(key: &AdapterKey) -> String {
    format!("kf-eval-{}", key.as_str())
}

/// The report of request `seq` of `session`.
pub fn report_subject(session: &str, seq: u64) -> String {
    format!("kf.report.{session}.{seq}")
}

/// Every report of `session`.
pub fn report_filter(session: &str) -> String {
    format!("kf.report.{session}.*")
}

/// Notices to `session`.
pub fn notice_subject(session: &str) -> String {
    format!("kf.notice.{session}")
}

/// The announcement of `worker` serving `key`.
pub fn worker_subject(key: &AdapterKey, worker: &str) -> String {
    format!("kf.worker.{}.{worker}", key.as_str())
}

/// Every announcement.
pub const WORKER_FILTER: &str = "kf.worker.>";

/// `name` made a valid subject token: characters other than letters, digits, `-` and `_`
/// become `-`; empty becomes `worker`.
pub fn token(name: &str) -> String {
    let t: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(64)
        .collect();
    if t.is_empty() { "worker".into() } else { t }
}

/// What a worker tells the fleet about itself.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Announcement {
    /// [`PROTOCOL_VERSION`] the worker speaks.
    pub protocol: u32,
    /// kf-build version of the worker.
    pub tool_version: String,
    /// The worker's name (a subject token).
    pub worker: String,
    /// The adapter: identity, key, limits, features.
    pub adapter: AdapterReport,
    /// Whether the adapter has timestamp queries.
    pub timestamps: bool,
    /// The adapter's measured ceilings, when the worker could measure them.
    pub ceilings: Option<Ceilings>,
    /// Times a request is handed to a worker to run before it is recorded as a crash.
    pub max_deliveries: u32,
}

impl Announcement {
    /// Whether this worker speaks the protocol of this build.
    pub fn compatible(&self) -> bool {
        self.protocol == PROTOCOL_VERSION
    }
}

/// One evaluation request on the broker.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Envelope {
    /// [`PROTOCOL_VERSION`] of the tuner.
    pub protocol: u32,
    /// Unique id of the request (`<session>.<seq>`); also the message id the broker
    /// deduplicates on.
    pub id: String,
    /// Where the [`Reply`] goes.
    pub reply: String,
    /// Where [`Notice`]s go.
    pub notice: String,
    /// The evaluation.
    pub request: EvalRequest,
}

/// The answer to one [`Envelope`].
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Reply {
    /// The evaluation's report.
    Report {
        /// The request's id.
        id: String,
        /// The worker that answered.
        worker: String,
        /// Which delivery of the request this was (1 = the first).
        delivery: u64,
        /// The report.
        report: Box<EvalReport>,
    },
    /// The worker cannot serve the request (it speaks another protocol).
    Refused {
        /// The request's id.
        id: String,
        /// The worker.
        worker: String,
        /// Why.
        message: String,
    },
}

impl Reply {
    /// The request's id.
    pub fn id(&self) -> &str {
        match self {
            Reply::Report { id, .. } | Reply::Refused { id, .. } => id,
        }
    }
}

/// A worker took a request, or is still running it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Notice {
    /// The request's id.
    pub id: String,
    /// The worker.
    pub worker: String,
    /// Which delivery of the request this is.
    pub delivery: u64,
}

/// The report recorded for a request that was handed to workers `delivery - 1` times without a
/// report coming back: each worker that took it died or was killed first.
pub fn repeated_loss(request: &EvalRequest, delivery: u64, runs: u32) -> EvalReport {
    EvalReport::failed(
        &request.candidate.id,
        crate::evaluate::Reason::Crash,
        format!(
            "handed to workers {runs} time(s) and no report came back: each worker that took it was killed or died before answering (the candidate may take the whole worker down); recorded as a crash at delivery {delivery} without running it again"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_are_made_of_tokens() {
        let key = AdapterKey::parse("00112233aabbccdd").unwrap();
        assert_eq!(eval_subject(&key, "s1"), "kf.eval.00112233aabbccdd.s1");
        assert_eq!(eval_filter(&key), "kf.eval.00112233aabbccdd.>");
        assert_eq!(consumer_name(&key), "kf-eval-00112233aabbccdd");
        assert_eq!(report_subject("s1", 7), "kf.report.s1.7");
        assert_eq!(token("gpu box.local:1*>"), "gpu-box-local-1--");
        assert_eq!(token(""), "worker");
    }

    #[test]
    fn replies_round_trip() {
        let report = EvalReport::failed("v1", crate::evaluate::Reason::Timeout, "slow");
        let reply = Reply::Report {
            id: "s.1".into(),
            worker: "w".into(),
            delivery: 2,
            report: Box::new(report.clone()),
        };
        let text = serde_json::to_string(&reply).unwrap();
        let back: Reply = serde_json::from_str(&text).unwrap();
        assert_eq!(back.id(), "s.1");
        match back {
            Reply::Report { report: r, .. } => assert_eq!(*r, report),
            other => panic!("{other:?}"),
        }
    }
}

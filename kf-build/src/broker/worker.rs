//! The worker's side: `cargo kernelfoundry worker --broker URL` on a GPU machine.
//!
//! The worker announces its adapter (identity, key, limits, measured ceilings) and repeats the
//! announcement every [`protocol::HEARTBEAT`]; it takes one request at a time from the durable
//! consumer of its adapter key, which every worker of that key shares; it runs the request in the
//! local killable worker process (`WorkerProcess`, the same as a local tune, so a hung or crashing
//! candidate costs that candidate only); while it runs, it tells the broker it is still working
//! (extending the acknowledgement deadline) and tells the tuner the same; then it publishes the
//! report, waits until the broker has stored it, and only then acknowledges the request.
//!
//! Invariant: nothing is acknowledged before its report is stored; a request delivered more than
//! the bound allows is answered with a crash report instead of being run again.

use super::protocol::{self, Announcement, Envelope, Notice, Reply};
use super::{Broker, BrokerAddress, BrokerError};
use crate::harness::worker::{FAULT_ENV, WorkerProcess};
use crate::harness::{Ceilings, EvalReport, Evaluator, PROTOCOL_VERSION};
use async_nats::jetstream::{self, AckKind, consumer};
use futures_util::StreamExt;
use std::time::{Duration, Instant};

/// How a worker takes part.
#[derive(Clone, Debug)]
pub struct WorkerOptions {
    /// Its name on the broker (made a subject token).
    pub name: String,
    /// How long a taken request stays with a worker that stopped answering before the broker
    /// hands it to another (used when this worker creates the key's consumer).
    pub ack_wait: Duration,
    /// Times a request is handed to a worker to run before it is recorded as a crash (used when
    /// this worker creates the key's consumer).
    pub max_deliveries: u32,
}

/// What the worker did, for its log.
#[derive(Debug)]
pub enum WorkerEvent<'a> {
    /// Announced and waiting for requests.
    Ready {
        /// The announcement.
        announcement: &'a Announcement,
        /// The broker.
        address: &'a BrokerAddress,
        /// The consumer's acknowledgement deadline.
        ack_wait: Duration,
    },
    /// Took a request.
    Took {
        /// The request's id.
        id: &'a str,
        /// The candidate.
        candidate: &'a str,
        /// The kernel.
        kernel: &'a str,
        /// Which delivery.
        delivery: u64,
    },
    /// Published a report and acknowledged the request.
    Reported {
        /// The request's id.
        id: &'a str,
        /// The report.
        report: &'a EvalReport,
        /// Seconds from taking to acknowledging.
        seconds: f64,
    },
    /// Recorded a request delivered too often as a crash, without running it.
    GaveUp {
        /// The request's id.
        id: &'a str,
        /// The candidate.
        candidate: &'a str,
        /// Which delivery.
        delivery: u64,
    },
    /// Something went wrong with one request; it stays in the queue.
    Trouble(String),
    /// Stopping (a signal).
    Stopping,
}

/// Serves evaluations from the broker at `address` on `local`'s adapter until interrupted.
pub fn serve(
    address: BrokerAddress,
    local: WorkerProcess,
    ceilings: Option<Ceilings>,
    options: &WorkerOptions,
    mut on_event: impl FnMut(WorkerEvent<'_>),
) -> Result<(), BrokerError> {
    let name = protocol::token(&options.name);
    let broker = Broker::connect(address, &format!("kernelfoundry worker {name}"))?;
    let result = broker
        .rt
        .block_on(run(&broker, local, ceilings, options, &name, &mut on_event));
    // An evaluation still running in a blocking thread must not hold the process: drop the
    // runtime without waiting (the local worker process ends when its stdin closes).
    let Broker { rt, .. } = broker;
    rt.shutdown_background();
    result
}

async fn run(
    broker: &Broker,
    local: WorkerProcess,
    ceilings: Option<Ceilings>,
    options: &WorkerOptions,
    name: &str,
    on_event: &mut impl FnMut(WorkerEvent<'_>),
) -> Result<(), BrokerError> {
    let adapter = local.adapter().clone();
    let key = adapter.key.clone();
    let consumer_name = protocol::consumer_name(&key);
    let consumer: consumer::PullConsumer = broker
        .streams
        .eval
        .get_or_create_consumer(
            &consumer_name,
            consumer::pull::Config {
                durable_name: Some(consumer_name.clone()),
                filter_subject: protocol::eval_filter(&key),
                ack_policy: consumer::AckPolicy::Explicit,
                ack_wait: options.ack_wait,
                // The delivery after the last allowed run only records the crash.
                max_deliver: i64::from(options.max_deliveries.max(1)) + 1,
                ..Default::default()
            },
        )
        .await
        .map_err(|e| broker.fail("creating the request consumer", e))?;
    let config = consumer.cached_info().config.clone();
    let runs = if config.max_deliver > 1 {
        u32::try_from(config.max_deliver - 1).unwrap_or(u32::MAX)
    } else {
        u32::MAX
    };
    if config.ack_wait != options.ack_wait || runs != options.max_deliveries.max(1) {
        log::warn!(
            "the consumer {consumer_name} already exists with ack wait {:?} and {runs} deliveries; using those",
            config.ack_wait
        );
    }
    let announcement = Announcement {
        protocol: PROTOCOL_VERSION,
        tool_version: env!("CARGO_PKG_VERSION").to_owned(),
        worker: name.to_owned(),
        adapter: adapter.clone(),
        timestamps: local.timestamps(),
        ceilings,
        max_deliveries: runs,
    };
    let subject = protocol::worker_subject(&key, name);
    let payload: bytes::Bytes = serde_json::to_vec(&announcement)
        .expect("announcements serialize")
        .into();
    announce(broker, &subject, payload.clone())
        .await
        .map_err(|e| broker.fail("announcing the worker", e))?;
    let heartbeat = {
        let js = broker.js.clone();
        let subject = subject.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(protocol::HEARTBEAT).await;
                if let Ok(ack) = js.publish(subject.clone(), payload.clone()).await {
                    let _ = ack.await;
                }
            }
        })
    };
    on_event(WorkerEvent::Ready {
        announcement: &announcement,
        address: &broker.address,
        ack_wait: config.ack_wait,
    });
    let abort_on = std::env::var(FAULT_ENV)
        .ok()
        .and_then(|f| f.strip_prefix("worker-abort:").map(str::to_owned));
    let mut local = Some(local);
    let shutdown = shutdown_signal();
    tokio::pin!(shutdown);
    loop {
        let next = async {
            let mut batch = consumer
                .fetch()
                .max_messages(1)
                .expires(Duration::from_secs(5))
                .messages()
                .await?;
            batch.next().await.transpose()
        };
        let message = tokio::select! {
            _ = &mut shutdown => break,
            m = next => m,
        };
        let message = match message {
            Ok(Some(m)) => m,
            Ok(None) => continue,
            Err(e) => {
                on_event(WorkerEvent::Trouble(
                    broker
                        .address
                        .redact(&format!("cannot fetch a request: {e}")),
                ));
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        let delivery = message
            .info()
            .map(|i| u64::try_from(i.delivered).unwrap_or(1))
            .unwrap_or(1);
        let envelope: Envelope = match serde_json::from_slice(&message.payload) {
            Ok(e) => e,
            Err(e) => {
                on_event(WorkerEvent::Trouble(format!(
                    "dropping an unreadable request: {e}"
                )));
                let _ = message.ack_with(AckKind::Term).await;
                continue;
            }
        };
        let started = Instant::now();
        if envelope.protocol != PROTOCOL_VERSION {
            let reply = Reply::Refused {
                id: envelope.id.clone(),
                worker: name.to_owned(),
                message: format!(
                    "this worker speaks protocol {PROTOCOL_VERSION} (kf-build {}), the tuner {}: run the same cargo-kernelfoundry version on both sides",
                    env!("CARGO_PKG_VERSION"),
                    envelope.protocol
                ),
            };
            if publish_reply(broker, &envelope, &reply).await.is_ok() {
                let _ = message.double_ack().await;
            }
            continue;
        }
        let request = &envelope.request;
        let report = if delivery > u64::from(runs) {
            on_event(WorkerEvent::GaveUp {
                id: &envelope.id,
                candidate: &request.candidate.id,
                delivery,
            });
            protocol::repeated_loss(request, delivery, runs)
        } else {
            on_event(WorkerEvent::Took {
                id: &envelope.id,
                candidate: &request.candidate.id,
                kernel: &request.kernel.name,
                delivery,
            });
            if let Some(needle) = &abort_on
                && (request.candidate.id.contains(needle.as_str())
                    || request.candidate.origin.contains(needle.as_str()))
            {
                // Test hook: a candidate that takes the whole worker down.
                std::process::abort();
            }
            let notice = Notice {
                id: envelope.id.clone(),
                worker: name.to_owned(),
                delivery,
            };
            let notice: bytes::Bytes = serde_json::to_vec(&notice)
                .expect("notices serialize")
                .into();
            let _ = broker
                .client
                .publish(envelope.notice.clone(), notice.clone())
                .await;
            let keepalive = {
                let message = message.clone();
                let client = broker.client.clone();
                let to = envelope.notice.clone();
                let every = (config.ack_wait / 3)
                    .min(protocol::HEARTBEAT)
                    .max(Duration::from_millis(200));
                tokio::spawn(async move {
                    loop {
                        tokio::time::sleep(every).await;
                        let _ = message.ack_with(AckKind::Progress).await;
                        let _ = client.publish(to.clone(), notice.clone()).await;
                    }
                })
            };
            let mut worker = local
                .take()
                .expect("the local worker is back after each run");
            let job = envelope.request.clone();
            let evaluation = tokio::task::spawn_blocking(move || {
                let report = worker.evaluate(&job);
                (worker, report)
            });
            let outcome = tokio::select! {
                _ = &mut shutdown => None,
                r = evaluation => Some(r),
            };
            keepalive.abort();
            match outcome {
                None => {
                    // Stopped mid-evaluation: hand the request back at once.
                    let _ = message.ack_with(AckKind::Nak(None)).await;
                    break;
                }
                Some(Err(e)) => {
                    return Err(BrokerError::Worker(format!(
                        "the evaluation thread failed: {e}"
                    )));
                }
                Some(Ok((worker, report))) => {
                    local = Some(worker);
                    report
                }
            }
        };
        let reply = Reply::Report {
            id: envelope.id.clone(),
            worker: name.to_owned(),
            delivery,
            report: Box::new(report.clone()),
        };
        match publish_reply(broker, &envelope, &reply).await {
            Ok(()) => match message.double_ack().await {
                Ok(()) => on_event(WorkerEvent::Reported {
                    id: &envelope.id,
                    report: &report,
                    seconds: started.elapsed().as_secs_f64(),
                }),
                // The report is stored; the request comes back later and its second answer is
                // dropped as a duplicate.
                Err(e) => on_event(WorkerEvent::Trouble(broker.address.redact(&format!(
                    "the acknowledgement of {} failed: {e}",
                    envelope.id
                )))),
            },
            Err(e) => {
                // Not stored, so not acknowledged: the broker hands the request out again.
                on_event(WorkerEvent::Trouble(broker.address.redact(&format!(
                    "the report of {} was not stored ({e}); the request stays queued",
                    envelope.id
                ))));
                let _ = message.ack_with(AckKind::Nak(None)).await;
            }
        }
    }
    on_event(WorkerEvent::Stopping);
    heartbeat.abort();
    // Leave the fleet at once instead of when the announcement expires.
    let _ = broker.streams.workers.purge().filter(subject).await;
    Ok(())
}

async fn announce(
    broker: &Broker,
    subject: &str,
    payload: bytes::Bytes,
) -> Result<(), async_nats::Error> {
    broker
        .js
        .publish(subject.to_owned(), payload)
        .await?
        .await?;
    Ok(())
}

/// Publishes `reply` where `envelope` asks, with the request's id as the message id, and waits
/// until the broker has stored it.
async fn publish_reply(
    broker: &Broker,
    envelope: &Envelope,
    reply: &Reply,
) -> Result<(), async_nats::Error> {
    let payload = serde_json::to_vec(reply).expect("replies serialize");
    let mut headers = async_nats::HeaderMap::new();
    headers.insert("Nats-Msg-Id", envelope.id.as_str());
    let mut tries = 0;
    loop {
        let result: Result<jetstream::publish::PublishAck, async_nats::Error> = async {
            Ok(broker
                .js
                .publish_with_headers(
                    envelope.reply.clone(),
                    headers.clone(),
                    payload.clone().into(),
                )
                .await?
                .await?)
        }
        .await;
        match result {
            Ok(_) => return Ok(()),
            Err(e) if tries >= 4 => return Err(e),
            Err(_) => {
                tries += 1;
                tokio::time::sleep(Duration::from_millis(250 << tries)).await;
            }
        }
    }
}

/// Resolves on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => {
                    let _ = tokio::signal::ctrl_c().await;
                    return;
                }
            };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

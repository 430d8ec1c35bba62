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
//! SIGTERM or SIGINT stop it within about a second whatever it is doing, the broker gone or not
//! ([`super::stop`]): a request it is evaluating or answering is handed back (or, with the broker
//! gone, comes back when its acknowledgement deadline passes) and runs again on another worker.
//!
//! Invariant: nothing is acknowledged before its report is stored; a request delivered more than
//! the bound allows is answered with a crash report instead of being run again.

use super::protocol::{self, Announcement, Envelope, Notice, Reply};
use super::stop::FAREWELL;
use super::{Broker, BrokerAddress, BrokerError, StopOn};
use crate::evaluate::process::{FAULT_ENV, WorkerProcess};
use crate::evaluate::{Ceilings, EvalReport, Evaluator, PROTOCOL_VERSION};
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

/// Serves evaluations from the broker at `address` on `local`'s adapter until SIGTERM or SIGINT,
/// which stop it within about a second in every state (see [`super::stop`]).
pub fn serve(
    address: BrokerAddress,
    local: WorkerProcess,
    ceilings: Option<Ceilings>,
    options: &WorkerOptions,
    mut on_event: impl FnMut(WorkerEvent<'_>),
) -> Result<(), BrokerError> {
    let name = protocol::token(&options.name);
    let broker = match Broker::connect(
        address,
        &format!("kernelfoundry worker {name}"),
        StopOn::Signals,
    ) {
        Ok(b) => b,
        Err(BrokerError::Stopped) => {
            on_event(WorkerEvent::Stopping);
            return Ok(());
        }
        Err(e) => return Err(e),
    };
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
    let stop = &broker.stop;
    let adapter = local.adapter().clone();
    let key = adapter.key.clone();
    let consumer_name = protocol::consumer_name(&key);
    let consumer = stop
        .until(broker.streams.eval.get_or_create_consumer(
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
        ))
        .await;
    let Some(consumer) = consumer else {
        on_event(WorkerEvent::Stopping);
        return Ok(());
    };
    let consumer: consumer::PullConsumer =
        consumer.map_err(|e| broker.fail("creating the request consumer", e))?;
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
    let heartbeat = {
        let js = broker.js.clone();
        let subject = subject.clone();
        let payload = payload.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(protocol::HEARTBEAT).await;
                if let Ok(ack) = js.publish(subject.clone(), payload.clone()).await {
                    let _ = ack.await;
                }
            }
        })
    };
    // From here on the fleet may know this worker: every way out goes through the farewell.
    let served = serve_requests(
        broker,
        &consumer,
        local,
        &announcement,
        &subject,
        payload,
        on_event,
    )
    .await;
    if served.is_ok() {
        on_event(WorkerEvent::Stopping);
    }
    heartbeat.abort();
    // Leave the fleet at once instead of when the announcement expires (which it does anyway
    // when the broker is gone or does not answer within the farewell).
    if broker.connected() {
        let _ = tokio::time::timeout(
            FAREWELL / 2,
            broker.streams.workers.purge().filter(subject.as_str()),
        )
        .await;
    }
    served
}

/// Announces the worker, then takes and answers requests until the stop flag is set.
async fn serve_requests(
    broker: &Broker,
    consumer: &consumer::PullConsumer,
    local: WorkerProcess,
    announcement: &Announcement,
    subject: &str,
    payload: bytes::Bytes,
    on_event: &mut impl FnMut(WorkerEvent<'_>),
) -> Result<(), BrokerError> {
    let stop = &broker.stop;
    let name = announcement.worker.as_str();
    let runs = announcement.max_deliveries;
    let Some(announced) = stop.until(announce(broker, subject, payload)).await else {
        return Ok(());
    };
    announced.map_err(|e| broker.fail("announcing the worker", e))?;
    let ack_wait = consumer.cached_info().config.ack_wait;
    on_event(WorkerEvent::Ready {
        announcement,
        address: &broker.address,
        ack_wait,
    });
    let abort_on = std::env::var(FAULT_ENV)
        .ok()
        .and_then(|f| f.strip_prefix("worker-abort:").map(str::to_owned));
    let mut local = Some(local);
    // Every await below races the stop flag (`stop.until`): a call to a broker that is gone can
    // wait as long as the broker stays away.
    while !stop.is_set() {
        if !broker.connected() {
            // Reconnecting: a fetch now would only queue behind the reconnection.
            stop.until(tokio::time::sleep(RECONNECT_POLL)).await;
            continue;
        }
        let next = async {
            let mut batch = consumer
                .fetch()
                .max_messages(1)
                .expires(Duration::from_secs(5))
                .messages()
                .await?;
            batch.next().await.transpose()
        };
        let Some(message) = stop.until(next).await else {
            break;
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
                stop.until(tokio::time::sleep(Duration::from_secs(1))).await;
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
                stop.until(message.ack_with(AckKind::Term)).await;
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
            if let Some(Ok(())) = stop.until(publish_reply(broker, &envelope, &reply)).await {
                stop.until(message.double_ack()).await;
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
            stop.until(
                broker
                    .client
                    .publish(envelope.notice.clone(), notice.clone()),
            )
            .await;
            let keepalive = {
                let message = message.clone();
                let client = broker.client.clone();
                let to = envelope.notice.clone();
                let every = (ack_wait / 3)
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
            let outcome = stop.until(evaluation).await;
            keepalive.abort();
            match outcome {
                None => {
                    // Stopped mid-evaluation: hand the request back at once, if the broker
                    // listens; otherwise it comes back when its acknowledgement deadline passes.
                    if broker.connected() {
                        let _ = tokio::time::timeout(
                            FAREWELL / 2,
                            message.ack_with(AckKind::Nak(None)),
                        )
                        .await;
                    }
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
        // Stopped while answering: the request is not acknowledged, so the broker hands it out
        // again (and a report stored meanwhile makes the second answer a dropped duplicate).
        let Some(published) = stop.until(publish_reply(broker, &envelope, &reply)).await else {
            break;
        };
        match published {
            Ok(()) => match stop.until(message.double_ack()).await {
                None => break,
                Some(Ok(())) => on_event(WorkerEvent::Reported {
                    id: &envelope.id,
                    report: &report,
                    seconds: started.elapsed().as_secs_f64(),
                }),
                // The report is stored; the request comes back later and its second answer is
                // dropped as a duplicate.
                Some(Err(e)) => on_event(WorkerEvent::Trouble(broker.address.redact(&format!(
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
                stop.until(message.ack_with(AckKind::Nak(None))).await;
            }
        }
    }
    Ok(())
}

/// How often a worker whose broker is gone looks whether the client reconnected.
const RECONNECT_POLL: Duration = Duration::from_millis(250);

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

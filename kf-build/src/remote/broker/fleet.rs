//! The tuner's side: the workers announced on the broker, and [`FleetEvaluator`], which sends a
//! search's evaluations to the workers of one adapter key.
//!
//! `evaluate_batch` publishes the whole batch before waiting, so every idle worker of the key
//! takes one request; reports come back in any order and are returned in the order of the batch.
//! The first report of a request wins (a redelivered request may be answered twice). While
//! requests are outstanding, any report or notice for this session counts as progress; after
//! `take_timeout` without progress the evaluator reads back reports it may have missed, then
//! gives up with a fault naming the adapter key when no worker of that key is alive (or when
//! the live ones took nothing for ten times as long).
//!
//! Invariant: a fault is final: once set, every later request is answered at once with a failed
//! report, and the search reads [`Evaluator::fault`] and stops without recording them.

use super::protocol::{self, Announcement, Envelope, Notice, Reply};
use super::{Broker, BrokerAddress, BrokerError};
use crate::evaluate::{
    AdapterReport, Ceilings, EvalReport, EvalRequest, Evaluator, PROTOCOL_VERSION, Reason,
};
use futures_util::StreamExt;
use kf_runtime::AdapterKey;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The broker, as the tuner sees it.
#[derive(Clone)]
pub struct Fleet {
    broker: Arc<Broker>,
}

/// An adapter key that workers serve.
#[derive(Clone, Debug)]
pub struct Target {
    /// One of its workers' announcements (the adapter report, the ceilings).
    pub announcement: Announcement,
    /// How many compatible workers serve it.
    pub workers: usize,
}

impl Fleet {
    /// Connects to the broker at `address`.
    pub fn connect(address: BrokerAddress) -> Result<Fleet, BrokerError> {
        let broker = Broker::connect(address, "kernelfoundry tune", super::StopOn::Never)?;
        Ok(Fleet {
            broker: Arc::new(broker),
        })
    }

    /// The broker's servers, without credentials.
    pub fn address(&self) -> &BrokerAddress {
        &self.broker.address
    }

    /// The workers alive now.
    pub fn announcements(&self) -> Result<Vec<Announcement>, BrokerError> {
        self.broker.rt.block_on(self.broker.announcements())
    }

    /// The adapter keys to tune for, each with its workers: `keys`, or every key a compatible
    /// worker serves when `keys` is empty. Waits up to `wait` for the workers to announce
    /// themselves; a key nobody serves by then is a [`BrokerError::NoWorker`].
    pub fn targets(&self, keys: &[AdapterKey], wait: Duration) -> Result<Vec<Target>, BrokerError> {
        let started = Instant::now();
        loop {
            let all = self.announcements()?;
            let by_key = group(&all);
            let missing = if keys.is_empty() {
                by_key.is_empty().then_some(None)
            } else {
                keys.iter()
                    .find(|k| !by_key.contains_key(k.as_str()))
                    .map(Some)
            };
            match missing {
                None => {
                    let wanted: Vec<String> = if keys.is_empty() {
                        by_key.keys().cloned().collect()
                    } else {
                        keys.iter().map(|k| k.as_str().to_owned()).collect()
                    };
                    return Ok(wanted
                        .iter()
                        .map(|k| {
                            let list = &by_key[k];
                            Target {
                                announcement: list[0].clone(),
                                workers: list.len(),
                            }
                        })
                        .collect());
                }
                Some(key) if started.elapsed() >= wait => {
                    let incompatible: Vec<&Announcement> = all
                        .iter()
                        .filter(|a| !a.compatible() && key.is_none_or(|k| a.adapter.key == *k))
                        .collect();
                    if let Some(a) = incompatible.first() {
                        return Err(BrokerError::Protocol(format!(
                            "the workers of adapter key {} speak protocol {}, this tuner {PROTOCOL_VERSION} (kf-build {} there, {} here): run the same cargo-kernelfoundry version on both sides",
                            a.adapter.key,
                            a.protocol,
                            a.tool_version,
                            env!("CARGO_PKG_VERSION")
                        )));
                    }
                    let known = if by_key.is_empty() {
                        "; no worker announces itself on it".to_owned()
                    } else {
                        format!(
                            "; workers announce {}",
                            by_key
                                .iter()
                                .map(|(k, l)| format!(
                                    "{k} ({}, {} worker(s))",
                                    l[0].adapter.identity.name,
                                    l.len()
                                ))
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    };
                    return Err(BrokerError::NoWorker {
                        key: key.map_or_else(|| "(any)".to_owned(), |k| k.to_string()),
                        url: self.address().to_string(),
                        waited_s: started.elapsed().as_secs_f64(),
                        known,
                    });
                }
                Some(_) => std::thread::sleep(Duration::from_millis(250)),
            }
        }
    }

    /// An evaluator that sends requests to the workers of `target`.
    pub fn evaluator(
        &self,
        target: &Target,
        take_timeout: Duration,
    ) -> Result<FleetEvaluator, BrokerError> {
        let session = format!(
            "{:016x}",
            rand::random::<u64>() ^ u64::from(std::process::id())
        );
        let broker = self.broker.clone();
        let (reports, notices) = broker.rt.block_on(async {
            let reports = broker
                .client
                .subscribe(protocol::report_filter(&session))
                .await
                .map_err(|e| broker.fail("subscribing to reports", e))?;
            let notices = broker
                .client
                .subscribe(protocol::notice_subject(&session))
                .await
                .map_err(|e| broker.fail("subscribing to notices", e))?;
            // The subscriptions must be in place before the first report can be published.
            broker
                .client
                .flush()
                .await
                .map_err(|e| broker.fail("flushing the subscriptions", e))?;
            Ok::<_, BrokerError>((reports, notices))
        })?;
        Ok(FleetEvaluator {
            broker,
            key: target.announcement.adapter.key.clone(),
            adapter: target.announcement.adapter.clone(),
            ceilings: target.announcement.ceilings.clone(),
            workers: target.workers,
            session,
            seq: 0,
            reports,
            notices,
            take_timeout,
            fault: None,
            measured: None,
            redelivered: 0,
            workers_seen: BTreeMap::new(),
        })
    }
}

/// Compatible announcements by adapter key.
fn group(all: &[Announcement]) -> BTreeMap<String, Vec<Announcement>> {
    let mut by_key: BTreeMap<String, Vec<Announcement>> = BTreeMap::new();
    for a in all.iter().filter(|a| a.compatible()) {
        by_key
            .entry(a.adapter.key.as_str().to_owned())
            .or_default()
            .push(a.clone());
    }
    by_key
}

/// Sends evaluations to the workers of one adapter key.
pub struct FleetEvaluator {
    broker: Arc<Broker>,
    key: AdapterKey,
    adapter: AdapterReport,
    ceilings: Option<Ceilings>,
    workers: usize,
    session: String,
    seq: u64,
    reports: async_nats::Subscriber,
    notices: async_nats::Subscriber,
    take_timeout: Duration,
    fault: Option<String>,
    /// Ceilings a worker measured again during evaluations, best kept (worth storing).
    pub measured: Option<Ceilings>,
    /// Requests that were handed to a second worker (their first worker stopped answering).
    pub redelivered: u64,
    /// Reports received per worker name.
    pub workers_seen: BTreeMap<String, u64>,
}

enum Event {
    Reply(Option<async_nats::Message>),
    Notice(Option<async_nats::Message>),
    Tick,
}

impl FleetEvaluator {
    /// The adapter key served.
    pub fn key(&self) -> &AdapterKey {
        &self.key
    }

    async fn run_batch(
        &mut self,
        broker: &Broker,
        requests: &[EvalRequest],
    ) -> Result<Vec<EvalReport>, String> {
        let mut pending: HashMap<String, (usize, u64)> = HashMap::new();
        let mut redelivered = std::collections::HashSet::new();
        for (index, r) in requests.iter().enumerate() {
            self.seq += 1;
            let seq = self.seq;
            let id = format!("{}.{seq}", self.session);
            let mut request = r.clone();
            if let (Some(known), Some(measured)) = (&mut request.ceilings, &self.measured)
                && known.adapter.key == measured.adapter.key
            {
                known.merge(measured);
            }
            let envelope = Envelope {
                protocol: PROTOCOL_VERSION,
                id: id.clone(),
                reply: protocol::report_subject(&self.session, seq),
                notice: protocol::notice_subject(&self.session),
                request,
            };
            let payload = serde_json::to_vec(&envelope).expect("envelopes serialize");
            let mut headers = async_nats::HeaderMap::new();
            headers.insert("Nats-Msg-Id", id.as_str());
            let subject = protocol::eval_subject(&self.key, &self.session);
            let published = broker
                .js
                .publish_with_headers(subject, headers, payload.into())
                .await;
            let acked = match published {
                Ok(ack) => ack.await.map(|_| ()).map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            };
            if let Err(e) = acked {
                return Err(format!(
                    "the broker at {} did not take an evaluation request for adapter key {}: {}",
                    broker.address,
                    self.key,
                    broker.address.redact(&e)
                ));
            }
            pending.insert(id, (index, seq));
        }
        let mut results: Vec<Option<EvalReport>> = vec![None; requests.len()];
        let mut last = Instant::now();
        let mut tick = tokio::time::interval(Duration::from_millis(500));
        while !pending.is_empty() {
            let event = tokio::select! {
                m = self.reports.next() => Event::Reply(m),
                m = self.notices.next() => Event::Notice(m),
                _ = tick.tick() => Event::Tick,
            };
            match event {
                Event::Reply(None) | Event::Notice(None) => {
                    return Err(format!(
                        "the connection to the broker at {} closed",
                        broker.address
                    ));
                }
                Event::Reply(Some(m)) => {
                    if self.take_reply(&m.payload, &mut pending, &mut results)? {
                        last = Instant::now();
                    }
                }
                Event::Notice(Some(m)) => {
                    let Ok(n) = serde_json::from_slice::<Notice>(&m.payload) else {
                        continue;
                    };
                    if pending.contains_key(&n.id) {
                        last = Instant::now();
                        if n.delivery > 1 && redelivered.insert(n.id.clone()) {
                            self.redelivered += 1;
                            log::info!(
                                "evaluation {} went to worker {} (delivery {})",
                                n.id,
                                n.worker,
                                n.delivery
                            );
                        }
                    }
                }
                Event::Tick => {
                    let idle = last.elapsed();
                    if idle < self.take_timeout {
                        continue;
                    }
                    // Reports published while the connection was down are in the stream.
                    let missing: Vec<u64> = pending.values().map(|(_, s)| *s).collect();
                    for seq in missing {
                        let subject = protocol::report_subject(&self.session, seq);
                        if let Ok(m) = broker
                            .streams
                            .reports
                            .get_last_raw_message_by_subject(&subject)
                            .await
                            && self.take_reply(&m.payload, &mut pending, &mut results)?
                        {
                            last = Instant::now();
                        }
                    }
                    if pending.is_empty() {
                        break;
                    }
                    if last.elapsed() < self.take_timeout {
                        continue;
                    }
                    let live = broker
                        .announcements()
                        .await
                        .map_err(|e| e.to_string())?
                        .into_iter()
                        .filter(|a| a.compatible() && a.adapter.key == self.key)
                        .count();
                    if live == 0 {
                        return Err(format!(
                            "no worker serves adapter key {} ({}) any more: {} evaluation(s) were not taken within {:.0} s; start `cargo kernelfoundry worker --broker URL` on a machine with that adapter",
                            self.key,
                            self.adapter.identity.name,
                            pending.len(),
                            idle.as_secs_f64()
                        ));
                    }
                    if idle > self.take_timeout * 10 {
                        return Err(format!(
                            "the {live} worker(s) of adapter key {} ({}) announce themselves but took none of this tune's {} evaluation(s) in {:.0} s",
                            self.key,
                            self.adapter.identity.name,
                            pending.len(),
                            idle.as_secs_f64()
                        ));
                    }
                }
            }
        }
        Ok(results
            .into_iter()
            .map(|r| r.expect("every request was answered"))
            .collect())
    }

    /// Records a reply if it answers a pending request; whether it did.
    fn take_reply(
        &mut self,
        payload: &[u8],
        pending: &mut HashMap<String, (usize, u64)>,
        results: &mut [Option<EvalReport>],
    ) -> Result<bool, String> {
        let reply: Reply = match serde_json::from_slice(payload) {
            Ok(r) => r,
            Err(e) => {
                log::warn!("unreadable reply on the broker: {e}");
                return Ok(false);
            }
        };
        let Some((index, _)) = pending.remove(reply.id()) else {
            // A second answer to a redelivered request, or one of an earlier batch.
            return Ok(false);
        };
        match reply {
            Reply::Report { report, worker, .. } => {
                if let Some(c) = &report.ceilings {
                    match &mut self.measured {
                        Some(m) => m.merge(c),
                        None => self.measured = Some(c.clone()),
                    }
                }
                *self.workers_seen.entry(worker).or_default() += 1;
                results[index] = Some(*report);
                Ok(true)
            }
            Reply::Refused {
                worker, message, ..
            } => Err(format!("worker {worker} refused an evaluation: {message}")),
        }
    }
}

impl Evaluator for FleetEvaluator {
    fn adapter(&self) -> &AdapterReport {
        &self.adapter
    }

    fn evaluate(&mut self, request: &EvalRequest) -> EvalReport {
        self.evaluate_batch(std::slice::from_ref(request))
            .pop()
            .expect("one report per request")
    }

    fn evaluate_batch(&mut self, requests: &[EvalRequest]) -> Vec<EvalReport> {
        let not_run = |fault: &str, r: &EvalRequest| {
            EvalReport::failed(
                &r.candidate.id,
                Reason::Crash,
                format!("not evaluated: {fault}"),
            )
        };
        if let Some(fault) = &self.fault {
            return requests.iter().map(|r| not_run(fault, r)).collect();
        }
        let broker = self.broker.clone();
        match broker.rt.block_on(self.run_batch(&broker, requests)) {
            Ok(reports) => reports,
            Err(fault) => {
                let reports = requests.iter().map(|r| not_run(&fault, r)).collect();
                self.fault = Some(fault);
                reports
            }
        }
    }

    fn probe(&mut self) -> Result<Ceilings, String> {
        self.ceilings.clone().ok_or_else(|| {
            format!(
                "the workers of adapter key {} announced no ceilings",
                self.key
            )
        })
    }

    fn parallelism(&self) -> usize {
        self.workers.max(1)
    }

    fn fault(&self) -> Option<String> {
        self.fault.clone()
    }
}

impl Drop for FleetEvaluator {
    fn drop(&mut self) {
        // Requests no worker took yet are of no use to anyone now.
        let broker = self.broker.clone();
        let subject = protocol::eval_subject(&self.key, &self.session);
        let purged = broker
            .rt
            .block_on(async { broker.streams.eval.purge().filter(subject).await });
        if let Err(e) = purged {
            log::debug!("could not purge this session's requests: {e}");
        }
    }
}

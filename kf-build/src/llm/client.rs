//! The client: retries with backoff, the response cache, the concurrency limit and the token
//! accounting, over a [`Transport`] that sends one request (HTTP in the binary, a fake in tests).
//!
//! [`Client::submit`] returns a [`Ticket`] at once; a pool of threads sends the requests, so
//! answers are on their way while the GPU evaluates earlier ones. Each answer is cached under the
//! hash of its request body and the number of times that same body was asked before in the run
//! (its occurrence), so a rerun of the same search replays every answer instead of paying again,
//! and two identical requests in one run still get two answers. With `replay_only` nothing is
//! sent: a request is answered by its exact key, or else by its *position* (the caller's key for
//! "the k-th request of this kind for this kernel and model"), so a rerun whose prompts differ only
//! in measured timings gets the earlier run's answers in the same order; anything else is an error.
//!
//! Invariant: the API key reaches only the transport's request header; cache entries hold the
//! request body and the answer, and every error message passes [`redact`].

use super::config::{ApiKey, redact};
use super::protocol::{ChatRequest, ChatResponse, Usage};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Why an answer could not be had.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum LlmError {
    /// The endpoint answered with an HTTP error.
    #[error("the endpoint answered HTTP {status}{}", if body.is_empty() { String::new() } else { format!(": {body}") })]
    Http {
        /// The status code.
        status: u16,
        /// The start of the body.
        body: String,
        /// Seconds from a `Retry-After` header.
        retry_after: Option<f64>,
    },
    /// The endpoint could not be reached, or the connection broke.
    #[error("cannot reach the endpoint: {0}")]
    Connect(String),
    /// No answer within the timeout.
    #[error("no answer within {0} s")]
    Timeout(f64),
    /// The body is not a chat completion.
    #[error("the answer is not a chat completion: {0}")]
    InvalidBody(String),
    /// Replay-only, and the request is not in the cache.
    #[error("the request is not in the response cache, and --llm-replay-only sends nothing")]
    NotCached,
    /// The binary was built without an HTTP client.
    #[error("this build has no LLM client (kf-build's `llm` feature is off)")]
    NoTransport,
}

impl LlmError {
    /// Whether another attempt may succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            LlmError::Http { status, .. } => *status == 429 || *status >= 500,
            LlmError::Connect(_) | LlmError::Timeout(_) | LlmError::InvalidBody(_) => true,
            LlmError::NotCached | LlmError::NoTransport => false,
        }
    }

    fn redacted(self, key: Option<&ApiKey>) -> Self {
        match self {
            LlmError::Http {
                status,
                body,
                retry_after,
            } => LlmError::Http {
                status,
                body: redact(&body, key),
                retry_after,
            },
            LlmError::Connect(m) => LlmError::Connect(redact(&m, key)),
            LlmError::InvalidBody(m) => LlmError::InvalidBody(redact(&m, key)),
            other => other,
        }
    }
}

/// Sends one request, once.
pub trait Transport: Send + Sync {
    /// One attempt.
    fn send(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError>;
}

/// How often and how long to retry.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub retries: u32,
    /// First backoff, doubled per retry.
    pub backoff: Duration,
    /// Longest wait between attempts (a `Retry-After` beyond it is cut to it).
    pub max_wait: Duration,
}

/// Sends `request` through `transport`, retrying retryable failures; `sleep` waits (injected so
/// tests do not wait). Returns the response and the attempts made.
pub fn send_with_retries(
    transport: &dyn Transport,
    request: &ChatRequest,
    policy: RetryPolicy,
    sleep: &dyn Fn(Duration),
) -> (Result<ChatResponse, LlmError>, u32) {
    let mut attempt = 0;
    loop {
        attempt += 1;
        match transport.send(request) {
            Ok(r) => return (Ok(r), attempt),
            Err(e) if e.is_retryable() && attempt <= policy.retries => {
                let backoff = policy.backoff.saturating_mul(1 << (attempt - 1).min(16));
                let wait = match &e {
                    LlmError::Http {
                        retry_after: Some(s),
                        ..
                    } => Duration::from_secs_f64(s.max(0.0)),
                    _ => backoff,
                }
                .min(policy.max_wait);
                log::info!(
                    "LLM request failed ({e}); retrying in {:.1} s",
                    wait.as_secs_f64()
                );
                sleep(wait);
            }
            Err(e) => return (Err(e), attempt),
        }
    }
}

/// A `Retry-After` value: seconds, or an HTTP date (seconds from `now`).
pub fn parse_retry_after(value: &str, now: std::time::SystemTime) -> Option<f64> {
    let v = value.trim();
    if let Ok(s) = v.parse::<f64>() {
        return (s.is_finite() && s >= 0.0).then_some(s);
    }
    let when = httpdate(v)?;
    Some(
        when.duration_since(now)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0),
    )
}

/// `Sun, 06 Nov 1994 08:49:37 GMT` (the IMF-fixdate form HTTP requires servers to send).
fn httpdate(v: &str) -> Option<std::time::SystemTime> {
    let parts: Vec<&str> = v.split_whitespace().collect();
    let [_, day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    let months = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = months.iter().position(|m| m == month)? as i64 + 1;
    let (day, year): (i64, i64) = (day.parse().ok()?, year.parse().ok()?);
    let hms: Vec<i64> = time
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let [h, m, s] = hms.as_slice() else {
        return None;
    };
    // Days since the epoch (Howard Hinnant's civil-from-days inverse).
    let (y, mo) = if month <= 2 {
        (year - 1, month + 9)
    } else {
        (year, month - 3)
    };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * mo + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + h * 3600 + m * 60 + s;
    (secs >= 0).then(|| std::time::UNIX_EPOCH + Duration::from_secs(secs as u64))
}

/// An answer, from the endpoint or the cache.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Completion {
    /// The text.
    pub text: String,
    /// `stop`, `length`, ….
    pub finish_reason: Option<String>,
    /// Token usage.
    pub usage: Usage,
    /// The model that answered (as the server says, else as asked).
    pub model: String,
    /// Whether it came from the cache.
    #[serde(skip)]
    pub cached: bool,
    /// HTTP attempts made for it (0 from the cache).
    #[serde(skip)]
    pub attempts: u32,
}

/// One cache file.
#[derive(Debug, Serialize, Deserialize)]
struct CacheEntry {
    key: String,
    request: ChatRequest,
    completion: Completion,
}

/// Answers on disk, one JSON file per request key.
#[derive(Clone, Debug)]
pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    /// A cache in `dir` (created on first write).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Cache { dir: dir.into() }
    }

    /// Its directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The key of the `occurrence`-th identical `request` of a run.
    pub fn key(request: &ChatRequest, occurrence: u32) -> String {
        let mut h = Sha256::new();
        h.update(serde_json::to_vec(request).expect("requests serialize"));
        h.update(occurrence.to_le_bytes());
        kf_runtime::hash::hex16(&h.finalize())
    }

    fn get(&self, key: &str) -> Option<Completion> {
        let text = std::fs::read_to_string(self.dir.join(format!("{key}.json"))).ok()?;
        let entry: CacheEntry = serde_json::from_str(&text).ok()?;
        (entry.key == key).then_some(entry.completion)
    }

    fn get_position(&self, position: &str) -> Option<Completion> {
        let key =
            std::fs::read_to_string(self.dir.join(format!("position-{position}.txt"))).ok()?;
        self.get(key.trim())
    }

    fn put_position(&self, position: &str, key: &str) {
        if let Err(e) = std::fs::create_dir_all(&self.dir).and_then(|_| {
            crate::cache::store::write_atomic(
                &self.dir.join(format!("position-{position}.txt")),
                key,
            )
        }) {
            log::warn!(
                "could not index an LLM answer in {}: {e}",
                self.dir.display()
            );
        }
    }

    fn put(
        &self,
        key: &str,
        request: &ChatRequest,
        completion: &Completion,
        secret: Option<&ApiKey>,
    ) {
        let entry = CacheEntry {
            key: key.to_owned(),
            request: request.clone(),
            completion: completion.clone(),
        };
        let text = redact(
            &serde_json::to_string_pretty(&entry).expect("cache entries serialize"),
            secret,
        );
        if let Err(e) = std::fs::create_dir_all(&self.dir).and_then(|_| {
            crate::cache::store::write_atomic(&self.dir.join(format!("{key}.json")), &text)
        }) {
            log::warn!(
                "could not cache an LLM answer in {}: {e}",
                self.dir.display()
            );
        }
    }
}

/// What the client spent and replayed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Accounting {
    /// Requests submitted.
    pub requests: u64,
    /// Of those, answered from the cache.
    pub cached: u64,
    /// Of those, failed after their retries.
    pub failed: u64,
    /// HTTP attempts made (retries included).
    pub http_attempts: u64,
    /// Tokens paid for, by model: (prompt, completion).
    pub tokens: std::collections::BTreeMap<String, (u64, u64)>,
    /// Tokens of answers replayed from the cache (not paid again).
    pub replayed_tokens: (u64, u64),
}

/// A request on its way.
pub struct Ticket(TicketState);

enum TicketState {
    Ready(Result<Completion, LlmError>),
    Waiting(Receiver<Result<Completion, LlmError>>),
}

impl Ticket {
    /// Waits for the answer.
    pub fn wait(self) -> Result<Completion, LlmError> {
        match self.0 {
            TicketState::Ready(r) => r,
            TicketState::Waiting(rx) => rx
                .recv()
                .unwrap_or_else(|_| Err(LlmError::Connect("the request thread ended".into()))),
        }
    }
}

type Job = Box<dyn FnOnce() + Send>;

struct Shared {
    transport: Option<Arc<dyn Transport>>,
    cache: Option<Cache>,
    replay_only: bool,
    policy: RetryPolicy,
    key: Option<ApiKey>,
    accounting: Mutex<Accounting>,
}

/// The client: cache, retries, concurrency and accounting over a transport.
pub struct Client {
    shared: Arc<Shared>,
    occurrences: HashMap<String, u32>,
    jobs: Option<Sender<Job>>,
    threads: usize,
}

/// How a client is set up.
pub struct ClientOptions {
    /// The transport (`None`: every miss fails with [`LlmError::NoTransport`]).
    pub transport: Option<Arc<dyn Transport>>,
    /// The response cache.
    pub cache: Option<Cache>,
    /// Never send.
    pub replay_only: bool,
    /// Retries.
    pub policy: RetryPolicy,
    /// Requests in flight at once.
    pub concurrency: usize,
    /// The key, for redaction only.
    pub key: Option<ApiKey>,
}

impl Client {
    /// A client.
    pub fn new(options: ClientOptions) -> Self {
        Client {
            shared: Arc::new(Shared {
                transport: options.transport,
                cache: options.cache,
                replay_only: options.replay_only,
                policy: options.policy,
                key: options.key,
                accounting: Mutex::new(Accounting::default()),
            }),
            occurrences: HashMap::new(),
            jobs: None,
            threads: options.concurrency.max(1),
        }
    }

    /// What was spent so far.
    pub fn accounting(&self) -> Accounting {
        self.shared.accounting.lock().expect("not poisoned").clone()
    }

    /// Submits `request`; answered from the cache at once when it is there. `position` names the
    /// request's place in the run (see the module docs), for replay-only reruns.
    pub fn submit(&mut self, request: ChatRequest, position: Option<String>) -> Ticket {
        let body_key = Cache::key(&request, 0);
        let occurrence = {
            let n = self.occurrences.entry(body_key).or_insert(0);
            *n += 1;
            *n - 1
        };
        let key = Cache::key(&request, occurrence);
        let shared = self.shared.clone();
        shared.accounting.lock().expect("not poisoned").requests += 1;
        let cached = shared.cache.as_ref().and_then(|c| {
            let hit = c.get(&key);
            if let (Some(_), Some(p)) = (&hit, &position) {
                c.put_position(p, &key);
            }
            hit.or_else(|| {
                shared
                    .replay_only
                    .then(|| position.as_deref().and_then(|p| c.get_position(p)))
                    .flatten()
            })
        });
        if let Some(mut hit) = cached {
            hit.cached = true;
            hit.attempts = 0;
            let mut a = shared.accounting.lock().expect("not poisoned");
            a.cached += 1;
            a.replayed_tokens.0 += hit.usage.prompt_tokens;
            a.replayed_tokens.1 += hit.usage.completion_tokens;
            return Ticket(TicketState::Ready(Ok(hit)));
        }
        if shared.replay_only || shared.transport.is_none() {
            shared.accounting.lock().expect("not poisoned").failed += 1;
            return Ticket(TicketState::Ready(Err(if shared.replay_only {
                LlmError::NotCached
            } else {
                LlmError::NoTransport
            })));
        }
        let (tx, rx) = channel();
        let job: Job = Box::new(move || {
            let transport = shared.transport.as_ref().expect("checked above");
            let (result, attempts) = send_with_retries(
                transport.as_ref(),
                &request,
                shared.policy,
                &std::thread::sleep,
            );
            let result = result
                .map_err(|e| e.redacted(shared.key.as_ref()))
                .and_then(|response| {
                    if response.choices.is_empty() {
                        return Err(LlmError::InvalidBody("no choices".into()));
                    }
                    let usage = response.usage.unwrap_or_default();
                    Ok(Completion {
                        text: redact(response.text(), shared.key.as_ref()),
                        finish_reason: response.finish_reason().map(str::to_owned),
                        usage,
                        model: response
                            .model
                            .clone()
                            .unwrap_or_else(|| request.model.clone()),
                        cached: false,
                        attempts,
                    })
                });
            {
                let mut a = shared.accounting.lock().expect("not poisoned");
                a.http_attempts += u64::from(attempts);
                match &result {
                    Ok(c) => {
                        let t = a.tokens.entry(request.model.clone()).or_default();
                        t.0 += c.usage.prompt_tokens;
                        t.1 += c.usage.completion_tokens;
                    }
                    Err(_) => a.failed += 1,
                }
            }
            if let (Ok(c), Some(cache)) = (&result, &shared.cache) {
                cache.put(&key, &request, c, shared.key.as_ref());
                if let Some(p) = &position {
                    cache.put_position(p, &key);
                }
            }
            let _ = tx.send(result);
        });
        self.dispatch(job);
        Ticket(TicketState::Waiting(rx))
    }

    fn dispatch(&mut self, job: Job) {
        if self.jobs.is_none() {
            let (tx, rx) = channel::<Job>();
            let rx = Arc::new(Mutex::new(rx));
            for i in 0..self.threads {
                let rx = rx.clone();
                let spawned = std::thread::Builder::new()
                    .name(format!("kf-llm-{i}"))
                    .spawn(move || {
                        loop {
                            let job = match rx.lock().expect("not poisoned").recv() {
                                Ok(j) => j,
                                Err(_) => return,
                            };
                            job();
                        }
                    });
                if let Err(e) = spawned {
                    log::warn!("could not start an LLM request thread: {e}");
                }
            }
            self.jobs = Some(tx);
        }
        if let Some(tx) = &self.jobs {
            let _ = tx.send(job);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::protocol::{Choice, Message, ResponseMessage};
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn request(text: &str) -> ChatRequest {
        ChatRequest {
            model: "m".into(),
            messages: vec![Message::user(text)],
            temperature: 0.5,
            max_tokens: 100,
        }
    }

    fn answer(text: &str) -> ChatResponse {
        ChatResponse {
            choices: vec![Choice {
                message: ResponseMessage {
                    content: Some(text.into()),
                },
                finish_reason: Some("stop".into()),
            }],
            usage: Some(Usage {
                prompt_tokens: 10,
                completion_tokens: 5,
            }),
            model: None,
        }
    }

    /// Answers from a script of results, one per attempt, counting attempts.
    struct Script {
        results: Mutex<Vec<Result<ChatResponse, LlmError>>>,
        calls: AtomicUsize,
    }

    impl Script {
        fn new(mut results: Vec<Result<ChatResponse, LlmError>>) -> Arc<Self> {
            results.reverse();
            Arc::new(Script {
                results: Mutex::new(results),
                calls: AtomicUsize::new(0),
            })
        }
    }

    impl Transport for Script {
        fn send(&self, r: &ChatRequest) -> Result<ChatResponse, LlmError> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            self.results
                .lock()
                .unwrap()
                .pop()
                .unwrap_or_else(|| Ok(answer(&format!("echo {}", r.messages[0].content))))
        }
    }

    fn policy(retries: u32) -> RetryPolicy {
        RetryPolicy {
            retries,
            backoff: Duration::from_secs(1),
            max_wait: Duration::from_secs(30),
        }
    }

    fn http(status: u16, retry_after: Option<f64>) -> LlmError {
        LlmError::Http {
            status,
            body: String::new(),
            retry_after,
        }
    }

    #[test]
    fn retries_back_off_and_honour_retry_after() {
        let script = Script::new(vec![
            Err(http(429, Some(7.0))),
            Err(http(503, None)),
            Err(LlmError::Timeout(1.0)),
            Ok(answer("done")),
        ]);
        let waits = Mutex::new(Vec::new());
        let (r, attempts) = send_with_retries(script.as_ref(), &request("x"), policy(5), &|d| {
            waits.lock().unwrap().push(d.as_secs_f64())
        });
        assert_eq!(r.unwrap().text(), "done");
        assert_eq!(attempts, 4);
        assert_eq!(
            *waits.lock().unwrap(),
            vec![7.0, 2.0, 4.0],
            "Retry-After, then 1·2¹, 1·2²"
        );
    }

    #[test]
    fn client_errors_are_not_retried_and_retries_end() {
        let script = Script::new(vec![Err(http(401, None))]);
        let (r, attempts) = send_with_retries(script.as_ref(), &request("x"), policy(5), &|_| {});
        assert_eq!((r.unwrap_err(), attempts), (http(401, None), 1));
        let script = Script::new((0..10).map(|_| Err(http(500, None))).collect());
        let (r, attempts) = send_with_retries(script.as_ref(), &request("x"), policy(2), &|_| {});
        assert!(r.is_err());
        assert_eq!(attempts, 3);
        let script = Script::new(vec![Err(http(429, Some(1e9)))]);
        let waits = Mutex::new(Vec::new());
        let _ = send_with_retries(script.as_ref(), &request("x"), policy(1), &|d| {
            waits.lock().unwrap().push(d.as_secs())
        });
        assert_eq!(
            *waits.lock().unwrap(),
            vec![30],
            "a huge Retry-After is capped"
        );
    }

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        let now = std::time::UNIX_EPOCH + Duration::from_secs(784_111_777); // 1994-11-06 08:49:37
        assert_eq!(parse_retry_after("120", now), Some(120.0));
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:47 GMT", now),
            Some(10.0)
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:00 GMT", now),
            Some(0.0)
        );
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-3", now), None);
    }

    #[test]
    fn answers_are_cached_per_occurrence_and_replayed() {
        let dir = tempfile::tempdir().unwrap();
        let script = Script::new(vec![]);
        let options = |replay_only: bool, transport: Option<Arc<dyn Transport>>| ClientOptions {
            transport,
            cache: Some(Cache::new(dir.path())),
            replay_only,
            policy: policy(0),
            concurrency: 2,
            key: None,
        };
        let mut first = Client::new(options(false, Some(script.clone())));
        let a = first.submit(request("same"), None);
        let b = first.submit(request("same"), None);
        let c = first.submit(request("other"), None);
        let (a, b, c) = (a.wait().unwrap(), b.wait().unwrap(), c.wait().unwrap());
        assert!(!a.cached && !b.cached && !c.cached);
        assert_eq!(
            script.calls.load(Ordering::SeqCst),
            3,
            "identical requests are both sent"
        );
        assert_eq!(first.accounting().tokens["m"], (30, 15));
        // A second run replays all three, in the same order, without a transport.
        let mut again = Client::new(options(true, None));
        let a2 = again.submit(request("same"), None).wait().unwrap();
        let b2 = again.submit(request("same"), None).wait().unwrap();
        let c2 = again.submit(request("other"), None).wait().unwrap();
        assert!(a2.cached && b2.cached && c2.cached);
        assert_eq!((a2.text, b2.text, c2.text), (a.text, b.text, c.text));
        assert_eq!(
            again.submit(request("same"), None).wait().unwrap_err(),
            LlmError::NotCached,
            "a third occurrence was never asked"
        );
        let acc = again.accounting();
        assert_eq!((acc.cached, acc.failed, acc.http_attempts), (3, 1, 0));
        assert!(acc.tokens.is_empty());
        assert_eq!(acc.replayed_tokens, (30, 15));
    }

    #[test]
    fn replay_only_falls_back_to_the_position_of_a_request() {
        let dir = tempfile::tempdir().unwrap();
        let options = |replay_only: bool, transport: Option<Arc<dyn Transport>>| ClientOptions {
            transport,
            cache: Some(Cache::new(dir.path())),
            replay_only,
            policy: policy(0),
            concurrency: 1,
            key: None,
        };
        let mut first = Client::new(options(false, Some(Script::new(vec![]))));
        let a = first
            .submit(request("timing 1.23 ms"), Some("k-0".into()))
            .wait()
            .unwrap();
        // The rerun measured another time, so its prompt differs; its position is the same.
        let mut again = Client::new(options(true, None));
        let b = again
            .submit(request("timing 1.31 ms"), Some("k-0".into()))
            .wait()
            .unwrap();
        assert!(b.cached);
        assert_eq!(a.text, b.text);
        assert_eq!(
            again
                .submit(request("timing 1.31 ms"), Some("k-1".into()))
                .wait()
                .unwrap_err(),
            LlmError::NotCached
        );
        // Without replay-only a changed prompt is a new question.
        let script = Script::new(vec![]);
        let mut paying = Client::new(options(false, Some(script.clone())));
        let c = paying
            .submit(request("timing 1.40 ms"), Some("k-0".into()))
            .wait()
            .unwrap();
        assert!(!c.cached);
        assert_eq!(script.calls.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn errors_and_cache_files_never_carry_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let key = ApiKey::new("sk-topsecret-123").unwrap();
        let script = Script::new(vec![
            Err(LlmError::Http {
                status: 400,
                body: "bad key sk-topsecret-123".into(),
                retry_after: None,
            }),
            Ok(answer("an echo of sk-topsecret-123")),
        ]);
        let mut client = Client::new(ClientOptions {
            transport: Some(script),
            cache: Some(Cache::new(dir.path())),
            replay_only: false,
            policy: policy(0),
            concurrency: 1,
            key: Some(key),
        });
        let e = client
            .submit(request("a"), None)
            .wait()
            .unwrap_err()
            .to_string();
        assert!(e.contains("[redacted]") && !e.contains("topsecret"), "{e}");
        let ok = client.submit(request("b"), None).wait().unwrap();
        assert!(!ok.text.contains("topsecret"));
        for f in std::fs::read_dir(dir.path()).unwrap() {
            let text = std::fs::read_to_string(f.unwrap().path()).unwrap();
            assert!(!text.contains("topsecret"), "{text}");
        }
    }
}

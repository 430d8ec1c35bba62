//! A replay server for the LLM tests: a small HTTP server on the loopback interface that speaks the
//! chat-completions protocol and serves recorded answers, and can misbehave on cue.
//!
//! Answers are queued per kernel and kind of prompt (read from the prompt's `# Task: <kind>` line
//! and its "Kernel `NAME`"), meta answers in their own queue; faults (429 with Retry-After, 500, a
//! hung connection, an invalid JSON body) are served to the first attempts, before any answer.
//! Every request is recorded with its `Authorization` header. `stop_after` closes the listener
//! after that many answers, so later requests find nothing listening.

use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A misbehaviour, served instead of an answer.
#[derive(Clone, Debug)]
pub enum Fault {
    /// HTTP 429 with `Retry-After: <seconds>`.
    TooManyRequests(u32),
    /// HTTP 500.
    ServerError,
    /// Read the request, then say nothing for this long and close.
    Hang(Duration),
    /// HTTP 200 with a body that is not JSON.
    InvalidJson,
}

/// A recorded answer.
#[derive(Clone, Debug)]
pub struct Reply {
    /// The message text.
    pub text: String,
    /// `stop`, or `length` for an answer cut at the token limit.
    pub finish_reason: &'static str,
}

impl Reply {
    /// A complete answer.
    pub fn new(text: impl Into<String>) -> Self {
        Reply {
            text: text.into(),
            finish_reason: "stop",
        }
    }

    /// An answer cut at the token limit.
    pub fn truncated(text: impl Into<String>) -> Self {
        Reply {
            text: text.into(),
            finish_reason: "length",
        }
    }
}

/// What the server serves.
#[derive(Default)]
pub struct Script {
    /// Answers per (kernel, kind); kind `*` serves any kind but repair.
    pub answers: HashMap<(String, String), VecDeque<Reply>>,
    /// Served when a kernel's queues are empty, per kernel.
    pub fallback: HashMap<String, Reply>,
    /// Meta-prompt answers.
    pub meta: VecDeque<Reply>,
    /// Faults served to the first attempts.
    pub faults: VecDeque<Fault>,
    /// Close the listener after this many answers.
    pub stop_after: Option<usize>,
}

impl Script {
    /// Queues `reply` for `kernel`'s prompts of `kind` (`seed`, `optimize`, `repair`, `template`,
    /// or `*` for any but repair).
    pub fn answer(&mut self, kernel: &str, kind: &str, reply: Reply) -> &mut Self {
        self.answers
            .entry((kernel.to_owned(), kind.to_owned()))
            .or_default()
            .push_back(reply);
        self
    }
}

/// One request as received.
#[derive(Clone, Debug)]
pub struct Received {
    /// The request line's path.
    pub path: String,
    /// The `Authorization` header.
    pub authorization: Option<String>,
    /// The JSON body.
    pub body: serde_json::Value,
    /// What was served: `answer`, `meta`, `fault …`.
    pub served: String,
}

impl Received {
    /// The text of the message with `role`.
    pub fn message(&self, role: &str) -> String {
        self.body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|m| m["role"] == role)
            .and_then(|m| m["content"].as_str())
            .unwrap_or("")
            .to_owned()
    }
}

/// The running server.
pub struct ReplayServer {
    port: u16,
    received: Arc<Mutex<Vec<Received>>>,
    stopped: Arc<AtomicBool>,
}

impl ReplayServer {
    /// Starts serving `script` on a free loopback port.
    pub fn start(script: Script) -> ReplayServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let received = Arc::new(Mutex::new(Vec::new()));
        let stopped = Arc::new(AtomicBool::new(false));
        let script = Arc::new(Mutex::new(script));
        let answered = Arc::new(AtomicUsize::new(0));
        let (r, s) = (received.clone(), stopped.clone());
        std::thread::spawn(move || {
            // Bounded: the server ends when stopped, or after an hour at the latest.
            let deadline = std::time::Instant::now() + Duration::from_secs(3600);
            while !s.load(Ordering::SeqCst) && std::time::Instant::now() < deadline {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let (r, script, answered, s) =
                            (r.clone(), script.clone(), answered.clone(), s.clone());
                        std::thread::spawn(move || serve(stream, &script, &r, &answered, &s));
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    Err(_) => break,
                }
            }
            // The listener is dropped here: new connections are refused.
        });
        ReplayServer {
            port,
            received,
            stopped,
        }
    }

    /// The base URL (`http://127.0.0.1:<port>/v1`).
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// Every request so far.
    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    /// Stops listening.
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
    }
}

impl Drop for ReplayServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn serve(
    mut stream: TcpStream,
    script: &Mutex<Script>,
    received: &Mutex<Vec<Received>>,
    answered: &AtomicUsize,
    stopped: &AtomicBool,
) {
    stream.set_nonblocking(false).ok();
    stream.set_read_timeout(Some(Duration::from_secs(10))).ok();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("")
        .to_owned();
    let mut length = 0usize;
    let mut authorization = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).is_err() || line.trim().is_empty() {
            break;
        }
        let (name, value) = line.split_once(':').unwrap_or((&line, ""));
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => length = value.trim().parse().unwrap_or(0),
            "authorization" => authorization = Some(value.trim().to_owned()),
            _ => {}
        }
    }
    let mut body = vec![0u8; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let body: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    let user = body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or("")
        .to_owned();
    let kind = user
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("# Task: "))
        .unwrap_or("")
        .trim()
        .to_owned();
    let kernel = user
        .split("Kernel `")
        .nth(1)
        .and_then(|r| r.split('`').next())
        .unwrap_or("")
        .to_owned();
    let (fault, reply) = {
        let mut s = script.lock().unwrap();
        match s.faults.pop_front() {
            Some(f) => (Some(f), None),
            None => {
                let reply = if kind == "meta" {
                    Some(s.meta.pop_front().unwrap_or_else(|| {
                        Reply::new("The guidance covers what went wrong; no edits this time.")
                    }))
                } else {
                    let own = s
                        .answers
                        .get_mut(&(kernel.clone(), kind.clone()))
                        .and_then(VecDeque::pop_front);
                    own.or_else(|| {
                        (kind != "repair")
                            .then(|| {
                                s.answers
                                    .get_mut(&(kernel.clone(), "*".to_owned()))
                                    .and_then(VecDeque::pop_front)
                            })
                            .flatten()
                    })
                    .or_else(|| s.fallback.get(&kernel).cloned())
                };
                (None, reply)
            }
        }
    };
    let served = match (&fault, &reply) {
        (Some(f), _) => format!("fault {f:?}"),
        (None, Some(_)) if kind == "meta" => "meta".into(),
        (None, Some(_)) => "answer".into(),
        (None, None) => "nothing queued".into(),
    };
    received.lock().unwrap().push(Received {
        path,
        authorization,
        body: body.clone(),
        served,
    });
    let respond = |stream: &mut TcpStream, status: &str, extra: &str, body: &str| {
        let _ = write!(
            stream,
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n{body}",
            body.len()
        );
        let _ = stream.flush();
    };
    match fault {
        Some(Fault::TooManyRequests(s)) => respond(
            &mut stream,
            "429 Too Many Requests",
            &format!("Retry-After: {s}\r\n"),
            r#"{"error":{"message":"rate limited"}}"#,
        ),
        Some(Fault::ServerError) => respond(
            &mut stream,
            "500 Internal Server Error",
            "",
            r#"{"error":{"message":"boom"}}"#,
        ),
        Some(Fault::Hang(d)) => std::thread::sleep(d),
        Some(Fault::InvalidJson) => respond(&mut stream, "200 OK", "", "{\"choices\": [ not json"),
        None => {
            let Some(reply) = reply else {
                respond(
                    &mut stream,
                    "404 Not Found",
                    "",
                    r#"{"error":{"message":"no answer queued"}}"#,
                );
                return;
            };
            let tokens = |t: &str| t.len() as u64 / 4 + 1;
            let answer = serde_json::json!({
                "id": "replay",
                "object": "chat.completion",
                "model": body["model"],
                "choices": [{
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.text},
                    "finish_reason": reply.finish_reason,
                }],
                "usage": {"prompt_tokens": tokens(&user), "completion_tokens": tokens(&reply.text)},
            });
            respond(&mut stream, "200 OK", "", &answer.to_string());
            let n = answered.fetch_add(1, Ordering::SeqCst) + 1;
            let stop_after = script.lock().unwrap().stop_after;
            if stop_after.is_some_and(|k| n >= k) {
                stopped.store(true, Ordering::SeqCst);
            }
        }
    }
}

//! The HTTP transport: one blocking `POST …/chat/completions` with reqwest (rustls), run on the
//! client's request threads, so no async runtime reaches the search.
//!
//! Invariant: the key goes into the `Authorization` header and nowhere else; error messages built
//! here carry the status and the start of the body, never the request's headers.

use super::client::{LlmError, Transport, parse_retry_after};
use super::config::ApiKey;
use super::protocol::{ChatRequest, ChatResponse, endpoint};
use std::time::Duration;

/// A transport to an OpenAI-compatible endpoint.
pub struct HttpTransport {
    client: reqwest::blocking::Client,
    url: String,
    key: Option<ApiKey>,
    timeout_s: f64,
}

impl HttpTransport {
    /// A transport posting to `base` (see [`endpoint`]), with a per-request `timeout_s`.
    pub fn new(base: &str, key: Option<ApiKey>, timeout_s: f64) -> Result<Self, LlmError> {
        let timeout = Duration::from_secs_f64(timeout_s);
        let client = reqwest::blocking::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(30)))
            .user_agent(concat!("cargo-kernelfoundry/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| LlmError::Connect(format!("cannot build the HTTP client: {e}")))?;
        Ok(HttpTransport {
            client,
            url: endpoint(base),
            key,
            timeout_s,
        })
    }
}

impl Transport for HttpTransport {
    fn send(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let body = serde_json::to_string(request).expect("requests serialize");
        let mut builder = self
            .client
            .post(&self.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body);
        if let Some(key) = &self.key {
            builder = builder.bearer_auth(key.expose());
        }
        let response = builder.send().map_err(|e| {
            if e.is_timeout() {
                LlmError::Timeout(self.timeout_s)
            } else {
                LlmError::Connect(describe(e))
            }
        })?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| parse_retry_after(v, std::time::SystemTime::now()));
        let text = response.text().map_err(|e| {
            if e.is_timeout() {
                LlmError::Timeout(self.timeout_s)
            } else {
                LlmError::Connect(describe(e))
            }
        })?;
        if !(200..300).contains(&status) {
            return Err(LlmError::Http {
                status,
                body: snippet(&text),
                retry_after,
            });
        }
        serde_json::from_str(&text)
            .map_err(|e| LlmError::InvalidBody(format!("{e}; body starts: {}", snippet(&text))))
    }
}

/// An error with its causes, without the URL's query (where some proxies put credentials).
fn describe(e: reqwest::Error) -> String {
    let e = e.without_url();
    let mut out = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

/// The first 300 characters, on one line.
fn snippet(text: &str) -> String {
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(300) {
        Some((i, _)) => format!("{}…", &one_line[..i]),
        None => one_line,
    }
}

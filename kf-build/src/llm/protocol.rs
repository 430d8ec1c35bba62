//! The OpenAI chat-completions protocol, as far as this tool speaks it: one request with a system
//! and a user message, one choice back with its text, finish reason and token usage.
//!
//! OpenAI, vLLM, llama.cpp's server and Ollama all serve `POST <base>/chat/completions` with this
//! shape; fields this tool does not need are ignored on reading and never sent.

use serde::{Deserialize, Serialize};

/// A chat-completions request body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The model name.
    pub model: String,
    /// The conversation.
    pub messages: Vec<Message>,
    /// Sampling temperature.
    pub temperature: f64,
    /// Most tokens of the answer.
    pub max_tokens: u32,
}

/// One message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// `system`, `user` or `assistant`.
    pub role: String,
    /// The text.
    pub content: String,
}

impl Message {
    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Message {
            role: "system".into(),
            content: content.into(),
        }
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Message {
            role: "user".into(),
            content: content.into(),
        }
    }
}

/// Token counts of one exchange.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens of the prompt.
    #[serde(default)]
    pub prompt_tokens: u64,
    /// Tokens of the answer.
    #[serde(default)]
    pub completion_tokens: u64,
}

/// The parts of a chat-completions response this tool reads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// The choices; the first is used.
    pub choices: Vec<Choice>,
    /// Token usage, when the server reports it.
    #[serde(default)]
    pub usage: Option<Usage>,
    /// The model that answered.
    #[serde(default)]
    pub model: Option<String>,
}

/// One choice.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Choice {
    /// The answer.
    pub message: ResponseMessage,
    /// `stop`, `length`, ….
    #[serde(default)]
    pub finish_reason: Option<String>,
}

/// The answer's message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResponseMessage {
    /// Its text (absent in some refusals).
    #[serde(default)]
    pub content: Option<String>,
}

impl ChatResponse {
    /// The first choice's text, empty when there is none.
    pub fn text(&self) -> &str {
        self.choices
            .first()
            .and_then(|c| c.message.content.as_deref())
            .unwrap_or("")
    }

    /// The first choice's finish reason.
    pub fn finish_reason(&self) -> Option<&str> {
        self.choices
            .first()
            .and_then(|c| c.finish_reason.as_deref())
    }
}

/// The URL to post to: `base` as given when it already ends in `/chat/completions`, else
/// `base/chat/completions`.
pub fn endpoint(base: &str) -> String {
    let base = base.trim().trim_end_matches('/');
    if base.ends_with("/chat/completions") {
        base.to_owned()
    } else {
        format!("{base}/chat/completions")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_accept_a_base_or_a_full_url() {
        assert_eq!(
            endpoint("http://127.0.0.1:11434/v1/"),
            "http://127.0.0.1:11434/v1/chat/completions"
        );
        assert_eq!(
            endpoint("https://api.openai.com/v1/chat/completions"),
            "https://api.openai.com/v1/chat/completions"
        );
    }

    #[test]
    fn responses_of_several_servers_parse() {
        // OpenAI-style, with extra fields; llama.cpp-style without usage; a refusal without content.
        let openai = r#"{"id":"x","object":"chat.completion","model":"gpt","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}"#;
        let r: ChatResponse = serde_json::from_str(openai).unwrap();
        assert_eq!(r.text(), "hi");
        assert_eq!(r.finish_reason(), Some("stop"));
        assert_eq!(r.usage.unwrap().prompt_tokens, 3);
        let bare = r#"{"choices":[{"message":{"content":"x"}}]}"#;
        let r: ChatResponse = serde_json::from_str(bare).unwrap();
        assert_eq!((r.text(), r.usage), ("x", None));
        let refusal = r#"{"choices":[{"message":{"role":"assistant","refusal":"no"},"finish_reason":"stop"}]}"#;
        let r: ChatResponse = serde_json::from_str(refusal).unwrap();
        assert_eq!(r.text(), "");
    }
}

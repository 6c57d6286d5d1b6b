//! `ctxkit proxy --summarizer upstream`: a compaction's summary asked of the agent's own model
//! through the same upstream, as the cache-safe request: the agent's request as it last sent it
//! (its fields, system prompt and tools byte for byte, its conversation as ctxkit's view)
//! with the summary instruction after it, so the provider reads the history from its cache and
//! bills only the instruction and the summary at full price.
//!
//! [`SummaryShape`] is what a summary request keeps of the agent's request (owned, and small:
//! its fields and leading system items, never its history); [`UpstreamSummarizer`] is the
//! engine's LLM for the one turn it is made for, sending with that request's credential
//! headers to the configured upstream and nowhere else (no redirect is followed).
//!
//! Guarantees: the body differs from the agent's only in its conversation, `stream` (false),
//! Anthropic's `max_tokens` (the summary's) and Chat Completions' `stream_options` (dropped
//! with the stream); a header value is never printed (`Debug` shows names only) or put in an
//! error; an answer that is not a summary (an error status, no text) is an error, and the
//! engine falls back to the extractive summary.

use std::time::{Duration, Instant};

use ctxkit_core::compaction::cached_conversation;
use ctxkit_core::wire::breakpoints::MAX_BREAKPOINTS;
use ctxkit_core::wire::to_openai;
use ctxkit_core::Message;
use serde_json::value::RawValue;
use serde_json::Value;

use super::anthropic::limit_cache_marks;
use super::body::{body_with, Fields, RawList};
use super::responses::view_items;
use super::sessions::after_agent_system;
use crate::llm::{Llm, LlmRequest, SummarizerError};

/// Which API the agent's request spoke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummaryApi {
    /// Anthropic Messages.
    Anthropic,
    /// OpenAI Chat Completions.
    Chat,
    /// OpenAI Responses.
    Responses,
}

/// What a summary request keeps of the agent's request.
#[derive(Debug, Clone)]
pub struct SummaryShape {
    /// The API.
    pub api: SummaryApi,
    /// The agent's top-level fields in order (its conversation's a placeholder).
    pub(super) fields: Fields,
    /// Its leading `system`/`developer` messages or items, as sent (Chat, Responses).
    pub(super) leading: RawList,
    /// Its system prompt's text (the view's system message, which its own fields carry).
    pub(super) system_text: String,
    /// The `cache_control` marks its system and tools carry (Anthropic allows four in all).
    pub(super) agent_cache_marks: usize,
}

impl SummaryShape {
    /// The summary request's body: the agent's fields with `messages` (the view, then the
    /// instruction) as the conversation, not streamed, at most `max_tokens` of summary.
    pub fn body(&self, messages: &[Message], max_tokens: u64) -> Result<Vec<u8>, String> {
        let conversation = after_agent_system(messages, &self.system_text);
        let (key, written) = match self.api {
            SummaryApi::Anthropic => {
                let rendered = cached_conversation(messages)
                    .ok_or("the summary request has no conversation to send")?;
                let mut view = rendered.get("messages").cloned().unwrap_or(Value::Null);
                limit_cache_marks(
                    &mut view,
                    MAX_BREAKPOINTS.saturating_sub(self.agent_cache_marks),
                );
                ("messages", view)
            }
            SummaryApi::Chat => ("messages", to_openai(conversation)),
            SummaryApi::Responses => ("input", view_items(conversation)),
        };
        let items = written.as_array().map(Vec::as_slice).unwrap_or_default();
        let leading = self.leading.iter().map(str::to_owned);
        let list = format!(
            "[{}]",
            leading
                .chain(items.iter().map(Value::to_string))
                .collect::<Vec<_>>()
                .join(",")
        );
        let mut fields: Fields = self
            .fields
            .iter()
            .filter(|(name, _)| name != "stream_options")
            .cloned()
            .collect();
        set_field(&mut fields, "stream", "false");
        if self.api == SummaryApi::Anthropic {
            set_field(&mut fields, "max_tokens", &max_tokens.to_string());
        }
        Ok(body_with(&fields, key, list.as_bytes()))
    }

    /// The summary's text in `answer` (the upstream's JSON body from `url`), read by the
    /// summarizer clients' own readers where the API is theirs (a refusal, no text: an error).
    pub fn answer_text(&self, url: &str, answer: &Value) -> Result<String, SummarizerError> {
        match self.api {
            SummaryApi::Anthropic => crate::llm::anthropic::answer_text(url, answer),
            SummaryApi::Chat => crate::llm::openai::answer_text(url, answer),
            SummaryApi::Responses => {
                let text: String = answer
                    .get("output")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter(|item| item.get("type").and_then(Value::as_str) == Some("message"))
                    .map(|item| texts(item.get("content"), "output_text"))
                    .collect();
                if text.trim().is_empty() {
                    return Err(SummarizerError::Empty {
                        url: url.to_owned(),
                    });
                }
                Ok(text)
            }
        }
    }
}

/// The `text` of the blocks of `blocks` whose type is `kind`, joined.
fn texts(blocks: Option<&Value>, kind: &str) -> String {
    blocks
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|block| block.get("type").and_then(Value::as_str) == Some(kind))
        .filter_map(|block| block.get("text").and_then(Value::as_str))
        .collect()
}

/// Sets the top-level field `name` to the JSON `raw` in place, or adds it last.
fn set_field(fields: &mut Fields, name: &str, raw: &str) {
    let Ok(value) = RawValue::from_string(raw.to_owned()) else {
        return;
    };
    match fields.iter_mut().find(|(field, _)| field == name) {
        Some((_, old)) => *old = value,
        None => fields.push((name.to_owned(), value)),
    }
}

/// The agent's own model as the engine's summarizer for one turn (see the module doc).
pub struct UpstreamSummarizer {
    shape: SummaryShape,
    url: String,
    /// The agent's credential headers, as it sent them.
    headers: Vec<(String, String)>,
    agent: ureq::Agent,
    /// How long one summary may take.
    timeout: Duration,
}

impl std::fmt::Debug for UpstreamSummarizer {
    // The header values are credentials: only their names are shown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("UpstreamSummarizer")
            .field("api", &self.shape.api)
            .field("url", &self.url)
            .field("headers", &names)
            .finish()
    }
}

impl UpstreamSummarizer {
    /// A summarizer posting to `url` (the agent's request's upstream URL) with `headers`.
    pub fn new(
        shape: SummaryShape,
        url: String,
        headers: Vec<(String, String)>,
        agent: ureq::Agent,
        timeout: Duration,
    ) -> Self {
        UpstreamSummarizer {
            shape,
            url,
            headers,
            agent,
            timeout,
        }
    }

    fn post(&self, body: Vec<u8>) -> Result<Value, SummarizerError> {
        let mut request = self
            .agent
            .post(&self.url)
            .header("content-type", "application/json");
        for (name, value) in &self.headers {
            request = request.header(name.as_str(), value.as_str());
        }
        let transport = |problem: String| SummarizerError::Transport {
            url: self.url.clone(),
            problem,
        };
        let mut response = request
            .send(&body[..])
            .map_err(|error| transport(error.to_string()))?;
        let status = response.status().as_u16();
        let text = response
            .body_mut()
            .with_config()
            .limit(16 << 20)
            .read_to_string()
            .map_err(|error| transport(error.to_string()))?;
        if status != 200 {
            return Err(SummarizerError::Status {
                url: self.url.clone(),
                status,
                body: text.chars().take(300).collect(),
            });
        }
        serde_json::from_str(&text).map_err(|error| SummarizerError::Malformed {
            url: self.url.clone(),
            problem: error.to_string(),
        })
    }
}

impl Llm for UpstreamSummarizer {
    fn complete(&self, request: &LlmRequest<'_>) -> Result<String, SummarizerError> {
        if request.messages.is_empty() {
            // Only the agent's own conversation goes to the agent's model: a fresh prompt
            // (a memory extraction) would go under the agent's system prompt and tools.
            return Err(SummarizerError::NotConfigured {
                setting: "--summarizer upstream".to_owned(),
                problem: "answers cache-safe summary requests only".to_owned(),
            });
        }
        let started = Instant::now();
        let body = self
            .shape
            .body(request.messages, request.max_tokens)
            .map_err(|problem| SummarizerError::Malformed {
                url: self.url.clone(),
                problem,
            })?;
        let answer = self.post(body)?;
        if request
            .deadline
            .is_some_and(|deadline| Instant::now() > deadline)
            || started.elapsed() > self.timeout
        {
            return Err(SummarizerError::Timeout {
                url: self.url.clone(),
                problem: "the summary came after the compaction's deadline".to_owned(),
            });
        }
        self.shape.answer_text(&self.url, &answer)
    }

    fn describe(&self) -> String {
        format!("the agent's model through {}", self.url)
    }

    fn deadline(&self) -> Option<Duration> {
        Some(self.timeout)
    }
}

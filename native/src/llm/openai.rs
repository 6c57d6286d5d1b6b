//! OpenAI-compatible Chat Completions: `POST {base_url}/chat/completions` with a system and a
//! user message; the answer is `choices[0].message.content`.
//!
//! Works with OpenAI, vLLM, llama.cpp's server and Ollama (`http://localhost:11434/v1`): only
//! the fields every one of them accepts are sent (`model`, `messages`, `max_tokens`; a probe's
//! [`OpenAiChat::chat`] adds `temperature` and `seed`, which they take too). The API key, when
//! there is one, goes in `Authorization: Bearer`.

use std::time::Instant;

use serde_json::{json, Value};
use ureq::Agent;

use super::http::{agent, post_json, quote};
use super::{Llm, LlmEndpoint, LlmRequest, SummarizerError};

/// A Chat Completions client.
#[derive(Debug)]
pub struct OpenAiChat {
    endpoint: LlmEndpoint,
    url: String,
    agent: Agent,
}

impl OpenAiChat {
    /// A client for `endpoint` (its `api` field is not read).
    pub fn new(endpoint: LlmEndpoint) -> Self {
        let url = format!(
            "{}/chat/completions",
            endpoint.base_url.trim_end_matches('/')
        );
        let agent = agent(&endpoint.http);
        OpenAiChat {
            endpoint,
            url,
            agent,
        }
    }
}

/// How a probe's answer is sampled: the same request gives the same answer where the server
/// honours them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampling {
    /// `temperature` (0: greedy).
    pub temperature: f64,
    /// `seed`.
    pub seed: u64,
}

impl OpenAiChat {
    /// The model's answer to `messages` (a whole conversation, sent as it is) with at most
    /// `max_tokens` output tokens, sampled as `sampling` says.
    pub fn chat(
        &self,
        messages: &[ctxkit_core::Message],
        max_tokens: u64,
        sampling: Sampling,
    ) -> Result<String, SummarizerError> {
        self.chat_within(messages, max_tokens, sampling, None)
    }

    /// [`OpenAiChat::chat`], ended by `deadline` when that comes before the client's own
    /// [`super::HttpOptions::deadline`] (a probe run's deadline).
    pub fn chat_within(
        &self,
        messages: &[ctxkit_core::Message],
        max_tokens: u64,
        sampling: Sampling,
        deadline: Option<Instant>,
    ) -> Result<String, SummarizerError> {
        let body = json!({
            "model": self.endpoint.model,
            "messages": ctxkit_core::to_openai(messages),
            "max_tokens": max_tokens,
            "temperature": sampling.temperature,
            "seed": sampling.seed,
        });
        self.post(&body, deadline)
    }

    fn post(&self, body: &Value, deadline: Option<Instant>) -> Result<String, SummarizerError> {
        let authorization = self
            .endpoint
            .api_key
            .as_ref()
            .map(|key| format!("Bearer {key}"));
        let headers: Vec<(&str, &str)> = authorization
            .as_deref()
            .map(|value| ("authorization", value))
            .into_iter()
            .collect();
        let response = post_json(
            &self.agent,
            &self.url,
            &headers,
            body,
            &self.endpoint.http,
            deadline,
        )?;
        answer_text(&self.url, &response)
    }
}

impl Llm for OpenAiChat {
    fn complete(&self, request: &LlmRequest<'_>) -> Result<String, SummarizerError> {
        let messages = if request.messages.is_empty() {
            json!([
                {"role": "system", "content": request.system},
                {"role": "user", "content": request.prompt},
            ])
        } else {
            // A cache-safe request: the agent's own conversation, which the provider's
            // automatic prefix cache serves.
            ctxkit_core::to_openai(request.messages)
        };
        let body = json!({
            "model": self.endpoint.model,
            "messages": messages,
            "max_tokens": request.max_tokens,
        });
        self.post(&body, request.deadline)
    }

    fn deadline(&self) -> Option<std::time::Duration> {
        Some(self.endpoint.http.deadline)
    }

    fn describe(&self) -> String {
        format!("openai-compatible {} at {}", self.endpoint.model, self.url)
    }
}

/// `choices[0].message.content`, as a string or a list of text parts.
pub(crate) fn answer_text(url: &str, response: &Value) -> Result<String, SummarizerError> {
    let malformed = |problem: &str| SummarizerError::Malformed {
        url: url.to_owned(),
        problem: format!("{problem}: {}", quote(&response.to_string())),
    };
    let message = response
        .get("choices")
        .and_then(|choices| choices.get(0))
        .and_then(|choice| choice.get("message"))
        .ok_or_else(|| malformed("no choices[0].message"))?;
    if let Some(refusal) = message.get("refusal").and_then(Value::as_str) {
        return Err(SummarizerError::Refused {
            url: url.to_owned(),
            refusal: quote(refusal),
        });
    }
    let text = match message.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        Some(Value::Null) | None => String::new(),
        Some(_) => return Err(malformed("choices[0].message.content is not text")),
    };
    if text.trim().is_empty() {
        return Err(SummarizerError::Empty {
            url: url.to_owned(),
        });
    }
    Ok(text)
}

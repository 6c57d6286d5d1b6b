//! The Anthropic Messages API: `POST {base_url}/v1/messages` with `system` and one user
//! message; the answer is the concatenated `text` blocks of `content`.
//!
//! Headers: `x-api-key`, `anthropic-version` ([`ANTHROPIC_VERSION`]), `content-type`.

use serde_json::{json, Value};
use ureq::Agent;

use super::http::{agent, post_json, quote};
use super::{Llm, LlmEndpoint, LlmRequest, SummarizerError};

/// The `anthropic-version` header sent with every request.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// A Messages API client.
#[derive(Debug)]
pub struct AnthropicMessages {
    endpoint: LlmEndpoint,
    url: String,
    agent: Agent,
}

impl AnthropicMessages {
    /// A client for `endpoint` (its `api` field is not read).
    pub fn new(endpoint: LlmEndpoint) -> Self {
        let url = format!("{}/v1/messages", endpoint.base_url.trim_end_matches('/'));
        let agent = agent(&endpoint.http);
        AnthropicMessages {
            endpoint,
            url,
            agent,
        }
    }
}

impl Llm for AnthropicMessages {
    fn complete(&self, request: &LlmRequest<'_>) -> Result<String, SummarizerError> {
        let mut body = json!({
            "model": self.endpoint.model,
            "max_tokens": request.max_tokens,
            "system": request.system,
            "messages": [{"role": "user", "content": request.prompt}],
        });
        if let Some(conversation) = ctxkit_core::compaction::cached_conversation(request.messages) {
            if let (Some(fields), Value::Object(conversation)) =
                (body.as_object_mut(), conversation)
            {
                fields.extend(conversation);
            }
        }
        let mut headers = vec![("anthropic-version", ANTHROPIC_VERSION)];
        if let Some(key) = &self.endpoint.api_key {
            headers.push(("x-api-key", key.as_str()));
        }
        let response = post_json(
            &self.agent,
            &self.url,
            &headers,
            &body,
            &self.endpoint.http,
            request.deadline,
        )?;
        answer_text(&self.url, &response)
    }

    fn deadline(&self) -> Option<std::time::Duration> {
        Some(self.endpoint.http.deadline)
    }

    fn describe(&self) -> String {
        format!("anthropic {} at {}", self.endpoint.model, self.url)
    }
}

/// The text blocks of `content`, joined.
pub(crate) fn answer_text(url: &str, response: &Value) -> Result<String, SummarizerError> {
    let Some(blocks) = response.get("content").and_then(Value::as_array) else {
        return Err(SummarizerError::Malformed {
            url: url.to_owned(),
            problem: format!("no content array: {}", quote(&response.to_string())),
        });
    };
    if response.get("stop_reason").and_then(Value::as_str) == Some("refusal") {
        return Err(SummarizerError::Refused {
            url: url.to_owned(),
            refusal: "stop_reason \"refusal\"".to_owned(),
        });
    }
    let text: String = blocks
        .iter()
        .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|block| block.get("text").and_then(Value::as_str))
        .collect();
    if text.trim().is_empty() {
        return Err(SummarizerError::Empty {
            url: url.to_owned(),
        });
    }
    Ok(text)
}

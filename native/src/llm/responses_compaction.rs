//! OpenAI Responses compaction (`openai-responses-compaction`) as a summarizer.
//!
//! The request is `POST {base_url}/responses` with `store: false` and the turn's own request
//! rendered as Responses items (the core's [`ctxkit_core::wire::to_responses`]: a leading
//! system prompt becomes `instructions`), the previous checkpoint's compaction item first where
//! the agent's Responses views had it ([`LlmRequest::responses_input`]), without ctxkit's
//! summary instruction (the server writes its own summary), then `{"type":
//! "compaction_trigger"}` as the last input item, as the API requires. Without a cache-safe
//! conversation (a fresh summary request) the summary request's `system` (as `instructions`)
//! and prompt (as a user message) come before the trigger.
//!
//! The answer is read by the core ([`parse_responses_compaction_answer`], shared with the JS
//! engine): its `output` must hold exactly one item, of type `compaction` with a non-empty
//! `encrypted_content` string. The item is opaque: it is kept as the JSON text it arrived as,
//! byte for byte, wrapped by [`ctxkit_core::compaction::responses_compaction_block`], and sent
//! back only in Responses views. The checkpoint's plaintext summary, read by every
//! other view, is the extractive one, made as the fallback makes it; the answer's `text` is
//! therefore empty and the engine does not read it. `usage` (`input_tokens`,
//! `output_tokens`) is reported.
//!
//! Everything else is a [`SummarizerError`] naming what was wrong: a `refusal` output item or
//! content part (refused), no `output` array, no item or more than one, an item of another
//! type, an item without `encrypted_content` (malformed); the engine then falls back to the
//! extractive summary with that reason as a warning. Memory extraction, which needs plain
//! text, is an ordinary Chat Completions call ([`super::OpenAiChat`]) to the same endpoint.

use serde_json::{json, Value};
use ureq::Agent;

use super::anthropic_compaction::translate;
use super::http::{agent, post_text};
use super::{Llm, LlmEndpoint, LlmRequest, OpenAiChat, SummarizerError, SummaryAnswer};
use ctxkit_core::compaction::{parse_responses_compaction_answer, responses_compaction_body};

/// A summarizer that asks OpenAI Responses compaction.
#[derive(Debug)]
pub struct ResponsesCompaction {
    endpoint: LlmEndpoint,
    url: String,
    agent: Agent,
    /// Plain completions (memory extraction).
    chat: OpenAiChat,
}

impl ResponsesCompaction {
    /// A client for `endpoint` (its `api` field is not read).
    pub fn new(endpoint: LlmEndpoint) -> Self {
        let url = format!("{}/responses", endpoint.base_url.trim_end_matches('/'));
        let agent = agent(&endpoint.http);
        let chat = OpenAiChat::new(endpoint.clone());
        ResponsesCompaction {
            endpoint,
            url,
            agent,
            chat,
        }
    }

    /// The request body for `request` (see the module doc): the core's, with the model.
    fn body(&self, request: &LlmRequest<'_>) -> Value {
        let mut body = responses_compaction_body(
            request.system,
            request.prompt,
            request.messages,
            request.responses_input,
        );
        if let Some(fields) = body.as_object_mut() {
            fields.insert("model".to_owned(), json!(self.endpoint.model));
        }
        body
    }
}

impl Llm for ResponsesCompaction {
    fn complete(&self, request: &LlmRequest<'_>) -> Result<String, SummarizerError> {
        self.chat.complete(request)
    }

    fn summarize(&self, request: &LlmRequest<'_>) -> Result<SummaryAnswer, SummarizerError> {
        let authorization = self
            .endpoint
            .api_key
            .as_ref()
            .map(|key| format!("Bearer {key}"));
        let headers: Vec<(&str, &str)> = authorization
            .iter()
            .map(|value| ("authorization", value.as_str()))
            .collect();
        let body = self.body(request);
        let text = post_text(
            &self.agent,
            &self.url,
            &headers,
            &body,
            &self.endpoint.http,
            request.deadline,
        )?;
        compaction_answer(&self.url, &text)
    }

    fn deadline(&self) -> Option<std::time::Duration> {
        Some(self.endpoint.http.deadline)
    }

    fn describe(&self) -> String {
        format!(
            "openai-responses-compaction {} at {}",
            self.endpoint.model, self.url
        )
    }
}

/// The kept item of a compaction answer `text` from `url`, or why there is none (the core's
/// [`parse_responses_compaction_answer`], its problem as a [`SummarizerError`]).
pub(crate) fn compaction_answer(url: &str, text: &str) -> Result<SummaryAnswer, SummarizerError> {
    translate(url, parse_responses_compaction_answer(text))
}

#[cfg(test)]
mod tests {
    //! What an answer may hold is the core's to say (`responses_answer.rs`, with its cases);
    //! the translation is `anthropic_compaction::translate`'s. Here only the wiring.
    use super::*;
    use ctxkit_core::compaction::RESPONSES_ITEM_PREFIX;

    const URL: &str = "http://127.0.0.1:1/responses";

    #[test]
    fn the_responses_parser_is_the_one_wired_in() {
        let item = r#"{"type":"compaction", "id":"cmp_1","encrypted_content":"gAAA=="}"#;
        let text =
            format!(r#"{{"output":[{item}],"usage":{{"input_tokens":120,"output_tokens":30}}}}"#);
        let answer = compaction_answer(URL, &text).unwrap();
        assert_eq!(
            answer.compaction_block,
            Some(format!("{RESPONSES_ITEM_PREFIX}{item}}}"))
        );
        let error = compaction_answer(URL, r#"{"output":[]}"#).unwrap_err();
        assert!(
            matches!(error, SummarizerError::Malformed { .. }),
            "{error}"
        );
        assert!(error.to_string().contains("0 output items"), "{error}");
    }
}

//! Anthropic's on-demand server compaction (beta `compact-2026-09-04`) as a summarizer.
//!
//! The request is the turn's own Anthropic request, as a cache-safe summary request carries it
//! (`system` and `messages` with their cache breakpoints, so the agent's prompt cache is read;
//! the previous checkpoint's block first where the agent's Anthropic views had it:
//! [`LlmRequest::anthropic_messages`]),
//! plus `"compaction": {"type": "summarize"}` and the header `anthropic-beta:`
//! [`COMPACTION_BETA`]; never `context_management`, which the API does not combine with it.
//! Without a cache-safe conversation (a fresh summary request) the summary request's own
//! `system` and prompt are sent. ctxkit's prompt is not the server's: the server writes its
//! own summary of what it is sent.
//!
//! The answer must have `stop_reason: "compaction"` and exactly one content block of type
//! `compaction`. Its readable text is read from the block's `content` field, as Anthropic's
//! SDKs name it; the rest of the block (the opaque field that carries its signature, named
//! `signature` or `encrypted_content` depending on the source; no Anthropic reference page
//! for this beta was found) is not interpreted: the whole block is kept as the JSON text it
//! arrived as, byte for byte, and sent back only in Anthropic views. `usage` may list
//! `iterations` (one per server-side step): their tokens are summed.
//!
//! Everything else is a [`SummarizerError`] naming what was wrong: `stop_reason: "refusal"`
//! (refused), another stop reason, no block or more than one, a block of another type or
//! without text (malformed), blank text (empty); the engine then falls back to the extractive
//! summary with that reason as a warning. Memory extraction, which needs plain text, is an
//! ordinary Messages call ([`super::AnthropicMessages`]) to the same endpoint.
//!
//! The body and the answer's reading are the core's (`ctxkit_core::compaction::compaction_body`
//! and `parse_compaction_answer`, shared with the JS engine); this shell sends and translates.

use ctxkit_core::compaction::{
    compaction_body, parse_compaction_answer, CompactionAnswer, CompactionProblem,
};
use serde_json::Value;
use ureq::Agent;

use super::anthropic::ANTHROPIC_VERSION;
use super::http::{agent, post_text};
use super::{
    AnthropicMessages, Llm, LlmEndpoint, LlmRequest, SummarizerError, SummaryAnswer, SummaryUsage,
};

/// The `anthropic-beta` header value of a compaction request.
pub use ctxkit_core::compaction::COMPACTION_BETA;

/// A summarizer that asks Anthropic's server compaction.
#[derive(Debug)]
pub struct AnthropicCompaction {
    endpoint: LlmEndpoint,
    url: String,
    agent: Agent,
    /// Plain completions (memory extraction).
    messages: AnthropicMessages,
}

impl AnthropicCompaction {
    /// A client for `endpoint` (its `api` field is not read).
    pub fn new(endpoint: LlmEndpoint) -> Self {
        let url = format!("{}/v1/messages", endpoint.base_url.trim_end_matches('/'));
        let agent = agent(&endpoint.http);
        let messages = AnthropicMessages::new(endpoint.clone());
        AnthropicCompaction {
            endpoint,
            url,
            agent,
            messages,
        }
    }

    /// The request body for `request` (see the module doc): the core's, with the model.
    fn body(&self, request: &LlmRequest<'_>) -> Value {
        let mut body = compaction_body(
            request.system,
            request.prompt,
            request.anthropic_messages.unwrap_or(request.messages),
            request.max_tokens,
        );
        if let Some(fields) = body.as_object_mut() {
            fields.insert(
                "model".to_owned(),
                Value::from(self.endpoint.model.as_str()),
            );
        }
        body
    }
}

impl Llm for AnthropicCompaction {
    fn complete(&self, request: &LlmRequest<'_>) -> Result<String, SummarizerError> {
        self.messages.complete(request)
    }

    fn summarize(&self, request: &LlmRequest<'_>) -> Result<SummaryAnswer, SummarizerError> {
        let mut headers = vec![
            ("anthropic-version", ANTHROPIC_VERSION),
            ("anthropic-beta", COMPACTION_BETA),
        ];
        if let Some(key) = &self.endpoint.api_key {
            headers.push(("x-api-key", key.as_str()));
        }
        let body = self.body(request);
        let text = post_text(&self.agent, &self.url, &headers, &body, &self.endpoint.http)?;
        compaction_answer(&self.url, &text)
    }

    fn describe(&self) -> String {
        format!(
            "anthropic-compaction {} at {}",
            self.endpoint.model, self.url
        )
    }
}

/// The summary and the kept block of a compaction answer `text` from `url`, or why there is
/// none (the core's [`parse_compaction_answer`], its problem as a [`SummarizerError`]).
pub(crate) fn compaction_answer(url: &str, text: &str) -> Result<SummaryAnswer, SummarizerError> {
    translate(url, parse_compaction_answer(text))
}

/// A compaction answer the core read (Anthropic's or the Responses one) from `url`, as the
/// summarizer's answer, or its problem as a [`SummarizerError`].
pub(crate) fn translate(
    url: &str,
    parsed: Result<CompactionAnswer, CompactionProblem>,
) -> Result<SummaryAnswer, SummarizerError> {
    match parsed {
        Ok(answer) => Ok(SummaryAnswer {
            text: answer.text,
            compaction_block: Some(answer.block),
            usage: answer.usage.map(|usage| SummaryUsage {
                input_tokens: usage.input_tokens,
                output_tokens: usage.output_tokens,
                iterations: usage.iterations,
            }),
        }),
        Err(CompactionProblem::Refused(refusal)) => Err(SummarizerError::Refused {
            url: url.to_owned(),
            refusal,
        }),
        Err(CompactionProblem::Malformed(problem)) => Err(SummarizerError::Malformed {
            url: url.to_owned(),
            problem,
        }),
        Err(CompactionProblem::Empty) => Err(SummarizerError::Empty {
            url: url.to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "http://127.0.0.1:1/v1/messages";

    #[test]
    fn the_block_is_kept_byte_for_byte_and_iterations_are_summed() {
        let block = r#"{"type":"compaction","content":"Goal: ship\nit","signature":"c2ln"}"#;
        let text = format!(
            r#"{{"stop_reason":"compaction","content":[{block}],"usage":{{"input_tokens":9,
            "output_tokens":9,"iterations":[{{"input_tokens":100,"output_tokens":20}},
            {{"input_tokens":40,"output_tokens":5}}]}}}}"#
        );
        let answer = compaction_answer(URL, &text).unwrap();
        assert_eq!(answer.text, "Goal: ship\nit");
        assert_eq!(answer.compaction_block.as_deref(), Some(block));
        let usage = answer.usage.unwrap();
        assert_eq!((usage.input_tokens, usage.output_tokens), (140, 25));
        assert_eq!(usage.iterations, 2);
    }

    #[test]
    fn refusals_and_malformed_answers_say_why() {
        let refusal = r#"{"stop_reason":"refusal","content":[]}"#;
        assert!(matches!(
            compaction_answer(URL, refusal),
            Err(SummarizerError::Refused { .. })
        ));
        let cases = [
            (r#"{"stop_reason":"end_turn","content":[]}"#, "\"end_turn\""),
            (
                r#"{"stop_reason":"compaction","content":[]}"#,
                "0 content blocks",
            ),
            (
                r#"{"stop_reason":"compaction","content":[{"type":"text","text":"x"}]}"#,
                "of type \"text\"",
            ),
            (
                r#"{"stop_reason":"compaction","content":[{"type":"compaction","signature":"s"}]}"#,
                "no text in \"content\"",
            ),
            ("not json", "not a Messages answer"),
        ];
        for (text, expected) in cases {
            let error = compaction_answer(URL, text).unwrap_err();
            assert!(
                matches!(error, SummarizerError::Malformed { .. }),
                "{text}: {error}"
            );
            assert!(error.to_string().contains(expected), "{text}: {error}");
        }
        let blank =
            r#"{"stop_reason":"compaction","content":[{"type":"compaction","content":" "}]}"#;
        assert!(matches!(
            compaction_answer(URL, blank),
            Err(SummarizerError::Empty { .. })
        ));
    }
}

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
    //! What an answer may hold is the core's to say (`server_compaction.rs`,
    //! `responses_answer.rs`, each with its cases); here only its translation.
    use super::*;
    use ctxkit_core::compaction::CompactionUsage;

    const URL: &str = "http://127.0.0.1:1/v1/messages";

    #[test]
    fn an_answer_keeps_its_text_block_and_usage() {
        let parsed = Ok(CompactionAnswer {
            text: "Goal: ship".to_owned(),
            block: r#"{"type":"compaction"}"#.to_owned(),
            usage: Some(CompactionUsage {
                input_tokens: 140,
                output_tokens: 25,
                iterations: 2,
            }),
        });
        let answer = translate(URL, parsed).unwrap();
        assert_eq!(answer.text, "Goal: ship");
        assert_eq!(
            answer.compaction_block.as_deref(),
            Some(r#"{"type":"compaction"}"#)
        );
        let usage = answer.usage.unwrap();
        assert_eq!(
            (usage.input_tokens, usage.output_tokens, usage.iterations),
            (140, 25, 2)
        );
    }

    #[test]
    fn each_problem_is_its_summarizer_error_naming_the_url() {
        let refused = translate(URL, Err(CompactionProblem::Refused("no".to_owned())));
        assert!(
            matches!(&refused, Err(SummarizerError::Refused { refusal, .. }) if refusal == "no")
        );
        let malformed = translate(
            URL,
            Err(CompactionProblem::Malformed("0 blocks".to_owned())),
        );
        assert!(
            matches!(&malformed, Err(SummarizerError::Malformed { problem, .. }) if problem == "0 blocks")
        );
        let empty = translate(URL, Err(CompactionProblem::Empty));
        assert!(matches!(&empty, Err(SummarizerError::Empty { .. })));
        for error in [refused, malformed, empty] {
            assert!(error.unwrap_err().to_string().contains(URL));
        }
        // The real parser is the one wired in: a refusal from the wire is a refusal.
        assert!(matches!(
            compaction_answer(URL, r#"{"stop_reason":"refusal","content":[]}"#),
            Err(SummarizerError::Refused { .. })
        ));
    }
}

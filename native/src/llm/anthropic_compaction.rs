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

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use ureq::Agent;

use super::anthropic::{cached_conversation, ANTHROPIC_VERSION};
use super::http::{agent, post_text, quote};
use super::{
    AnthropicMessages, Llm, LlmEndpoint, LlmRequest, SummarizerError, SummaryAnswer, SummaryUsage,
};

/// The `anthropic-beta` header value of a compaction request.
pub const COMPACTION_BETA: &str = "compact-2026-09-04";

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

    /// The request body for `request` (see the module doc).
    fn body(&self, request: &LlmRequest<'_>) -> Value {
        let mut body = json!({
            "model": self.endpoint.model,
            "max_tokens": request.max_tokens,
            "system": request.system,
            "messages": [{"role": "user", "content": request.prompt}],
        });
        if let (Some(fields), Some(Value::Object(conversation))) = (
            body.as_object_mut(),
            cached_conversation(request.anthropic_messages.unwrap_or(request.messages)),
        ) {
            fields.remove("system");
            fields.extend(conversation);
        }
        if let Some(fields) = body.as_object_mut() {
            fields.insert("compaction".to_owned(), json!({"type": "summarize"}));
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

/// The parts of a compaction answer read; the block stays raw.
#[derive(Deserialize)]
struct Answer<'a> {
    #[serde(borrow)]
    content: Option<Vec<&'a RawValue>>,
    stop_reason: Option<String>,
    usage: Option<Usage>,
}

#[derive(Deserialize, Default)]
struct Usage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    iterations: Option<Vec<Usage>>,
}

/// The summary and the kept block of a compaction answer `text` from `url`, or why there is
/// none (see the module doc).
pub(crate) fn compaction_answer(url: &str, text: &str) -> Result<SummaryAnswer, SummarizerError> {
    let malformed = |problem: String| SummarizerError::Malformed {
        url: url.to_owned(),
        problem,
    };
    let answer: Answer<'_> = serde_json::from_str(text)
        .map_err(|error| malformed(format!("not a Messages answer ({error}): {}", quote(text))))?;
    match answer.stop_reason.as_deref() {
        Some("compaction") => {}
        Some("refusal") => {
            return Err(SummarizerError::Refused {
                url: url.to_owned(),
                refusal: "stop_reason \"refusal\" instead of \"compaction\"".to_owned(),
            })
        }
        other => {
            return Err(malformed(format!(
                "stop_reason {} instead of \"compaction\"",
                other.map_or("missing".to_owned(), |reason| format!("{reason:?}"))
            )))
        }
    }
    let blocks = answer
        .content
        .ok_or_else(|| malformed(format!("no content array: {}", quote(text))))?;
    let [block] = blocks.as_slice() else {
        return Err(malformed(format!(
            "{} content blocks where one compaction block was expected",
            blocks.len()
        )));
    };
    let raw = block.get();
    let parsed: Value = serde_json::from_str(raw)
        .map_err(|error| malformed(format!("unreadable content block ({error})")))?;
    let kind = parsed.get("type").and_then(Value::as_str);
    if kind != Some("compaction") {
        return Err(malformed(format!(
            "a content block of type {} where a compaction block was expected: {}",
            kind.map_or("(none)".to_owned(), |kind| format!("{kind:?}")),
            quote(raw)
        )));
    }
    let Some(summary) = parsed.get("content").and_then(Value::as_str) else {
        return Err(malformed(format!(
            "the compaction block has no text in \"content\": {}",
            quote(raw)
        )));
    };
    if summary.trim().is_empty() {
        return Err(SummarizerError::Empty {
            url: url.to_owned(),
        });
    }
    Ok(SummaryAnswer {
        text: summary.to_owned(),
        compaction_block: Some(raw.to_owned()),
        usage: answer.usage.map(|usage| usage.summed()),
    })
}

impl Usage {
    /// The tokens billed: the iterations' sum when the answer lists them, else the totals.
    fn summed(self) -> SummaryUsage {
        match self.iterations {
            Some(iterations) if !iterations.is_empty() => SummaryUsage {
                input_tokens: iterations.iter().map(|step| step.input_tokens).sum(),
                output_tokens: iterations.iter().map(|step| step.output_tokens).sum(),
                iterations: iterations.len(),
            },
            _ => SummaryUsage {
                input_tokens: self.input_tokens,
                output_tokens: self.output_tokens,
                iterations: 1,
            },
        }
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

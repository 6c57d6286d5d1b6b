//! Anthropic's on-demand server compaction (beta `compact-2026-09-04`): the request and the
//! answer, as data, for every shell (the native `anthropic-compaction` summarizer and the JS
//! engine's `summarize` callback); and the request of OpenAI Responses compaction
//! ([`responses_compaction_body`], whose answer the native `openai-responses-compaction` reads).
//!
//! The request is the turn's own Anthropic request, as a cache-safe summary request carries it
//! (`system` and `messages` with their cache breakpoints, so the agent's prompt cache is read),
//! plus `"compaction": {"type": "summarize"}`, sent with the header `anthropic-beta:`
//! [`COMPACTION_BETA`]; never `context_management`, which the API does not combine with it.
//! Without a cache-safe conversation (a fresh summary request) the summary request's own
//! `system` and prompt are sent ([`compaction_body`]).
//!
//! The answer must have `stop_reason: "compaction"` and exactly one content block of type
//! `compaction`, whose readable text is its `content` field; the whole block is kept as the
//! JSON text it arrived as, byte for byte ([`parse_compaction_answer`]). `usage` may list
//! `iterations` (one per server-side step): their tokens are summed. Anything else is a
//! [`CompactionProblem`] naming what was wrong, and the caller falls back with it.

use serde_json::{json, Value};

use crate::compaction::checkpoint::{
    anthropic_summary_message, summary_message, RESPONSES_ITEM_PREFIX,
};
use crate::compaction::{Checkpoint, SummaryMethod};
use crate::model::{Message, Role};
use crate::text::{head_bytes, single_line};
use crate::wire::breakpoints::place_breakpoints;
use crate::wire::{render_messages_cached, WireFormat};

/// The `anthropic-beta` header value of a compaction request.
pub const COMPACTION_BETA: &str = "compact-2026-09-04";

/// How much of an unreadable answer a problem quotes.
const QUOTE_BYTES: usize = 300;

/// A cache-safe request's conversation as Anthropic's `{system, messages}`, with cache
/// breakpoints on the system prompt and on the end of the history before the instruction
/// (where the agent's own requests wrote them), or `None` for a fresh request, or one
/// Anthropic cannot carry (then the fresh prompt is sent).
pub fn cached_conversation(messages: &[Message]) -> Option<Value> {
    let has_system = messages.first()?.role == Role::System;
    let conversation = messages.get(usize::from(has_system)..)?;
    let history = conversation.get(..conversation.len().checked_sub(1)?)?;
    let breakpoints = place_breakpoints(history, has_system, false, 0);
    render_messages_cached(messages, WireFormat::Anthropic, &breakpoints).ok()
}

/// The body of a compaction request without `model` (the caller's): `max_tokens`, the
/// conversation `messages` rendered by [`cached_conversation`] (or, when it cannot be, `system`
/// and `prompt` as one user message), and `compaction`.
pub fn compaction_body(system: &str, prompt: &str, messages: &[Message], max_tokens: u64) -> Value {
    let mut body = json!({
        "max_tokens": max_tokens,
        "system": system,
        "messages": [{"role": "user", "content": prompt}],
    });
    if let (Some(fields), Some(Value::Object(conversation))) =
        (body.as_object_mut(), cached_conversation(messages))
    {
        fields.remove("system");
        fields.extend(conversation);
    }
    if let Some(fields) = body.as_object_mut() {
        fields.insert("compaction".to_owned(), json!({"type": "summarize"}));
    }
    body
}

/// The body of an OpenAI Responses compaction request without `model` (the caller's): the
/// turn's own request as Responses items (`rendered`, the agent's Responses view with the
/// previous checkpoint's compaction item first, when the caller has it; else the cache-safe
/// conversation `messages` without its last message, ctxkit's instruction, since the server
/// writes its own summary; else `system` as `instructions` and `prompt` as one user message),
/// then `{"type": "compaction_trigger"}` as the last input item, and `store: false`.
pub fn responses_compaction_body(
    system: &str,
    prompt: &str,
    messages: &[Message],
    rendered: Option<&Value>,
) -> Value {
    let mut body = match (rendered, messages.split_last()) {
        (Some(rendered), _) => rendered.clone(),
        (None, Some((_instruction, conversation))) if !conversation.is_empty() => {
            crate::wire::to_responses(conversation)
        }
        _ => json!({
            "instructions": system,
            "input": [{"role": "user", "content": [{"type": "input_text", "text": prompt}]}],
        }),
    };
    if let Some(fields) = body.as_object_mut() {
        if let Some(Value::Array(input)) = fields.get_mut("input") {
            input.push(json!({"type": "compaction_trigger"}));
        }
        fields.insert("store".to_owned(), json!(false));
    }
    body
}

/// `messages` (a cache-safe summary request's conversation) as the agent's Anthropic requests
/// sent them: `latest`'s compaction block in place of its summary message, or `None` when that
/// checkpoint has no block or its summary message is not there.
pub fn anthropic_conversation(
    messages: &[Message],
    latest: Option<&Checkpoint>,
) -> Option<Vec<Message>> {
    let checkpoint = latest?;
    checkpoint.compaction_block.as_ref()?;
    let plain = summary_message(checkpoint);
    let index = messages.iter().position(|message| *message == plain)?;
    let mut anthropic = messages.to_vec();
    *anthropic.get_mut(index)? = anthropic_summary_message(checkpoint)?;
    Some(anthropic)
}

/// The checkpoint a view was planned from, to find the compaction block it sends: `pending`
/// (this turn's new checkpoint) when its `through_seq` is the view's (`through`, the view
/// stats' `checkpoint_through`), else the latest of the session's `stored` checkpoints with it.
pub fn view_checkpoint<'a>(
    through: u64,
    pending: Option<&'a Checkpoint>,
    stored: &'a [Checkpoint],
) -> Option<&'a Checkpoint> {
    pending
        .filter(|checkpoint| checkpoint.through_seq == through)
        .or_else(|| {
            stored
                .iter()
                .rev()
                .find(|checkpoint| checkpoint.through_seq == through)
        })
}

/// Puts an answer's compaction `block` beside `checkpoint` when that checkpoint is the
/// answer's, over the same messages (`through_seq`): for an Anthropic block, an LLM checkpoint
/// whose summary is the answer's `text` (with any pinned facts appended); for a Responses item
/// ([`super::checkpoint::responses_compaction_block`]: opaque, so the plaintext record is the extractive
/// summary), an extractive checkpoint. True when kept; a refused or stale answer's block is
/// dropped.
pub fn keep_compaction_block(
    checkpoint: &mut Checkpoint,
    through_seq: u64,
    text: &str,
    block: String,
) -> bool {
    let same_messages = checkpoint.through_seq == through_seq;
    let belongs = if block.starts_with(RESPONSES_ITEM_PREFIX) {
        same_messages && checkpoint.method == SummaryMethod::Extractive
    } else {
        // The summary is the log's Goal, then the answer's text (its goal headings renamed:
        // `owned_goal`), then what both left out.
        same_messages
            && checkpoint.method == SummaryMethod::Llm
            && checkpoint
                .summary
                .contains(super::owned_goal::model_body(text).as_str())
    };
    if belongs {
        checkpoint.compaction_block = Some(block);
    }
    belongs
}

/// The summary and the kept block of a compaction answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionAnswer {
    /// The block's readable text: the checkpoint's summary (held to the pinned facts).
    pub text: String,
    /// The whole `compaction` block, as the JSON text it arrived as.
    pub block: String,
    /// The tokens billed, when the answer said.
    pub usage: Option<CompactionUsage>,
}

/// The tokens a compaction call was billed for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactionUsage {
    /// Input tokens (summed over the server's iterations, when it listed them).
    pub input_tokens: u64,
    /// Output tokens (summed likewise).
    pub output_tokens: u64,
    /// How many iterations the server reported (1 when it listed none).
    pub iterations: usize,
}

/// Why a compaction answer gives no summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompactionProblem {
    /// `stop_reason: "refusal"`; the text says so.
    Refused(String),
    /// Not the answer's shape; the text says what was wrong.
    Malformed(String),
    /// The block's text is blank.
    Empty,
}

impl std::fmt::Display for CompactionProblem {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CompactionProblem::Refused(why) => write!(formatter, "refused: {why}"),
            CompactionProblem::Malformed(why) => write!(formatter, "malformed answer: {why}"),
            CompactionProblem::Empty => write!(formatter, "the compaction block's text is blank"),
        }
    }
}

/// `text` cut to a one-line quote.
pub(super) fn quote(text: &str) -> String {
    let head = head_bytes(text, QUOTE_BYTES);
    let mut quoted = single_line(head);
    if head.len() < text.len() {
        quoted.push('…');
    }
    quoted
}

/// The raw text of the one item of the array under the top-level key `key` (the last such key,
/// as serde_json reads duplicates) of the JSON object `text`, byte for byte. `text` must be
/// valid JSON (it was parsed first); `None` when there is no such array or it is empty.
pub(super) fn raw_item<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    let bytes = text.as_bytes();
    let (mut depth, mut index) = (0usize, 0usize);
    let (mut last_string, mut current_key) = (None, None);
    let (mut start, mut found) = (None, None);
    while let Some(&byte) = bytes.get(index) {
        match byte {
            b'"' => {
                let open = index + 1;
                index = open;
                while let Some(&inner) = bytes.get(index) {
                    match inner {
                        b'\\' => index += 2,
                        b'"' => break,
                        _ => index += 1,
                    }
                }
                if depth == 1 {
                    last_string = text.get(open..index);
                }
            }
            b':' if depth == 1 => current_key = last_string.take(),
            b',' if depth == 1 => current_key = None,
            b'{' | b'[' => {
                if byte == b'[' && depth == 1 && current_key == Some(key) {
                    start = Some(index + 1);
                }
                depth += 1;
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if byte == b']' && depth == 1 {
                    if let Some(open) = start.take() {
                        found = text.get(open..index).map(str::trim);
                    }
                }
            }
            _ => {}
        }
        index += 1;
    }
    found.filter(|item| !item.is_empty())
}

/// The summary and the kept block of a compaction answer `text` (the response body), or why
/// there is none (see the module doc).
pub fn parse_compaction_answer(
    text: &str,
) -> std::result::Result<CompactionAnswer, CompactionProblem> {
    use CompactionProblem::Malformed;
    // Read as a Value (the module has that reader already): no deserializer of its own.
    let answer: Value = serde_json::from_str(text)
        .map_err(|error| Malformed(format!("not a Messages answer ({error}): {}", quote(text))))?;
    match answer.get("stop_reason").and_then(Value::as_str) {
        Some("compaction") => {}
        Some("refusal") => {
            return Err(CompactionProblem::Refused(
                "stop_reason \"refusal\" instead of \"compaction\"".to_owned(),
            ))
        }
        other => {
            return Err(Malformed(format!(
                "stop_reason {} instead of \"compaction\"",
                other.map_or("missing".to_owned(), |reason| format!("{reason:?}"))
            )))
        }
    }
    let blocks = answer
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| Malformed(format!("no content array: {}", quote(text))))?;
    let [block] = blocks.as_slice() else {
        return Err(Malformed(format!(
            "{} content blocks where one compaction block was expected",
            blocks.len()
        )));
    };
    let parsed = block;
    let raw = raw_item(text, "content")
        .filter(|raw| serde_json::from_str::<Value>(raw).ok().as_ref() == Some(parsed))
        .ok_or_else(|| Malformed("the content block's text could not be found".to_owned()))?;
    let kind = parsed.get("type").and_then(Value::as_str);
    if kind != Some("compaction") {
        return Err(Malformed(format!(
            "a content block of type {} where a compaction block was expected: {}",
            kind.map_or("(none)".to_owned(), |kind| format!("{kind:?}")),
            quote(raw)
        )));
    }
    let Some(summary) = parsed.get("content").and_then(Value::as_str) else {
        return Err(Malformed(format!(
            "the compaction block has no text in \"content\": {}",
            quote(raw)
        )));
    };
    if summary.trim().is_empty() {
        return Err(CompactionProblem::Empty);
    }
    Ok(CompactionAnswer {
        text: summary.to_owned(),
        block: raw.to_owned(),
        usage: answer.get("usage").map(summed_usage),
    })
}

/// The tokens billed: the iterations' sum when the answer lists them, else the totals.
fn summed_usage(usage: &Value) -> CompactionUsage {
    let tokens = |step: &Value, field: &str| step.get(field).and_then(Value::as_u64).unwrap_or(0);
    match usage.get("iterations").and_then(Value::as_array) {
        Some(iterations) if !iterations.is_empty() => CompactionUsage {
            input_tokens: iterations
                .iter()
                .map(|step| tokens(step, "input_tokens"))
                .sum(),
            output_tokens: iterations
                .iter()
                .map(|step| tokens(step, "output_tokens"))
                .sum(),
            iterations: iterations.len(),
        },
        _ => CompactionUsage {
            input_tokens: tokens(usage, "input_tokens"),
            output_tokens: tokens(usage, "output_tokens"),
            iterations: 1,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_block_is_kept_byte_for_byte_and_iterations_are_summed() {
        let block = r#"{"type":"compaction","content":"Goal: ship\nit","signature":"c2ln"}"#;
        let text = format!(
            r#"{{"stop_reason":"compaction","content":[{block}],"usage":{{"input_tokens":9,
            "output_tokens":9,"iterations":[{{"input_tokens":100,"output_tokens":20}},
            {{"input_tokens":40,"output_tokens":5}}]}}}}"#
        );
        let answer = parse_compaction_answer(&text).unwrap();
        assert_eq!(answer.text, "Goal: ship\nit");
        assert_eq!(answer.block, block);
        // Spacing, escapes and a nested `content` array elsewhere do not move it.
        let spaced = r#"{"type": "compaction",  "content": "a \"]\" b", "x": [[1]]}"#;
        let text = format!(
            r#"{{"usage":{{"content":[9]}}, "stop_reason":"compaction","content":[ {spaced}
            ],"z":[]}}"#
        );
        assert_eq!(parse_compaction_answer(&text).unwrap().block, spaced);
        let usage = answer.usage.unwrap();
        assert_eq!((usage.input_tokens, usage.output_tokens), (140, 25));
        assert_eq!(usage.iterations, 2);
    }

    #[test]
    fn a_block_is_kept_only_beside_the_checkpoint_of_its_answer() {
        let checkpoint = |method| Checkpoint {
            through_seq: 7,
            summary: "Goal: ship it\n\nPinned: src/a.rs".into(),
            method,
            active_tasks: None,
            tokens: 10,
            made_at_turn: 3,
            pinned: Vec::new(),
            dropped_facts: Default::default(),
            compaction_block: None,
            restore: None,
        };
        let anthropic = r#"{"type":"compaction","content":"Goal: ship it"}"#.to_owned();
        let item =
            crate::compaction::checkpoint::responses_compaction_block(r#"{"type":"compaction"}"#);
        // An Anthropic block: the LLM checkpoint over the same messages, whose summary is the
        // answer's text with pinned facts appended.
        let mut llm = checkpoint(SummaryMethod::Llm);
        assert!(keep_compaction_block(
            &mut llm,
            7,
            "Goal: ship it",
            anthropic.clone()
        ));
        assert_eq!(llm.compaction_block.as_deref(), Some(anthropic.as_str()));
        for (mut made, through, text) in [
            (checkpoint(SummaryMethod::Llm), 6, "Goal: ship it"),
            (checkpoint(SummaryMethod::Llm), 7, "Another summary"),
            (checkpoint(SummaryMethod::Extractive), 7, "Goal: ship it"),
        ] {
            assert!(!keep_compaction_block(
                &mut made,
                through,
                text,
                anthropic.clone()
            ));
            assert_eq!(made.compaction_block, None);
        }
        // The view's checkpoint: this turn's when it is the view's, else the latest stored.
        let (mut older, mut newer) = (
            checkpoint(SummaryMethod::Llm),
            checkpoint(SummaryMethod::Llm),
        );
        (older.made_at_turn, newer.made_at_turn) = (1, 2);
        let stored = [older, newer.clone()];
        let pending = checkpoint(SummaryMethod::Extractive);
        assert_eq!(view_checkpoint(7, Some(&pending), &stored), Some(&pending));
        assert_eq!(view_checkpoint(7, None, &stored), Some(&newer));
        newer.through_seq = 9;
        assert_eq!(
            view_checkpoint(9, Some(&pending), &[newer.clone()]),
            Some(&newer)
        );
        assert_eq!(view_checkpoint(8, Some(&pending), &stored), None);
        // A Responses item: opaque, its plaintext record the extractive summary.
        let mut extractive = checkpoint(SummaryMethod::Extractive);
        assert!(keep_compaction_block(&mut extractive, 7, "", item.clone()));
        assert_eq!(extractive.compaction_block, Some(item.clone()));
        for (mut made, through) in [
            (checkpoint(SummaryMethod::Llm), 7),
            (checkpoint(SummaryMethod::Extractive), 8),
        ] {
            assert!(!keep_compaction_block(&mut made, through, "", item.clone()));
            assert_eq!(made.compaction_block, None);
        }
    }

    #[test]
    fn refusals_and_malformed_answers_say_why() {
        let refusal = r#"{"stop_reason":"refusal","content":[]}"#;
        assert!(matches!(
            parse_compaction_answer(refusal),
            Err(CompactionProblem::Refused(_))
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
            let problem = parse_compaction_answer(text).unwrap_err();
            assert!(
                matches!(problem, CompactionProblem::Malformed(_)),
                "{text}: {problem}"
            );
            assert!(problem.to_string().contains(expected), "{text}: {problem}");
        }
        let blank =
            r#"{"stop_reason":"compaction","content":[{"type":"compaction","content":" "}]}"#;
        assert_eq!(
            parse_compaction_answer(blank),
            Err(CompactionProblem::Empty)
        );
    }

    #[test]
    fn a_fresh_request_sends_its_own_prompt_and_never_context_management() {
        let body = compaction_body("sys", "summarize this", &[], 512);
        assert_eq!(body["system"], "sys");
        assert_eq!(body["messages"][0]["content"], "summarize this");
        assert_eq!(body["compaction"], json!({"type": "summarize"}));
        assert!(body.get("context_management").is_none());
        assert!(body.get("model").is_none());
    }
}

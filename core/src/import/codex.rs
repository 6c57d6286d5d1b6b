//! Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`).
//!
//! One JSON object per line, `{timestamp, type, payload}`. The conversation is in the
//! `response_item` lines, whose payloads are OpenAI Responses items (messages, `reasoning` with
//! `encrypted_content`, `function_call`, `function_call_output`, `custom_tool_call`...): they
//! are read by [`crate::wire::from_responses`], so everything the Responses converter keeps is
//! kept here. The other lines:
//! - `session_meta`: its `base_instructions.text` (or `instructions`) is the system prompt
//!   Codex sent, a leading system message;
//! - `turn_context`: the model of the calls that follow;
//! - `event_msg` with `payload.type: "token_count"`: the real usage of the API call just made,
//!   one [`ApiCall`] per distinct cumulative total (Codex repeats the last count after each
//!   turn context), with the prompt size of `last_token_usage.input_tokens` (cached tokens
//!   included) and the assistant message the call produced; other events (`user_message`,
//!   `agent_message`, `agent_reasoning`) repeat response items and are skipped;
//! - `compacted`: Codex replaced the history by a summary: a [`CompactionMarker`] at the user
//!   message holding `payload.message` (the log keeps everything before it).
//!
//! Older rollouts (before the `payload` envelope) hold the items directly on their lines, after
//! a first line `{id, timestamp, instructions}`; `record_type` lines are skipped.
//!
//! Guarantees: no panics on any input; an error names the line (1-based) and the field.

use serde_json::Value;

use super::{ApiCall, CompactionMarker, RecordedUsage};
use crate::error::{CoreError, Result};
use crate::model::{Message, Role};
use crate::wire::from_responses;

/// A Codex rollout read into the message model.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CodexSession {
    /// The whole conversation in order, across compactions (the complete log).
    pub messages: Vec<Message>,
    /// One entry per API call with its real usage, in order.
    pub api_calls: Vec<ApiCall>,
    /// Where Codex compacted the conversation.
    pub compactions: Vec<CompactionMarker>,
    /// The first model a `turn_context` names.
    pub model: Option<String>,
    /// The first working directory the rollout records (`session_meta`'s or a
    /// `turn_context`'s `cwd`).
    pub cwd: Option<String>,
}

/// Reads a Codex rollout (the text of its `.jsonl` file).
///
/// Errors: a line that is not JSON or not an object, or a `response_item` that is not a
/// Responses item the converter reads (`line 12: input[0].call_id: missing`).
pub fn import_codex(text: &str) -> Result<CodexSession> {
    let mut reader = Reader::default();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        if line.trim().is_empty() {
            continue;
        }
        let value: Value = serde_json::from_str(line).map_err(|error| {
            CoreError::invalid(
                format!("line {number}"),
                format!("not valid JSON ({error})"),
            )
        })?;
        if !value.is_object() {
            return Err(CoreError::invalid(
                format!("line {number}"),
                "expected a JSON object",
            ));
        }
        reader.line(&value, number)?;
    }
    reader.flush()?;
    Ok(reader.session)
}

#[derive(Default)]
struct Reader {
    session: CodexSession,
    /// Response items not converted yet, with the line of the first one.
    pending: Vec<Value>,
    pending_line: usize,
    model: String,
    last_total: Option<Value>,
}

impl Reader {
    /// Keeps the first `cwd` a `session_meta` or `turn_context` payload names.
    fn note_cwd(&mut self, payload: &Value) {
        if self.session.cwd.is_none() {
            let cwd = payload.get("cwd").and_then(Value::as_str);
            self.session.cwd = cwd.filter(|dir| !dir.trim().is_empty()).map(str::to_owned);
        }
    }

    fn line(&mut self, value: &Value, number: usize) -> Result<()> {
        let kind = value
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let payload = value.get("payload");
        if let Some(payload) = payload.filter(|_| matches!(kind, "session_meta" | "turn_context")) {
            self.note_cwd(payload);
        }
        match (kind, payload) {
            ("session_meta", Some(meta)) => self.instructions(meta),
            ("turn_context", Some(context)) => {
                if let Some(model) = context.get("model").and_then(Value::as_str) {
                    self.model = model.to_owned();
                    if self.session.model.is_none() && !model.trim().is_empty() {
                        self.session.model = Some(model.to_owned());
                    }
                }
            }
            ("response_item", Some(item)) => self.item(item.clone(), number),
            ("event_msg", Some(event)) => self.event(event, value.get("timestamp"), number)?,
            ("compacted", Some(compacted)) => self.compacted(compacted, number)?,
            (_, Some(_)) => {}
            // The older rollouts: items on their own lines, after a header line.
            (_, None) if value.get("record_type").is_some() => {}
            (_, None) if number == 1 && value.get("type").is_none() => self.instructions(value),
            (_, None) => self.item(value.clone(), number),
        }
        Ok(())
    }

    fn instructions(&mut self, meta: &Value) {
        let text = meta
            .get("base_instructions")
            .and_then(|base| base.get("text"))
            .or_else(|| meta.get("instructions"))
            .and_then(Value::as_str)
            .filter(|text| !text.trim().is_empty());
        if let Some(text) = text {
            self.session
                .messages
                .push(Message::text(Role::System, text));
        }
    }

    fn item(&mut self, item: Value, number: usize) {
        if self.pending.is_empty() {
            self.pending_line = number;
        }
        self.pending.push(item);
    }

    /// Converts the items read since the last call (a whole API response, or the outputs and
    /// messages of the next turn's start: groups never span a usage event).
    fn flush(&mut self) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let items = Value::Array(std::mem::take(&mut self.pending));
        let messages = from_responses(&items).map_err(|error| {
            CoreError::invalid(
                format!("line {} and after", self.pending_line),
                error.to_string(),
            )
        })?;
        self.session.messages.extend(messages);
        Ok(())
    }

    fn event(&mut self, event: &Value, timestamp: Option<&Value>, number: usize) -> Result<()> {
        if event.get("type").and_then(Value::as_str) != Some("token_count") {
            return Ok(());
        }
        let Some(info) = event.get("info").filter(|info| !info.is_null()) else {
            return Ok(());
        };
        let total = info.get("total_token_usage").cloned();
        if total.is_some() && total == self.last_total {
            return Ok(());
        }
        self.last_total = total;
        self.flush()?;
        let last = info.get("last_token_usage");
        let prompt_tokens = last
            .and_then(|usage| usage.get("input_tokens"))
            .and_then(Value::as_u64);
        let usage = last.filter(|_| prompt_tokens.is_some()).map(openai_usage);
        let message_index = self
            .session
            .messages
            .iter()
            .rposition(|message| message.role == Role::Assistant)
            .unwrap_or_default();
        self.session.api_calls.push(ApiCall {
            message_id: format!("line {number}"),
            message_index,
            model: self.model.clone(),
            prompt_tokens,
            line: number,
            usage,
            timestamp: timestamp.and_then(Value::as_str).map(str::to_owned),
        });
        Ok(())
    }

    fn compacted(&mut self, compacted: &Value, number: usize) -> Result<()> {
        self.flush()?;
        let summary = compacted
            .get("message")
            .and_then(Value::as_str)
            .filter(|text| !text.trim().is_empty());
        let message_index = self.session.messages.len();
        if let Some(summary) = summary {
            self.session.messages.push(Message::user(summary));
        }
        self.session.compactions.push(CompactionMarker {
            message_index,
            trigger: None,
            pre_tokens: self
                .session
                .api_calls
                .last()
                .and_then(|call| call.prompt_tokens),
            summary_message_index: summary.map(|_| message_index),
            line: number,
        });
        Ok(())
    }
}

/// The billed parts of an OpenAI usage object: `input_tokens` includes the cached
/// `cached_input_tokens`, and OpenAI bills no cache writes.
fn openai_usage(usage: &Value) -> RecordedUsage {
    let count = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or_default();
    let cached = count("cached_input_tokens");
    RecordedUsage {
        input: count("input_tokens").saturating_sub(cached),
        cache_read: cached,
        output: count("output_tokens"),
        ..RecordedUsage::default()
    }
}

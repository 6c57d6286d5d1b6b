//! The entries of a pi session's active branch, turned into messages.
//!
//! Message roles (`message.role`):
//! - `user`: its `content` (a string, or `text` and `image` parts) is a user message;
//! - `assistant`: `text` parts are its content, `toolCall` parts its calls (`arguments`, an
//!   object, as JSON text); `thinking` parts are dropped, because their signatures are the
//!   provider's of that session (pi talks to many) and no other provider would take them; an
//!   assistant message with neither text nor calls (a failed or aborted request) is skipped;
//!   `usage` makes an [`ApiCall`];
//! - `toolResult`: a tool message answering `toolCallId`, `isError` kept;
//! - `bashExecution` (the user ran `!command` in pi): a user message with the command and its
//!   output, as pi shows it to the model, unless `excludeFromContext` (`!!`);
//! - `custom`, `branchSummary`, `compactionSummary`: text pi put in the context, as user
//!   messages.
//!
//! Any other role is an error naming it: it would be conversation text this reader drops.

use serde_json::Value;

use super::{tokens_before, PiSession};
use crate::error::{CoreError, Result};
use crate::import::{ApiCall, CompactionMarker, RecordedUsage};
use crate::model::{Content, ImageSource, Message, Part, Role, ToolCall};
use crate::wire::{
    as_object, expected, field_path, index_path, optional_bool, optional_str, required,
    required_str, Object,
};

/// The roles this reader knows, for the error about any other.
const ROLES: &str =
    "user, assistant, toolResult, bashExecution, custom, branchSummary, compactionSummary";

/// Builds a [`PiSession`] entry by entry.
pub(super) struct Reader {
    session: PiSession,
}

impl Reader {
    pub(super) fn new(session: PiSession) -> Self {
        Reader { session }
    }

    pub(super) fn finish(self) -> PiSession {
        self.session
    }

    /// Reads one entry of the active branch. Paths in errors are relative to the line.
    pub(super) fn entry(&mut self, entry: &Object, number: usize) -> Result<()> {
        match required_str(entry, "", "type")? {
            "message" => {
                let message = as_object(required(entry, "", "message")?, "message", "an object")?;
                self.message(message, entry, number)
            }
            "compaction" => self.compaction(entry, number),
            "branch_summary" => {
                let summary = required_str(entry, "", "summary")?;
                self.push_user(branch_summary(summary));
                Ok(())
            }
            "custom_message" => {
                let content = user_content(entry.get("content"), "content")?;
                self.push(Message {
                    content,
                    ..Message::text(Role::User, "")
                });
                Ok(())
            }
            "model_change" => {
                if let Some(model) = optional_str(entry, "", "modelId")? {
                    self.name_model(model);
                }
                Ok(())
            }
            // Not what the model saw: settings, an extension's state, bookmarks, names.
            _ => Ok(()),
        }
    }

    fn message(&mut self, message: &Object, entry: &Object, number: usize) -> Result<()> {
        let at = "message";
        match required_str(message, at, "role")? {
            "user" | "custom" => {
                let content = user_content(message.get("content"), &field_path(at, "content"))?;
                self.push(Message {
                    content,
                    ..Message::text(Role::User, "")
                });
            }
            "assistant" => self.assistant(message, entry, number)?,
            "toolResult" => {
                let id = required_str(message, at, "toolCallId")?;
                let content = user_content(message.get("content"), &field_path(at, "content"))?;
                self.push(Message {
                    content,
                    tool_call_id: Some(id.to_owned()),
                    is_error: optional_bool(message, at, "isError")?,
                    ..Message::text(Role::Tool, "")
                });
            }
            "bashExecution" => {
                if !optional_bool(message, at, "excludeFromContext")? {
                    self.push_user(bash_execution(message)?);
                }
            }
            "branchSummary" => {
                self.push_user(branch_summary(required_str(message, at, "summary")?))
            }
            "compactionSummary" => self.push_user(required_str(message, at, "summary")?.to_owned()),
            other => {
                return Err(CoreError::invalid(
                    field_path(at, "role"),
                    format!("unknown role {other:?} (expected one of {ROLES})"),
                ))
            }
        }
        Ok(())
    }

    fn assistant(&mut self, message: &Object, entry: &Object, number: usize) -> Result<()> {
        let at = "message";
        let content_at = field_path(at, "content");
        let mut texts = Vec::new();
        let mut calls = Vec::new();
        for (index, part) in parts(message.get("content"), &content_at)? {
            let part_at = index_path(&content_at, index);
            let part = as_object(part, &part_at, "a content part object")?;
            match required_str(part, &part_at, "type")? {
                "text" => texts.push(required_str(part, &part_at, "text")?.to_owned()),
                "toolCall" => calls.push(tool_call(part, &part_at)?),
                _ => {} // thinking (see the module doc), and anything newer
            }
        }
        let model = optional_str(message, at, "model")?;
        if let Some(model) = model {
            self.name_model(model);
        }
        if texts.iter().all(|text| text.trim().is_empty()) && calls.is_empty() {
            return Ok(());
        }
        let index = self.session.messages.len();
        self.push(Message {
            tool_calls: calls,
            ..Message::text(Role::Assistant, texts.join("\n"))
        });
        if let Some(usage) = message.get("usage").filter(|usage| !usage.is_null()) {
            let usage = recorded_usage(usage, &field_path(at, "usage"))?;
            let id = optional_str(message, at, "responseId")?
                .or(optional_str(entry, "", "id")?)
                .map_or_else(|| format!("line {number}"), str::to_owned);
            self.session.api_calls.push(ApiCall {
                message_id: id,
                message_index: index,
                model: model.unwrap_or_default().to_owned(),
                prompt_tokens: Some(usage.input + usage.cache_read + usage.cache_write),
                line: number,
                usage: Some(usage),
                timestamp: optional_str(entry, "", "timestamp")?.map(str::to_owned),
            });
        }
        Ok(())
    }

    fn compaction(&mut self, entry: &Object, number: usize) -> Result<()> {
        let summary = required_str(entry, "", "summary")?;
        let message_index = self.session.messages.len();
        self.push_user(summary.to_owned());
        self.session.compactions.push(CompactionMarker {
            message_index,
            trigger: None,
            pre_tokens: tokens_before(entry)?,
            summary_message_index: Some(message_index),
            line: number,
        });
        Ok(())
    }

    fn name_model(&mut self, model: &str) {
        if self.session.model.is_none() && !model.trim().is_empty() {
            self.session.model = Some(model.to_owned());
        }
    }

    fn push_user(&mut self, text: String) {
        self.push(Message::text(Role::User, text));
    }

    fn push(&mut self, message: Message) {
        self.session.messages.push(message);
    }
}

/// A summary of a branch the conversation came back from, introduced as such (pi does too, so
/// the model does not take the branch's work for the current state).
fn branch_summary(summary: &str) -> String {
    format!("The conversation came back from another branch; what was done there:\n\n{summary}")
}

/// A `bashExecution` message as text: the command, its output, how it ended.
fn bash_execution(message: &Object) -> Result<String> {
    let at = "message";
    let command = required_str(message, at, "command")?;
    let output = optional_str(message, at, "output")?.unwrap_or_default();
    let mut text = format!("Ran `{command}`\n```\n{output}\n```");
    if optional_bool(message, at, "cancelled")? {
        text.push_str("\n(command cancelled)");
    } else if let Some(code) = message.get("exitCode").and_then(Value::as_i64) {
        if code != 0 {
            text.push_str(&format!("\nCommand exited with code {code}"));
        }
    }
    Ok(text)
}

/// The parts of a `content` array, with their indices; a missing or null content has none.
fn parts<'a>(content: Option<&'a Value>, at: &str) -> Result<Vec<(usize, &'a Value)>> {
    match content {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => Ok(items.iter().enumerate().collect()),
        Some(other) => Err(expected(at, "an array of content parts", other)),
    }
}

/// A user-side `content`: a string, or `text` and `image` parts (`{data, mimeType}`).
fn user_content(content: Option<&Value>, at: &str) -> Result<Content> {
    if let Some(Value::String(text)) = content {
        return Ok(Content::Text(text.clone()));
    }
    let mut out = Vec::new();
    for (index, part) in parts(content, at)? {
        let part_at = index_path(at, index);
        let part = as_object(part, &part_at, "a content part object")?;
        match required_str(part, &part_at, "type")? {
            "text" => out.push(Part::Text {
                text: required_str(part, &part_at, "text")?.to_owned(),
            }),
            "image" => out.push(Part::Image {
                source: ImageSource::Base64 {
                    media_type: required_str(part, &part_at, "mimeType")?.to_owned(),
                    data: required_str(part, &part_at, "data")?.to_owned(),
                },
                detail: None,
            }),
            other => {
                return Err(CoreError::invalid(
                    field_path(&part_at, "type"),
                    format!("unknown part type {other:?} (expected text or image)"),
                ))
            }
        }
    }
    Ok(match out.as_slice() {
        [Part::Text { text }] => Content::Text(text.clone()),
        _ => Content::Parts(out),
    })
}

/// A `toolCall` part: `id`, `name` and `arguments` (an object, kept as JSON text).
fn tool_call(part: &Object, at: &str) -> Result<ToolCall> {
    let arguments = match part.get("arguments") {
        None | Some(Value::Null) => "{}".to_owned(),
        Some(value @ Value::Object(_)) => value.to_string(),
        Some(other) => return Err(expected(&field_path(at, "arguments"), "an object", other)),
    };
    Ok(ToolCall {
        id: required_str(part, at, "id")?.to_owned(),
        name: required_str(part, at, "name")?.to_owned(),
        arguments,
        provider_fields: None,
    })
}

/// pi's `usage`: `input` (uncached), `cacheRead`, `cacheWrite`, `output`.
fn recorded_usage(usage: &Value, at: &str) -> Result<RecordedUsage> {
    let usage = as_object(usage, at, "an object")?;
    let count = |key: &str| -> Result<u64> {
        match usage.get(key) {
            None | Some(Value::Null) => Ok(0),
            Some(value) => value
                .as_u64()
                .ok_or_else(|| expected(&field_path(at, key), "a non-negative integer", value)),
        }
    };
    Ok(RecordedUsage {
        input: count("input")?,
        cache_write: count("cacheWrite")?,
        cache_write_long: 0,
        cache_read: count("cacheRead")?,
        output: count("output")?,
    })
}

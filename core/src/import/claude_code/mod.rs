//! Claude Code session transcripts (`~/.claude/projects/<project>/<session>.jsonl`).
//!
//! One JSON object per line. Only three kinds of line make up the conversation: `user`,
//! `assistant`, and `system` with `subtype: "compact_boundary"`. The rest are skipped, each for
//! its reason: `progress`, `file-history-snapshot`, `queue-operation` and other `system` lines
//! are the CLI's own bookkeeping; of Claude Code 2.1's line types, `ai-title`, `mode`,
//! `permission-mode` and `last-prompt` are the UI's state, and `attachment` lines record hook
//! runs, tool and skill listings and reminders as Claude Code keeps them (what of them reached
//! the model is in the `user` lines it sent, which are read).
//!
//! Sub-agent lines (`isSidechain: true`) of a main session file are not part of the main
//! conversation: [`import_claude_code`] skips them and [`import_claude_code_conversations`]
//! gives each inline sub-agent conversation (older CLIs write `Task` sub-agents into the main
//! file, linked by `parentUuid`) as a session of its own (see [`sidechains`]). A file whose
//! conversation lines are all sub-agent lines (`subagents/agent-<id>.jsonl`, including the
//! `agent-acompact-*` compaction calls) is a sub-agent's own session and is read whole.
//!
//! How lines become messages:
//! - **Assistant lines are grouped by `message.id`.** Claude Code writes one content block per
//!   line, and when the model makes parallel calls the lines of one response interleave with the
//!   results (`tool_use A, tool_result A, tool_use B, tool_result B`). All blocks of one id make
//!   ONE assistant message (text and thinking as its content, `tool_use` as its calls), placed
//!   where the id first appears; the tool messages after it are put in call order. So every call
//!   is followed by its result, as the API saw it.
//! - Content: no blocks or a single non-empty text block read as plain text, anything else as
//!   parts; thinking blocks are [`crate::Part::Thinking`] with their signature as written
//!   (Claude Code logs may redact it); other blocks are kept opaque (see
//!   [`crate::wire::anthropic`]).
//! - A user line with string content is a user message. `isMeta` lines (text Claude Code
//!   injected, such as command caveats) are kept: the model saw them.
//! - Each `tool_result` block is a tool message (its `is_error` kept); other blocks on the same
//!   line make a user message after the tool messages.
//! - A compact boundary is a [`CompactionMarker`], not a message. The user line after it
//!   (`isCompactSummary: true`, the summary the model continued from) stays a user message and
//!   the marker points at it. Messages before the boundary are kept: this is the complete log.
//! - Each distinct `message.id` is one [`ApiCall`], with the prompt size from its `usage`
//!   (`input_tokens + cache_creation_input_tokens + cache_read_input_tokens`, taken once per
//!   id). `output_tokens` is not read: in these logs it is often a streaming placeholder.
//!   Responses of the `<synthetic>` model (made up by Claude Code, not the API) are not calls.
//!
//! Guarantees: no panics on any input; an error names the line (1-based) and the field
//! (`line 17: message.content: expected ...`); a truncated last line (a session still being
//! written) is an error naming that line, so a caller can choose to drop it and retry.
//! Branches left by rewinding a conversation are not followed: lines are taken in file order.

mod sidechains;
mod usage;

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::jsonl::{at_line, parse_lines};
use crate::error::{CoreError, Result};
use crate::model::{Message, Part, Role, ToolCall};
use crate::wire::{
    as_object, block_from_anthropic, content_beside_tool_blocks, expected, field_path, index_path,
    optional_bool, optional_str, optional_u64, required, required_str, Block, Object,
};
use usage::{prompt_tokens, recorded_usage};

/// A Claude Code session read into the message model.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct ClaudeCodeSession {
    /// The whole conversation in order, across compactions (the complete log).
    pub messages: Vec<Message>,
    /// One entry per API response (distinct `message.id`), in order of first appearance.
    pub api_calls: Vec<ApiCall>,
    /// Where Claude Code compacted the conversation, in order.
    pub compactions: Vec<CompactionMarker>,
    /// The working directory the first conversation line records (`cwd`), where one does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
}

/// One call to the Anthropic API, as the transcript records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApiCall {
    /// The response id (`msg_...`).
    pub message_id: String,
    /// The index in [`ClaudeCodeSession::messages`] of the assistant message this response
    /// became. The prompt of the call was the messages before it (from the latest compaction
    /// summary on), plus the system prompt and tool schemas, which the transcript does not hold.
    pub message_index: usize,
    /// The model that answered (`claude-opus-4-6`...).
    pub model: String,
    /// The prompt size the API reported: input + cache creation + cache read tokens. `None`
    /// when the line has no `usage`.
    pub prompt_tokens: Option<u64>,
    /// The 1-based line where the response first appears.
    pub line: usize,
    /// What the API billed for the prompt, as `message.usage` reports it; `None` when the line
    /// has no `usage`.
    pub usage: Option<RecordedUsage>,
    /// The line's `timestamp` (ISO 8601, UTC), when it has one.
    pub timestamp: Option<String>,
}

/// The billed parts of one call's prompt, from `message.usage`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct RecordedUsage {
    /// `input_tokens`: input neither read from nor written to the cache.
    pub input: u64,
    /// Cache writes with the default five-minute lifetime (`cache_creation.
    /// ephemeral_5m_input_tokens`, else all of `cache_creation_input_tokens`).
    pub cache_write: u64,
    /// Cache writes with a one-hour lifetime (`cache_creation.ephemeral_1h_input_tokens`).
    pub cache_write_long: u64,
    /// `cache_read_input_tokens`.
    pub cache_read: u64,
    /// `output_tokens` (in Claude Code logs often a streaming placeholder; reported, not
    /// compared).
    pub output: u64,
}

/// A point where Claude Code replaced the conversation by a summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CompactionMarker {
    /// The index in [`ClaudeCodeSession::messages`] of the first message after the boundary:
    /// the model no longer saw `messages[..message_index]` after it.
    pub message_index: usize,
    /// `auto` or `manual`, when recorded.
    pub trigger: Option<String>,
    /// The prompt size that triggered it, when recorded.
    pub pre_tokens: Option<u64>,
    /// The index of the user message holding the summary the model continued from, if the
    /// transcript has one.
    pub summary_message_index: Option<usize>,
    /// The 1-based line of the boundary.
    pub line: usize,
}

/// Reads a Claude Code session transcript (the text of its `.jsonl` file).
///
/// Errors: a line that is not JSON (a truncated one says so), not an object, or without a
/// `type`; a conversation line whose `message`, `message.id`, `message.model` or
/// `message.content` is missing or of the wrong type; a malformed content block.
pub fn import_claude_code(jsonl: &str) -> Result<ClaudeCodeSession> {
    let lines = parse_lines(jsonl)?;
    let skip_sidechains = lines.iter().any(|(_, line)| is_main_thread_line(line));
    read_lines(
        lines.iter().map(|(number, line)| (*number, line)),
        skip_sidechains,
    )
}

/// Reads a Claude Code file as every conversation it holds: the main thread first (label
/// `None`), then each inline sub-agent conversation (label `sidechain N`, in the order they
/// start). A file without inline sub-agents gives one conversation, as [`import_claude_code`].
///
/// Errors: as [`import_claude_code`], for a line of any of the conversations.
pub fn import_claude_code_conversations(
    jsonl: &str,
) -> Result<Vec<(Option<String>, ClaudeCodeSession)>> {
    let lines = parse_lines(jsonl)?;
    if !lines.iter().any(|(_, line)| is_main_thread_line(line)) {
        let whole = read_lines(lines.iter().map(|(number, line)| (*number, line)), false)?;
        return Ok(vec![(None, whole)]);
    }
    let main = read_lines(lines.iter().map(|(number, line)| (*number, line)), true)?;
    let mut conversations = vec![(None, main)];
    for (index, group) in sidechains::groups(&lines).into_iter().enumerate() {
        let session = read_lines(group.into_iter(), false)?;
        conversations.push((Some(format!("sidechain {}", index + 1)), session));
    }
    Ok(conversations)
}

/// Reads `lines` into one conversation, skipping sub-agent lines when asked.
fn read_lines<'a>(
    lines: impl Iterator<Item = (usize, &'a Value)>,
    skip_sidechains: bool,
) -> Result<ClaudeCodeSession> {
    let mut builder = SessionBuilder {
        skip_sidechains,
        ..SessionBuilder::default()
    };
    for (number, line) in lines {
        builder
            .add_line(line, number)
            .map_err(|error| at_line(error, number))?;
    }
    Ok(builder.finish())
}

/// A user or assistant line of the main thread (not a sub-agent's).
fn is_main_thread_line(line: &Value) -> bool {
    matches!(
        line.get("type").and_then(Value::as_str),
        Some("user" | "assistant")
    ) && line.get("isSidechain").and_then(Value::as_bool) != Some(true)
}

/// A message being assembled: an assistant response gathers blocks from several lines.
#[derive(Debug)]
enum Entry {
    Response {
        parts: Vec<Part>,
        calls: Vec<ToolCall>,
    },
    Complete(Message),
}

#[derive(Debug, Default)]
struct SessionBuilder {
    /// Skip sub-agent lines: true unless the file holds nothing else (a sub-agent's own file).
    skip_sidechains: bool,
    entries: Vec<Entry>,
    /// Where each response id's message is in `entries`.
    response_index: BTreeMap<String, usize>,
    api_calls: Vec<ApiCall>,
    compactions: Vec<CompactionMarker>,
    /// The first `cwd` a conversation line of this session records.
    cwd: Option<String>,
}

impl SessionBuilder {
    /// Paths in errors are relative to the line; the caller adds `line N: `.
    fn add_line(&mut self, value: &Value, number: usize) -> Result<()> {
        let line = as_object(value, "", "a JSON object")?;
        if optional_bool(line, "", "isSidechain")? && self.skip_sidechains {
            return Ok(());
        }
        let kind = required_str(line, "", "type")?;
        if self.cwd.is_none() && matches!(kind, "user" | "assistant") {
            let cwd = optional_str(line, "", "cwd")?;
            self.cwd = cwd.filter(|dir| !dir.trim().is_empty()).map(str::to_owned);
        }
        match kind {
            "assistant" => self.add_assistant(line, number),
            "user" => self.add_user(line),
            "system" if optional_str(line, "", "subtype")? == Some("compact_boundary") => {
                self.add_compaction(line, number)
            }
            _ => Ok(()),
        }
    }

    fn add_assistant(&mut self, line: &Object, number: usize) -> Result<()> {
        let message = as_object(required(line, "", "message")?, "message", "an object")?;
        let id = required_str(message, "message", "id")?;
        let model = required_str(message, "message", "model")?;
        let mut new_parts = Vec::new();
        let mut new_calls = Vec::new();
        for (at, block) in content_blocks(message)? {
            match block {
                Block::Part(part) => new_parts.push(part),
                Block::ToolUse(call) => new_calls.push(call),
                Block::ToolResult(_) => {
                    return Err(CoreError::invalid(
                        field_path(&at, "type"),
                        "a tool_result block belongs in a user line",
                    ))
                }
            }
        }
        let entry_index = match self.response_index.get(id) {
            Some(&index) => index,
            None => {
                let index = self.entries.len();
                self.entries.push(Entry::Response {
                    parts: Vec::new(),
                    calls: Vec::new(),
                });
                self.response_index.insert(id.to_owned(), index);
                if model != "<synthetic>" {
                    self.api_calls.push(ApiCall {
                        message_id: id.to_owned(),
                        message_index: index,
                        model: model.to_owned(),
                        prompt_tokens: prompt_tokens(message)?,
                        line: number,
                        usage: recorded_usage(message)?,
                        timestamp: line
                            .get("timestamp")
                            .and_then(Value::as_str)
                            .map(str::to_owned),
                    });
                }
                index
            }
        };
        if let Some(Entry::Response { parts, calls }) = self.entries.get_mut(entry_index) {
            parts.append(&mut new_parts);
            calls.append(&mut new_calls);
        }
        Ok(())
    }

    fn add_user(&mut self, line: &Object) -> Result<()> {
        let message = as_object(required(line, "", "message")?, "message", "an object")?;
        let is_summary = optional_bool(line, "", "isCompactSummary")?;
        let mut parts = Vec::new();
        for (at, block) in content_blocks(message)? {
            match block {
                Block::Part(part) => parts.push(part),
                Block::ToolResult(result) => self.entries.push(Entry::Complete(Message {
                    content: result.content,
                    tool_call_id: Some(result.tool_use_id),
                    is_error: result.is_error,
                    ..Message::text(Role::Tool, "")
                })),
                Block::ToolUse(_) => {
                    return Err(CoreError::invalid(
                        field_path(&at, "type"),
                        "a tool_use block belongs in an assistant line",
                    ))
                }
            }
        }
        if parts.is_empty() {
            return Ok(());
        }
        let index = self.entries.len();
        self.entries.push(Entry::Complete(Message {
            content: content_beside_tool_blocks(parts),
            ..Message::text(Role::User, "")
        }));
        if is_summary {
            if let Some(marker) = self.compactions.last_mut() {
                if marker.summary_message_index.is_none() {
                    marker.summary_message_index = Some(index);
                }
            }
        }
        Ok(())
    }

    fn add_compaction(&mut self, line: &Object, number: usize) -> Result<()> {
        let (trigger, pre_tokens) = match line.get("compactMetadata") {
            None | Some(Value::Null) => (None, None),
            Some(value) => {
                let metadata = as_object(value, "compactMetadata", "an object")?;
                (
                    optional_str(metadata, "compactMetadata", "trigger")?.map(str::to_owned),
                    optional_u64(metadata, "compactMetadata", "preTokens")?,
                )
            }
        };
        self.compactions.push(CompactionMarker {
            message_index: self.entries.len(),
            trigger,
            pre_tokens,
            summary_message_index: None,
            line: number,
        });
        Ok(())
    }

    fn finish(self) -> ClaudeCodeSession {
        let mut messages: Vec<Message> = self
            .entries
            .into_iter()
            .map(|entry| match entry {
                Entry::Complete(message) => message,
                Entry::Response { parts, calls } => Message {
                    content: content_beside_tool_blocks(parts),
                    tool_calls: calls,
                    ..Message::text(Role::Assistant, "")
                },
            })
            .collect();
        put_results_in_call_order(&mut messages);
        ClaudeCodeSession {
            messages,
            api_calls: self.api_calls,
            compactions: self.compactions,
            cwd: self.cwd,
        }
    }
}

/// The blocks of `message.content`, each with its path; a string is one text block.
fn content_blocks(message: &Object) -> Result<Vec<(String, Block)>> {
    let at = "message.content";
    match required(message, "message", "content")? {
        Value::String(text) => Ok(vec![(
            at.to_owned(),
            Block::Part(Part::Text { text: text.clone() }),
        )]),
        Value::Array(blocks) => blocks
            .iter()
            .enumerate()
            .map(|(index, block)| {
                let block_at = index_path(at, index);
                block_from_anthropic(block, &block_at).map(|block| (block_at, block))
            })
            .collect(),
        other => Err(expected(
            at,
            "a string or an array of content blocks",
            other,
        )),
    }
}

/// Sorts each run of tool messages after an assistant message into the order of its calls
/// (results whose id is not among the calls keep their place after the others).
fn put_results_in_call_order(messages: &mut [Message]) {
    let mut index = 0;
    while let Some(message) = messages.get(index) {
        index += 1;
        if message.role != Role::Assistant || message.tool_calls.is_empty() {
            continue;
        }
        let call_ids: Vec<String> = message
            .tool_calls
            .iter()
            .map(|call| call.id.clone())
            .collect();
        let run = messages.get(index..).map_or(0, |rest| {
            rest.iter().take_while(|m| m.role == Role::Tool).count()
        });
        if let Some(results) = messages.get_mut(index..index.saturating_add(run)) {
            results.sort_by_key(|result| {
                call_ids
                    .iter()
                    .position(|id| Some(id.as_str()) == result.tool_call_id.as_deref())
                    .unwrap_or(call_ids.len())
            });
        }
        index = index.saturating_add(run);
    }
}

#[cfg(test)]
mod tests;

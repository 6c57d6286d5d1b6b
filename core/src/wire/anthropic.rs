//! Anthropic Messages: a request's `system` and `messages` to and from the model.
//!
//! Reading ([`from_anthropic`]) takes `{system?, messages, ...}` (a whole request body: its other
//! fields, such as `model` or `tools`, are not messages and are ignored) or a bare `messages`
//! array. Writing ([`to_anthropic`]) gives `{"system": ..., "messages": [...]}`.
//!
//! How the shapes map (the normalization rules are listed in [`crate::wire`]):
//! - `system` (a string, or an array of blocks) is one leading [`Role::System`] message.
//! - Each `tool_result` block of a user message becomes its own [`Role::Tool`] message, in block
//!   order, before whatever else that user message holds (which stays a user message).
//! - Going back, a run of tool messages becomes ONE user message with the `tool_result` blocks
//!   first; a user message right after the run is merged in after them (Anthropic wants every
//!   result of a turn in the user message right after the `tool_use` blocks, and a reminder after
//!   tool results is common).
//! - `tool_use` blocks become the message's [`crate::ToolCall`]s; their `input` object is kept as
//!   JSON text in `arguments` and parsed back into an object on the way out (invalid JSON or a
//!   non-object is carried as `{"raw_arguments": text}`, so a view never fails to render).
//!
//! Guarantees: `from_anthropic(&to_anthropic(msgs)?)? == msgs` for every list Anthropic can
//! represent (see [`crate::wire`]); no function panics; every error names the path of the bad
//! value (`messages[2].content[1].tool_use_id: missing`).

use std::borrow::Borrow;

use serde_json::{json, Map, Value};

use super::anthropic_blocks::{
    block_from_anthropic, blocks_or_note, content_beside_tool_blocks, content_to_anthropic,
    content_to_blocks, parts_from_anthropic, Block,
};
use super::crossing::arguments_object;
use super::fields::{as_object, expected, field_path, index_path, required, required_str};
use crate::error::{CoreError, Result};
use crate::model::{Content, Message, Role, ToolCall};

/// Reads an Anthropic Messages request (`{system?, messages}`) or a bare `messages` array.
///
/// Errors: a top level that is neither, a message whose `role` is not `user` or `assistant`, a
/// missing `content`, a malformed block (`tool_use` without `id`, `tool_result` without
/// `tool_use_id`, ...) or a tool block in the wrong role.
pub fn from_anthropic(request: &Value) -> Result<Vec<Message>> {
    let (system, messages) = match request {
        Value::Array(messages) => (None, messages),
        Value::Object(object) => {
            let messages = required(object, "", "messages")?;
            let messages = messages
                .as_array()
                .ok_or_else(|| expected("messages", "an array of messages", messages))?;
            (object.get("system"), messages)
        }
        other => {
            return Err(expected(
                "messages",
                "an array of messages or an object with a `messages` array",
                other,
            ))
        }
    };
    let mut out = Vec::with_capacity(messages.len() + 1);
    if let Some(system) = system_from_anthropic(system)? {
        out.push(system);
    }
    for (index, message) in messages.iter().enumerate() {
        read_message(message, &index_path("messages", index), &mut out)?;
    }
    Ok(out)
}

/// Reads the Anthropic message at `index` of a request's `messages` (errors name that index)
/// into the model messages it stands for, as [`from_anthropic`] reads it within its array: a
/// message is read alone, so a caller holding a request's messages unparsed reads only the
/// ones it needs.
///
/// ```
/// use ctxkit_core::wire::from_anthropic_message;
/// let results = serde_json::json!({"role": "user", "content": [
///     {"type": "tool_result", "tool_use_id": "t1", "content": "ok"},
///     {"type": "text", "text": "go on"}]});
/// assert_eq!(from_anthropic_message(&results, 4).unwrap().len(), 2);
/// let bad = serde_json::json!({"role": "user"});
/// assert!(from_anthropic_message(&bad, 4).unwrap_err().to_string().contains("messages[4]"));
/// ```
pub fn from_anthropic_message(message: &Value, index: usize) -> Result<Vec<Message>> {
    let mut out = Vec::with_capacity(1);
    read_message(message, &index_path("messages", index), &mut out)?;
    Ok(out)
}

/// Writes messages as `{"system": ..., "messages": [...]}` (`system` omitted when there is no
/// leading system message).
///
/// Errors: a tool message without `tool_call_id`. Tool call `arguments` that are not a JSON
/// object are carried as `{"raw_arguments": text}` (empty arguments are written as `{}`).
pub fn to_anthropic<M: Borrow<Message>>(messages: &[M]) -> Result<Value> {
    // The body once, for `&Message`, rather than once per `M` the callers use.
    let messages: Vec<&Message> = messages.iter().map(Borrow::borrow).collect();
    to_anthropic_refs(&messages)
}

fn to_anthropic_refs(messages: &[&Message]) -> Result<Value> {
    let messages: Vec<&Message> = messages.iter().map(Borrow::borrow).collect();
    let leading_systems = messages
        .iter()
        .take_while(|message| message.role == Role::System)
        .count();
    let (systems, rest) = messages.split_at(leading_systems.min(messages.len()));
    let mut writer = TurnWriter::default();
    for (offset, message) in rest.iter().enumerate() {
        writer.push(message, leading_systems + offset)?;
    }
    let mut request = Map::new();
    if let Some(system) = system_to_anthropic(systems) {
        request.insert("system".to_owned(), system);
    }
    request.insert("messages".to_owned(), Value::Array(writer.finish()));
    Ok(Value::Object(request))
}

fn system_from_anthropic(system: Option<&Value>) -> Result<Option<Message>> {
    let content = match system {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(text)) => Content::Text(text.clone()),
        Some(Value::Array(blocks)) => Content::Parts(parts_from_anthropic(blocks, "system")?),
        Some(other) => {
            return Err(expected(
                "system",
                "a string or an array of text blocks",
                other,
            ))
        }
    };
    Ok(Some(Message {
        content,
        ..Message::text(Role::System, "")
    }))
}

/// One leading system message keeps its shape (string or blocks); several are merged into one
/// block list, since Anthropic has a single `system`.
fn system_to_anthropic(systems: &[&Message]) -> Option<Value> {
    match systems {
        [] => None,
        [only] => Some(content_to_anthropic(&only.content)),
        several => Some(Value::Array(
            several
                .iter()
                .flat_map(|message| content_to_blocks(&message.content))
                .collect(),
        )),
    }
}

/// Reads one Anthropic message into one or more model messages (a user message with tool
/// results gives a tool message per result, then the rest).
fn read_message(value: &Value, at: &str, out: &mut Vec<Message>) -> Result<()> {
    let object = as_object(value, at, "an object (a message)")?;
    let role = match required_str(object, at, "role")? {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "system" => return Err(CoreError::invalid(
            field_path(at, "role"),
            "\"system\" is not a message role in Anthropic Messages: use the top-level `system`",
        )),
        other => {
            return Err(CoreError::invalid(
                field_path(at, "role"),
                format!("unknown role {other:?} (expected \"user\" or \"assistant\")"),
            ))
        }
    };
    let content_at = field_path(at, "content");
    let blocks = match required(object, at, "content")? {
        Value::String(text) => {
            out.push(Message::text(role, text.clone()));
            return Ok(());
        }
        Value::Array(blocks) => blocks,
        other => {
            return Err(expected(
                &content_at,
                "a string or an array of content blocks",
                other,
            ))
        }
    };
    let mut parts = Vec::new();
    let mut tool_calls = Vec::new();
    let mut tool_results = Vec::new();
    for (index, block) in blocks.iter().enumerate() {
        let block_at = index_path(&content_at, index);
        match (block_from_anthropic(block, &block_at)?, role) {
            (Block::Part(part), _) => parts.push(part),
            (Block::ToolUse(call), Role::Assistant) => tool_calls.push(call),
            (Block::ToolResult(result), Role::User) => tool_results.push(Message {
                content: result.content,
                tool_call_id: Some(result.tool_use_id),
                is_error: result.is_error,
                ..Message::text(Role::Tool, "")
            }),
            (Block::ToolUse(_), _) => {
                return Err(CoreError::invalid(
                    field_path(&block_at, "type"),
                    "a tool_use block belongs in an assistant message",
                ))
            }
            (Block::ToolResult(_), _) => {
                return Err(CoreError::invalid(
                    field_path(&block_at, "type"),
                    "a tool_result block belongs in a user message",
                ))
            }
        }
    }
    match role {
        Role::Assistant => {
            let content = if tool_calls.is_empty() {
                Content::Parts(parts)
            } else {
                content_beside_tool_blocks(parts)
            };
            out.push(Message {
                content,
                tool_calls,
                ..Message::text(Role::Assistant, "")
            });
        }
        _ if tool_results.is_empty() => out.push(Message {
            content: Content::Parts(parts),
            ..Message::text(Role::User, "")
        }),
        _ => {
            out.append(&mut tool_results);
            if !parts.is_empty() {
                out.push(Message {
                    content: content_beside_tool_blocks(parts),
                    ..Message::text(Role::User, "")
                });
            }
        }
    }
    Ok(())
}

/// Builds the `messages` array, holding back the tool results of the current turn so that they
/// and a user message right after them go out as one user message.
#[derive(Debug, Default)]
struct TurnWriter {
    written: Vec<Value>,
    /// The `tool_result` blocks of the current run of tool messages, if one is open.
    pending_results: Option<Vec<Value>>,
}

impl TurnWriter {
    fn push(&mut self, message: &Message, index: usize) -> Result<()> {
        match message.role {
            Role::Tool => {
                let block = tool_result_block(message, index)?;
                self.pending_results
                    .get_or_insert_with(Vec::new)
                    .push(block);
            }
            Role::Assistant => {
                self.flush_results();
                let content = assistant_content(message);
                self.written
                    .push(json!({"role": "assistant", "content": content}));
            }
            // A system message after the conversation started has no place of its own in
            // Anthropic Messages: it is sent as a user turn, as it is.
            Role::User | Role::System => {
                let extra_blocks = match self.pending_results.take() {
                    Some(mut results) => {
                        let blocks = blocks_or_note(&message.content);
                        if blocks.is_empty() {
                            // Nothing to merge: keep the message apart so it is not lost.
                            self.written.push(user_message(Value::Array(results)));
                            None
                        } else {
                            results.extend(blocks);
                            Some(results)
                        }
                    }
                    None => None,
                };
                let content = match extra_blocks {
                    Some(merged) => Value::Array(merged),
                    None => content_to_anthropic(&message.content),
                };
                self.written.push(user_message(content));
            }
        }
        Ok(())
    }

    fn flush_results(&mut self) {
        if let Some(results) = self.pending_results.take() {
            self.written.push(user_message(Value::Array(results)));
        }
    }

    fn finish(mut self) -> Vec<Value> {
        self.flush_results();
        self.written
    }
}

fn user_message(content: Value) -> Value {
    json!({"role": "user", "content": content})
}

fn tool_result_block(message: &Message, index: usize) -> Result<Value> {
    let tool_use_id = message.tool_call_id.as_deref().ok_or_else(|| {
        CoreError::invalid(
            field_path(&index_path("messages", index), "tool_call_id"),
            "missing: a tool result must name the call it answers",
        )
    })?;
    let mut block = Map::new();
    block.insert("type".to_owned(), json!("tool_result"));
    block.insert("tool_use_id".to_owned(), json!(tool_use_id));
    // Empty text is written as no `content` at all, which Anthropic accepts where it may reject
    // an empty string.
    if !matches!(&message.content, Content::Text(text) if text.is_empty()) {
        block.insert("content".to_owned(), content_to_anthropic(&message.content));
    }
    if message.is_error {
        block.insert("is_error".to_owned(), json!(true));
    }
    Ok(Value::Object(block))
}

/// An assistant message's `content`: a string or its blocks as they were, or, when it made
/// calls, its blocks followed by one `tool_use` block per call.
fn assistant_content(message: &Message) -> Value {
    if message.tool_calls.is_empty() {
        return content_to_anthropic(&message.content);
    }
    let mut blocks = content_to_blocks(&message.content);
    blocks.extend(message.tool_calls.iter().map(tool_use_block));
    Value::Array(blocks)
}

/// A call as a `tool_use` block; arguments that are not a JSON object are carried as
/// `{"raw_arguments": text}` (see [`super::crossing::arguments_object`]).
fn tool_use_block(call: &ToolCall) -> Value {
    let input = Value::Object(arguments_object(&call.arguments));
    json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Part, Provider};

    #[test]
    fn tool_results_and_a_following_user_text_become_one_user_message() {
        let messages = vec![
            Message::assistant(
                "",
                vec![
                    ToolCall::new("a", "ls", "{}"),
                    ToolCall::new("b", "pwd", ""),
                ],
            ),
            Message::tool_result("a", "x", false),
            Message::tool_result("b", "boom", true),
            Message::user("reminder"),
        ];
        let request = to_anthropic(&messages).unwrap();
        assert_eq!(
            request,
            json!({"messages": [
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": "a", "name": "ls", "input": {}},
                    {"type": "tool_use", "id": "b", "name": "pwd", "input": {}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "a", "content": "x"},
                    {"type": "tool_result", "tool_use_id": "b", "content": "boom", "is_error": true},
                    {"type": "text", "text": "reminder"}]}
            ]})
        );
        let mut back = messages;
        if let Some(call) = back.first_mut().and_then(|m| m.tool_calls.get_mut(1)) {
            call.arguments = "{}".into();
        }
        assert_eq!(from_anthropic(&request).unwrap(), back);
    }

    #[test]
    fn a_message_of_only_another_providers_state_is_a_note_not_empty() {
        // A Responses reasoning item standing alone as an assistant turn (the fuzz finding 6 of
        // docs/reliability.md): its state is not Anthropic's, and an empty content is rejected.
        let reasoning = Part::Opaque {
            provider: Provider::Responses,
            block: json!({"type": "reasoning", "id": "rs_1", "summary": [],
                "encrypted_content": "gAAA"}),
        };
        let messages = [
            Message::user("hi"),
            Message {
                content: Content::Parts(vec![reasoning]),
                ..Message::assistant("", vec![])
            },
            Message::user("go on"),
        ];
        let request = to_anthropic(&messages).unwrap();
        let content = &request["messages"][1]["content"];
        assert_eq!(content.as_array().map(Vec::len), Some(1), "{request}");
        let note = content[0]["text"].as_str().unwrap_or_default();
        assert!(note.contains("omitted"), "{note}");
        assert_eq!(
            crate::wire::breakpoints::anthropic_block_counts(&messages),
            vec![1, 1, 1]
        );
    }

    #[test]
    fn arguments_that_are_not_an_object_are_carried_raw() {
        let messages = [Message::assistant(
            "",
            vec![
                ToolCall::new("c1", "f", "[1]"),
                ToolCall::new("c2", "f", "{\"a\":"),
            ],
        )];
        let request = to_anthropic(&messages).unwrap();
        assert_eq!(
            request["messages"][0]["content"][0]["input"],
            json!({"raw_arguments": "[1]"})
        );
        assert_eq!(
            request["messages"][0]["content"][1]["input"],
            json!({"raw_arguments": "{\"a\":"})
        );
    }
}

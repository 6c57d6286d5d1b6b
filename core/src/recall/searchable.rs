//! What of a message the history search looks in: [`searchable_text`].
//!
//! - its text: the text parts (or the plain text) of any role, tool results included, and the
//!   `text` strings inside provider blocks kept opaque (a text block with `cache_control`, a
//!   document, a server tool's result);
//! - each tool call, as `tool call: <name>`, then its arguments as the model wrote them (the
//!   form the summary transcript shows), then, when they hold JSON escapes, decoded: one
//!   `key: value` line per leaf of the JSON, strings unescaped, so a command or an edited line
//!   is found as it reads too (`say "hi"` as well as `say \"hi\"`). Without escapes every
//!   string of the JSON is already in the arguments as written, so nothing is repeated.
//!
//! Left out: thinking (the model's scratch work), images, and the history tools' own traffic:
//! calls of `search_history` and `read_history` and their results (recognized by the headers
//! their results start with), which repeat text of the log and would otherwise answer every
//! later search with earlier searches. A page of an offloaded output (`read_offload`) is new text
//! in the log and stays searchable.
//!
//! Guarantees: a pure function of the message (the native index stores exactly this text, and
//! the in-memory search reads the same), deterministic, bounded in depth for nested JSON.

use serde_json::Value;

use super::tools::{READ_HISTORY, SEARCH_HISTORY};
use crate::model::{Content, Message, Part, Role};

/// The first line of every `search_history` result.
pub const HISTORY_SEARCH_HEADER: &str = "[ctxkit: history search]";
/// The first line of every `read_history` result.
pub const HISTORY_READ_HEADER: &str = "[ctxkit: history read]";

/// JSON nested deeper than this is not decoded further (its text is kept as JSON).
const MAX_JSON_DEPTH: usize = 16;

/// The text the history search looks in for `message` (see the module doc); empty when there
/// is none.
///
/// ```
/// use ctxkit_core::recall::searchable_text;
/// use ctxkit_core::{Message, ToolCall};
/// let call = ToolCall::new("c1", "bash", r#"{"command":"grep \"TODO\" src/"}"#);
/// let message = Message::assistant("Looking.", vec![call]);
/// assert_eq!(
///     searchable_text(&message),
///     "Looking.\ntool call: bash\n{\"command\":\"grep \\\"TODO\\\" src/\"}\ncommand: grep \"TODO\" src/"
/// );
/// ```
pub fn searchable_text(message: &Message) -> String {
    if message.role == Role::Tool && is_history_result(message) {
        return String::new();
    }
    let mut out = String::new();
    push_content(&mut out, &message.content);
    for call in &message.tool_calls {
        if matches!(call.name.as_str(), SEARCH_HISTORY | READ_HISTORY) {
            continue;
        }
        push_line(&mut out, &format!("tool call: {}", call.name));
        push_line(&mut out, &call.arguments);
        if call.arguments.contains('\\') {
            if let Ok(arguments) = serde_json::from_str::<Value>(&call.arguments) {
                push_json(&mut out, None, &arguments, 0);
            }
        }
    }
    out
}

/// True when `message` is a result of `search_history` or `read_history`.
fn is_history_result(message: &Message) -> bool {
    let text = message.text_content();
    text.starts_with(HISTORY_SEARCH_HEADER) || text.starts_with(HISTORY_READ_HEADER)
}

fn push_content(out: &mut String, content: &Content) {
    match content {
        Content::Text(text) => push_line(out, text),
        Content::Parts(parts) => {
            for part in parts {
                match part {
                    Part::Text { text } => push_line(out, text),
                    Part::Opaque { block, .. } => push_block_texts(out, block, 0),
                    Part::Image { .. } | Part::Thinking { .. } => {}
                }
            }
        }
    }
}

/// The `text` strings anywhere inside a provider block.
fn push_block_texts(out: &mut String, block: &Value, depth: usize) {
    if depth > MAX_JSON_DEPTH {
        return;
    }
    match block {
        Value::Object(fields) => {
            for (key, value) in fields {
                match value {
                    Value::String(text) if key == "text" || key == "refusal" => {
                        push_line(out, text)
                    }
                    _ => push_block_texts(out, value, depth.saturating_add(1)),
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                push_block_texts(out, item, depth.saturating_add(1));
            }
        }
        _ => {}
    }
}

/// One `key: value` line per leaf of `value` (strings unescaped).
fn push_json(out: &mut String, key: Option<&str>, value: &Value, depth: usize) {
    let line = |out: &mut String, text: &str| match key {
        Some(key) => push_line(out, &format!("{key}: {text}")),
        None => push_line(out, text),
    };
    match value {
        Value::String(text) => line(out, text),
        Value::Object(fields) if depth < MAX_JSON_DEPTH => {
            for (name, inner) in fields {
                push_json(out, Some(name), inner, depth.saturating_add(1));
            }
        }
        Value::Array(items) if depth < MAX_JSON_DEPTH => {
            for inner in items {
                push_json(out, key, inner, depth.saturating_add(1));
            }
        }
        Value::Object(fields) if fields.is_empty() => {}
        other => line(out, &other.to_string()),
    }
}

/// Appends `text` on a line of its own (nothing for empty text).
fn push_line(out: &mut String, text: &str) {
    if text.is_empty() {
        return;
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(text);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ImageSource, Provider, ToolCall};

    #[test]
    fn text_calls_and_blocks_are_searched_thinking_and_lookups_are_not() {
        let message = Message {
            content: Content::Parts(vec![
                Part::Thinking {
                    thinking: "secret plan".into(),
                    signature: "sig".into(),
                },
                Part::Text {
                    text: "运行测试".into(),
                },
                Part::Image {
                    source: ImageSource::Url {
                        url: "https://example.com/a.png".into(),
                    },
                    detail: None,
                },
                Part::Opaque {
                    provider: Provider::Anthropic,
                    block: serde_json::json!({"type": "text", "text": "cached words", "cache_control": {"type": "ephemeral"}}),
                },
            ]),
            ..Message::assistant(
                "",
                vec![
                    ToolCall::new(
                        "c1",
                        "Edit",
                        r#"{"file_path":"C:\\src\\a.rs","edits":[{"old":"x","new":"y"}],"n":2,"e":{}}"#,
                    ),
                    ToolCall::new("c2", "search_history", r#"{"query":"secret"}"#),
                    ToolCall::new("c3", "raw", "not json {"),
                ],
            )
        };
        assert_eq!(
            searchable_text(&message),
            // serde_json's maps are sorted by key.
            "运行测试\ncached words\ntool call: Edit\n{\"file_path\":\"C:\\\\src\\\\a.rs\",\"edits\":[{\"old\":\"x\",\"new\":\"y\"}],\"n\":2,\"e\":{}}\nnew: y\nold: x\nfile_path: C:\\src\\a.rs\nn: 2\ntool call: raw\nnot json {"
        );
        let lookup = Message::tool_result("c2", format!("{HISTORY_SEARCH_HEADER} ..."), false);
        assert_eq!(searchable_text(&lookup), "");
        let page = Message::tool_result("c4", "[ctxkit: offload page] ...", false);
        assert_eq!(searchable_text(&page), "[ctxkit: offload page] ...");
    }
}

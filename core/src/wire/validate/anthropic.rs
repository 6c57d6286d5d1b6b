//! The Anthropic Messages validator.
//!
//! Rules checked (wording as the API returns it):
//! - `messages` is a non-empty array; each role is `user` or `assistant`; the first is `user`;
//! - every message has content, except an optional final assistant message; text blocks are
//!   not blank;
//! - `tool_use` ids match `^[a-zA-Z0-9_-]+$` and are unique in the request;
//! - every `tool_use` has a `tool_result` in the very next message, which must be a user
//!   message; every `tool_result` answers a `tool_use` of the message right before it;
//! - every content block is of a type the API knows;
//! - in a user message, `tool_result` blocks come before any other block (ctxkit's wording:
//!   the API's documentation states the rule, its error text varies).

use serde_json::Value;

use super::{str_field, violation, Violation};

/// Lists every violation in an Anthropic request: `{"system": ..., "messages": [...]}`, or a
/// bare messages array. An empty list means the request passes these checks.
///
/// ```
/// use ctxkit_core::wire::validate_anthropic;
///
/// let request = serde_json::json!({"messages": [
///     {"role": "user", "content": "hi"},
///     {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {}}]},
///     {"role": "user", "content": "go on"}
/// ]});
/// let violations = validate_anthropic(&request);
/// assert_eq!(violations.len(), 1);
/// assert!(violations[0].message.starts_with("`tool_use` ids were found without `tool_result` blocks immediately after: toolu_1."));
/// ```
pub fn validate_anthropic(request: &Value) -> Vec<Violation> {
    let messages = match messages_of(request) {
        Ok(messages) => messages,
        Err(refused) => return vec![refused],
    };
    let mut violations = Vec::new();
    if messages.is_empty() {
        violations.push(violation("messages", "at least one message is required"));
        return violations;
    }
    if messages.first().and_then(|first| str_field(first, "role")) != Some("user") {
        violations.push(violation(
            "messages",
            "first message must use the \"user\" role",
        ));
    }

    let mut seen_ids = crate::wire::fields::StringSet::default();
    let mut previous_tool_uses: Vec<String> = Vec::new();
    let last = messages.len().saturating_sub(1);
    for (index, message) in messages.iter().enumerate() {
        let at = format!("messages.{index}");
        let role = str_field(message, "role");
        if !matches!(role, Some("user" | "assistant")) {
            violations.push(violation(
                format!("{at}.role"),
                "Input should be 'user' or 'assistant'",
            ));
        }
        let blocks = content_blocks(
            message,
            &at,
            index == last && role == Some("assistant"),
            &mut violations,
        );
        check_answered(&blocks, role, &previous_tool_uses, index, &mut violations);
        let message = MessageAt {
            at: &at,
            role,
            previous_tool_uses: &previous_tool_uses,
        };
        previous_tool_uses = check_blocks(&blocks, &message, &mut seen_ids, &mut violations);
    }
    if !previous_tool_uses.is_empty() {
        // A trailing call with no next message at all.
        violations.push(unanswered_violation(last, &previous_tool_uses));
    }
    violations
}

/// The request's messages, or the one violation that stops the check before them.
fn messages_of(request: &Value) -> Result<&Vec<Value>, Violation> {
    match request {
        Value::Array(messages) => Ok(messages),
        Value::Object(object) => match object.get("messages") {
            Some(Value::Array(messages)) => Ok(messages),
            Some(_) => Err(violation("messages", "Input should be a valid list")),
            None => Err(violation("messages", "Field required")),
        },
        _ => Err(violation("body", "Input should be a valid dictionary")),
    }
}

/// Results must answer the previous message's calls, all of them: the calls of message
/// `index - 1` that this message (a user message's `tool_result` blocks) leaves unanswered.
fn check_answered(
    blocks: &[&Value],
    role: Option<&str>,
    previous_tool_uses: &[String],
    index: usize,
    violations: &mut Vec<Violation>,
) {
    let answered: Vec<&str> = blocks
        .iter()
        .filter(|block| str_field(block, "type") == Some("tool_result"))
        .filter_map(|block| str_field(block, "tool_use_id"))
        .collect();
    let unanswered: Vec<String> = previous_tool_uses
        .iter()
        .filter(|id| role != Some("user") || !answered.contains(&id.as_str()))
        .cloned()
        .collect();
    if !unanswered.is_empty() {
        violations.push(unanswered_violation(index.saturating_sub(1), &unanswered));
    }
}

/// The API's words for calls of message `index` that the next message does not answer.
fn unanswered_violation(index: usize, ids: &[String]) -> Violation {
    violation(
        format!("messages.{index}"),
        format!(
            "`tool_use` ids were found without `tool_result` blocks immediately after: {}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
            ids.join(", ")
        ),
    )
}

/// Where a message is and what came before it, for checking its blocks.
struct MessageAt<'m> {
    /// `messages.N`.
    at: &'m str,
    role: Option<&'m str>,
    /// The ids of the previous message's `tool_use` blocks.
    previous_tool_uses: &'m [String],
}

/// Checks a message's `tool_use` and `tool_result` blocks (ids, roles, order); returns the ids
/// of its `tool_use` blocks, which the next message must answer.
fn check_blocks(
    blocks: &[&Value],
    message: &MessageAt<'_>,
    seen_ids: &mut crate::wire::fields::StringSet,
    violations: &mut Vec<Violation>,
) -> Vec<String> {
    let mut tool_uses = Vec::new();
    let mut other_block_seen = false;
    for (block_index, block) in blocks.iter().enumerate() {
        let block_at = format!("{}.content.{block_index}", message.at);
        match str_field(block, "type") {
            Some("tool_use") => {
                let id = str_field(block, "id").unwrap_or_default();
                if !is_valid_id(id) {
                    violations.push(violation(
                        format!("{block_at}.tool_use.id"),
                        "String should match pattern '^[a-zA-Z0-9_-]+$'",
                    ));
                }
                if !seen_ids.insert(id.to_owned()) {
                    violations.push(violation(block_at.clone(), "`tool_use` ids must be unique"));
                }
                if message.role != Some("assistant") {
                    violations.push(violation(
                        block_at,
                        "`tool_use` blocks can only be in `assistant` messages",
                    ));
                }
                tool_uses.push(id.to_owned());
            }
            Some("tool_result") => {
                let id = str_field(block, "tool_use_id").unwrap_or_default();
                if !message.previous_tool_uses.iter().any(|call| call == id) {
                    violations.push(violation(
                        block_at.clone(),
                        format!("unexpected `tool_use_id` found in `tool_result` blocks: {id}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."),
                    ));
                }
                if other_block_seen {
                    violations.push(violation(
                        block_at,
                        "`tool_result` blocks must come first in the content of a user message, before any other block",
                    ));
                }
            }
            _ => other_block_seen = true,
        }
    }
    tool_uses
}

/// The content block types the Messages API takes (client and server tool blocks included, and
/// the `compaction` block of server compaction, sent back as it was returned).
const BLOCK_TYPES: [&str; 18] = [
    "text",
    "image",
    "document",
    "search_result",
    "thinking",
    "redacted_thinking",
    "tool_use",
    "tool_result",
    "server_tool_use",
    "web_search_tool_result",
    "web_fetch_tool_result",
    "code_execution_tool_result",
    "bash_code_execution_tool_result",
    "text_editor_code_execution_tool_result",
    "mcp_tool_use",
    "mcp_tool_result",
    "container_upload",
    "compaction",
];

/// The message's content as blocks (a string is one text block); reports empty content, blank
/// text blocks and block types the API does not know.
fn content_blocks<'v>(
    message: &'v Value,
    at: &str,
    final_assistant: bool,
    violations: &mut Vec<Violation>,
) -> Vec<&'v Value> {
    const EMPTY: &str =
        "all messages must have non-empty content except for the optional final assistant message";
    match message.get("content") {
        Some(Value::String(text)) => {
            if text.trim().is_empty() && !final_assistant {
                violations.push(violation(at, EMPTY));
            }
            Vec::new()
        }
        Some(Value::Array(blocks)) => {
            if blocks.is_empty() && !final_assistant {
                violations.push(violation(at, EMPTY));
            }
            for (block_index, block) in blocks.iter().enumerate() {
                match str_field(block, "type") {
                    Some(kind) if BLOCK_TYPES.contains(&kind) => {}
                    Some(kind) => violations.push(violation(
                        format!("{at}.content.{block_index}"),
                        format!(
                            "Input tag '{kind}' found using 'type' does not match any of the expected tags: {}",
                            BLOCK_TYPES.map(|tag| format!("'{tag}'")).join(", ")
                        ),
                    )),
                    None => violations.push(violation(
                        format!("{at}.content.{block_index}"),
                        "Unable to extract tag using discriminator 'type'",
                    )),
                }
                if str_field(block, "type") == Some("text") {
                    let text = str_field(block, "text").unwrap_or_default();
                    if text.trim().is_empty() {
                        violations.push(violation(
                            format!("{at}.content.{block_index}.text"),
                            "text content blocks must contain non-whitespace text",
                        ));
                    }
                }
            }
            blocks.iter().collect()
        }
        _ => {
            violations.push(violation(format!("{at}.content"), "Field required"));
            Vec::new()
        }
    }
}

fn is_valid_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(violations: &[Violation]) -> Vec<String> {
        violations.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn valid_exchange_passes() {
        let request = json!({"system": "be brief", "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [
                {"type": "text", "text": "looking"},
                {"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {}},
                {"type": "tool_use", "id": "toolu_2", "name": "ls", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a"},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "b", "is_error": true},
                {"type": "text", "text": "reminder"}]},
            {"role": "assistant", "content": ""}
        ]});
        assert_eq!(
            messages(&validate_anthropic(&request)),
            Vec::<String>::new()
        );
    }

    #[test]
    fn every_violation_is_listed_in_anthropic_wording() {
        let request = json!([
            {"role": "assistant", "content": [{"type": "tool_use", "id": "bad.id", "name": "ls", "input": {}}]},
            {"role": "user", "content": [{"type": "text", "text": "x"}, {"type": "tool_result", "tool_use_id": "nope", "content": ""}]},
            {"role": "system", "content": "  "},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "dup", "name": "ls", "input": {}},
                {"type": "tool_use", "id": "dup", "name": "ls", "input": {}}]}
        ]);
        insta::assert_snapshot!(messages(&validate_anthropic(&request)).join("\n"), @r#"
        messages: first message must use the "user" role
        messages.0.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'
        messages.0: `tool_use` ids were found without `tool_result` blocks immediately after: bad.id. Each `tool_use` block must have a corresponding `tool_result` block in the next message.
        messages.1.content.1: unexpected `tool_use_id` found in `tool_result` blocks: nope. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.
        messages.1.content.1: `tool_result` blocks must come first in the content of a user message, before any other block
        messages.2.role: Input should be 'user' or 'assistant'
        messages.2: all messages must have non-empty content except for the optional final assistant message
        messages.3.content.1: `tool_use` ids must be unique
        messages.3: `tool_use` ids were found without `tool_result` blocks immediately after: dup, dup. Each `tool_use` block must have a corresponding `tool_result` block in the next message.
        "#);
    }

    #[test]
    fn unknown_block_types_are_reported() {
        let request = json!({"messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "c"}, {"text": "no type"}]}
        ]});
        let text = messages(&validate_anthropic(&request));
        assert_eq!(text.len(), 2, "{text:?}");
        assert!(text[0].starts_with("messages.1.content.0: Input tag 'tool-call' found using 'type' does not match any of the expected tags: 'text', 'image'"), "{text:?}");
        assert_eq!(
            text[1],
            "messages.1.content.1: Unable to extract tag using discriminator 'type'"
        );
    }

    #[test]
    fn garbage_is_reported_not_panicked_on() {
        assert_eq!(validate_anthropic(&json!(3)).len(), 1);
        assert_eq!(validate_anthropic(&json!({"messages": "x"})).len(), 1);
        assert_eq!(validate_anthropic(&json!([])).len(), 1);
        assert!(!validate_anthropic(&json!([1, null, {"role": 2}])).is_empty());
    }
}

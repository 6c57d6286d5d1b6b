//! The OpenAI Chat Completions validator.
//!
//! Rules checked (wording as the API returns it):
//! - `messages` is a non-empty array and each role is one the API knows;
//! - a `tool` message answers a call of the assistant message it follows, with only other
//!   `tool` messages in between, and answers each call once;
//! - an assistant message with `tool_calls` is followed by one `tool` message per call before
//!   anything else;
//! - tool-call ids are unique within their assistant message;
//! - every content part is of a type the API knows;
//! - a `prompt_cache_breakpoint` is on a `text`, `image_url` or `file` part of a message that is
//!   not the assistant's, as `{"mode": "explicit"}`, at most four in the request.

use serde_json::Value;

use super::cache_marks::{check_count, check_mark};
use super::{str_field, violation, Violation};
use crate::wire::breakpoints::openai_eligible_part_types;
use crate::wire::openai::PART_TYPES;
use crate::wire::WireFormat;

const ROLES: [&str; 6] = [
    "system",
    "developer",
    "user",
    "assistant",
    "tool",
    "function",
];

/// Lists every violation in an OpenAI messages array (or an object with a `messages` array).
/// An empty list means the request passes these checks.
///
/// ```
/// use ctxkit_core::wire::validate_openai;
///
/// let messages = serde_json::json!([
///     {"role": "user", "content": "hi"},
///     {"role": "tool", "tool_call_id": "call_9", "content": "stray"}
/// ]);
/// let violations = validate_openai(&messages);
/// assert_eq!(violations[0].to_string(),
///     "messages.[1].role: messages with role 'tool' must be a response to a preceding message with 'tool_calls'");
/// ```
pub fn validate_openai(request: &Value) -> Vec<Violation> {
    let messages = match request {
        Value::Array(messages) => messages,
        Value::Object(object) => match object.get("messages") {
            Some(Value::Array(messages)) => messages,
            _ => {
                return vec![violation(
                    "messages",
                    "Missing required parameter: 'messages'.",
                )]
            }
        },
        _ => {
            return vec![violation(
                "messages",
                "Invalid type for 'messages': expected an array of objects.",
            )]
        }
    };
    let mut violations = Vec::new();
    if messages.is_empty() {
        violations.push(violation("messages", "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead."));
    }

    // Calls of the current assistant message still waiting for their tool message.
    let mut open: Option<OpenCalls> = None;
    let mut marks = 0;
    for (index, message) in messages.iter().enumerate() {
        let at = format!("messages.[{index}]");
        let role = str_field(message, "role");
        match role {
            Some(role) if ROLES.contains(&role) => {}
            Some(other) => violations.push(violation(
                format!("{at}.role"),
                format!("Invalid value: '{other}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'."),
            )),
            None => violations.push(violation(format!("{at}.role"), "Missing required parameter: 'messages.[{index}].role'.".replace("{index}", &index.to_string()))),
        }

        marks += check_parts(message, &at, &mut violations);

        if role == Some("tool") {
            let id = str_field(message, "tool_call_id").unwrap_or_default();
            match open.as_mut() {
                None => violations.push(violation(
                    format!("{at}.role"),
                    "messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
                )),
                Some(calls) => {
                    if !calls.waiting.remove(id) {
                        let problem = if calls.all.contains(id) {
                            format!("'tool_call_id' of '{id}' was already answered by an earlier tool message.")
                        } else {
                            format!("Invalid parameter: 'tool_call_id' of '{id}' not found in 'tool_calls' of previous message.")
                        };
                        violations.push(violation(format!("{at}.tool_call_id"), problem));
                    }
                }
            }
            continue;
        }

        if let Some(calls) = open.take() {
            report_unanswered(calls, &mut violations);
        }
        if role == Some("assistant") {
            open = open_calls(message, &at, &mut violations);
        }
    }
    if let Some(calls) = open {
        report_unanswered(calls, &mut violations);
    }
    check_count(marks, "messages", &mut violations);
    violations
}

/// Checks the content parts of `message`; returns how many carry a cache breakpoint.
fn check_parts(message: &Value, at: &str, violations: &mut Vec<Violation>) -> usize {
    let Some(parts) = message.get("content").and_then(Value::as_array) else {
        return 0;
    };
    let assistant = str_field(message, "role") == Some("assistant");
    let eligible = openai_eligible_part_types(WireFormat::Openai);
    let mut marks = 0;
    for (index, part) in parts.iter().enumerate() {
        let kind = str_field(part, "type");
        let can_mark = !assistant && kind.is_some_and(|kind| eligible.contains(&kind));
        marks += usize::from(check_mark(
            part,
            &format!("{at}.content.[{index}]"),
            can_mark,
            violations,
        ));
        let part_at = format!("{at}.content.[{index}].type");
        match kind {
            Some(kind) if PART_TYPES.contains(&kind) => {}
            Some(kind) => violations.push(violation(
                part_at,
                format!("Invalid value: '{kind}'. Supported values are: 'text', 'image_url', 'input_audio', 'refusal', and 'file'."),
            )),
            None => violations.push(violation(
                part_at.clone(),
                format!("Missing required parameter: '{part_at}'."),
            )),
        }
    }
    marks
}

struct OpenCalls {
    at: String,
    /// In call order, so the error lists ids as the model wrote them.
    order: Vec<String>,
    all: crate::wire::fields::StringSet,
    waiting: crate::wire::fields::StringSet,
}

fn open_calls(message: &Value, at: &str, violations: &mut Vec<Violation>) -> Option<OpenCalls> {
    let calls = message.get("tool_calls").and_then(Value::as_array)?;
    if calls.is_empty() {
        return None;
    }
    let mut open = OpenCalls {
        at: at.to_owned(),
        order: Vec::new(),
        all: crate::wire::fields::StringSet::default(),
        waiting: crate::wire::fields::StringSet::default(),
    };
    for (call_index, call) in calls.iter().enumerate() {
        let id = str_field(call, "id").unwrap_or_default().to_owned();
        if id.is_empty() {
            violations.push(violation(
                format!("{at}.tool_calls.[{call_index}].id"),
                format!("Missing required parameter: '{at}.tool_calls.[{call_index}].id'."),
            ));
        }
        if !open.all.insert(id.clone()) {
            violations.push(violation(
                format!("{at}.tool_calls.[{call_index}].id"),
                format!("Duplicate value for 'tool_call_id' of {id} in message."),
            ));
            continue;
        }
        open.waiting.insert(id.clone());
        open.order.push(id);
    }
    Some(open)
}

fn report_unanswered(calls: OpenCalls, violations: &mut Vec<Violation>) {
    let missing: Vec<&str> = calls
        .order
        .iter()
        .filter(|id| calls.waiting.contains(id))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        violations.push(violation(
            calls.at.clone(),
            format!(
                "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {}",
                missing.join(", ")
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(id: &str) -> Value {
        json!({"id": id, "type": "function", "function": {"name": "ls", "arguments": "{}"}})
    }

    #[test]
    fn valid_parallel_exchange_passes() {
        let messages = json!([
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": null, "tool_calls": [call("a"), call("b")]},
            {"role": "tool", "tool_call_id": "b", "content": "B"},
            {"role": "tool", "tool_call_id": "a", "content": "A"},
            {"role": "assistant", "content": "done"}
        ]);
        assert_eq!(validate_openai(&messages), Vec::new());
    }

    #[test]
    fn every_violation_is_listed_in_openai_wording() {
        let messages = json!([
            {"role": "tool", "tool_call_id": "x", "content": "orphan"},
            {"role": "assistant", "tool_calls": [call("a"), call("b"), call("a")]},
            {"role": "tool", "tool_call_id": "a", "content": "A"},
            {"role": "tool", "tool_call_id": "a", "content": "again"},
            {"role": "tool", "tool_call_id": "zzz", "content": "?"},
            {"role": "user", "content": "next"},
            {"role": "robot", "content": "?"},
            {"role": "assistant", "tool_calls": [call("c")]}
        ]);
        let text: Vec<String> = validate_openai(&messages)
            .iter()
            .map(ToString::to_string)
            .collect();
        insta::assert_snapshot!(text.join("\n"), @r"
        messages.[0].role: messages with role 'tool' must be a response to a preceding message with 'tool_calls'
        messages.[1].tool_calls.[2].id: Duplicate value for 'tool_call_id' of a in message.
        messages.[3].tool_call_id: 'tool_call_id' of 'a' was already answered by an earlier tool message.
        messages.[4].tool_call_id: Invalid parameter: 'tool_call_id' of 'zzz' not found in 'tool_calls' of previous message.
        messages.[1]: An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: b
        messages.[6].role: Invalid value: 'robot'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.
        messages.[7]: An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: c
        ");
    }

    #[test]
    fn unknown_part_types_are_reported() {
        // An AI SDK assistant turn passed as OpenAI: its `tool-call` part is no OpenAI part.
        let messages = json!([
            {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "input_audio", "input_audio": {}}]},
            {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "c", "toolName": "ls", "input": {}}]}
        ]);
        let text: Vec<String> = validate_openai(&messages)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(text, ["messages.[1].content.[0].type: Invalid value: 'tool-call'. Supported values are: 'text', 'image_url', 'input_audio', 'refusal', and 'file'."]);
    }

    #[test]
    fn cache_breakpoints_only_on_input_parts_and_at_most_four() {
        let mark = json!({"mode": "explicit"});
        let text = |t: &str| json!([{"type": "text", "text": t, "prompt_cache_breakpoint": mark}]);
        let mut messages = vec![
            json!({"role": "system", "content": text("sys")}),
            json!({"role": "user", "content": text("a")}),
            json!({"role": "assistant", "content": text("b")}),
            json!({"role": "user", "content": [{"type": "text", "text": "c", "prompt_cache_breakpoint": true}]}),
        ];
        let found: Vec<String> = validate_openai(&Value::Array(messages.clone()))
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(found, [
            "messages.[2].content.[0].prompt_cache_breakpoint: Unknown parameter: 'messages.[2].content.[0].prompt_cache_breakpoint'.",
            "messages.[3].content.[0].prompt_cache_breakpoint: Invalid value for 'messages.[3].content.[0].prompt_cache_breakpoint': expected an object {\"mode\":\"explicit\"}.",
        ]);
        messages.truncate(2);
        for _ in 0..3 {
            messages.push(json!({"role": "user", "content": text("more")}));
        }
        let found = validate_openai(&Value::Array(messages.clone()));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].to_string(), "messages: Too many 'prompt_cache_breakpoint' markers: 5 were given, at most 4 are allowed per request.");
        messages.pop();
        assert_eq!(validate_openai(&Value::Array(messages)), Vec::new());
    }

    #[test]
    fn garbage_is_reported_not_panicked_on() {
        assert_eq!(validate_openai(&json!("x")).len(), 1);
        assert_eq!(validate_openai(&json!([])).len(), 1);
        assert!(!validate_openai(
            &json!([null, 1, {"role": "assistant", "tool_calls": [1, {"id": 3}]}])
        )
        .is_empty());
    }
}

//! SWE-agent trajectories (`.traj`): the `history` list, in both generations of the format.
//!
//! - 1.x (function calling): assistant messages carry OpenAI-style `tool_calls`; tool results are
//!   `role: "tool"` with `tool_call_ids: [id]` (a list: its single element is the id).
//! - 0.x (no function calling): the assistant writes a thought and a command (`action`), and
//!   the command's output comes back as the next `user` message. Each action becomes a `bash`
//!   call with a synthetic id (`swe-<n>`, unique in the file) and the output its tool result, so
//!   the pipeline sees the exchange structure the agent really had. The first user message after
//!   the system prompt (the task, or the `is_demo` worked example) stays a user message.
//!
//! Errors name the path of the bad value (`history[3].role: missing`).

use serde_json::Value;

use crate::error::{CoreError, Result};
use crate::model::{Message, Role, ToolCall};
use crate::wire::{as_object, field_path, index_path, optional_str, required, required_str};

/// Reads the `history` of a SWE-agent trajectory object.
pub fn import_swe_agent(trajectory: &Value) -> Result<Vec<Message>> {
    let object = as_object(trajectory, "trajectory", "an object with a `history` list")?;
    let history = required(object, "trajectory", "history")?
        .as_array()
        .ok_or_else(|| CoreError::invalid("trajectory.history", "expected a list of messages"))?;
    let function_calling = history.iter().any(|entry| {
        entry
            .get("tool_calls")
            .is_some_and(|calls| !calls.is_null())
    });
    let mut messages = Vec::with_capacity(history.len());
    let mut pending_action: Option<String> = None;
    let mut synthetic = 0usize;
    for (index, entry) in history.iter().enumerate() {
        let at = index_path("history", index);
        let object = as_object(entry, &at, "an object (a message)")?;
        let role = required_str(object, &at, "role")?;
        let content = content_text(object.get("content"), &field_path(&at, "content"))?;
        match role {
            "system" => messages.push(Message::text(Role::System, content)),
            "assistant" if function_calling => messages.push(Message::assistant(
                content,
                calls_1x(object.get("tool_calls"), &at)?,
            )),
            "assistant" => match optional_str(object, &at, "action")?
                .map(str::trim)
                .filter(|a| !a.is_empty())
            {
                Some(action) => {
                    synthetic += 1;
                    let id = format!("swe-{synthetic}");
                    let arguments = serde_json::json!({ "command": action }).to_string();
                    messages.push(Message::assistant(
                        content,
                        vec![ToolCall::new(id.clone(), "bash", arguments)],
                    ));
                    pending_action = Some(id);
                }
                None => messages.push(Message::assistant(content, Vec::new())),
            },
            "tool" => {
                let id =
                    tool_call_id(object.get("tool_call_ids"), object.get("tool_call_id"), &at)?;
                messages.push(Message::tool_result(id, content, false));
            }
            "user" => match pending_action.take() {
                Some(id) => messages.push(Message::tool_result(id, content, false)),
                None => messages.push(Message::user(content)),
            },
            other => {
                return Err(CoreError::invalid(
                    field_path(&at, "role"),
                    format!("unknown role {other:?} (expected system, user, assistant or tool)"),
                ))
            }
        }
    }
    Ok(messages)
}

/// History content is a string, or (1.x) a list of `{type: "text", text}` parts.
fn content_text(value: Option<&Value>, at: &str) -> Result<String> {
    match value {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(text)) => Ok(text.clone()),
        Some(Value::Array(parts)) => Ok(parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n")),
        Some(_) => Err(CoreError::invalid(
            at,
            "expected a string or a list of text parts",
        )),
    }
}

fn calls_1x(value: Option<&Value>, at: &str) -> Result<Vec<ToolCall>> {
    let Some(Value::Array(calls)) = value else {
        return Ok(Vec::new());
    };
    calls
        .iter()
        .enumerate()
        .map(|(index, call)| {
            let call_at = index_path(&field_path(at, "tool_calls"), index);
            let object = as_object(call, &call_at, "an object (a tool call)")?;
            let id = required_str(object, &call_at, "id")?;
            let function_at = field_path(&call_at, "function");
            let function = as_object(
                required(object, &call_at, "function")?,
                &function_at,
                "an object",
            )?;
            let name = required_str(function, &function_at, "name")?;
            let arguments = match function.get("arguments") {
                Some(Value::String(text)) => text.clone(),
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            };
            Ok(ToolCall::new(id, name, arguments))
        })
        .collect()
}

fn tool_call_id(ids: Option<&Value>, id: Option<&Value>, at: &str) -> Result<String> {
    if let Some(Value::Array(ids)) = ids {
        if let [Value::String(only)] = ids.as_slice() {
            return Ok(only.clone());
        }
        return Err(CoreError::invalid(
            field_path(at, "tool_call_ids"),
            format!("expected exactly one id, found {}", ids.len()),
        ));
    }
    match id {
        Some(Value::String(id)) => Ok(id.clone()),
        _ => Err(CoreError::invalid(
            field_path(at, "tool_call_ids"),
            "missing: a tool message must name the call it answers",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn old_format_actions_become_bash_calls_answered_by_the_next_user_message() {
        let trajectory = json!({"history": [
            {"role": "system", "content": "SETTING"},
            {"role": "user", "content": "the issue"},
            {"role": "assistant", "content": "DISCUSSION\nlook\n```\nls\n```", "action": "ls\n"},
            {"role": "user", "content": "a.py b.py"},
            {"role": "assistant", "content": "done", "action": ""}
        ]});
        let messages = import_swe_agent(&trajectory).unwrap();
        let roles: Vec<Role> = messages.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [
                Role::System,
                Role::User,
                Role::Assistant,
                Role::Tool,
                Role::Assistant
            ]
        );
        assert_eq!(messages[2].tool_calls[0].arguments, r#"{"command":"ls"}"#);
        assert_eq!(messages[3].tool_call_id.as_deref(), Some("swe-1"));
    }

    #[test]
    fn bad_entries_name_their_path() {
        let error = import_swe_agent(&json!({"history": [{"content": "x"}]})).unwrap_err();
        assert_eq!(error.to_string(), "history[0].role: missing");
        let error = import_swe_agent(
            &json!({"history": [{"role": "tool", "content": "x", "tool_call_ids": []}]}),
        )
        .unwrap_err();
        assert!(error
            .to_string()
            .starts_with("history[0].tool_call_ids: expected exactly one id"));
    }
}

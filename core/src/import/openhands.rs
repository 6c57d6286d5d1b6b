//! OpenHands event streams: a list of events (actions and observations).
//!
//! Mapping (shared/corpus/FORMATS.md):
//! - `action: "system"` → a system message (`args.content`);
//! - a user `message` → a user message; an agent `message` → an assistant message;
//! - an agent action with `tool_call_metadata` → an assistant message whose text is
//!   `args.thought` and whose call is `{id: tool_call_id, name: function_name, arguments:
//!   args minus thought}`; actions from one model response (same `model_response.id`, parallel
//!   calls) become one assistant message with several calls;
//! - the observation carrying the same `tool_call_id` → the tool result (`content`); an
//!   `error` observation, or one that reports a failure (`success: false`, a non-zero
//!   `extras.metadata.exit_code`), is a result with `is_error`;
//! - `recall` actions and their observations are skipped (OpenHands' own retrieval, never
//!   shown to the model as such); `finish` has no observation, so it becomes a plain assistant
//!   message with its final text instead of a call that would stay unanswered.
//!
//! Errors name the path of the bad value (`history[4].tool_call_metadata.tool_call_id: ...`).

use serde_json::{Map, Value};

use crate::error::{CoreError, Result};
use crate::import::ImportedSession;
use crate::model::{Message, Role, ToolCall};
use crate::wire::{as_object, field_path, index_path, optional_str};

/// Reads an OpenHands event list.
pub fn import_openhands(events: &Value, at: &str) -> Result<Vec<Message>> {
    let events = events
        .as_array()
        .ok_or_else(|| CoreError::invalid(at, "expected a list of events"))?;
    let mut messages: Vec<Message> = Vec::new();
    // The model response the last assistant message came from, to group parallel calls.
    let mut last_response: Option<String> = None;
    for (index, event) in events.iter().enumerate() {
        let event_at = index_path(at, index);
        let object = as_object(event, &event_at, "an object (an event)")?;
        let source = optional_str(object, &event_at, "source")?.unwrap_or_default();
        let args = object.get("args").and_then(Value::as_object);
        let metadata = object.get("tool_call_metadata").and_then(Value::as_object);
        if let Some(action) = optional_str(object, &event_at, "action")? {
            let thought = args
                .and_then(|a| a.get("thought"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            let message_text = optional_str(object, &event_at, "message")?.unwrap_or_default();
            match (action, metadata) {
                ("recall", _) => {}
                ("system", _) => {
                    let content = args
                        .and_then(|a| a.get("content"))
                        .and_then(Value::as_str)
                        .unwrap_or(message_text);
                    messages.push(Message::text(Role::System, content));
                }
                ("message", _) if source == "user" => {
                    let content = args
                        .and_then(|a| a.get("content"))
                        .and_then(Value::as_str)
                        .unwrap_or(message_text);
                    messages.push(Message::user(content));
                }
                ("finish", _) => {
                    let final_text = args
                        .and_then(|a| a.get("final_thought"))
                        .and_then(Value::as_str)
                        .filter(|t| !t.is_empty());
                    let text = [thought, final_text.unwrap_or(message_text)]
                        .iter()
                        .filter(|t| !t.is_empty())
                        .copied()
                        .collect::<Vec<_>>()
                        .join("\n\n");
                    messages.push(Message::assistant(text, Vec::new()));
                    last_response = None;
                }
                (_, Some(metadata)) => {
                    let meta_at = field_path(&event_at, "tool_call_metadata");
                    let call = tool_call(metadata, args, &meta_at)?;
                    let response = metadata
                        .get("model_response")
                        .and_then(|r| r.get("id"))
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                    let same_response = response.is_some() && response == last_response;
                    match messages.last_mut() {
                        // A parallel call of the same response: join the assistant message
                        // (its results have not arrived yet, so it is still the last one).
                        Some(last) if same_response && last.role == Role::Assistant => {
                            last.tool_calls.push(call)
                        }
                        _ => messages.push(Message::assistant(thought, vec![call])),
                    }
                    last_response = response;
                }
                _ => {
                    // An agent action without a call (a plain message, a thought).
                    let text = if message_text.is_empty() {
                        thought
                    } else {
                        message_text
                    };
                    messages.push(Message::assistant(text, Vec::new()));
                    last_response = None;
                }
            }
        } else if let Some(observation) = optional_str(object, &event_at, "observation")? {
            if observation == "recall" {
                continue;
            }
            let Some(metadata) = metadata else {
                // An observation no call asked for (e.g. an agent state change): not part of
                // the conversation the model saw.
                continue;
            };
            let meta_at = field_path(&event_at, "tool_call_metadata");
            let id = required_id(metadata, &meta_at)?;
            let content = optional_str(object, &event_at, "content")?.unwrap_or_default();
            messages.push(Message::tool_result(
                id,
                content,
                observation == "error" || reports_failure(object),
            ));
        }
    }
    Ok(messages)
}

/// Whether an observation says its command failed: `success: false`, or a non-zero
/// `extras.metadata.exit_code` (a `run` that exited 2 is a failure even though OpenHands sends
/// it as an ordinary `run` observation).
fn reports_failure(observation: &Map<String, Value>) -> bool {
    let exit_code = observation
        .get("extras")
        .and_then(|extras| extras.get("metadata"))
        .and_then(|metadata| metadata.get("exit_code"))
        .and_then(Value::as_i64);
    observation.get("success") == Some(&Value::Bool(false))
        || exit_code.is_some_and(|code| code != 0)
}

fn required_id(metadata: &Map<String, Value>, at: &str) -> Result<String> {
    match metadata.get("tool_call_id") {
        Some(Value::String(id)) => Ok(id.clone()),
        _ => Err(CoreError::invalid(
            field_path(at, "tool_call_id"),
            "missing: an action or observation with tool_call_metadata must name its call",
        )),
    }
}

fn tool_call(
    metadata: &Map<String, Value>,
    args: Option<&Map<String, Value>>,
    at: &str,
) -> Result<ToolCall> {
    let id = required_id(metadata, at)?;
    let name = metadata
        .get("function_name")
        .and_then(Value::as_str)
        .ok_or_else(|| CoreError::invalid(field_path(at, "function_name"), "missing"))?;
    let mut arguments = args.cloned().unwrap_or_default();
    arguments.remove("thought");
    Ok(ToolCall::new(
        id,
        name,
        Value::Object(arguments).to_string(),
    ))
}

/// An OpenHands file: an event list, one run object, or JSONL of benchmark outputs.
pub(crate) fn import_openhands_file(text: &str) -> Result<Vec<ImportedSession>> {
    if let Ok(value) = serde_json::from_str::<Value>(text.trim()) {
        return match &value {
            Value::Array(_) => Ok(vec![ImportedSession::single(import_openhands(
                &value, "events",
            )?)]),
            _ => Ok(vec![openhands_run(&value, "run")?]),
        };
    }
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(index, line)| {
            let at = format!("line {}", index + 1);
            let value: Value = serde_json::from_str(line)
                .map_err(|error| CoreError::invalid(&at, format!("invalid JSON: {error}")))?;
            openhands_run(&value, &at)
        })
        .collect()
}

fn openhands_run(value: &Value, at: &str) -> Result<ImportedSession> {
    let history = value
        .get("history")
        .ok_or_else(|| CoreError::invalid(format!("{at}.history"), "missing"))?;
    let messages = import_openhands(history, &format!("{at}.history"))?;
    let label = value
        .get("instance_id")
        .and_then(Value::as_str)
        .map(str::to_owned);
    Ok(ImportedSession {
        label,
        messages,
        compactions: Vec::new(),
        model: None,
        working_directory: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta(id: &str, name: &str, response: &str) -> Value {
        json!({"function_name": name, "tool_call_id": id, "model_response": {"id": response}})
    }

    #[test]
    fn parallel_actions_of_one_response_share_an_assistant_message() {
        let events = json!([
            {"source": "agent", "action": "system", "args": {"content": "You are OpenHands"}},
            {"source": "user", "action": "message", "args": {"content": "fix it"}},
            {"source": "user", "action": "recall", "args": {}},
            {"source": "environment", "observation": "recall", "content": "ctx"},
            {"source": "agent", "action": "run", "tool_call_metadata": meta("a", "execute_bash", "r1"), "args": {"command": "ls", "thought": "look"}},
            {"source": "agent", "action": "read", "tool_call_metadata": meta("b", "str_replace_editor", "r1"), "args": {"path": "/x"}},
            {"source": "agent", "observation": "run", "tool_call_metadata": meta("a", "execute_bash", "r1"), "content": "x", "success": true, "extras": {"metadata": {"exit_code": 0}}},
            {"source": "agent", "observation": "error", "tool_call_metadata": meta("b", "str_replace_editor", "r1"), "content": "no such file"},
            {"source": "agent", "action": "finish", "tool_call_metadata": meta("c", "finish", "r2"), "args": {"thought": "done", "final_thought": ""}, "message": "All fixed."}
        ]);
        let messages = import_openhands(&events, "history").unwrap();
        let roles: Vec<Role> = messages.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [
                Role::System,
                Role::User,
                Role::Assistant,
                Role::Tool,
                Role::Tool,
                Role::Assistant
            ]
        );
        assert_eq!(messages[2].text_content(), "look");
        assert_eq!(messages[2].tool_calls.len(), 2);
        assert_eq!(messages[2].tool_calls[0].arguments, r#"{"command":"ls"}"#);
        assert!(!messages[3].is_error);
        assert!(messages[4].is_error);
        assert_eq!(messages[5].text_content(), "done\n\nAll fixed.");
    }

    #[test]
    fn a_run_that_exited_non_zero_is_a_failed_result() {
        let run = |id: &str, extra: Value| {
            let mut event = json!({"source": "agent", "observation": "run", "tool_call_metadata": meta(id, "execute_bash", id), "content": "make: *** [Makefile:192: build] Error 2"});
            if let (Some(event), Value::Object(extra)) = (event.as_object_mut(), extra) {
                event.extend(extra);
            }
            event
        };
        let call = |id: &str| json!({"source": "agent", "action": "run", "tool_call_metadata": meta(id, "execute_bash", id), "args": {"command": "make"}});
        let events = json!([
            call("a"),
            run(
                "a",
                json!({"success": false, "extras": {"metadata": {"exit_code": 2}}})
            ),
            call("b"),
            run("b", json!({"extras": {"metadata": {"exit_code": 127}}})),
            call("c"),
            run("c", json!({"success": false})),
            call("d"),
            run(
                "d",
                json!({"success": true, "extras": {"metadata": {"exit_code": 0}}})
            ),
            call("e"),
            run("e", json!({})),
        ]);
        let messages = import_openhands(&events, "history").unwrap();
        let failed: Vec<bool> = messages
            .iter()
            .filter(|m| m.role == Role::Tool)
            .map(|m| m.is_error)
            .collect();
        assert_eq!(failed, [true, true, true, false, false]);
    }
}

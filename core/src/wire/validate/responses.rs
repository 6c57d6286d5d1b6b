//! The OpenAI Responses validator.
//!
//! Rules checked (wording as the API returns it, location as `input[3].content[0]`):
//! - `input` is a string or an array of items, each an object of a known `type` (a message may
//!   leave `type` out);
//! - a message has a known role and its content parts are of known types;
//! - a `function_call` has a `call_id` and a `name`, and call ids are unique;
//! - a `function_call_output` answers an earlier `function_call` (a `custom_tool_call_output`
//!   an earlier `custom_tool_call`), and every call has its output;
//! - a `reasoning` item is followed by the item it produced (a message, a call...), not by
//!   the next turn;
//! - a `prompt_cache_breakpoint` is on an `input_text`, `input_image` or `input_file` part (of
//!   a message or a function call's output), as `{"mode": "explicit"}`, at most four in the
//!   request.

use std::collections::BTreeMap;

use serde_json::Value;

use super::cache_marks::{check_count, check_mark};
use super::{str_field, violation, Violation};
use crate::wire::breakpoints::openai_eligible_part_types;
use crate::wire::responses::{is_user_side, CONTENT_PART_TYPES};
use crate::wire::WireFormat;

const ITEM_TYPES: [&str; 22] = [
    "message",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "reasoning",
    "file_search_call",
    "web_search_call",
    "computer_call",
    "computer_call_output",
    "image_generation_call",
    "code_interpreter_call",
    "local_shell_call",
    "local_shell_call_output",
    "shell_call",
    "shell_call_output",
    "apply_patch_call",
    "apply_patch_call_output",
    "mcp_list_tools",
    "mcp_approval_request",
    "mcp_approval_response",
    "mcp_call",
];

/// Lists every violation in a Responses request (`{input}`, or a bare array of items).
///
/// ```
/// use ctxkit_core::wire::validate_responses;
///
/// let input = serde_json::json!([
///     {"role": "user", "content": "hi"},
///     {"type": "function_call_output", "call_id": "call_9", "output": "stray"}
/// ]);
/// assert_eq!(validate_responses(&input)[0].to_string(),
///     "input[1]: No tool call found for function call output with call_id call_9.");
/// ```
pub fn validate_responses(request: &Value) -> Vec<Violation> {
    let items = match input_items(request) {
        Ok(Some(items)) => items,
        // A string input is one user message: nothing to check.
        Ok(None) => return Vec::new(),
        Err(refused) => return vec![refused],
    };
    let mut violations = Vec::new();
    let mut calls = Calls::default();
    let mut marks = 0;
    for (index, item) in items.iter().enumerate() {
        let at = format!("input[{index}]");
        if !item.is_object() {
            violations.push(violation(at, "Invalid type for item: expected an object."));
            continue;
        }
        let kind = match item.get("type") {
            None => "message",
            Some(Value::String(kind)) => kind.as_str(),
            Some(_) => {
                violations.push(violation(
                    format!("{at}.type"),
                    "Invalid type for 'type': expected a string.",
                ));
                continue;
            }
        };
        match kind {
            "message" => marks += check_message(item, &at, &mut violations),
            "function_call" | "custom_tool_call" => {
                calls.record_call(item, index, kind == "custom_tool_call", &mut violations);
            }
            "function_call_output" | "custom_tool_call_output" => {
                marks += check_marks(item.get("output"), &format!("{at}.output"), &mut violations);
                calls.record_output(
                    item,
                    &at,
                    kind == "custom_tool_call_output",
                    &mut violations,
                );
            }
            "reasoning" => {
                if items.get(index + 1).is_none_or(is_user_side) {
                    let id = str_field(item, "id").unwrap_or("");
                    violations.push(violation(
                        at,
                        format!("Item '{id}' of type 'reasoning' was provided without its required following item."),
                    ));
                }
            }
            "item_reference" | "compaction" => {}
            other if ITEM_TYPES.contains(&other) => {}
            other => violations.push(violation(
                format!("{at}.type"),
                format!(
                    "Invalid value: '{other}'. Supported values are: {}.",
                    quoted_list(&ITEM_TYPES)
                ),
            )),
        }
    }
    calls.check_unanswered(&mut violations);
    check_count(marks, "input", &mut violations);
    violations
}

/// The request's input items (`None` for a string input), or the one violation that stops the
/// check before them.
fn input_items(request: &Value) -> Result<Option<&Vec<Value>>, Violation> {
    const NOT_ITEMS: &str =
        "Invalid type for 'input': expected one of a string or an array of input items.";
    match request {
        Value::Array(items) => Ok(Some(items)),
        Value::Object(object) => match object.get("input") {
            Some(Value::Array(items)) => Ok(Some(items)),
            Some(Value::String(_)) => Ok(None),
            Some(_) => Err(violation("input", NOT_ITEMS)),
            None => Err(violation("input", "Missing required parameter: 'input'.")),
        },
        _ => Err(violation("input", NOT_ITEMS)),
    }
}

/// The tool calls of the input so far, in input order, each with the item index it is at,
/// whether an output answered it, and whether it is a custom tool call; and each call's
/// position in that list by its id (a `BTreeMap<String, usize>`, a type the core has already:
/// each key and value type compiles its own B-tree code, docs/performance.md, "Size").
#[derive(Default)]
struct Calls {
    by_id: BTreeMap<String, usize>,
    calls: Vec<Call>,
}

/// One tool call of [`Calls`].
struct Call {
    id: String,
    index: usize,
    answered: bool,
    custom: bool,
}

impl Calls {
    /// A `function_call` or `custom_tool_call` item at `index`: its id new and its name given.
    fn record_call(
        &mut self,
        item: &Value,
        index: usize,
        custom: bool,
        violations: &mut Vec<Violation>,
    ) {
        let at = format!("input[{index}]");
        let id = str_field(item, "call_id").unwrap_or_default();
        if id.is_empty() {
            violations.push(violation(
                format!("{at}.call_id"),
                format!("Missing required parameter: '{at}.call_id'."),
            ));
        } else if self.by_id.contains_key(id) {
            violations.push(violation(
                format!("{at}.call_id"),
                format!("Duplicate value for 'call_id' of '{id}' in 'input'."),
            ));
        } else {
            self.by_id.insert(id.to_owned(), self.calls.len());
            self.calls.push(Call {
                id: id.to_owned(),
                index,
                answered: false,
                custom,
            });
        }
        if str_field(item, "name").is_none_or(str::is_empty) {
            violations.push(violation(
                format!("{at}.name"),
                format!("Missing required parameter: '{at}.name'."),
            ));
        }
    }

    /// An output item: it answers an earlier call of its kind, once.
    fn record_output(
        &mut self,
        item: &Value,
        at: &str,
        custom: bool,
        violations: &mut Vec<Violation>,
    ) {
        let id = str_field(item, "call_id").unwrap_or_default();
        let call = self.by_id.get(id).and_then(|&at| self.calls.get_mut(at));
        match call {
            Some(call) if call.custom == custom && !call.answered => call.answered = true,
            Some(Call { answered: true, .. }) => violations.push(violation(
                format!("{at}.call_id"),
                format!("Duplicate tool output found for call_id {id}."),
            )),
            _ => {
                let what = if custom {
                    "custom tool call"
                } else {
                    "function call"
                };
                let call = if custom {
                    "custom tool call"
                } else {
                    "tool call"
                };
                violations.push(violation(
                    at,
                    format!("No {call} found for {what} output with call_id {id}."),
                ));
            }
        }
    }

    /// Every call no output answered, in input order.
    fn check_unanswered(&self, violations: &mut Vec<Violation>) {
        for call in &self.calls {
            if !call.answered {
                violations.push(violation(
                    format!("input[{}]", call.index),
                    format!("No tool output found for function call {}.", call.id),
                ));
            }
        }
    }
}

/// Checks the cache breakpoints of the parts `content` holds (when it is an array of parts);
/// returns how many it carries.
fn check_marks(content: Option<&Value>, at: &str, violations: &mut Vec<Violation>) -> usize {
    let Some(Value::Array(parts)) = content else {
        return 0;
    };
    let eligible = openai_eligible_part_types(WireFormat::Responses);
    parts
        .iter()
        .enumerate()
        .filter(|(index, part)| {
            let can = str_field(part, "type").is_some_and(|kind| eligible.contains(&kind));
            check_mark(part, &format!("{at}[{index}]"), can, violations)
        })
        .count()
}

/// Checks a message item; returns how many cache breakpoints its parts carry.
fn check_message(item: &Value, at: &str, violations: &mut Vec<Violation>) -> usize {
    let role = str_field(item, "role");
    match role {
        Some("user" | "assistant" | "system" | "developer") => {}
        Some(other) => violations.push(violation(
            format!("{at}.role"),
            format!("Invalid value: '{other}'. Supported values are: 'assistant', 'system', 'developer', and 'user'."),
        )),
        None => violations.push(violation(
            format!("{at}.role"),
            format!("Missing required parameter: '{at}.role'."),
        )),
    }
    match item.get("content") {
        Some(Value::String(_)) => {}
        Some(Value::Array(parts)) => {
            for (index, part) in parts.iter().enumerate() {
                let part_at = format!("{at}.content[{index}]");
                match str_field(part, "type") {
                    Some(kind) if CONTENT_PART_TYPES.contains(&kind) => {}
                    Some(kind) => violations.push(violation(
                        format!("{part_at}.type"),
                        format!(
                            "Invalid value: '{kind}'. Supported values are: {}.",
                            quoted_list(&CONTENT_PART_TYPES)
                        ),
                    )),
                    None => violations.push(violation(
                        format!("{part_at}.type"),
                        format!("Missing required parameter: '{part_at}.type'."),
                    )),
                }
            }
        }
        _ => violations.push(violation(
            format!("{at}.content"),
            format!("Missing required parameter: '{at}.content'."),
        )),
    }
    check_marks(item.get("content"), &format!("{at}.content"), violations)
}

/// `'a', 'b', and 'c'`, as OpenAI lists supported values.
pub(super) fn quoted_list(values: &[&str]) -> String {
    let quoted: Vec<String> = values.iter().map(|value| format!("'{value}'")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{}, and {last}", rest.join(", ")),
        _ => quoted.join(""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_codex_turn_passes() {
        let input = json!({"instructions": "sys", "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "ls"}]},
            {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"},
            {"type": "function_call", "call_id": "a", "name": "shell", "arguments": "{}"},
            {"type": "function_call", "call_id": "b", "name": "shell", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "b", "output": "B"},
            {"type": "function_call_output", "call_id": "a", "output": "A"},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done", "annotations": []}]}
        ]});
        assert_eq!(validate_responses(&input), Vec::new());
    }

    #[test]
    fn every_violation_is_listed_in_openai_wording() {
        let input = json!([
            {"type": "function_call_output", "call_id": "x", "output": "orphan"},
            {"role": "robot", "content": [{"type": "text", "text": "?"}]},
            {"type": "function_call", "call_id": "a", "name": "ls", "arguments": "{}"},
            {"type": "function_call", "call_id": "a", "name": "ls", "arguments": "{}"},
            {"type": "reasoning", "id": "rs_2", "summary": []},
            {"role": "user", "content": [{"type": "tool-call", "toolCallId": "c"}]},
            {"type": "frobnicate"}
        ]);
        let text: Vec<String> = validate_responses(&input)
            .iter()
            .map(ToString::to_string)
            .collect();
        insta::assert_snapshot!(text.join("\n"), @r"
        input[0]: No tool call found for function call output with call_id x.
        input[1].role: Invalid value: 'robot'. Supported values are: 'assistant', 'system', 'developer', and 'user'.
        input[1].content[0].type: Invalid value: 'text'. Supported values are: 'input_text', 'input_image', 'output_text', 'refusal', 'input_file', 'computer_screenshot', and 'summary_text'.
        input[3].call_id: Duplicate value for 'call_id' of 'a' in 'input'.
        input[4]: Item 'rs_2' of type 'reasoning' was provided without its required following item.
        input[5].content[0].type: Invalid value: 'tool-call'. Supported values are: 'input_text', 'input_image', 'output_text', 'refusal', 'input_file', 'computer_screenshot', and 'summary_text'.
        input[6].type: Invalid value: 'frobnicate'. Supported values are: 'message', 'function_call', 'function_call_output', 'custom_tool_call', 'custom_tool_call_output', 'reasoning', 'file_search_call', 'web_search_call', 'computer_call', 'computer_call_output', 'image_generation_call', 'code_interpreter_call', 'local_shell_call', 'local_shell_call_output', 'shell_call', 'shell_call_output', 'apply_patch_call', 'apply_patch_call_output', 'mcp_list_tools', 'mcp_approval_request', 'mcp_approval_response', and 'mcp_call'.
        input[2]: No tool output found for function call a.
        ");
    }

    #[test]
    fn cache_breakpoints_only_on_input_parts_and_at_most_four() {
        let mark = json!({"mode": "explicit"});
        let input = json!({"input": [
            {"role": "system", "content": [{"type": "input_text", "text": "s", "prompt_cache_breakpoint": mark}]},
            {"type": "function_call", "call_id": "a", "name": "ls", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "a", "output": [{"type": "input_text", "text": "A", "prompt_cache_breakpoint": mark}]},
            {"role": "assistant", "content": [{"type": "output_text", "text": "b", "annotations": [], "prompt_cache_breakpoint": mark}]},
            {"role": "user", "content": [
                {"type": "input_image", "image_url": "https://x/a.png", "prompt_cache_breakpoint": mark},
                {"type": "input_file", "file_id": "f", "prompt_cache_breakpoint": mark},
                {"type": "input_text", "text": "c", "prompt_cache_breakpoint": mark}
            ]}
        ]});
        let found: Vec<String> = validate_responses(&input)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(found, [
            "input[3].content[0].prompt_cache_breakpoint: Unknown parameter: 'input[3].content[0].prompt_cache_breakpoint'.",
            "input: Too many 'prompt_cache_breakpoint' markers: 5 were given, at most 4 are allowed per request.",
        ]);
        let mut fixed = input.clone();
        fixed["input"].as_array_mut().unwrap().remove(3);
        fixed["input"][3]["content"][2]
            .as_object_mut()
            .unwrap()
            .remove("prompt_cache_breakpoint");
        assert_eq!(validate_responses(&fixed), Vec::new());
    }

    #[test]
    fn garbage_is_reported_not_panicked_on() {
        assert_eq!(validate_responses(&json!(3)).len(), 1);
        assert_eq!(validate_responses(&json!({"input": 3})).len(), 1);
        assert!(!validate_responses(&json!([1, null, {"type": 2}, {"role": 3}])).is_empty());
    }
}

//! Format detection: which transcript format a file is in, judged from its first value (JSON)
//! or its first line (JSONL), with an error that lists the known formats when none matches.

use serde_json::Value;

use crate::error::{CoreError, Result};
use crate::import::TranscriptFormat;

/// Guesses the format of a transcript file from its first value(s).
pub fn detect_format(text: &str) -> Result<TranscriptFormat> {
    let trimmed = text.trim_start();
    if trimmed.is_empty() {
        return Err(CoreError::invalid(
            "input",
            "empty: no transcript to import",
        ));
    }
    match serde_json::from_str::<Value>(trimmed) {
        Ok(value) => detect_json(&value),
        // Several values (or a truncated one): JSONL, judged by its first line.
        Err(_) => {
            let first = trimmed.lines().next().unwrap_or_default();
            let value: Value = serde_json::from_str(first).map_err(|error| {
                CoreError::invalid(
                    "line 1",
                    format!(
                        "not JSON or JSONL ({error}); expected one of the formats {}",
                        format_names()
                    ),
                )
            })?;
            detect_jsonl(&value)
        }
    }
}

pub(crate) fn format_names() -> String {
    TranscriptFormat::ALL
        .iter()
        .map(|f| f.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn detect_json(value: &Value) -> Result<TranscriptFormat> {
    let unknown = || {
        CoreError::invalid(
            "input",
            format!(
                "JSON that no known transcript format matches (expected one of {}); pass --format",
                format_names()
            ),
        )
    };
    match value {
        Value::Object(object)
            if object.contains_key("history")
                && (object.contains_key("trajectory") || object.contains_key("info")) =>
        {
            Ok(TranscriptFormat::SweAgent)
        }
        Value::Object(object)
            if object.contains_key("history") && object.contains_key("instance_id") =>
        {
            Ok(TranscriptFormat::OpenHands)
        }
        Value::Object(object)
            if object.contains_key("contents") || object.contains_key("candidates") =>
        {
            Ok(TranscriptFormat::Gemini)
        }
        Value::Object(object)
            if object.contains_key("input")
                || object.get("object").and_then(Value::as_str) == Some("response") =>
        {
            Ok(TranscriptFormat::Responses)
        }
        Value::Object(object) => match object.get("messages") {
            Some(Value::Array(messages)) if object.contains_key("system") => {
                Ok(messages_format(messages).unwrap_or(TranscriptFormat::Anthropic))
            }
            Some(Value::Array(messages)) if has_roles(messages) => {
                Ok(messages_format(messages).unwrap_or(TranscriptFormat::OpenAi))
            }
            Some(_) => Err(unknown()),
            _ => detect_jsonl(value).map_err(|_| unknown()),
        },
        Value::Array(items) => {
            let first = items.first().ok_or_else(|| {
                CoreError::invalid("input", "an empty list: no messages to import")
            })?;
            if first.get("traj").is_some() {
                Ok(TranscriptFormat::OpenAi)
            } else if let Some(format) = item_list_format(first) {
                Ok(format)
            } else if first.get("source").is_some()
                && (first.get("action").is_some() || first.get("observation").is_some())
            {
                Ok(TranscriptFormat::OpenHands)
            } else if has_roles(items) {
                Ok(messages_format(items).unwrap_or(TranscriptFormat::OpenAi))
            } else {
                Err(unknown())
            }
        }
        _ => Err(unknown()),
    }
}

fn detect_jsonl(first: &Value) -> Result<TranscriptFormat> {
    let claude_code_types = [
        "user",
        "assistant",
        "system",
        "progress",
        "file-history-snapshot",
        "queue-operation",
        "summary",
    ];
    if first.get("sessionId").is_some()
        || first.get("uuid").is_some()
        || first
            .get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| claude_code_types.contains(&t))
            && first.get("role").is_none()
    {
        return Ok(TranscriptFormat::ClaudeCode);
    }
    if first.get("instance_id").is_some() && first.get("history").is_some() {
        return Ok(TranscriptFormat::OpenHands);
    }
    let codex_types = [
        "session_meta",
        "response_item",
        "turn_context",
        "event_msg",
        "compacted",
    ];
    if first.get("payload").is_some()
        && first
            .get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| codex_types.contains(&t))
    {
        return Ok(TranscriptFormat::Codex);
    }
    let pi_types = [
        "session",
        "message",
        "model_change",
        "thinking_level_change",
        "compaction",
        "branch_summary",
        "custom_message",
    ];
    if first.get("payload").is_none()
        && first.get("role").is_none()
        && first
            .get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| pi_types.contains(&t))
        && ["version", "parentId", "cwd"]
            .iter()
            .any(|key| first.get(key).is_some())
    {
        return Ok(TranscriptFormat::Pi);
    }
    if first.get("role").is_some() {
        // JSONL of messages is ctxkit's own format (what `ctxkit append` reads) unless the
        // first line shows provider-specific shapes.
        return Ok(messages_format(std::slice::from_ref(first)).unwrap_or(TranscriptFormat::Ctxkit));
    }
    Err(CoreError::invalid(
        "line 1",
        format!(
            "a JSON object no known transcript format matches (expected one of {}); pass --format",
            format_names()
        ),
    ))
}

/// The format a list shows by its first element when that is not a role message: Gemini
/// contents (`parts`), Responses items (a typed item), LangChain messages (`lc`, or a
/// LangChain `type`).
fn item_list_format(first: &Value) -> Option<TranscriptFormat> {
    let kind = first.get("type").and_then(Value::as_str);
    if first.get("parts").is_some() {
        return Some(TranscriptFormat::Gemini);
    }
    if first.get("lc").is_some() {
        return Some(TranscriptFormat::LangChain);
    }
    if first.get("role").is_none() {
        return match kind {
            Some("human" | "ai" | "tool" | "system") => Some(TranscriptFormat::LangChain),
            Some("message" | "function_call" | "function_call_output" | "reasoning") => {
                Some(TranscriptFormat::Responses)
            }
            _ => None,
        };
    }
    (kind == Some("message")).then_some(TranscriptFormat::Responses)
}

fn has_roles(messages: &[Value]) -> bool {
    messages.iter().any(|m| m.get("role").is_some())
}

/// The format a list of message objects shows: Anthropic (typed blocks `tool_use`,
/// `tool_result`, `thinking`), ctxkit (`tool_calls[].arguments` directly, or `is_error`),
/// OpenAI (`role: "tool"` or `tool_calls[].function`); `None` when nothing tells (plain text
/// messages read the same in every format).
fn messages_format(messages: &[Value]) -> Option<TranscriptFormat> {
    let blocks = || {
        messages
            .iter()
            .filter_map(|m| m.get("content").and_then(Value::as_array))
            .flatten()
    };
    let anthropic_block = |block: &Value| {
        block.get("type").and_then(Value::as_str).is_some_and(|t| {
            matches!(
                t,
                "tool_use" | "tool_result" | "thinking" | "redacted_thinking"
            )
        })
    };
    if blocks().any(anthropic_block) {
        return Some(TranscriptFormat::Anthropic);
    }
    let part_type = |block: &Value, types: &[&str]| {
        block
            .get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| types.contains(&t))
    };
    if blocks().any(|block| part_type(block, &["tool-call", "tool-result", "reasoning"])) {
        return Some(TranscriptFormat::AiSdk);
    }
    if blocks().any(|block| part_type(block, &["input_text", "output_text", "input_image"])) {
        return Some(TranscriptFormat::Responses);
    }
    let calls = || {
        messages
            .iter()
            .filter_map(|m| m.get("tool_calls").and_then(Value::as_array))
            .flatten()
    };
    if calls().any(|call| call.get("arguments").is_some())
        || messages.iter().any(|m| m.get("is_error").is_some())
    {
        return Some(TranscriptFormat::Ctxkit);
    }
    let openai = calls().any(|call| call.get("function").is_some())
        || messages
            .iter()
            .any(|m| m.get("role").and_then(Value::as_str) == Some("tool"));
    openai.then_some(TranscriptFormat::OpenAi)
}

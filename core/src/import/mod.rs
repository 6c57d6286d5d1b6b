//! Importers for agent transcript formats found in the wild, with format detection.
//!
//! Each importer turns the text of a transcript file into the message model, plus whatever the
//! file knows that the model does not (real token usage per API call, where the agent
//! compacted). Importers read text the shell has loaded; they do no I/O and never panic on any
//! input. Errors name the line (JSONL) or the path (JSON) of the bad value.
//!
//! - [`claude_code`]: Claude Code session JSONL ([`import_claude_code`]).
//! - [`swe_agent`]: SWE-agent `.traj` files, with and without function calling.
//! - [`openhands`]: OpenHands event streams (one run, or a benchmark output of many).
//! - OpenAI Chat Completions and Anthropic Messages lists go through [`crate::wire`]; a
//!   tau-bench trajectory file (a list of `{task_id, trial, traj}`) gives one session per
//!   trajectory.
//! - The ctxkit format: a JSON array of messages, or JSONL with one message per line.
//!
//! [`import_transcript`] detects the format when not told, and returns one or more sessions.

pub mod claude_code;
pub mod openhands;
pub mod swe_agent;

pub use claude_code::{import_claude_code, ApiCall, ClaudeCodeSession, CompactionMarker};
pub use openhands::import_openhands;
pub use swe_agent::import_swe_agent;

use serde_json::Value;

use crate::error::{CoreError, Result};
use crate::message::Message;
use crate::wire::{from_anthropic, from_openai, index_path};

/// A transcript format ctxkit can import.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TranscriptFormat {
    /// Claude Code session JSONL.
    ClaudeCode,
    /// OpenAI Chat Completions messages (also tau-bench trajectory files).
    OpenAi,
    /// Anthropic Messages (`{system, messages}` or a messages list).
    Anthropic,
    /// SWE-agent `.traj`.
    SweAgent,
    /// OpenHands events (a list, or JSONL of benchmark outputs with a `history` each).
    OpenHands,
    /// ctxkit's own message format (JSON array or JSONL).
    Ctxkit,
}

impl TranscriptFormat {
    /// Every format, in the order `--format` lists them.
    pub const ALL: [TranscriptFormat; 6] = [
        TranscriptFormat::ClaudeCode,
        TranscriptFormat::OpenAi,
        TranscriptFormat::Anthropic,
        TranscriptFormat::SweAgent,
        TranscriptFormat::OpenHands,
        TranscriptFormat::Ctxkit,
    ];

    /// The format's name on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            TranscriptFormat::ClaudeCode => "claude-code",
            TranscriptFormat::OpenAi => "openai",
            TranscriptFormat::Anthropic => "anthropic",
            TranscriptFormat::SweAgent => "swe-agent",
            TranscriptFormat::OpenHands => "openhands",
            TranscriptFormat::Ctxkit => "ctxkit",
        }
    }
}

impl std::str::FromStr for TranscriptFormat {
    type Err = CoreError;
    fn from_str(name: &str) -> Result<Self> {
        TranscriptFormat::ALL
            .into_iter()
            .find(|format| format.as_str() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = TranscriptFormat::ALL.iter().map(|f| f.as_str()).collect();
                CoreError::invalid(
                    "format",
                    format!(
                        "unknown format {name:?} (expected one of {})",
                        names.join(", ")
                    ),
                )
            })
    }
}

/// One conversation found in a transcript file.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedSession {
    /// Which part of a file holding several (`task 3 trial 0`, an instance id); `None` for a
    /// file holding one conversation.
    pub label: Option<String>,
    /// The conversation.
    pub messages: Vec<Message>,
    /// Indices into `messages` where the source agent compacted (Claude Code boundaries).
    pub compactions: Vec<usize>,
}

impl ImportedSession {
    fn single(messages: Vec<Message>) -> Self {
        ImportedSession {
            label: None,
            messages,
            compactions: Vec::new(),
        }
    }
}

/// What a transcript file held.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// The format it was read as.
    pub format: TranscriptFormat,
    /// Its conversations.
    pub sessions: Vec<ImportedSession>,
}

/// Imports `text` as `format`, or as the detected format when `None`.
pub fn import_transcript(text: &str, format: Option<TranscriptFormat>) -> Result<Imported> {
    let format = match format {
        Some(format) => format,
        None => detect_format(text)?,
    };
    let sessions = match format {
        TranscriptFormat::ClaudeCode => {
            let session = import_claude_code(text)?;
            let compactions = session
                .compactions
                .iter()
                .map(|marker| marker.message_index)
                .collect();
            vec![ImportedSession {
                label: None,
                messages: session.messages,
                compactions,
            }]
        }
        TranscriptFormat::Ctxkit => vec![ImportedSession::single(ctxkit_messages(text)?)],
        TranscriptFormat::OpenAi => import_openai_file(&parse_json(text)?)?,
        TranscriptFormat::Anthropic => {
            vec![ImportedSession::single(from_anthropic(&parse_json(text)?)?)]
        }
        TranscriptFormat::SweAgent => vec![ImportedSession::single(import_swe_agent(
            &parse_json(text)?,
        )?)],
        TranscriptFormat::OpenHands => import_openhands_file(text)?,
    };
    Ok(Imported { format, sessions })
}

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

fn format_names() -> String {
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

fn parse_json(text: &str) -> Result<Value> {
    serde_json::from_str(text).map_err(|error| {
        CoreError::invalid(
            format!("line {}", error.line()),
            format!("invalid JSON: {error}"),
        )
    })
}

/// ctxkit messages: a JSON array, or JSONL with one message per line (blank lines skipped).
pub fn ctxkit_messages(text: &str) -> Result<Vec<Message>> {
    if text.trim_start().starts_with('[') {
        let value = parse_json(text)?;
        let items = value.as_array().map(Vec::as_slice).unwrap_or_default();
        return items
            .iter()
            .enumerate()
            .map(|(index, item)| {
                serde_json::from_value(item.clone()).map_err(|error| {
                    CoreError::invalid(index_path("messages", index), error.to_string())
                })
            })
            .collect();
    }
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(index, line)| {
            serde_json::from_str(line).map_err(|error| {
                CoreError::invalid(format!("line {}", index + 1), error.to_string())
            })
        })
        .collect()
}

/// An OpenAI file: a messages list, `{messages}`, or tau-bench's list of trajectories.
fn import_openai_file(value: &Value) -> Result<Vec<ImportedSession>> {
    let Some(items) = value.as_array().filter(|items| {
        items
            .first()
            .is_some_and(|first| first.get("traj").is_some())
    }) else {
        return Ok(vec![ImportedSession::single(from_openai(value)?)]);
    };
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let at = index_path("trajectories", index);
            let traj = item
                .get("traj")
                .ok_or_else(|| CoreError::invalid(format!("{at}.traj"), "missing"))?;
            let messages = from_openai(traj)
                .map_err(|error| CoreError::invalid(format!("{at}.traj"), error.to_string()))?;
            let task = item
                .get("task_id")
                .map(Value::to_string)
                .unwrap_or_else(|| index.to_string());
            let label = match item.get("trial") {
                Some(trial) => format!("task {task} trial {trial}"),
                None => format!("task {task}"),
            };
            Ok(ImportedSession {
                label: Some(label),
                messages,
                compactions: Vec::new(),
            })
        })
        .collect()
}

/// An OpenHands file: an event list, one run object, or JSONL of benchmark outputs.
fn import_openhands_file(text: &str) -> Result<Vec<ImportedSession>> {
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
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_detected_from_their_shape() {
        let cases = [
            (
                r#"[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"a","content":"x"}]"#,
                TranscriptFormat::OpenAi,
            ),
            (
                r#"{"system":"s","messages":[{"role":"user","content":"hi"}]}"#,
                TranscriptFormat::Anthropic,
            ),
            (
                r#"[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"n","input":{}}]}]"#,
                TranscriptFormat::Anthropic,
            ),
            (
                r#"[{"role":"assistant","content":"","tool_calls":[{"id":"a","name":"n","arguments":"{}"}]}]"#,
                TranscriptFormat::Ctxkit,
            ),
            (
                "{\"role\":\"user\",\"content\":\"a\"}\n{\"role\":\"user\",\"content\":\"b\"}\n",
                TranscriptFormat::Ctxkit,
            ),
            (
                r#"{"history":[],"trajectory":[],"info":{}}"#,
                TranscriptFormat::SweAgent,
            ),
            (
                r#"[{"id":0,"source":"user","action":"message","args":{"content":"x"}}]"#,
                TranscriptFormat::OpenHands,
            ),
            (r#"[{"task_id":1,"traj":[]}]"#, TranscriptFormat::OpenAi),
            (
                "{\"type\":\"user\",\"uuid\":\"u\",\"message\":{}}\n",
                TranscriptFormat::ClaudeCode,
            ),
        ];
        for (text, format) in cases {
            assert_eq!(detect_format(text).unwrap(), format, "{text}");
        }
    }

    #[test]
    fn unknown_and_broken_input_is_named() {
        assert_eq!(
            detect_format("").unwrap_err().to_string(),
            "input: empty: no transcript to import"
        );
        assert!(detect_format("\u{0}\u{1}garbage")
            .unwrap_err()
            .to_string()
            .starts_with("line 1: not JSON or JSONL"));
        assert!(detect_format(r#"{"hello": 1}"#)
            .unwrap_err()
            .to_string()
            .contains("pass --format"));
        let error = import_transcript(
            "{\"role\":\"user\",\"content\":\"a\"}\n{\"role\":\"user\",\"con",
            Some(TranscriptFormat::Ctxkit),
        )
        .unwrap_err();
        assert!(
            error.to_string().starts_with("line 2: EOF while parsing"),
            "{error}"
        );
        let error = import_transcript(
            r#"[{"role":"user","content":"a"},{"content":"b"}]"#,
            Some(TranscriptFormat::Ctxkit),
        )
        .unwrap_err();
        assert_eq!(error.to_string(), "messages[1]: missing field `role`");
        assert!("yaml"
            .parse::<TranscriptFormat>()
            .unwrap_err()
            .to_string()
            .contains("expected one of claude-code, openai"));
    }
}

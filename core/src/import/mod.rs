//! Importers for agent transcript formats found in the wild, with format detection.
//!
//! Each importer turns the text of a transcript file into the message model, plus whatever the
//! file knows that the model does not (real token usage per API call, where the agent
//! compacted). Importers read text the shell has loaded; they do no I/O and never panic on any
//! input. Errors name the line (JSONL) or the path (JSON) of the bad value.
//!
//! - `claude_code`: Claude Code session JSONL ([`import_claude_code`]).
//! - `swe_agent`: SWE-agent `.traj` files, with and without function calling.
//! - `openhands`: OpenHands event streams (one run, or a benchmark output of many).
//! - OpenAI Chat Completions and Anthropic Messages lists go through [`crate::wire`]; a
//!   tau-bench trajectory file (a list of `{task_id, trial, traj}`) gives one session per
//!   trajectory.
//! - The ctxkit format: a JSON array of messages, or JSONL with one message per line.
//! - OpenAI Responses, Gemini, AI SDK and LangChain message lists go through [`crate::wire`].
//! - `codex`: Codex CLI rollouts ([`import_codex`]), with the real usage of each API call.
//! - `pi`: pi coding agent sessions ([`import_pi`]): the active branch of the session tree.
//!
//! Every session says which model the transcript names, where it names one
//! ([`ImportedSession::model`]), so a shell can estimate tokens for that model's family.
//!
//! [`import_transcript`] detects the format when not told, and returns one or more sessions.

mod claude_code;
mod codex;
mod detect;
mod jsonl;
mod openhands;
mod pi;
mod swe_agent;

pub use claude_code::{
    import_claude_code, import_claude_code_conversations, ApiCall, ClaudeCodeSession,
    CompactionMarker, RecordedUsage,
};
pub use codex::{import_codex, CodexSession};
pub use detect::detect_format;
pub use openhands::import_openhands;
pub use pi::{import_pi, PiSession};
pub use swe_agent::import_swe_agent;

use openhands::import_openhands_file;

use serde_json::Value;

use crate::error::{CoreError, Result};
use crate::model::Message;
use crate::text::is_working_directory;
use crate::wire::{
    from_ai_sdk, from_anthropic, from_gemini, from_langchain, from_openai, from_responses,
    index_path,
};

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
    /// OpenAI Responses items (`{instructions, input}`, `{output}` or a list of items).
    Responses,
    /// Gemini contents (`{systemInstruction, contents}` or a list of contents).
    Gemini,
    /// Vercel AI SDK `ModelMessage`s.
    AiSdk,
    /// LangChain serialized messages (any of their forms).
    LangChain,
    /// Codex CLI rollout JSONL.
    Codex,
    /// pi coding agent session JSONL.
    Pi,
}

impl TranscriptFormat {
    /// Every format, in the order `--format` lists them.
    pub const ALL: [TranscriptFormat; 12] = [
        TranscriptFormat::ClaudeCode,
        TranscriptFormat::OpenAi,
        TranscriptFormat::Anthropic,
        TranscriptFormat::SweAgent,
        TranscriptFormat::OpenHands,
        TranscriptFormat::Ctxkit,
        TranscriptFormat::Responses,
        TranscriptFormat::Gemini,
        TranscriptFormat::AiSdk,
        TranscriptFormat::LangChain,
        TranscriptFormat::Codex,
        TranscriptFormat::Pi,
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
            TranscriptFormat::Responses => "responses",
            TranscriptFormat::Gemini => "gemini",
            TranscriptFormat::AiSdk => "ai-sdk",
            TranscriptFormat::LangChain => "langchain",
            TranscriptFormat::Codex => "codex",
            TranscriptFormat::Pi => "pi",
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
    /// The model the transcript names for this conversation (its first), when it names one:
    /// [`crate::tokens::ModelFamily::of_model`] gives the tokenizer family to estimate with.
    pub model: Option<String>,
    /// The directory the agent ran in, as the transcript's own records give it (pi's header
    /// `cwd`, the `cwd` of Claude Code's lines, Codex's `session_meta`/`turn_context` `cwd`):
    /// the first one named. A shell passes it on as [`crate::compaction::Policy::working_directory`],
    /// so the summaries name it and write paths relative to it. `None` when the format has no
    /// such record or the transcript names no absolute directory.
    pub working_directory: Option<String>,
}

impl ImportedSession {
    fn single(messages: Vec<Message>) -> Self {
        ImportedSession {
            label: None,
            messages,
            compactions: Vec::new(),
            model: None,
            working_directory: None,
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
        TranscriptFormat::ClaudeCode => import_claude_code_conversations(text)?
            .into_iter()
            .map(|(label, session)| ImportedSession {
                label,
                model: session.api_calls.first().map(|call| call.model.clone()),
                compactions: marker_indices(&session.compactions),
                working_directory: session.cwd.filter(|dir| is_working_directory(dir)),
                messages: session.messages,
            })
            .collect(),
        TranscriptFormat::Ctxkit => vec![ImportedSession::single(ctxkit_messages(text)?)],
        TranscriptFormat::OpenAi => import_openai_file(&parse_json(text)?)?,
        TranscriptFormat::Anthropic => {
            vec![ImportedSession::single(from_anthropic(&parse_json(text)?)?)]
        }
        TranscriptFormat::SweAgent => vec![ImportedSession::single(import_swe_agent(
            &parse_json(text)?,
        )?)],
        TranscriptFormat::OpenHands => import_openhands_file(text)?,
        TranscriptFormat::Responses => single(from_responses(&parse_json(text)?)?),
        TranscriptFormat::Gemini => single(from_gemini(&parse_json(text)?)?),
        TranscriptFormat::AiSdk => single(from_ai_sdk(&parse_json(text)?)?),
        TranscriptFormat::LangChain => single(from_langchain(&parse_json(text)?)?),
        TranscriptFormat::Codex => {
            let session = import_codex(text)?;
            vec![ImportedSession {
                label: None,
                compactions: marker_indices(&session.compactions),
                model: session.model,
                working_directory: session.cwd.filter(|dir| is_working_directory(dir)),
                messages: session.messages,
            }]
        }
        TranscriptFormat::Pi => {
            let session = import_pi(text)?;
            vec![ImportedSession {
                label: None,
                compactions: marker_indices(&session.compactions),
                model: session.model,
                working_directory: session.cwd.filter(|dir| is_working_directory(dir)),
                messages: session.messages,
            }]
        }
    };
    Ok(Imported { format, sessions })
}

fn marker_indices(markers: &[CompactionMarker]) -> Vec<usize> {
    markers.iter().map(|marker| marker.message_index).collect()
}

fn single(messages: Vec<Message>) -> Vec<ImportedSession> {
    vec![ImportedSession::single(messages)]
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
                model: None,
                working_directory: None,
            })
        })
        .collect()
}

#[cfg(test)]
mod working_directory_tests;

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

//! Real Claude token counts from a Claude Code session: the growth of the prompt between
//! consecutive API calls (shared/corpus/FORMATS.md, "Token ground truth").
//!
//! Assistant lines are grouped by `message.id` (one API call each, even when parallel tool
//! calls interleave with their results); a call's prompt size is `input_tokens +
//! cache_creation_input_tokens + cache_read_input_tokens`. Between two calls, the prompt grew by
//! the previous assistant turn (text and tool_use blocks) and whatever user lines followed it
//! (tool results, typed text, hook text), so [`ClaudeInterval::real_tokens`] is the real count
//! of [`ClaudeInterval::appended`], plus framing.

use crate::estimator_corpus::{
    read_jsonl, str_of, tool_result_text, CLAUDE_SESSION, CLAUDE_SUBAGENT,
};
use ctxkit_core::{Message, ToolCall};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// One interval between consecutive API calls of a Claude Code session: what was appended to
/// the prompt, and by how many tokens the real prompt grew.
#[derive(Debug, Clone)]
pub struct ClaudeInterval {
    /// Which file.
    pub session: &'static str,
    /// The model of the call that produced the appended assistant turn.
    pub model: String,
    /// The previous assistant turn and the messages after it (tool results, user text).
    pub appended: Vec<Message>,
    /// Real prompt growth in tokens: the next call's prompt minus this call's.
    pub real_tokens: u64,
    /// Characters of tool results in `appended`.
    pub tool_result_chars: usize,
    /// The assistant turn had a thinking block (its cost in the next prompt is unclear).
    pub has_thinking: bool,
    /// A compaction happened between the calls.
    pub crosses_compaction: bool,
}

impl ClaudeInterval {
    /// Whether FORMATS.md's filter keeps it: no thinking, at least 4,000 characters of tool
    /// result, a positive increase, no compaction in between.
    pub fn is_measurable(&self) -> bool {
        !self.has_thinking
            && self.tool_result_chars >= 4000
            && self.real_tokens > 0
            && !self.crosses_compaction
    }
}

/// The intervals of the corpus's Claude Code session and its sub-agent.
pub fn claude_intervals(corpus: &Path) -> Vec<ClaudeInterval> {
    let mut intervals = session_intervals(&corpus.join(CLAUDE_SESSION), "main", true);
    intervals.extend(session_intervals(
        &corpus.join(CLAUDE_SUBAGENT),
        "subagent",
        false,
    ));
    intervals
}

#[derive(Default)]
struct ApiCall {
    prompt_tokens: u64,
    model: String,
    text: String,
    tool_calls: Vec<ToolCall>,
    has_thinking: bool,
    after: Vec<Message>,
    compaction_after: bool,
}

fn session_intervals(
    path: &Path,
    session: &'static str,
    skip_sidechain: bool,
) -> Vec<ClaudeInterval> {
    let mut calls: Vec<ApiCall> = Vec::new();
    let mut index_of: BTreeMap<String, usize> = BTreeMap::new();
    for value in read_jsonl(path) {
        if skip_sidechain && value["isSidechain"].as_bool() == Some(true) {
            continue;
        }
        match str_of(&value["type"]) {
            "assistant" => {
                let message = &value["message"];
                let id = str_of(&message["id"]).to_string();
                let index = *index_of.entry(id).or_insert_with(|| {
                    let usage = &message["usage"];
                    let tokens = [
                        "input_tokens",
                        "cache_creation_input_tokens",
                        "cache_read_input_tokens",
                    ]
                    .iter()
                    .map(|field| usage[field].as_u64().unwrap_or(0))
                    .sum();
                    calls.push(ApiCall {
                        prompt_tokens: tokens,
                        model: str_of(&message["model"]).to_string(),
                        ..ApiCall::default()
                    });
                    calls.len() - 1
                });
                let Some(call) = calls.get_mut(index) else {
                    continue;
                };
                for block in message["content"].as_array().into_iter().flatten() {
                    match str_of(&block["type"]) {
                        "text" => call.text.push_str(str_of(&block["text"])),
                        "thinking" | "redacted_thinking" => call.has_thinking = true,
                        "tool_use" => call.tool_calls.push(ToolCall::new(
                            str_of(&block["id"]),
                            str_of(&block["name"]),
                            block["input"].to_string(),
                        )),
                        _ => {}
                    }
                }
            }
            "user" => {
                let Some(call) = calls.last_mut() else {
                    continue;
                };
                match &value["message"]["content"] {
                    Value::String(text) => call.after.push(Message::user(text.clone())),
                    Value::Array(blocks) => {
                        for block in blocks {
                            match str_of(&block["type"]) {
                                "tool_result" => call.after.push(Message::tool_result(
                                    str_of(&block["tool_use_id"]),
                                    tool_result_text(&block["content"]),
                                    block["is_error"].as_bool().unwrap_or(false),
                                )),
                                "text" => call.after.push(Message::user(str_of(&block["text"]))),
                                _ => {}
                            }
                        }
                    }
                    _ => {}
                }
            }
            "system" if str_of(&value["subtype"]) == "compact_boundary" => {
                if let Some(call) = calls.last_mut() {
                    call.compaction_after = true;
                }
            }
            _ => {}
        }
    }
    calls
        .windows(2)
        .filter_map(|pair| {
            let [call, next] = pair else { return None };
            let mut appended = vec![Message::assistant(
                call.text.clone(),
                call.tool_calls.clone(),
            )];
            appended.extend(call.after.iter().cloned());
            let tool_result_chars = call
                .after
                .iter()
                .filter(|message| message.tool_call_id.is_some())
                .map(|message| message.text_content().chars().count())
                .sum();
            Some(ClaudeInterval {
                session,
                model: call.model.clone(),
                appended,
                real_tokens: next.prompt_tokens.saturating_sub(call.prompt_tokens),
                tool_result_chars,
                has_thinking: call.has_thinking,
                crosses_compaction: call.compaction_after
                    || next.prompt_tokens < call.prompt_tokens,
            })
        })
        .collect()
}

//! A Claude Code transcript as the model calls its agent made: for each recorded response, the
//! request Claude Code sent (the conversation since its latest compaction, re-sent whole, as the
//! Anthropic Messages API takes it) and the answer the API gave (the recorded assistant message
//! as a non-streaming response body).

use ctxkit::core::import::{import_claude_code, ClaudeCodeSession};
use ctxkit::core::model::Message;
use ctxkit::core::tokens::{estimate_text, ModelFamily};
use ctxkit::core::wire::to_anthropic;
use ctxkit_lab::cost::{call_times, pricing_for, recorded_cost, recorded_reserve, ModelPricing};
use serde_json::{json, Value};

/// One recorded model call.
pub struct Call {
    /// The agent's request body (system, messages, with Claude Code's cache marks).
    pub request: Value,
    /// The upstream's answer body, as the fake upstream sends it.
    pub answer: String,
    /// The same answer as one JSON body (what an event stream adds up to), for needed-next.
    pub reply: Value,
    /// When it was made (unix seconds), for the cache's lifetime.
    pub at: Option<i64>,
}

/// A transcript ready to replay.
pub struct Transcript {
    pub calls: Vec<Call>,
    /// What the calls cost by their recorded usage, in input units (uncached input = 1).
    pub recorded_units: Option<f64>,
    /// Claude Code's compactions the transcript records.
    pub agent_compactions: usize,
    /// Whether the first call read the system prompt and tools from the cache (an earlier
    /// session left them there), as `ctxkit cost` takes it from the first recorded usage.
    pub warm_start: bool,
    /// The prices of the transcript's model (as `ctxkit cost`: else claude-sonnet-4-5's).
    pub pricing: ModelPricing,
    /// Whether the calls are OpenAI Responses requests (a Codex rollout), not Anthropic's.
    pub responses: bool,
}

/// Reads `text` (a Claude Code `.jsonl`) into its calls.
pub fn read(text: &str, streaming: bool) -> Result<Transcript, String> {
    let session = import_claude_code(text).map_err(|e| e.to_string())?;
    let pricing = session
        .api_calls
        .iter()
        .find_map(|call| pricing_for(&call.model))
        .or_else(|| pricing_for("claude-sonnet-4-5"))
        .ok_or("no price for the transcript's model")?;
    let recorded_units =
        recorded_cost(&session.api_calls, &pricing.prices).map(|cost| cost.input_cost_units);
    // The transcript does not hold the system prompt and tool schemas; the first call's recorded
    // usage says how big they were, so a filler of that size stands for them (the proxy counts
    // it in its window and the bill counts it in both rows alike).
    let reserve = recorded_reserve(&session, ModelFamily::Claude).unwrap_or(0);
    let system = filler(reserve);
    let times = call_times(&session);
    let mut calls = Vec::new();
    for (index, call) in session.api_calls.iter().enumerate() {
        let start = conversation_start(&session, call.message_index);
        let Some(prompt) = session.messages.get(start..call.message_index) else {
            continue;
        };
        let Some(answer) = session.messages.get(call.message_index) else {
            continue;
        };
        if prompt.is_empty() {
            continue;
        }
        let reply = answer_body(&call.message_id, &call.model, answer)?;
        calls.push(Call {
            request: request(&call.model, &system, prompt, streaming)?,
            answer: if streaming {
                crate::sse::stream(&reply)
            } else {
                reply.to_string()
            },
            reply,
            at: times.get(index).copied().flatten(),
        });
    }
    Ok(Transcript {
        calls,
        recorded_units,
        agent_compactions: session.compactions.len(),
        warm_start: session
            .api_calls
            .iter()
            .find_map(|call| call.usage)
            .is_some_and(|usage| usage.cache_read > 0),
        pricing,
        responses: false,
    })
}

/// The first message the model saw at message `index`: after the latest compaction before it.
fn conversation_start(session: &ClaudeCodeSession, index: usize) -> usize {
    session
        .compactions
        .iter()
        .map(|marker| marker.message_index)
        .filter(|start| *start <= index)
        .max()
        .unwrap_or(0)
}

/// About `tokens` of text that stands for the agent's unrecorded system prompt and tools.
fn filler(tokens: u64) -> String {
    let line = "The agent's system prompt and tool schemas, not recorded in its transcript. ";
    let per_line = estimate_text(line, ModelFamily::Claude).max(1);
    let mut text = String::from("You are Claude Code. ");
    for n in 0..tokens / per_line {
        text.push_str(&format!("{n}: {line}"));
    }
    text
}

/// Claude Code's request: the system prompt marked for the cache, and the last block of the
/// last message marked (Claude Code moves that mark to the end every turn).
fn request(
    model: &str,
    system: &str,
    prompt: &[Message],
    streaming: bool,
) -> Result<Value, String> {
    let wire = to_anthropic(prompt).map_err(|e| e.to_string())?;
    let mut messages = wire.get("messages").cloned().unwrap_or(json!([]));
    if let Some(last) = messages.as_array_mut().and_then(|m| m.last_mut()) {
        mark_last_block(last);
    }
    Ok(json!({
        "model": model,
        "max_tokens": 32000,
        "system": [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
        "messages": messages,
        "stream": streaming,
    }))
}

fn mark_last_block(message: &mut Value) {
    if let Some(text) = message.get("content").and_then(Value::as_str) {
        let block = json!([{"type": "text", "text": text}]);
        message["content"] = block;
    }
    if let Some(block) = message
        .get_mut("content")
        .and_then(Value::as_array_mut)
        .and_then(|blocks| blocks.last_mut())
    {
        block["cache_control"] = json!({"type": "ephemeral"});
    }
}

/// The recorded assistant message as the API's answer body.
fn answer_body(id: &str, model: &str, message: &Message) -> Result<Value, String> {
    let wire = to_anthropic(std::slice::from_ref(message)).map_err(|e| e.to_string())?;
    let content = wire
        .get("messages")
        .and_then(|m| m.get(0))
        .and_then(|m| m.get("content"))
        .cloned()
        .unwrap_or(json!([]));
    let content = match content {
        Value::String(text) => json!([{"type": "text", "text": text}]),
        other => other,
    };
    let calls_tool = content
        .as_array()
        .is_some_and(|blocks| blocks.iter().any(|b| b["type"] == "tool_use"));
    let stop = if calls_tool { "tool_use" } else { "end_turn" };
    Ok(json!({
        "id": id, "type": "message", "role": "assistant", "model": model,
        "content": content, "stop_reason": stop, "stop_sequence": null,
        "usage": {"input_tokens": 0, "output_tokens": 0}
    }))
}

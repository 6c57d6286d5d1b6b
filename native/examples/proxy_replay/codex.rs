//! A Codex CLI rollout as the model calls Codex made: its `response_item` lines are the
//! conversation's Responses items in order, and each run of assistant-side items (reasoning,
//! a message, calls: the core's `responses_turns`) is one call's output. The request of that
//! call is what Codex sent (every item before the run, re-sent whole, as `POST /v1/responses`
//! takes it, with Codex's fields: `store: false`, encrypted reasoning included); its answer is
//! the run as the API's response (its event stream when streaming).
//!
//! The rollouts (codex cli 0.40.0) hold neither Codex's base instructions (`instructions:
//! null`) nor its tool schemas, and no usage: the requests carry `instructions` only when the
//! rollout has them and no tools, so both billed rows leave out the same fixed prefix, and
//! there is no recorded cost.

use ctxkit::core::wire::responses_turns;
use ctxkit_lab::cost::{pricing_for, utc_seconds};
use serde_json::{json, Value};

use crate::calls::{Call, Transcript};

/// Reads `text` (a Codex rollout `.jsonl`) into its calls.
pub fn read(text: &str, streaming: bool) -> Result<Transcript, String> {
    let mut items = Vec::new();
    let mut times = Vec::new();
    let mut model = None;
    let mut instructions = None;
    let mut id = String::new();
    for (number, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let value: Value =
            serde_json::from_str(line).map_err(|e| format!("line {}: {e}", number + 1))?;
        let payload = value.get("payload").cloned().unwrap_or(Value::Null);
        match value.get("type").and_then(Value::as_str) {
            Some("session_meta") => {
                id = payload["id"].as_str().unwrap_or_default().to_owned();
                instructions = payload
                    .pointer("/base_instructions/text")
                    .or_else(|| payload.get("instructions"))
                    .and_then(Value::as_str)
                    .map(str::to_owned);
            }
            Some("turn_context") if model.is_none() => {
                model = payload["model"].as_str().map(str::to_owned);
            }
            Some("response_item") => {
                items.push(payload);
                times.push(value["timestamp"].as_str().and_then(utc_seconds));
            }
            _ => {}
        }
    }
    let model = model.unwrap_or_else(|| "gpt-5-codex".to_owned());
    let pricing = pricing_for(&model).ok_or_else(|| format!("no price for {model}"))?;
    let mut calls = Vec::new();
    for run in responses_turns(&items) {
        let Some(output) = items.get(run.clone()) else {
            continue;
        };
        if run.start == 0 || output.iter().all(user_side) {
            continue;
        }
        let mut request = json!({
            "model": model, "input": items.get(..run.start).unwrap_or_default(),
            "tools": [], "tool_choice": "auto", "parallel_tool_calls": false,
            "reasoning": {"effort": "medium", "summary": "auto"}, "store": false,
            "stream": streaming, "include": ["reasoning.encrypted_content"],
            "prompt_cache_key": id,
        });
        if let Some(text) = &instructions {
            request["instructions"] = json!(text);
        }
        let answer = response(calls.len(), &model, output);
        calls.push(Call {
            request,
            answer: if streaming {
                stream(&answer)
            } else {
                answer.to_string()
            },
            reply: answer,
            at: times.get(run.start).copied().flatten(),
        });
    }
    Ok(Transcript {
        calls,
        recorded_units: None,
        agent_compactions: text.matches(r#""type":"compacted""#).count(),
        warm_start: false,
        pricing,
        responses: true,
    })
}

/// Whether an item is on the user's side (a message not the assistant's, a tool's output).
fn user_side(item: &Value) -> bool {
    match item
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("message")
    {
        "message" => item["role"] != "assistant",
        kind => kind.ends_with("_output"),
    }
}

fn response(index: usize, model: &str, output: &[Value]) -> Value {
    json!({"id": format!("resp_{index}"), "object": "response", "created_at": 0,
           "status": "completed", "model": model, "output": output,
           "usage": {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}})
}

/// `response` as the API's event stream: each output item added and done, then
/// `response.completed`.
fn stream(response: &Value) -> String {
    let mut created = response.clone();
    created["status"] = json!("in_progress");
    created["output"] = json!([]);
    let mut events = vec![json!({"type": "response.created", "response": created})];
    for (index, item) in response["output"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        events.push(
            json!({"type": "response.output_item.added", "output_index": index, "item": item}),
        );
        events.push(
            json!({"type": "response.output_item.done", "output_index": index, "item": item}),
        );
    }
    events.push(json!({"type": "response.completed", "response": response}));
    events
        .iter()
        .map(|event| {
            format!(
                "event: {}\ndata: {event}\n\n",
                event["type"].as_str().unwrap_or("")
            )
        })
        .collect()
}

//! A recorded answer as the API streams it (`"stream": true`): `message_start`, each content
//! block as `content_block_start`, one delta (text, thinking then its signature, or the tool
//! input's JSON) and `content_block_stop`, then `message_delta` with the stop reason and
//! `message_stop`. One delta per block is enough: the proxy reassembles the message from the
//! events whatever their split, and the agent gets the bytes as sent.

use serde_json::{json, Value};

/// The event stream of the answer `body` (a non-streaming answer's JSON).
pub fn stream(body: &Value) -> String {
    let mut head = body.clone();
    head["content"] = json!([]);
    head["stop_reason"] = Value::Null;
    let mut out = event(&json!({"type": "message_start", "message": head}));
    let blocks = body.get("content").and_then(Value::as_array);
    for (index, block) in blocks.into_iter().flatten().enumerate() {
        for data in block_events(index, block) {
            out.push_str(&event(&data));
        }
    }
    out.push_str(&event(&json!({
        "type": "message_delta",
        "delta": {"stop_reason": body["stop_reason"], "stop_sequence": null},
        "usage": {"output_tokens": 0}
    })));
    out.push_str(&event(&json!({"type": "message_stop"})));
    out
}

fn event(data: &Value) -> String {
    let name = data.get("type").and_then(Value::as_str).unwrap_or("");
    format!("event: {name}\ndata: {data}\n\n")
}

/// A block's start, deltas and stop.
fn block_events(index: usize, block: &Value) -> Vec<Value> {
    let start = |content_block: Value| json!({"type": "content_block_start", "index": index, "content_block": content_block});
    let delta =
        |delta: Value| json!({"type": "content_block_delta", "index": index, "delta": delta});
    let mut events = match block.get("type").and_then(Value::as_str) {
        Some("text") => vec![
            start(json!({"type": "text", "text": ""})),
            delta(json!({"type": "text_delta", "text": block["text"]})),
        ],
        Some("thinking") => vec![
            start(json!({"type": "thinking", "thinking": ""})),
            delta(json!({"type": "thinking_delta", "thinking": block["thinking"]})),
            delta(json!({"type": "signature_delta", "signature": block["signature"]})),
        ],
        Some("tool_use") => vec![
            start(
                json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}),
            ),
            delta(json!({"type": "input_json_delta",
                         "partial_json": block.get("input").map(Value::to_string).unwrap_or_default()})),
        ],
        // Any other block (redacted thinking, a server tool's) arrives whole in its start.
        _ => vec![start(block.clone())],
    };
    events.push(json!({"type": "content_block_stop", "index": index}));
    events
}

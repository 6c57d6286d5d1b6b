//! An Anthropic answer's stream read as it passes through: the bytes go to the agent
//! unchanged (the caller's job), and this reassembles the `content` blocks from the events, so
//! the assistant message can be kept in the log once the stream ends.
//!
//! Events are split on blank lines and only their `data:` lines are read. `content_block_start`
//! opens a block; `content_block_delta` adds `text_delta` text, `thinking_delta` thinking,
//! `signature_delta` a signature and `input_json_delta` partial JSON (parsed when the block
//! stops); other events (`ping`, `message_delta`, `error`...) add nothing. A stream cut short
//! or one with an `error` event yields no message ([`Reassembly::content`] is `None`): a
//! partial answer is not kept as if the model had said it. Nothing here fails or panics on bad
//! input; an unreadable event only makes the answer unkept.

use serde_json::Value;

/// The stream's state so far.
#[derive(Debug, Default)]
pub struct Reassembly {
    /// Bytes of an event not yet ended by a blank line.
    pending: Vec<u8>,
    /// The blocks, by index, with each tool block's partial JSON beside it.
    blocks: Vec<(Value, String)>,
    stopped: bool,
    broken: bool,
}

impl Reassembly {
    /// Reads the next bytes of the stream.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
        while let Some(end) = event_end(&self.pending) {
            let event: Vec<u8> = self.pending.drain(..end.1).take(end.0).collect();
            self.event(&String::from_utf8_lossy(&event));
        }
    }

    /// Whether the stream said it ended (`message_stop`) or broke (an `error` event, an
    /// unreadable one): nothing after it changes [`Reassembly::content`].
    pub fn ended(&self) -> bool {
        self.stopped || self.broken
    }

    /// The answer's `content` blocks, when the stream ended with `message_stop` and no error.
    pub fn content(&self) -> Option<Value> {
        if !self.stopped || self.broken {
            return None;
        }
        Some(Value::Array(
            self.blocks.iter().map(|(block, _)| block.clone()).collect(),
        ))
    }

    fn event(&mut self, event: &str) {
        let data = event_data(event);
        if data.is_empty() {
            return;
        }
        let Ok(data) = serde_json::from_str::<Value>(&data) else {
            self.broken = true;
            return;
        };
        let index = data.get("index").and_then(Value::as_u64);
        let index = index.and_then(|index| usize::try_from(index).ok());
        match data.get("type").and_then(Value::as_str) {
            Some("content_block_start") => match (index, data.get("content_block")) {
                (Some(index), Some(block)) if index == self.blocks.len() => {
                    self.blocks.push((block.clone(), String::new()));
                }
                _ => self.broken = true,
            },
            Some("content_block_delta") => match (index, data.get("delta")) {
                (Some(index), Some(delta)) => self.delta(index, delta),
                _ => self.broken = true,
            },
            Some("content_block_stop") => match index {
                Some(index) => self.stop_block(index),
                None => self.broken = true,
            },
            Some("message_stop") => self.stopped = true,
            Some("error") => self.broken = true,
            _ => {}
        }
    }

    fn delta(&mut self, index: usize, delta: &Value) {
        let Some((block, partial)) = self.blocks.get_mut(index) else {
            self.broken = true;
            return;
        };
        let text = |field: &str| delta.get(field).and_then(Value::as_str).unwrap_or("");
        match delta.get("type").and_then(Value::as_str) {
            Some("text_delta") => append(block, "text", text("text")),
            Some("thinking_delta") => append(block, "thinking", text("thinking")),
            Some("signature_delta") => append(block, "signature", text("signature")),
            Some("input_json_delta") => partial.push_str(text("partial_json")),
            _ => {}
        }
    }

    fn stop_block(&mut self, index: usize) {
        let Some((block, partial)) = self.blocks.get_mut(index) else {
            self.broken = true;
            return;
        };
        if partial.is_empty() {
            return;
        }
        match serde_json::from_str::<Value>(partial) {
            Ok(input) => {
                if let Some(object) = block.as_object_mut() {
                    object.insert("input".to_owned(), input);
                }
            }
            Err(_) => self.broken = true,
        }
    }
}

/// Adds `text` to the string field `field` of `block` (made if missing).
fn append(block: &mut Value, field: &str, text: &str) {
    let Some(object) = block.as_object_mut() else {
        return;
    };
    let entry = object
        .entry(field.to_owned())
        .or_insert_with(|| Value::String(String::new()));
    if let Value::String(existing) = entry {
        existing.push_str(text);
    } else {
        *entry = Value::String(text.to_owned());
    }
}

/// The data of one server-sent event: its `data:` lines' values joined by line breaks (the SSE
/// rule), empty when it has none.
pub(super) fn event_data(event: &str) -> String {
    event
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim_start)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Where the first event in `bytes` ends: (its length, the length with its blank line).
pub(super) fn event_end(bytes: &[u8]) -> Option<(usize, usize)> {
    let lf = bytes.windows(2).position(|pair| pair == b"\n\n");
    let crlf = bytes.windows(4).position(|quad| quad == b"\r\n\r\n");
    match (lf, crlf) {
        (Some(a), Some(b)) if b < a => Some((b, b + 4)),
        (Some(a), _) => Some((a, a + 2)),
        (None, Some(b)) => Some((b, b + 4)),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_tool_use_are_reassembled_across_split_reads() {
        let stream = concat!(
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n",
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hel\"}}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"lo\"}}\n\n",
            "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"bash\",\"input\":{}}}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"cmd\\\":\"}}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"ls\\\"}\"}}\n\n",
            "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
        );
        let mut reassembly = Reassembly::default();
        for chunk in stream.as_bytes().chunks(7) {
            reassembly.feed(chunk);
        }
        let expected = serde_json::json!([
            {"type": "text", "text": "Hello"},
            {"type": "tool_use", "id": "t1", "name": "bash", "input": {"cmd": "ls"}}
        ]);
        assert_eq!(reassembly.content(), Some(expected));
    }

    #[test]
    fn a_stream_cut_short_or_with_an_error_keeps_nothing() {
        let mut cut = Reassembly::default();
        cut.feed(b"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"a\"}}\n\n");
        assert_eq!(cut.content(), None);
        let mut error = Reassembly::default();
        error.feed(
            b"data: {\"type\":\"error\",\"error\":{}}\n\ndata: {\"type\":\"message_stop\"}\n\n",
        );
        assert_eq!(error.content(), None);
    }
}

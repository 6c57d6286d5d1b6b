//! A Responses answer read as it passes through ([`ResponsesAnswer`], the [`AnswerReader`]
//! for `POST /v1/responses`): a JSON response's `output` items, or a stream's final
//! `response.completed` event's, so the assistant's items (`reasoning`, `message`,
//! `function_call`...) can be kept in the log; the bytes go to the agent unchanged (the
//! forwarding's job).
//!
//! A stream is server-sent events split on blank lines, each a JSON object with a `type`:
//! `response.output_item.done` carries one finished output item (kept, by `output_index`, for a
//! server whose `response.completed` leaves `output` empty), `response.completed` the whole
//! response, which ends the answer. A `response.failed`, `response.incomplete` or `error`
//! event, or an unreadable one, yields nothing; so does a stream cut before
//! `response.completed`, and a whole response whose `status` is not `completed`: a partial
//! answer is not kept as if the model had said it. Nothing here fails or panics on bad input.

use serde_json::Value;

use super::answer::{AnswerReader, Answered};
use super::responses::answer_messages;
use super::sse::{event_data, event_end};

/// The stream's state so far.
#[derive(Debug, Default)]
pub struct ResponsesAnswer {
    /// Bytes of an event not yet ended by a blank line.
    pending: Vec<u8>,
    /// The finished output items so far, with their `output_index`.
    items: Vec<(u64, Value)>,
    /// The `response.completed` event's response.
    completed: Option<Value>,
    broken: bool,
}

impl ResponsesAnswer {
    fn event(&mut self, event: &str) {
        let data = event_data(event);
        if data.is_empty() || data.trim_end() == "[DONE]" {
            return;
        }
        let Ok(mut event) = serde_json::from_str::<Value>(&data) else {
            self.broken = true;
            return;
        };
        match event.get("type").and_then(Value::as_str) {
            Some("response.output_item.done") => {
                let index = event.get("output_index").and_then(Value::as_u64);
                match (index, event.get_mut("item").map(Value::take)) {
                    (Some(index), Some(item)) => self.items.push((index, item)),
                    _ => self.broken = true,
                }
            }
            Some("response.completed") => match event.get_mut("response").map(Value::take) {
                Some(response) => self.completed = Some(response),
                None => self.broken = true,
            },
            Some("response.failed" | "response.incomplete" | "error") => self.broken = true,
            _ => {}
        }
    }
}

/// A response's `output`, when its `status` (if it says one) is `completed`.
fn completed_output(response: &Value) -> Option<&Value> {
    let status = response.get("status").and_then(Value::as_str);
    if status.is_some_and(|status| status != "completed") {
        return None;
    }
    response.get("output")
}

impl AnswerReader for ResponsesAnswer {
    fn feed(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
        while let Some(end) = event_end(&self.pending) {
            let event: Vec<u8> = self.pending.drain(..end.1).take(end.0).collect();
            self.event(&String::from_utf8_lossy(&event));
        }
    }

    fn ended(&self) -> bool {
        self.completed.is_some() || self.broken
    }

    fn streamed(&self) -> Answered {
        if self.broken {
            return None;
        }
        let output = completed_output(self.completed.as_ref()?)?;
        if output.as_array().is_some_and(|items| !items.is_empty()) {
            return Some(answer_messages(output));
        }
        let mut items = self.items.clone();
        items.sort_by_key(|(index, _)| *index);
        let items = Value::Array(items.into_iter().map(|(_, item)| item).collect());
        Some(answer_messages(&items))
    }

    fn whole(&self, body: &[u8]) -> Answered {
        let body = serde_json::from_slice::<Value>(body).ok()?;
        Some(answer_messages(completed_output(&body)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ctxkit_core::{Message, ToolCall};
    use serde_json::json;

    fn sse(events: &[Value]) -> String {
        events
            .iter()
            .map(|event| {
                format!(
                    "event: {}\ndata: {event}\n\n",
                    event["type"].as_str().unwrap()
                )
            })
            .collect()
    }

    #[test]
    fn the_completed_response_is_kept_across_split_reads() {
        let call = json!({"type": "function_call", "id": "fc_1", "call_id": "call_1",
                          "name": "shell", "arguments": "{\"command\":[\"ls\"]}", "status": "completed"});
        let stream = sse(&[
            json!({"type": "response.created", "response": {"status": "in_progress", "output": []}}),
            json!({"type": "response.output_item.added", "output_index": 0, "item": call}),
            json!({"type": "response.function_call_arguments.delta", "output_index": 0, "delta": "{"}),
            json!({"type": "response.output_item.done", "output_index": 0, "item": call}),
            json!({"type": "response.completed", "response": {"status": "completed", "output": [call]}}),
        ]);
        let mut answer = ResponsesAnswer::default();
        for chunk in stream.as_bytes().chunks(9) {
            answer.feed(chunk);
        }
        assert!(answer.ended());
        let mut expected = ToolCall::new("call_1", "shell", r#"{"command":["ls"]}"#);
        let messages = answer.streamed().unwrap().unwrap();
        expected.provider_fields = messages[0].tool_calls[0].provider_fields.clone();
        assert_eq!(messages, vec![Message::assistant("", vec![expected])]);
        // A server whose completed event leaves `output` empty: the done items stand for it.
        let mut sparse = ResponsesAnswer::default();
        sparse.feed(
            sse(&[
                json!({"type": "response.output_item.done", "output_index": 0, "item": call}),
                json!({"type": "response.completed", "response": {"status": "completed", "output": []}}),
            ])
            .as_bytes(),
        );
        assert_eq!(sparse.streamed(), Some(Ok(messages)));
    }

    #[test]
    fn a_cut_failed_or_incomplete_answer_keeps_nothing() {
        let message = json!({"type": "message", "role": "assistant",
                             "content": [{"type": "output_text", "text": "hi", "annotations": []}]});
        let mut cut = ResponsesAnswer::default();
        cut.feed(
            sse(&[
                json!({"type": "response.output_item.done", "output_index": 0, "item": message}),
            ])
            .as_bytes(),
        );
        assert!(!cut.ended());
        assert_eq!(cut.streamed(), None);
        let mut failed = ResponsesAnswer::default();
        failed.feed(
            sse(&[json!({"type": "response.failed", "response": {"status": "failed"}})]).as_bytes(),
        );
        assert!(failed.ended());
        assert_eq!(failed.streamed(), None);
        let incomplete = json!({"status": "incomplete", "output": [message]}).to_string();
        assert_eq!(
            ResponsesAnswer::default().whole(incomplete.as_bytes()),
            None
        );
        let whole = json!({"status": "completed", "output": [message]}).to_string();
        let kept = ResponsesAnswer::default().whole(whole.as_bytes());
        assert_eq!(kept.unwrap().unwrap()[0].content.text(), "hi");
    }
}

//! A Chat Completions answer read as it passes through ([`ChatAnswer`], the
//! [`AnswerReader`] for `POST /v1/chat/completions`): a JSON body's `choices[0].message`, or a
//! stream's chunks reassembled into that message, so the assistant message can be kept in the
//! log; the bytes go to the agent unchanged (the forwarding's job).
//!
//! A stream is `data:` events split on blank lines: each a chunk whose first choice's `delta`
//! adds `content` text, `refusal` text and `tool_calls` pieces (a call is opened by the piece
//! with a new `index`, with its `id` and `function.name`; later pieces of that index add
//! `function.arguments` text), until `data: [DONE]`. Chunks of other choices (`n` > 1) and
//! usage-only chunks (`choices: []`) add nothing. A stream cut short before `[DONE]`, or with
//! an `error` chunk or an unreadable one, yields no message: a partial answer is not kept as if
//! the model had said it. Nothing here fails or panics on bad input.

use serde_json::{json, Map, Value};

use super::answer::{AnswerReader, Answered};
use super::chat::answer_messages;
use super::sse::{event_data, event_end};

/// The stream's state so far.
#[derive(Debug, Default)]
pub struct ChatAnswer {
    /// Bytes of an event not yet ended by a blank line.
    pending: Vec<u8>,
    content: String,
    refusal: String,
    /// The tool calls by index: id, name, arguments so far.
    calls: Vec<(String, String, String)>,
    done: bool,
    broken: bool,
}

impl ChatAnswer {
    fn event(&mut self, event: &str) {
        let data = event_data(event);
        if data.is_empty() {
            return;
        }
        if data.trim_end() == "[DONE]" {
            self.done = true;
            return;
        }
        let Ok(chunk) = serde_json::from_str::<Value>(&data) else {
            self.broken = true;
            return;
        };
        if chunk.get("error").is_some() {
            self.broken = true;
            return;
        }
        let choices = chunk.get("choices").and_then(Value::as_array);
        let first = choices
            .into_iter()
            .flatten()
            .find(|choice| choice.get("index").and_then(Value::as_u64).unwrap_or(0) == 0);
        if let Some(delta) = first.and_then(|choice| choice.get("delta")) {
            self.delta(delta);
        }
    }

    fn delta(&mut self, delta: &Value) {
        let text = |value: &Value, field: &str| {
            value
                .get(field)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        self.content.push_str(&text(delta, "content"));
        self.refusal.push_str(&text(delta, "refusal"));
        for piece in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let index = piece.get("index").and_then(Value::as_u64);
            let index = index.and_then(|index| usize::try_from(index).ok());
            let function = piece.get("function").cloned().unwrap_or(Value::Null);
            match index {
                Some(index) if index == self.calls.len() => self.calls.push((
                    text(piece, "id"),
                    text(&function, "name"),
                    text(&function, "arguments"),
                )),
                Some(index) => match self.calls.get_mut(index) {
                    Some((id, name, arguments)) => {
                        if id.is_empty() {
                            *id = text(piece, "id");
                        }
                        name.push_str(&text(&function, "name"));
                        arguments.push_str(&text(&function, "arguments"));
                    }
                    None => self.broken = true,
                },
                None => self.broken = true,
            }
        }
    }

    /// The reassembled message, in Chat Completions' shape.
    fn message(&self) -> Value {
        let mut message = Map::new();
        message.insert("role".to_owned(), json!("assistant"));
        let content = if self.content.is_empty() {
            Value::Null
        } else {
            Value::String(self.content.clone())
        };
        message.insert("content".to_owned(), content);
        if !self.refusal.is_empty() {
            message.insert("refusal".to_owned(), json!(self.refusal));
        }
        if !self.calls.is_empty() {
            let calls: Vec<Value> = self
                .calls
                .iter()
                .map(|(id, name, arguments)| {
                    json!({"id": id, "type": "function",
                           "function": {"name": name, "arguments": arguments}})
                })
                .collect();
            message.insert("tool_calls".to_owned(), Value::Array(calls));
        }
        Value::Object(message)
    }
}

impl AnswerReader for ChatAnswer {
    fn feed(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
        while let Some(end) = event_end(&self.pending) {
            let event: Vec<u8> = self.pending.drain(..end.1).take(end.0).collect();
            self.event(&String::from_utf8_lossy(&event));
        }
    }

    fn ended(&self) -> bool {
        self.done || self.broken
    }

    fn streamed(&self) -> Answered {
        if !self.done || self.broken {
            return None;
        }
        Some(answer_messages(&self.message()))
    }

    fn whole(&self, body: &[u8]) -> Answered {
        let body = serde_json::from_slice::<Value>(body).ok()?;
        let message = body.get("choices")?.get(0)?.get("message")?;
        Some(answer_messages(message))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ctxkit_core::{Message, ToolCall};

    #[test]
    fn text_and_tool_call_deltas_are_reassembled_across_split_reads() {
        let stream = concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hel\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"bash\",\"arguments\":\"\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"cmd\\\":\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"ls\\\"}\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
            "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":9}}\n\n",
            "data: [DONE]\n\n",
        );
        let mut answer = ChatAnswer::default();
        for chunk in stream.as_bytes().chunks(7) {
            answer.feed(chunk);
        }
        assert!(answer.ended());
        let call = ToolCall {
            id: "call_1".into(),
            name: "bash".into(),
            arguments: r#"{"cmd":"ls"}"#.into(),
            provider_fields: None,
        };
        let expected = vec![Message::assistant("Hello", vec![call])];
        assert_eq!(answer.streamed(), Some(Ok(expected)));
    }

    #[test]
    fn a_stream_cut_short_or_with_an_error_keeps_nothing() {
        let mut cut = ChatAnswer::default();
        cut.feed(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n");
        assert!(!cut.ended());
        assert_eq!(cut.streamed(), None);
        let mut error = ChatAnswer::default();
        error.feed(b"data: {\"error\":{\"message\":\"overloaded\"}}\n\ndata: [DONE]\n\n");
        assert_eq!(error.streamed(), None);
        let whole = br#"{"choices":[{"index":0,"message":{"role":"assistant","content":"hi"}}]}"#;
        let expected = vec![Message::assistant("hi", vec![])];
        assert_eq!(ChatAnswer::default().whole(whole), Some(Ok(expected)));
    }
}

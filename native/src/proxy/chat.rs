//! An OpenAI Chat Completions request (`POST /v1/chat/completions`) as the proxy reads it,
//! and the request it sends upstream.
//!
//! Chat Completions has no `system` field: the agent's system prompt is its leading `system`
//! and `developer` messages, which reach the upstream byte for byte at the head of `messages`
//! and are the system text the budget counts; the conversation is every message after them
//! (`user`, `assistant` with `tool_calls`, `tool`), matched and recorded as the Anthropic
//! path does, read one by one with the core's OpenAI reader and only where needed.
//!
//! Guarantees: every top-level field other than `messages` (`model`, `tools`, `stream`,
//! `stream_options`, `temperature`, unknown ones...) reaches the upstream byte for byte and in
//! the agent's order; `messages` is the agent's system messages as sent followed by ctxkit's
//! view written by the core's Chat Completions writer. `prompt_cache_breakpoint` marks on a
//! message's parts are taken off before it is read (placement, not content). The view carries
//! ctxkit's own marks at its breakpoints when the agent marks its request (`openai_marks`);
//! otherwise none: models before GPT-5.6 may refuse them, and OpenAI caches a request's prefix
//! by itself, which ctxkit's view keeps stable between compactions. A body
//! that is not a JSON object, lacks `messages`, has none or only system messages is refused
//! with the reason, naming the field; a message the core cannot read is refused when it is
//! read (every new message is, before anything is stored).

use ctxkit_core::tokens::{estimate_tool_schemas, ModelFamily};
use ctxkit_core::wire::{from_openai, to_openai, WireFormat};
use ctxkit_core::{Message, Role};
use serde_json::Value;

use super::anthropic::says_something;
use super::body::{body_with_messages, field, split_body, Fields, RawList};
use super::openai_marks::{marked_view, AgentMarks};
use super::seen::SeenLists;
use super::sessions::{after_agent_system, AgentTurn};
use super::summarizer::{SummaryApi, SummaryShape};
use crate::engine::TurnResult;

/// The path this request is served on.
pub(crate) const PATH: &str = "/v1/chat/completions";

/// One Chat Completions request, read.
#[derive(Debug)]
pub struct ChatRequest {
    /// The top-level fields in the agent's order, each exactly as sent (but `messages`'s
    /// value, which the agent's system messages and the view replace).
    fields: Fields,
    /// The agent's leading `system` and `developer` messages, each exactly as sent.
    system: RawList,
    /// The conversation's wire messages after them, each exactly as sent.
    pub messages: RawList,
    /// The system messages' texts joined by blank lines, for the budget.
    pub system_text: String,
    /// What the agent's tool definitions cost, by the estimate.
    pub tool_tokens: u64,
    /// Whether the agent asked for a streamed answer.
    pub stream: bool,
    /// Whether the agent marks its request for OpenAI's cache, and its system messages' marks.
    marks: AgentMarks,
}

impl ChatRequest {
    /// Reads a `POST /v1/chat/completions` body.
    pub fn parse(body: &[u8], family: ModelFamily) -> Result<ChatRequest, String> {
        ChatRequest::parse_with(body, family, &SeenLists::default())
    }

    /// [`ChatRequest::parse`], where the messages a recent request in `seen` sent byte for
    /// byte are not parsed again (and this request's are kept there).
    pub fn parse_with(
        body: &[u8],
        family: ModelFamily,
        seen: &SeenLists,
    ) -> Result<ChatRequest, String> {
        let ((fields, mut messages), _) = split_body(body, seen)?;
        let mut texts = Vec::new();
        for (index, raw) in messages.iter().enumerate() {
            match system_message_text(raw, index)? {
                Some(text) => texts.push(text),
                None => break,
            }
        }
        let conversation = messages.split_off(texts.len());
        if conversation.is_empty() {
            return Err(
                "messages: only system messages; a request needs at least one other".to_owned(),
            );
        }
        let tool_tokens = match field(&fields, "tools") {
            Some(raw) => {
                let tools: Value =
                    serde_json::from_str(raw).map_err(|error| format!("tools: {error}"))?;
                if tools.is_null() {
                    0
                } else {
                    estimate_tool_schemas(&tools, family)
                }
            }
            None => 0,
        };
        let stream = field(&fields, "stream").is_some_and(|raw| raw.trim() == "true");
        let newest = conversation.len().saturating_sub(2)..conversation.len();
        let marks = AgentMarks::read(
            messages.iter(),
            newest.filter_map(|index| conversation.get(index)),
        );
        Ok(ChatRequest {
            fields,
            system: messages,
            messages: conversation,
            system_text: texts.join("\n\n"),
            tool_tokens,
            stream,
            marks,
        })
    }

    /// The body for the upstream: the agent's fields byte for byte, in order, with
    /// `messages` the agent's system messages as sent, then `view` (a Chat Completions
    /// `messages` array without a system message).
    pub fn upstream_body(&self, view: &Value) -> Vec<u8> {
        let mut messages = Vec::with_capacity(4096);
        messages.push(b'[');
        let view = view.as_array().map(Vec::as_slice).unwrap_or_default();
        let system = self.system.iter().map(str::to_owned);
        let rest = view.iter().map(Value::to_string);
        for (index, message) in system.chain(rest).enumerate() {
            if index > 0 {
                messages.push(b',');
            }
            messages.extend_from_slice(message.as_bytes());
        }
        messages.push(b']');
        body_with_messages(&self.fields, &messages)
    }
}

impl AgentTurn for ChatRequest {
    fn endpoint(&self) -> &'static str {
        "POST /v1/chat/completions"
    }

    fn summary_shape(&self) -> SummaryShape {
        SummaryShape {
            api: SummaryApi::Chat,
            fields: self.fields.clone(),
            leading: self.system.clone(),
            system_text: self.system_text.clone(),
            agent_cache_marks: 0,
        }
    }

    fn wire(&self) -> &RawList {
        &self.messages
    }

    fn read(&self, raw: &str, index: usize) -> Result<Vec<Message>, String> {
        // Named as the agent numbered it: after its system messages.
        read_chat_message(raw, index + self.system.len())
    }

    fn system_text(&self) -> &str {
        &self.system_text
    }

    fn tool_tokens(&self) -> u64 {
        self.tool_tokens
    }

    /// The view's messages after its system prompt (the agent's own messages carry it).
    fn view(&self, turn: &TurnResult) -> crate::Result<Value> {
        if self.marks.marks {
            return marked_view(turn, &self.system_text, WireFormat::Openai, self.marks);
        }
        Ok(to_openai(after_agent_system(
            &turn.messages,
            &self.system_text,
        )))
    }
}

/// The text of the raw message at `index` when it is a `system` or `developer` message (its
/// string content, or its parts' texts joined); `None` for another role.
fn system_message_text(raw: &str, index: usize) -> Result<Option<String>, String> {
    #[derive(serde::Deserialize)]
    struct Head {
        role: Option<String>,
        #[serde(default)]
        content: Value,
    }
    let head: Head =
        serde_json::from_str(raw).map_err(|error| format!("messages[{index}]: {error}"))?;
    if !matches!(head.role.as_deref(), Some("system" | "developer")) {
        return Ok(None);
    }
    let text = match head.content {
        Value::String(text) => text,
        Value::Array(parts) => parts
            .iter()
            .map(|part| match part.get("text").and_then(Value::as_str) {
                Some(text) => text.to_owned(),
                None => part.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n\n"),
        Value::Null => String::new(),
        _ => {
            return Err(format!(
                "messages[{index}].content: expected a string or an array of content parts"
            ))
        }
    };
    Ok(Some(text))
}

/// The Chat Completions message at `index` of the agent's `messages`, read into the core's
/// model after its parts' `prompt_cache_breakpoint` marks are taken off; the error names
/// `messages[index]`.
pub(crate) fn read_chat_message(raw: &str, index: usize) -> Result<Vec<Message>, String> {
    let mut message: Value =
        serde_json::from_str(raw).map_err(|error| format!("messages[{index}]: {error}"))?;
    if let Some(Value::Array(parts)) = message.get_mut("content") {
        for part in parts.iter_mut().filter_map(Value::as_object_mut) {
            part.remove("prompt_cache_breakpoint");
        }
    }
    from_openai(&Value::Array(vec![message])).map_err(|error| {
        // The core read a one-message array: its path names message 0.
        let text = error.to_string();
        match text.strip_prefix("messages[0]") {
            Some(rest) => format!("messages[{index}]{rest}"),
            None => text,
        }
    })
}

/// The assistant messages of an answer's `message` (a Chat Completions `choices[0].message`,
/// or one reassembled from a stream), in the core's model; empty when it says nothing.
pub fn answer_messages(message: &Value) -> Result<Vec<Message>, String> {
    let messages = from_openai(&Value::Array(vec![message.clone()]))
        .map_err(|error| format!("the answer's message: {error}"))?;
    Ok(messages
        .into_iter()
        .filter(|message| message.role == Role::Assistant)
        .filter(says_something)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leading_system_messages_are_kept_as_sent_and_the_rest_is_the_conversation() {
        let body = br#"{"model":"gpt","messages":[{"role":"system","content":"Be brief."},{"role":"developer", "content":[{"type":"text","text":"Use tools."}]},{"role":"user","content":"hi"}],"stream":true,"tools":null}"#;
        let request = ChatRequest::parse(body, ModelFamily::OpenAi).unwrap();
        assert_eq!(request.system_text, "Be brief.\n\nUse tools.");
        assert_eq!(request.messages.len(), 1);
        assert!(request.stream);
        let view = serde_json::json!([{"role": "user", "content": "hi"}]);
        let upstream = String::from_utf8(request.upstream_body(&view)).unwrap();
        assert_eq!(
            upstream,
            r#"{"model":"gpt","messages":[{"role":"system","content":"Be brief."},{"role":"developer", "content":[{"type":"text","text":"Use tools."}]},{"content":"hi","role":"user"}],"stream":true,"tools":null}"#
        );
        let only_system = br#"{"messages":[{"role":"system","content":"s"}]}"#;
        assert!(ChatRequest::parse(only_system, ModelFamily::OpenAi)
            .unwrap_err()
            .starts_with("messages: only system messages"));
    }

    #[test]
    fn a_bad_message_is_named_by_its_index_and_cache_marks_are_not_content() {
        let raw = r#"{"role":"tool","content":"x"}"#;
        let error = read_chat_message(raw, 3).unwrap_err();
        assert!(error.starts_with("messages[3]"), "{error}");
        let marked = r#"{"role":"user","content":[{"type":"text","text":"hi","prompt_cache_breakpoint":{"mode":"explicit"}}]}"#;
        let plain = r#"{"role":"user","content":[{"type":"text","text":"hi"}]}"#;
        assert_eq!(
            read_chat_message(marked, 0).unwrap(),
            read_chat_message(plain, 0).unwrap()
        );
    }
}

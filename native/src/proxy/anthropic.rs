//! An Anthropic Messages request as the proxy reads it, and the request it sends upstream.
//!
//! Guarantees: every top-level field of the agent's body other than `messages` (`model`,
//! `system`, `tools`, `max_tokens`, `stream`, `metadata`, unknown ones...) reaches the upstream
//! byte for byte and in the agent's order; only `messages` is replaced, by ctxkit's view. The
//! agent's messages are read with the core's Anthropic reader after their `cache_control`
//! marks are taken off (an agent moves them every turn; they are placement, not content), one
//! by one and only those the proxy needs ([`read_wire_message`]). A body that is not a JSON
//! object, lacks `messages` or has none is refused with the reason, naming the field; a message
//! the core cannot read is refused when it is read (every new message is, before anything is
//! stored).

use ctxkit_core::tokens::{estimate_tool_schemas, ModelFamily};
use ctxkit_core::wire::breakpoints::MAX_BREAKPOINTS;
use ctxkit_core::wire::{from_anthropic, from_anthropic_message, WireFormat};
use ctxkit_core::{Content, Message, Role};
use serde_json::Value;

use super::body::{body_with_messages, field, split_body, Fields, RawList};
use super::seen::SeenLists;
use super::sessions::AgentTurn;
use super::summarizer::{SummaryApi, SummaryShape};
use crate::engine::TurnResult;

/// One agent request, read.
#[derive(Debug)]
pub struct AgentRequest {
    /// The top-level fields in the agent's order, each exactly as sent (but `messages`'s
    /// value, which the view replaces).
    fields: Fields,
    /// The conversation's wire messages (without the system prompt), each exactly as sent:
    /// read one by one ([`read_wire_message`]) only where needed.
    pub messages: RawList,
    /// The agent's system prompt as text (blocks' texts joined), for the budget.
    pub system_text: String,
    /// What the agent's tool definitions cost, by the estimate.
    pub tool_tokens: u64,
    /// Whether the agent asked for a streamed answer.
    pub stream: bool,
    /// How many `cache_control` marks the agent's `system` and `tools` carry (they reach the
    /// upstream as they are, so the view's own marks make up the rest of the provider's four).
    pub agent_cache_marks: usize,
    /// How many bytes of `messages` were parsed; the rest a recent request had sent byte for
    /// byte ([`SeenLists`]).
    pub parsed_bytes: usize,
}

impl AgentRequest {
    /// Reads a `POST /v1/messages` body.
    pub fn parse(body: &[u8], family: ModelFamily) -> Result<AgentRequest, String> {
        AgentRequest::parse_with(body, family, &SeenLists::default())
    }

    /// [`AgentRequest::parse`], where the messages a recent request in `seen` sent byte for
    /// byte are not parsed again (and this request's are kept there).
    pub fn parse_with(
        body: &[u8],
        family: ModelFamily,
        seen: &SeenLists,
    ) -> Result<AgentRequest, String> {
        let ((fields, messages), parsed_bytes) = split_body(body, seen)?;
        let system = match field(&fields, "system") {
            Some(raw) => serde_json::from_str(raw).map_err(|error| format!("system: {error}"))?,
            None => Value::Null,
        };
        let system_text = system_text(&system)?;
        let tools: Value = match field(&fields, "tools") {
            Some(raw) => serde_json::from_str(raw).map_err(|error| format!("tools: {error}"))?,
            None => Value::Null,
        };
        let tool_tokens = match &tools {
            Value::Null => 0,
            tools => estimate_tool_schemas(tools, family),
        };
        let agent_cache_marks = cache_marks(&system) + cache_marks(&tools);
        let stream = field(&fields, "stream").is_some_and(|raw| raw.trim() == "true");
        Ok(AgentRequest {
            fields,
            messages,
            system_text,
            tool_tokens,
            stream,
            agent_cache_marks,
            parsed_bytes,
        })
    }

    /// The body for the upstream: the agent's fields byte for byte, in order, with
    /// `messages` replaced by `view` (ctxkit's messages, an Anthropic `messages` array).
    pub fn upstream_body(&self, view: &Value) -> Vec<u8> {
        body_with_messages(&self.fields, view.to_string().as_bytes())
    }
}

impl AgentTurn for AgentRequest {
    fn endpoint(&self) -> &'static str {
        "POST /v1/messages"
    }

    fn summary_shape(&self) -> SummaryShape {
        SummaryShape {
            api: SummaryApi::Anthropic,
            fields: self.fields.clone(),
            leading: RawList::default(),
            system_text: self.system_text.clone(),
            agent_cache_marks: self.agent_cache_marks,
        }
    }

    fn wire(&self) -> &RawList {
        &self.messages
    }

    fn read(&self, raw: &str, index: usize) -> Result<Vec<Message>, String> {
        read_wire_message(raw, index)
    }

    fn system_text(&self) -> &str {
        &self.system_text
    }

    fn tool_tokens(&self) -> u64 {
        self.tool_tokens
    }

    /// ctxkit's cache breakpoints in place of the agent's (which moved every turn), within
    /// the provider's four beside the marks the agent's `system` and `tools` keep.
    fn view(&self, turn: &TurnResult) -> crate::Result<Value> {
        let rendered = turn.render_cached(WireFormat::Anthropic)?;
        let mut view = view_messages(&rendered).map_err(|problem| crate::Error::InvalidInput {
            field: format!("session {:?}: view", turn.session),
            problem,
        })?;
        limit_cache_marks(
            &mut view,
            MAX_BREAKPOINTS.saturating_sub(self.agent_cache_marks),
        );
        Ok(view)
    }
}

/// The system prompt's text: a string, or the texts of an array of blocks joined by blank
/// lines (what the budget counts; the upstream gets the field itself).
fn system_text(system: &Value) -> Result<String, String> {
    match system {
        Value::Null => Ok(String::new()),
        Value::String(text) => Ok(text.clone()),
        Value::Array(blocks) => Ok(blocks
            .iter()
            .map(|block| match block.get("text").and_then(Value::as_str) {
                Some(text) => text.to_owned(),
                None => block.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n\n")),
        _ => Err("system: expected a string or an array of text blocks".to_owned()),
    }
}

/// The `cache_control` marks on the elements of an array (system blocks, tools).
fn cache_marks(value: &Value) -> usize {
    value.as_array().map_or(0, |items| {
        items
            .iter()
            .filter(|item| item.get("cache_control").is_some())
            .count()
    })
}

/// Keeps at most `allowed` of the view's `cache_control` marks (rendered at ctxkit's cache
/// breakpoints), taking the earliest off first: the latest ones are where the next request
/// reads what this one writes, and a request with more than the provider's four is refused.
pub fn limit_cache_marks(view: &mut Value, allowed: usize) {
    let mut marked: Vec<&mut serde_json::Map<String, Value>> = view
        .as_array_mut()
        .into_iter()
        .flatten()
        .filter_map(|message| message.get_mut("content"))
        .filter_map(Value::as_array_mut)
        .flatten()
        .filter_map(Value::as_object_mut)
        .filter(|block| block.contains_key("cache_control"))
        .collect();
    let excess = marked.len().saturating_sub(allowed);
    for block in marked.iter_mut().take(excess) {
        block.remove("cache_control");
    }
}

/// The wire message at `index` of a request's `messages`, read into the core's model after its
/// `cache_control` marks are taken off (the agent moves them every turn: placement, not
/// content); the error names `messages[index]`.
pub fn read_wire_message(raw: &str, index: usize) -> Result<Vec<Message>, String> {
    let mut message: Value =
        serde_json::from_str(raw).map_err(|error| format!("messages[{index}]: {error}"))?;
    if let Some(Value::Array(blocks)) = message.get_mut("content") {
        for block in blocks {
            strip_block(block);
        }
    }
    from_anthropic_message(&message, index).map_err(|error| error.to_string())
}

fn strip_block(block: &mut Value) {
    if let Some(object) = block.as_object_mut() {
        object.remove("cache_control");
        if let Some(Value::Array(inner)) = object.get_mut("content") {
            for block in inner {
                if let Some(object) = block.as_object_mut() {
                    object.remove("cache_control");
                }
            }
        }
    }
}

/// The view's messages as an Anthropic `messages` array: the view rendered by the engine, its
/// `system` left out (the agent's own is sent).
pub fn view_messages(rendered: &Value) -> Result<Value, String> {
    rendered
        .get("messages")
        .cloned()
        .ok_or_else(|| "the rendered view has no messages".to_owned())
}

/// The assistant messages of an answer's `content` blocks (an Anthropic answer body, or one
/// reassembled from a stream), in the core's model; `None` when it holds none.
pub fn answer_messages(content: &Value) -> Result<Vec<Message>, String> {
    let wrapped = serde_json::json!([{"role": "assistant", "content": content}]);
    let messages = from_anthropic(&wrapped).map_err(|error| error.to_string())?;
    Ok(messages
        .into_iter()
        .filter(|message| message.role == Role::Assistant)
        .filter(says_something)
        .collect())
}

/// Whether an answer's assistant message says anything: a tool call or non-empty text (an
/// answer with neither is not recorded). Both APIs' answer readers keep only these.
pub(super) fn says_something(message: &Message) -> bool {
    !message.tool_calls.is_empty()
        || !matches!(&message.content, Content::Text(text) if text.is_empty())
}

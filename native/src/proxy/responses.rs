//! An OpenAI Responses request (`POST /v1/responses`, what Codex CLI speaks) as the proxy
//! reads it, and the request it sends upstream.
//!
//! The agent's system prompt is its `instructions` field and its leading `system` and
//! `developer` message items: they reach the upstream byte for byte (`instructions` untouched,
//! the items at the head of `input`) and are the system text the budget counts. The
//! conversation is every item after them, split as the agent re-sends it (the core's
//! `responses_turns_by_side`: each user-side item alone, a run of assistant-side items, one
//! answer's `output`, together), each such run one wire message, matched and recorded as the
//! other APIs' messages are and read with the core's Responses reader only where needed. What
//! each item is (its `type` and `role`) is read once: the items a recent request sent byte for
//! byte come with what was read of them then (`seen`), so a turn reads its new items only.
//!
//! A request that names server-side state (`previous_response_id`, or a `conversation`) is the
//! upstream's to complete: the proxy does not hold what it refers to, so the body is passed
//! through untouched and nothing is stored ([`ResponsesBody::Stateful`]).
//!
//! Guarantees: every top-level field other than `input` (`model`, `instructions`, `tools`,
//! `stream`, `store`, `include`, `reasoning`, unknown ones...) reaches the upstream byte for
//! byte and in the agent's order; `input` is the agent's system items as sent followed by
//! ctxkit's view written by the core's Responses writer (the agent's `prompt_cache_breakpoint`
//! marks are taken off before an item is read: placement, not content), with ctxkit's own
//! marks at its breakpoints only when the agent marks its request (`openai_marks`). A body that is not a JSON object, lacks `input`, has none or only system items is
//! refused with the reason, naming the field; an item the core cannot read is refused when it
//! is read (every new one is, before anything is stored), named by its index in `input`.

use ctxkit_core::tokens::{estimate_tool_schemas, ModelFamily};
use ctxkit_core::wire::{
    from_responses, is_user_side_item, responses_turns_by_side, to_responses, WireFormat,
};
use ctxkit_core::{Message, Role};
use serde_json::{json, Value};

use super::anthropic::says_something;
use super::body::{body_with, field, Fields, Listed, RawList, Split};
use super::openai_marks::{marked_view, AgentMarks};
use super::seen::SeenLists;
use super::sessions::{after_agent_system, AgentTurn};
use super::split::split_at;
use super::summarizer::{SummaryApi, SummaryShape};
use crate::engine::TurnResult;

/// The path this request is served on.
pub(crate) const PATH: &str = "/v1/responses";

/// The top-level fields that name state the upstream holds: a request with one of them set is
/// passed through untouched.
pub const STATEFUL_FIELDS: [&str; 2] = ["previous_response_id", "conversation"];

/// A Responses body, read.
#[derive(Debug)]
pub enum ResponsesBody {
    /// It continues state the upstream holds ([`STATEFUL_FIELDS`]): passed through untouched.
    Stateful,
    /// A whole conversation: matched, recorded and rewritten.
    Turn(ResponsesRequest),
}

/// One Responses request carrying its whole conversation, read.
#[derive(Debug)]
pub struct ResponsesRequest {
    /// The top-level fields in the agent's order, each exactly as sent (but `input`'s value,
    /// which the agent's system items and the view replace).
    fields: Fields,
    /// The agent's leading `system` and `developer` message items, each exactly as sent.
    system: RawList,
    /// The conversation's wire messages: a lone item as sent, or a run of assistant-side items
    /// as sent with the separators between them (the inside of a JSON array of them).
    pub turns: RawList,
    /// Where each of `turns` begins among the conversation's items.
    starts: Vec<usize>,
    /// `instructions` and the system items' texts joined by blank lines, for the budget.
    pub system_text: String,
    /// What the agent's tool definitions cost, by the estimate.
    pub tool_tokens: u64,
    /// Whether the agent asked for a streamed answer.
    pub stream: bool,
    /// Whether the agent marks its request for OpenAI's cache, and its system items' marks.
    marks: AgentMarks,
    /// How many bytes of `input` were parsed; the rest a recent request had sent byte for byte.
    pub parsed_bytes: usize,
    /// How many items' `type` and `role` were read (the others were known from that request).
    pub items_read: usize,
}

/// What the proxy reads of an item to split the input: its `type` and `role`.
#[derive(serde::Deserialize)]
struct Head {
    #[serde(rename = "type")]
    kind: Option<String>,
    role: Option<String>,
}

impl Head {
    fn is_system(&self) -> bool {
        self.kind.as_deref().is_none_or(|kind| kind == "message")
            && matches!(self.role.as_deref(), Some("system" | "developer"))
    }
}

impl ResponsesRequest {
    /// Reads a `POST /v1/responses` body.
    pub fn parse(body: &[u8], family: ModelFamily) -> Result<ResponsesBody, String> {
        ResponsesRequest::parse_with(body, family, &SeenLists::default())
    }

    /// [`ResponsesRequest::parse`], where the items a recent request in `seen` sent byte for
    /// byte are not parsed again as JSON (and this request's are kept there).
    pub fn parse_with(
        body: &[u8],
        family: ModelFamily,
        seen: &SeenLists,
    ) -> Result<ResponsesBody, String> {
        let Split {
            fields,
            listed,
            parsed,
            notes,
            kept_as,
        } = split_at(body, "input", "a string or an array of items", seen)?;
        let stateful = STATEFUL_FIELDS
            .iter()
            .any(|name| field(&fields, name).is_some_and(|raw| raw.trim() != "null"));
        if stateful {
            return Ok(ResponsesBody::Stateful);
        }
        let mut items = match listed {
            None => return Err("the body has no `input` field".to_owned()),
            Some(Listed::Text(text)) => {
                // A string input is one user message: read as the item that says so.
                let item = json!({"role": "user", "content": text}).to_string();
                RawList::of([item.as_str()])
            }
            Some(Listed::Items(items)) => items,
        };
        if items.is_empty() {
            return Err("input: empty; a request needs at least one item".to_owned());
        }
        // What each item is (read once per item: the items a recent request sent byte for
        // byte come with the notes kept then).
        let known_items = notes.len();
        let notes = item_notes(&items, notes)?;
        if let Some(id) = kept_as {
            seen.note(id, notes.clone());
        }
        let leading = notes.iter().take_while(|note| *note & SYSTEM != 0).count();
        let mut texts = instructions_text(field(&fields, "instructions"))?;
        for (index, raw) in items.iter().take(leading).enumerate() {
            texts.push(system_item_text(raw, index)?);
        }
        let conversation = items.split_off(leading);
        if conversation.is_empty() {
            return Err(
                "input: only system and developer messages; a request needs at least \
                        one other item"
                    .to_owned(),
            );
        }
        let sides = notes.iter().skip(leading).map(|note| note & USER_SIDE != 0);
        let runs = responses_turns_by_side(sides);
        let starts = runs.iter().map(|run| run.start).collect();
        let turns = conversation.runs(&runs);
        let tool_tokens = match field(&fields, "tools") {
            Some(raw) => {
                let tools: Value =
                    serde_json::from_str(raw).map_err(|error| format!("tools: {error}"))?;
                estimate_tool_schemas(&tools, family)
            }
            None => 0,
        };
        let stream = field(&fields, "stream").is_some_and(|raw| raw.trim() == "true");
        let newest = conversation.len().saturating_sub(2)..conversation.len();
        let marks = AgentMarks::read(
            items.iter(),
            newest.filter_map(|index| conversation.get(index)),
        );
        Ok(ResponsesBody::Turn(ResponsesRequest {
            fields,
            system: items,
            turns,
            starts,
            system_text: texts.join("\n\n"),
            tool_tokens,
            stream,
            marks,
            parsed_bytes: parsed,
            items_read: notes.len().saturating_sub(known_items),
        }))
    }

    /// The body for the upstream: the agent's fields byte for byte, in order, with `input` the
    /// agent's system items as sent, then `view` (Responses input items without the system
    /// prompt).
    pub fn upstream_body(&self, view: &Value) -> Vec<u8> {
        let mut input = Vec::with_capacity(4096);
        input.push(b'[');
        let view = view.as_array().map(Vec::as_slice).unwrap_or_default();
        let system = self.system.iter().map(str::to_owned);
        for (index, item) in system.chain(view.iter().map(Value::to_string)).enumerate() {
            if index > 0 {
                input.push(b',');
            }
            input.extend_from_slice(item.as_bytes());
        }
        input.push(b']');
        body_with(&self.fields, "input", &input)
    }
}

/// An item's note: a leading system or developer message ([`Head::is_system`]).
const SYSTEM: u8 = 1;
/// An item's note: on the user's side of the conversation (the core's `is_user_side_item`).
const USER_SIDE: u8 = 2;

/// Each item's notes ([`SYSTEM`], [`USER_SIDE`]): `known` for the first ones (kept from a
/// recent request that sent them byte for byte), the rest read from the item's `type` and
/// `role`; an item that is not an object is named.
fn item_notes(items: &RawList, mut known: Vec<u8>) -> Result<Vec<u8>, String> {
    known.truncate(items.len());
    for index in known.len()..items.len() {
        let raw = items.get(index).unwrap_or_default();
        let head: Head = serde_json::from_str(raw)
            .map_err(|error| format!("input[{index}]: expected an item ({error})"))?;
        let side = is_user_side_item(head.kind.as_deref(), head.role.as_deref());
        known.push(u8::from(head.is_system()) * SYSTEM + u8::from(side) * USER_SIDE);
    }
    Ok(known)
}

/// `instructions` as text for the budget (a string; the texts of an array of items), none
/// when it is absent or `null`.
fn instructions_text(raw: Option<&str>) -> Result<Vec<String>, String> {
    let Some(raw) = raw else {
        return Ok(Vec::new());
    };
    let value: Value =
        serde_json::from_str(raw).map_err(|error| format!("instructions: {error}"))?;
    Ok(match value {
        Value::Null => Vec::new(),
        Value::String(text) => vec![text],
        other => vec![texts_of(&other)],
    })
}

/// The text of a leading `system` or `developer` item (its string content, or its parts'
/// texts joined).
fn system_item_text(raw: &str, index: usize) -> Result<String, String> {
    let item: Value =
        serde_json::from_str(raw).map_err(|error| format!("input[{index}]: {error}"))?;
    match item.get("content") {
        Some(Value::String(text)) => Ok(text.clone()),
        Some(parts @ Value::Array(_)) => Ok(texts_of(parts)),
        _ => Err(format!(
            "input[{index}].content: expected a string or an array of content parts"
        )),
    }
}

/// The `text` of each element of an array (its JSON when it has none), joined by blank lines.
fn texts_of(value: &Value) -> String {
    value
        .as_array()
        .into_iter()
        .flatten()
        .map(|part| match part.get("text").and_then(Value::as_str) {
            Some(text) => text.to_owned(),
            None => part.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

impl AgentTurn for ResponsesRequest {
    fn endpoint(&self) -> &'static str {
        "POST /v1/responses"
    }

    fn summary_shape(&self) -> SummaryShape {
        SummaryShape {
            api: SummaryApi::Responses,
            fields: self.fields.clone(),
            leading: self.system.clone(),
            system_text: self.system_text.clone(),
            agent_cache_marks: 0,
        }
    }

    fn wire(&self) -> &RawList {
        &self.turns
    }

    fn read(&self, raw: &str, index: usize) -> Result<Vec<Message>, String> {
        // Named as the agent numbered its items: after its system items.
        let start = self.starts.get(index).copied().unwrap_or_default();
        read_turn(raw, self.system.len() + start)
    }

    fn system_text(&self) -> &str {
        &self.system_text
    }

    fn tool_tokens(&self) -> u64 {
        self.tool_tokens
    }

    /// The view's items after its system prompt (the agent's `instructions` and system items
    /// carry it).
    fn view(&self, turn: &TurnResult) -> crate::Result<Value> {
        if self.marks.marks {
            let written = marked_view(turn, &self.system_text, WireFormat::Responses, self.marks)?;
            return Ok(input_items(written));
        }
        Ok(view_items(after_agent_system(
            &turn.messages,
            &self.system_text,
        )))
    }
}

/// `messages` as Responses input items: the core's writer, a leading system message it made
/// `instructions` put back as the item it is (the agent's own `instructions` are sent).
pub fn view_items(messages: &[Message]) -> Value {
    input_items(to_responses(messages))
}

/// The items of a Responses request the core wrote (`input`, and `instructions` as the leading
/// system item it was).
fn input_items(mut written: Value) -> Value {
    let mut items = match written.get_mut("input").map(Value::take) {
        Some(Value::Array(items)) => items,
        _ => Vec::new(),
    };
    if let Some(Value::String(text)) = written.get("instructions") {
        items.insert(
            0,
            json!({"type": "message", "role": "system", "content": text}),
        );
    }
    Value::Array(items)
}

/// A wire message of a Responses input (an item, or a run of items with the separators between
/// them: the inside of an array) beginning at item `start`, read into the core's model after its parts' `prompt_cache_breakpoint` marks
/// are taken off; the error names the item by its index in `input`.
pub fn read_turn(raw: &str, start: usize) -> Result<Vec<Message>, String> {
    let mut items: Vec<Value> = serde_json::from_str(&format!("[{raw}]"))
        .map_err(|error| format!("input[{start}]: {error}"))?;
    for item in &mut items {
        for list in ["content", "output"] {
            if let Some(Value::Array(parts)) = item.get_mut(list) {
                for part in parts.iter_mut().filter_map(Value::as_object_mut) {
                    part.remove("prompt_cache_breakpoint");
                }
            }
        }
    }
    from_responses(&Value::Array(items)).map_err(|error| renumbered(&error.to_string(), start))
}

/// A core error naming `input[i]` of a run, renamed `input[start + i]`.
fn renumbered(text: &str, start: usize) -> String {
    let Some(rest) = text.strip_prefix("input[") else {
        return text.to_owned();
    };
    let Some((number, after)) = rest.split_once(']') else {
        return text.to_owned();
    };
    match number.parse::<usize>() {
        Ok(at) => format!("input[{}]{after}", at.saturating_add(start)),
        Err(_) => text.to_owned(),
    }
}

/// The assistant messages of a response's `output` items (a whole response's, or the
/// `response.completed` event's), in the core's model; empty when it says nothing.
pub fn answer_messages(output: &Value) -> Result<Vec<Message>, String> {
    let messages = from_responses(&json!({ "output": output }))
        .map_err(|error| format!("the answer's {error}"))?;
    Ok(messages
        .into_iter()
        .filter(|message| message.role == Role::Assistant)
        .filter(says_something)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(body: &[u8]) -> ResponsesRequest {
        match ResponsesRequest::parse(body, ModelFamily::OpenAi).unwrap() {
            ResponsesBody::Turn(request) => request,
            ResponsesBody::Stateful => panic!("not a turn"),
        }
    }

    #[test]
    fn system_items_are_kept_as_sent_and_an_answer_is_one_wire_message() {
        let body = br#"{"model":"gpt","instructions":"Be brief.","input":[{"type":"message","role":"developer", "content":[{"type":"input_text","text":"Sandbox: read-only."}]},{"role":"user","content":"hi"},{"type":"reasoning","summary":[],"encrypted_content":"e1"},{"type":"function_call","call_id":"c1","name":"shell","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"ok"}],"stream":true,"store":false}"#;
        let request = turn(body);
        assert_eq!(request.system_text, "Be brief.\n\nSandbox: read-only.");
        assert_eq!(request.turns.len(), 3);
        assert_eq!(request.starts, vec![0, 1, 3]);
        assert!(request.stream);
        let answer = request.read(request.turns.get(1).unwrap(), 1).unwrap();
        assert_eq!(answer.len(), 1);
        assert_eq!(answer[0].tool_calls[0].id, "c1");
        let upstream =
            String::from_utf8(request.upstream_body(&json!([{"role": "user"}]))).unwrap();
        assert_eq!(
            upstream,
            r#"{"model":"gpt","instructions":"Be brief.","input":[{"type":"message","role":"developer", "content":[{"type":"input_text","text":"Sandbox: read-only."}]},{"role":"user"}],"stream":true,"store":false}"#
        );
    }

    #[test]
    fn stateful_requests_pass_and_bad_items_are_named_by_their_index() {
        let chained = br#"{"previous_response_id":"resp_1","input":"more"}"#;
        assert!(matches!(
            ResponsesRequest::parse(chained, ModelFamily::OpenAi),
            Ok(ResponsesBody::Stateful)
        ));
        let unchained = br#"{"previous_response_id":null,"input":"more"}"#;
        assert_eq!(turn(unchained).turns.len(), 1);
        let body = br#"{"input":[{"role":"system","content":"s"},{"role":"user","content":"a"},{"type":"function_call_output","output":"x"}]}"#;
        let request = turn(body);
        let error = request.read(request.turns.get(1).unwrap(), 1).unwrap_err();
        assert!(error.starts_with("input[2].call_id"), "{error}");
        let only_system = br#"{"input":[{"role":"developer","content":"s"}]}"#;
        let refused = ResponsesRequest::parse(only_system, ModelFamily::OpenAi).unwrap_err();
        assert!(refused.starts_with("input: only system"), "{refused}");
        let refused = ResponsesRequest::parse(br#"{"input":[3]}"#, ModelFamily::OpenAi);
        assert!(refused
            .unwrap_err()
            .starts_with("input[0]: expected an item"));
    }
}

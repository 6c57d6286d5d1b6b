//! Writing the model as Gemini contents (see [`super`] for the mapping).

use std::borrow::Borrow;
use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::NO_ID;
use crate::model::{Content, ImageSource, Message, Part, Provider, Role, ToolCall};
use crate::wire::crossing::{arguments_object, crossing, omitted_note, Crossing};

/// Writes messages as `{systemInstruction?, contents}`. Never fails: what Gemini has no place
/// for is dropped (thinking, provider-bound state of another format) or, where a content would
/// be left without parts, replaced by a note.
pub fn to_gemini<M: Borrow<Message>>(messages: &[M]) -> Value {
    // The body once, for `&Message`, rather than once per `M` the callers use.
    let messages: Vec<&Message> = messages.iter().map(Borrow::borrow).collect();
    to_gemini_refs(&messages)
}

fn to_gemini_refs(messages: &[&Message]) -> Value {
    let messages: Vec<&Message> = messages.iter().map(Borrow::borrow).collect();
    let leading = messages
        .iter()
        .take_while(|message| message.role == Role::System)
        .count();
    let (systems, rest) = messages.split_at(leading.min(messages.len()));
    // The calls, and id → the last call with it, for the responses. (An owned id and an
    // index, a map type the core has already: one BTreeMap type fewer in the .wasm.)
    let all_calls: Vec<&ToolCall> = messages
        .iter()
        .flat_map(|message| &message.tool_calls)
        .collect();
    let by_id: BTreeMap<String, usize> = crate::wire::fields::map_of(
        all_calls
            .iter()
            .enumerate()
            .map(|(index, call)| (call.id.clone(), index)),
    );
    let calls = Calls {
        all: &all_calls,
        by_id: &by_id,
    };
    let mut contents: Vec<(&'static str, Vec<Value>)> = Vec::new();
    let mut in_responses = false;
    for message in rest {
        let (role, parts) = match message.role {
            Role::Assistant => ("model", model_parts(message)),
            Role::Tool => ("user", vec![response_part(message, &calls)]),
            Role::User | Role::System => ("user", content_parts(&message.content)),
        };
        let is_response = message.role == Role::Tool;
        // A run of tool results is one function-response turn; consecutive model messages are
        // one model turn (Gemini wants a call turn right after a user or response turn).
        let merge = match contents.last() {
            Some(("model", _)) => role == "model",
            Some(_) => is_response && in_responses,
            None => false,
        };
        in_responses = is_response;
        match contents.last_mut() {
            Some((_, last)) if merge => last.extend(parts),
            _ => contents.push((role, parts)),
        }
    }
    let mut request = Map::new();
    if !systems.is_empty() {
        let parts: Vec<Value> = systems
            .iter()
            .flat_map(|message| content_parts(&message.content))
            .collect();
        request.insert("systemInstruction".to_owned(), json!({ "parts": parts }));
    }
    let contents = contents
        .into_iter()
        .map(|(role, mut parts)| {
            if role == "model" {
                // Merged model messages: their other parts first, then every call, as one
                // model message is written and as the reader reads a model content (so the
                // normalization is stable after one trip).
                crate::wire::fields::sort_stable_by(&mut parts, |a, b| {
                    let call = |part: &Value| part.get("functionCall").is_some();
                    call(a).cmp(&call(b))
                });
            }
            json!({"role": role, "parts": parts})
        })
        .collect();
    request.insert("contents".to_owned(), Value::Array(contents));
    Value::Object(request)
}

fn made_up_id(call: &ToolCall) -> bool {
    call.provider_fields.as_ref().is_some_and(|fields| {
        fields.provider == Provider::Gemini && fields.fields.get(NO_ID) == Some(&Value::Bool(true))
    })
}

fn model_parts(message: &Message) -> Vec<Value> {
    let mut parts = if message.tool_calls.is_empty() {
        content_parts(&message.content)
    } else {
        // Beside calls, empty text is no part at all.
        match &message.content {
            Content::Text(text) if text.is_empty() => Vec::new(),
            content => content_parts(content),
        }
    };
    parts.extend(message.tool_calls.iter().map(call_part));
    parts
}

fn call_part(call: &ToolCall) -> Value {
    let mut function = Map::new();
    if !made_up_id(call) {
        function.insert("id".to_owned(), json!(call.id));
    }
    function.insert("name".to_owned(), json!(call.name));
    function.insert(
        "args".to_owned(),
        Value::Object(arguments_object(&call.arguments)),
    );
    let mut part = Map::new();
    part.insert("functionCall".to_owned(), Value::Object(function));
    if let Some(fields) = call
        .provider_fields
        .as_ref()
        .filter(|fields| fields.provider == Provider::Gemini)
    {
        for (key, value) in &fields.fields {
            if key != NO_ID {
                part.insert(key.clone(), value.clone());
            }
        }
    }
    Value::Object(part)
}

/// The log's tool calls, and the index of the last with each id.
struct Calls<'a> {
    all: &'a [&'a ToolCall],
    by_id: &'a BTreeMap<String, usize>,
}

fn response_part(message: &Message, calls: &Calls) -> Value {
    let id = message.tool_call_id.as_deref().unwrap_or_default();
    // (name, whether the id is Gemini's own)
    let call = calls
        .by_id
        .get(id)
        .and_then(|index| calls.all.get(*index))
        .map(|call| (call.name.as_str(), !made_up_id(call)));
    // Gemini pairs a response with its call by name: the call's name wins over one the result
    // carried (a result may name its tool differently, and Gemini would then count a call
    // without its response).
    let name = call
        .map(|(name, _)| name)
        .or(message.name.as_deref())
        .unwrap_or("unknown");
    let text = message.content.text();
    // Text that is the compact JSON of an object (what reading an object gives) is that object
    // again; any other text is wrapped, so every text comes back as it was.
    let response = match serde_json::from_str::<Value>(&text) {
        Ok(object @ Value::Object(_)) if !message.is_error && object.to_string() == text => object,
        _ if message.is_error => json!({ "error": text }),
        _ => json!({ "output": text }),
    };
    let mut function = Map::new();
    if call.is_some_and(|(_, own_id)| own_id) {
        function.insert("id".to_owned(), json!(id));
    }
    function.insert("name".to_owned(), json!(name));
    function.insert("response".to_owned(), response);
    json!({ "functionResponse": function })
}

/// Content as parts: text is one text part (none when empty); a content whose every part was
/// dropped gets a note instead, as Gemini rejects a content without parts.
fn content_parts(content: &Content) -> Vec<Value> {
    match content {
        Content::Text(text) if text.is_empty() => Vec::new(),
        Content::Text(text) => vec![json!({ "text": text })],
        Content::Parts(parts) => {
            let mut written: Vec<Value> = parts.iter().filter_map(part_value).collect();
            if written.is_empty() && !parts.is_empty() {
                written.push(json!({ "text": omitted_note("provider-specific", "Gemini") }));
            }
            written
        }
    }
}

fn part_value(part: &Part) -> Option<Value> {
    match part {
        // Gemini rejects an empty text part.
        Part::Text { text } if text.is_empty() => None,
        Part::Text { text } => Some(json!({ "text": text })),
        Part::Image { source, .. } => Some(match source {
            ImageSource::Base64 { media_type, data } => {
                json!({"inlineData": {"mimeType": media_type, "data": data}})
            }
            ImageSource::Url { url } => {
                json!({"fileData": {"mimeType": media_type_of(url), "fileUri": url}})
            }
        }),
        Part::Thinking { .. } => None,
        Part::Opaque {
            provider: Provider::Gemini,
            block,
        } => Some(block.clone()),
        Part::Opaque { provider, block } => match crossing(*provider, block) {
            Crossing::Text(text) => Some(json!({ "text": text })),
            Crossing::State => None,
            Crossing::Other(kind) => Some(json!({ "text": omitted_note(&kind, "Gemini") })),
        },
    }
}

/// Gemini's `fileData` needs a MIME type: guessed from the address's extension.
fn media_type_of(url: &str) -> &'static str {
    let path = url
        .split(['?', '#'])
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    match path.rsplit('.').next().unwrap_or_default() {
        "png" => "image/png",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "heic" => "image/heic",
        _ => "image/jpeg",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::validate_gemini;
    use crate::ToolCall;

    #[test]
    fn a_response_is_named_after_the_call_it_answers() {
        // Found by the wire_formats fuzz target: a result naming its tool differently from
        // its call made Gemini count a call without its response.
        let result = Message {
            name: Some("get_weather".to_owned()),
            ..Message::tool_result("c1", "sunny", false)
        };
        let messages = [
            Message::user("weather?"),
            Message::assistant("", vec![ToolCall::new("c1", "get~weather", "{}")]),
            result,
        ];
        let request = to_gemini(&messages);
        let response = &request["contents"][2]["parts"][0]["functionResponse"];
        assert_eq!(response["name"], "get~weather");
        assert_eq!(validate_gemini(&request), Vec::new());
    }

    #[test]
    fn merged_model_messages_put_their_calls_last_and_read_back_the_same() {
        // Found by the wire_formats fuzz target: a model message with calls, then one with
        // text, merged into one content with the text after the calls, read back as one
        // message whose text came first: not stable after one trip.
        let messages = [
            Message::user("weather?"),
            Message::assistant("Checking.", vec![ToolCall::new("c1", "get_weather", "{}")]),
            Message::assistant("Still checking.", vec![]),
        ];
        let request = to_gemini(&messages);
        let parts = &request["contents"][1]["parts"];
        assert_eq!(parts[0]["text"], "Checking.");
        assert_eq!(parts[1]["text"], "Still checking.");
        assert!(parts[2].get("functionCall").is_some(), "{request}");
        let again = crate::wire::from_gemini(&request).unwrap();
        assert_eq!(to_gemini(&again), request);
    }
}

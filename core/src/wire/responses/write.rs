//! Writing the model as Responses items (see [`super`] for the mapping).

use std::borrow::Borrow;

use serde_json::{json, Map, Value};

use super::is_content_part;
use crate::model::{Content, ImageSource, Message, Part, Provider, ProviderFields, Role, ToolCall};
use crate::wire::crossing::{crossing, Crossing};

/// Writes messages as a Responses request body `{instructions?, input}`: a leading system
/// message with text content is `instructions`. Never fails: what the format has no place for
/// is dropped (thinking, provider-bound state of another format, `is_error`), and words held
/// in another provider's blocks are sent as text.
pub fn to_responses<M: Borrow<Message>>(messages: &[M]) -> Value {
    // The body once, for `&Message`, rather than once per `M` the callers use.
    let messages: Vec<&Message> = messages.iter().map(Borrow::borrow).collect();
    to_responses_refs(&messages)
}

fn to_responses_refs(messages: &[&Message]) -> Value {
    let messages: Vec<&Message> = messages.iter().map(Borrow::borrow).collect();
    let mut request = Map::new();
    let mut rest = messages.as_slice();
    if let Some((first, after)) = rest.split_first() {
        if let (Role::System, Content::Text(text), None) =
            (first.role, &first.content, &first.provider_fields)
        {
            request.insert("instructions".to_owned(), json!(text));
            rest = after;
        }
    }
    // Owned ids, as in the other sets of ids: one BTreeSet type fewer in the .wasm.
    let custom_calls = crate::wire::fields::set_of(
        messages
            .iter()
            .flat_map(|message| &message.tool_calls)
            .filter(|call| is_custom(call.provider_fields.as_ref()))
            .map(|call| call.id.clone()),
    );
    let mut items = Vec::new();
    for message in rest {
        match message.role {
            Role::Assistant => write_assistant(message, &mut items),
            Role::Tool => items.push(output_item(message, &custom_calls)),
            Role::User | Role::System => items.push(message_item(
                message.role.as_str(),
                content_value(&message.content, message.role),
                own_fields(message.provider_fields.as_ref()),
            )),
        }
    }
    request.insert(
        "input".to_owned(),
        Value::Array(without_lone_reasoning(items)),
    );
    Value::Object(request)
}

/// `items` without the `reasoning` items the API would refuse: one followed by nothing or by
/// the user's side ([`super::is_user_side`]), which is what is left when the message or call it
/// led to was dropped. Walked from the end, so a reasoning item left before one that goes is
/// judged by what then follows it.
fn without_lone_reasoning(items: Vec<Value>) -> Vec<Value> {
    let mut kept: Vec<Value> = Vec::with_capacity(items.len());
    for item in items.into_iter().rev() {
        let reasoning = item.get("type").and_then(Value::as_str) == Some("reasoning");
        if !(reasoning && kept.last().is_none_or(super::is_user_side)) {
            kept.push(item);
        }
    }
    kept.reverse();
    kept
}

/// The fields a Responses item gets back from `fields`, when they are this format's.
fn own_fields(fields: Option<&ProviderFields>) -> Option<&Map<String, Value>> {
    fields
        .filter(|fields| fields.provider == Provider::Responses)
        .map(|fields| &fields.fields)
}

fn is_custom(fields: Option<&ProviderFields>) -> bool {
    own_fields(fields).is_some_and(|fields| {
        fields.get("type").and_then(Value::as_str) == Some("custom_tool_call")
    })
}

fn with_fields(mut item: Map<String, Value>, fields: Option<&Map<String, Value>>) -> Value {
    for (key, value) in fields.into_iter().flatten() {
        item.entry(key.clone()).or_insert_with(|| value.clone());
    }
    Value::Object(item)
}

fn message_item(role: &str, content: Value, fields: Option<&Map<String, Value>>) -> Value {
    let mut item = Map::new();
    item.insert("type".to_owned(), json!("message"));
    item.insert("role".to_owned(), json!(role));
    item.insert("content".to_owned(), content);
    with_fields(item, fields)
}

/// An assistant message: its opaque items and content parts in order (each run of content
/// parts one `message` item), then one item per call.
fn write_assistant(message: &Message, items: &mut Vec<Value>) {
    let fields = own_fields(message.provider_fields.as_ref());
    let mut fields_used = false;
    let mut message_item_for = |content: Value, items: &mut Vec<Value>| {
        let own = (!fields_used).then_some(fields).flatten();
        fields_used = true;
        items.push(message_item("assistant", content, own));
    };
    match &message.content {
        Content::Text(text) if text.is_empty() && !message.tool_calls.is_empty() => {}
        Content::Text(text) => message_item_for(json!(text), items),
        Content::Parts(parts) => {
            let mut run: Vec<Value> = Vec::new();
            for part in parts {
                match part {
                    Part::Opaque {
                        provider: Provider::Responses,
                        block,
                    } if !is_content_part(block) => {
                        if !run.is_empty() {
                            message_item_for(Value::Array(std::mem::take(&mut run)), items);
                        }
                        items.push(block.clone());
                    }
                    other => run.extend(part_value(other, Role::Assistant)),
                }
            }
            if !run.is_empty() {
                message_item_for(Value::Array(run), items);
            }
        }
    }
    items.extend(message.tool_calls.iter().map(call_item));
}

fn call_item(call: &ToolCall) -> Value {
    let fields = own_fields(call.provider_fields.as_ref());
    let mut item = Map::new();
    if is_custom(call.provider_fields.as_ref()) {
        item.insert("call_id".to_owned(), json!(call.id));
        item.insert("name".to_owned(), json!(call.name));
        item.insert("input".to_owned(), json!(call.arguments));
    } else {
        item.insert("type".to_owned(), json!("function_call"));
        item.insert("call_id".to_owned(), json!(call.id));
        item.insert("name".to_owned(), json!(call.name));
        item.insert("arguments".to_owned(), json!(call.arguments));
    }
    with_fields(item, fields)
}

fn output_item(message: &Message, custom_calls: &crate::wire::fields::StringSet) -> Value {
    let id = message.tool_call_id.clone().unwrap_or_default();
    let output = match &message.content {
        Content::Text(text) => json!(text),
        Content::Parts(parts) => Value::Array(
            parts
                .iter()
                .flat_map(|part| part_value(part, Role::User))
                .collect(),
        ),
    };
    let mut item = Map::new();
    if !custom_calls.contains(id.as_str()) {
        item.insert("type".to_owned(), json!("function_call_output"));
    } else {
        item.insert("type".to_owned(), json!("custom_tool_call_output"));
    }
    item.insert("call_id".to_owned(), json!(id));
    item.insert("output".to_owned(), output);
    with_fields(item, own_fields(message.provider_fields.as_ref()))
}

/// Text stays a string, parts an array of content parts for `role`.
fn content_value(content: &Content, role: Role) -> Value {
    match content {
        Content::Text(text) => json!(text),
        Content::Parts(parts) => Value::Array(
            parts
                .iter()
                .flat_map(|part| part_value(part, role))
                .collect(),
        ),
    }
}

/// A part as a Responses content part: text is `output_text` from the assistant and
/// `input_text` from anyone else; opaque parts of other formats cross as text when they hold
/// words and are dropped otherwise.
fn part_value(part: &Part, role: Role) -> Option<Value> {
    let text_part = |text: &str| {
        if role == Role::Assistant {
            json!({"type": "output_text", "text": text, "annotations": []})
        } else {
            json!({"type": "input_text", "text": text})
        }
    };
    match part {
        Part::Text { text } => Some(text_part(text)),
        Part::Image { source, detail } => {
            let mut image = Map::new();
            image.insert("type".to_owned(), json!("input_image"));
            image.insert("image_url".to_owned(), json!(image_url(source)));
            if let Some(detail) = detail {
                image.insert("detail".to_owned(), json!(detail));
            }
            Some(Value::Object(image))
        }
        Part::Thinking { .. } => None,
        Part::Opaque {
            provider: Provider::Responses,
            block,
        } => Some(block.clone()),
        Part::Opaque { provider, block } => match crossing(*provider, block) {
            Crossing::Text(text) => Some(text_part(&text)),
            Crossing::State | Crossing::Other(_) => None,
        },
    }
}

fn image_url(source: &ImageSource) -> String {
    match source {
        ImageSource::Base64 { media_type, data } => format!("data:{media_type};base64,{data}"),
        ImageSource::Url { url } => url.clone(),
    }
}

//! Writing the model as AI SDK `ModelMessage`s (see [`super`] for the mapping).

use std::borrow::Borrow;

use serde_json::{json, Map, Value};

use super::{MESSAGE_FIELDS, WHOLE_OUTPUTS};
use crate::model::{Content, ImageSource, Message, Part, Provider, ProviderFields, Role, ToolCall};
use crate::text::transcript::CallNames;
use crate::wire::crossing::{call_names, crossing, Crossing};

/// Writes messages as an array of `ModelMessage`s. Never fails: what the AI SDK has no place
/// for is dropped (provider-bound state of another format), words in another provider's
/// blocks are sent as text, and consecutive tool results are one `tool` message.
pub fn to_ai_sdk<M: Borrow<Message>>(messages: &[M]) -> Value {
    // The body once, for `&Message`, rather than once per `M` the callers use.
    let messages: Vec<&Message> = messages.iter().map(Borrow::borrow).collect();
    to_ai_sdk_refs(&messages)
}

fn to_ai_sdk_refs(messages: &[&Message]) -> Value {
    let names = call_names(messages);
    let mut out: Vec<Value> = Vec::new();
    let mut open_tool: Option<(Vec<Value>, Map<String, Value>)> = None;
    for message in messages.iter().copied() {
        if message.role == Role::Tool {
            let fields = own_fields(message.provider_fields.as_ref());
            let message_fields = fields
                .and_then(|fields| fields.get(MESSAGE_FIELDS))
                .and_then(Value::as_object);
            // A result that opened its own tool message starts a new one.
            if message_fields.is_some() {
                flush(&mut open_tool, &mut out);
            }
            let (parts, _) = open_tool
                .get_or_insert_with(|| (Vec::new(), message_fields.cloned().unwrap_or_default()));
            parts.push(tool_result(message, &names));
            continue;
        }
        flush(&mut open_tool, &mut out);
        out.push(message_value(message));
    }
    flush(&mut open_tool, &mut out);
    Value::Array(out)
}

fn flush(open: &mut Option<(Vec<Value>, Map<String, Value>)>, out: &mut Vec<Value>) {
    if let Some((parts, fields)) = open.take() {
        let mut message = Map::new();
        message.insert("role".to_owned(), json!("tool"));
        message.insert("content".to_owned(), Value::Array(parts));
        out.push(with_fields(message, Some(&fields)));
    }
}

fn own_fields(fields: Option<&ProviderFields>) -> Option<&Map<String, Value>> {
    fields
        .filter(|fields| fields.provider == Provider::AiSdk)
        .map(|fields| &fields.fields)
}

fn with_fields(mut object: Map<String, Value>, fields: Option<&Map<String, Value>>) -> Value {
    for (key, value) in fields.into_iter().flatten() {
        if key != MESSAGE_FIELDS {
            object.entry(key.clone()).or_insert_with(|| value.clone());
        }
    }
    Value::Object(object)
}

fn message_value(message: &Message) -> Value {
    let mut object = Map::new();
    object.insert("role".to_owned(), json!(message.role.as_str()));
    let content = match (message.role, &message.content) {
        // A system message's content is a string in the AI SDK.
        (Role::System, content) => json!(content.text()),
        (_, Content::Text(text)) if message.tool_calls.is_empty() => json!(text),
        (_, content) => {
            let mut parts: Vec<Value> = match content {
                Content::Text(text) if text.is_empty() => Vec::new(),
                Content::Text(text) => vec![json!({"type": "text", "text": text})],
                Content::Parts(parts) => parts.iter().filter_map(part_value).collect(),
            };
            parts.extend(message.tool_calls.iter().map(call_value));
            Value::Array(parts)
        }
    };
    object.insert("content".to_owned(), content);
    with_fields(object, own_fields(message.provider_fields.as_ref()))
}

fn call_value(call: &ToolCall) -> Value {
    let input = if call.arguments.trim().is_empty() {
        json!({})
    } else {
        // Arguments that are not JSON reach the tool as the string they are.
        serde_json::from_str(&call.arguments).unwrap_or_else(|_| json!(call.arguments))
    };
    let mut object = Map::new();
    object.insert("type".to_owned(), json!("tool-call"));
    object.insert("toolCallId".to_owned(), json!(call.id));
    object.insert("toolName".to_owned(), json!(call.name));
    object.insert("input".to_owned(), input);
    with_fields(object, own_fields(call.provider_fields.as_ref()))
}

fn tool_result(message: &Message, names: &CallNames<'_>) -> Value {
    let id = message.tool_call_id.clone().unwrap_or_default();
    let name = message
        .name
        .clone()
        .or_else(|| names.get(&id).map(str::to_owned))
        .unwrap_or_default();
    let output = match &message.content {
        Content::Text(text) if message.is_error => json!({"type": "error-text", "value": text}),
        Content::Text(text) => json!({"type": "text", "value": text}),
        Content::Parts(parts) => match parts.as_slice() {
            [Part::Opaque {
                provider: Provider::AiSdk,
                block,
            }] if is_whole_output(block) => block.clone(),
            _ if message.is_error => {
                json!({"type": "error-text", "value": message.content.text()})
            }
            parts => {
                let items: Vec<Value> = parts.iter().filter_map(output_item).collect();
                json!({"type": "content", "value": items})
            }
        },
    };
    let mut object = Map::new();
    object.insert("type".to_owned(), json!("tool-result"));
    object.insert("toolCallId".to_owned(), json!(id));
    object.insert("toolName".to_owned(), json!(name));
    object.insert("output".to_owned(), output);
    with_fields(object, own_fields(message.provider_fields.as_ref()))
}

fn is_whole_output(block: &Value) -> bool {
    let kind = block
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    WHOLE_OUTPUTS.contains(&kind)
        || !block
            .as_object()
            .is_some_and(|object| object.keys().all(|key| key == "type" || key == "value"))
}

/// One part as an item of a `content` tool output.
fn output_item(part: &Part) -> Option<Value> {
    match part {
        Part::Text { text } => Some(json!({"type": "text", "text": text})),
        Part::Image {
            source: ImageSource::Base64 { media_type, data },
            ..
        } => Some(json!({"type": "media", "data": data, "mediaType": media_type})),
        Part::Image {
            source: ImageSource::Url { url },
            ..
        } => Some(json!({"type": "text", "text": url})),
        Part::Opaque {
            provider: Provider::AiSdk,
            block,
        } => Some(block.clone()),
        Part::Opaque { provider, block } => match crossing(*provider, block) {
            Crossing::Text(text) => Some(json!({"type": "text", "text": text})),
            Crossing::State | Crossing::Other(_) => None,
        },
        Part::Thinking { .. } => None,
    }
}

fn part_value(part: &Part) -> Option<Value> {
    match part {
        Part::Text { text } => Some(json!({"type": "text", "text": text})),
        Part::Image { source, .. } => Some(match source {
            ImageSource::Base64 { media_type, data } => {
                json!({"type": "image", "image": data, "mediaType": media_type})
            }
            ImageSource::Url { url } => json!({"type": "image", "image": url}),
        }),
        // Anthropic's thinking, in the AI SDK's own encoding of it.
        Part::Thinking {
            thinking,
            signature,
        } => Some(json!({
            "type": "reasoning",
            "text": thinking,
            "providerOptions": {"anthropic": {"signature": signature}},
        })),
        Part::Opaque {
            provider: Provider::AiSdk,
            block,
        } => Some(block.clone()),
        Part::Opaque { provider, block } => match crossing(*provider, block) {
            Crossing::Text(text) => Some(json!({"type": "text", "text": text})),
            Crossing::State | Crossing::Other(_) => None,
        },
    }
}

//! Writing the model as LangChain message dicts (see [`super`] for the mapping).

use std::borrow::Borrow;

use serde_json::{json, Map, Value};

use super::INVALID;
use crate::model::{Content, ImageSource, Message, Part, Provider, ProviderFields, Role, ToolCall};
use crate::wire::crossing::{arguments_object, crossing, Crossing};

/// Writes messages as LangChain's plain message dicts (`{type, content, ...}`), which
/// `coerceMessageLikeToMessage` and LangGraph take. Never fails: what LangChain has no place
/// for is dropped (provider-bound state of another format), words in another provider's blocks
/// are sent as text.
pub fn to_langchain<M: Borrow<Message>>(messages: &[M]) -> Value {
    Value::Array(
        messages
            .iter()
            .map(|message| message_value(message.borrow()))
            .collect(),
    )
}

fn own_fields(fields: Option<&ProviderFields>) -> Option<&Map<String, Value>> {
    fields
        .filter(|fields| fields.provider == Provider::LangChain)
        .map(|fields| &fields.fields)
}

fn message_value(message: &Message) -> Value {
    let kind = match message.role {
        Role::System => "system",
        Role::User => "human",
        Role::Assistant => "ai",
        Role::Tool => "tool",
    };
    let mut object = Map::new();
    object.insert("type".to_owned(), json!(kind));
    object.insert("content".to_owned(), content_value(&message.content));
    let (invalid, valid): (Vec<&ToolCall>, Vec<&ToolCall>) =
        message.tool_calls.iter().partition(|call| is_invalid(call));
    if !valid.is_empty() {
        let calls = valid.into_iter().map(call_value).collect();
        object.insert("tool_calls".to_owned(), Value::Array(calls));
    }
    if !invalid.is_empty() {
        let calls = invalid.into_iter().map(call_value).collect();
        object.insert("invalid_tool_calls".to_owned(), Value::Array(calls));
    }
    if message.role == Role::Tool {
        if let Some(id) = &message.tool_call_id {
            object.insert("tool_call_id".to_owned(), json!(id));
        }
        if message.is_error {
            object.insert("status".to_owned(), json!("error"));
        }
    }
    if let Some(name) = &message.name {
        object.insert("name".to_owned(), json!(name));
    }
    for (key, value) in own_fields(message.provider_fields.as_ref())
        .into_iter()
        .flatten()
    {
        object.entry(key.clone()).or_insert_with(|| value.clone());
    }
    Value::Object(object)
}

fn is_invalid(call: &ToolCall) -> bool {
    own_fields(call.provider_fields.as_ref())
        .is_some_and(|fields| fields.get(INVALID) == Some(&Value::Bool(true)))
}

fn call_value(call: &ToolCall) -> Value {
    let invalid = is_invalid(call);
    let mut object = Map::new();
    object.insert("name".to_owned(), json!(call.name));
    let args = if invalid {
        json!(call.arguments)
    } else {
        Value::Object(arguments_object(&call.arguments))
    };
    object.insert("args".to_owned(), args);
    object.insert("id".to_owned(), json!(call.id));
    let kind = if invalid {
        "invalid_tool_call"
    } else {
        "tool_call"
    };
    object.insert("type".to_owned(), json!(kind));
    for (key, value) in own_fields(call.provider_fields.as_ref())
        .into_iter()
        .flatten()
    {
        if key != INVALID {
            object.entry(key.clone()).or_insert_with(|| value.clone());
        }
    }
    Value::Object(object)
}

fn content_value(content: &Content) -> Value {
    match content {
        Content::Text(text) => json!(text),
        Content::Parts(parts) => Value::Array(parts.iter().filter_map(block_value).collect()),
    }
}

fn block_value(part: &Part) -> Option<Value> {
    match part {
        Part::Text { text } => Some(json!({"type": "text", "text": text})),
        Part::Image { source, detail } => {
            let url = match source {
                ImageSource::Base64 { media_type, data } => {
                    format!("data:{media_type};base64,{data}")
                }
                ImageSource::Url { url } => url.clone(),
            };
            let mut image = Map::new();
            image.insert("url".to_owned(), json!(url));
            if let Some(detail) = detail {
                image.insert("detail".to_owned(), json!(detail));
            }
            Some(json!({"type": "image_url", "image_url": image}))
        }
        Part::Thinking {
            thinking,
            signature,
        } => Some(json!({"type": "thinking", "thinking": thinking, "signature": signature})),
        Part::Opaque {
            provider: Provider::LangChain,
            block,
        } => Some(block.clone()),
        Part::Opaque { provider, block } => match crossing(*provider, block) {
            Crossing::Text(text) => Some(json!({"type": "text", "text": text})),
            Crossing::State | Crossing::Other(_) => None,
        },
    }
}

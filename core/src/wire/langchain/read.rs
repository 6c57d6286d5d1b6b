//! Reading LangChain messages into the model (see [`super`] for the mapping).

use serde_json::{Map, Value};

use super::INVALID;
use crate::error::{CoreError, Result};
use crate::model::{Content, Message, Part, Provider, ProviderFields, Role, ToolCall};
use crate::wire::fields::{
    as_object, expected, field_path, has_only_keys, index_path, optional_str, required,
    required_str, Object,
};
use crate::wire::responses::read::image_source_from_url;

/// Reads an array of LangChain messages (or `{messages: [...]}`) in any serialized form.
///
/// Errors: a top level that is neither, a message of an unknown type or class, a tool message
/// without `tool_call_id`, a tool call without `id` or `name` or with `args` that are not an
/// object, a content block without `type`.
pub fn from_langchain(value: &Value) -> Result<Vec<Message>> {
    let list = match value {
        Value::Array(list) => list,
        Value::Object(object) => {
            let list = required(object, "", "messages")?;
            list.as_array()
                .ok_or_else(|| expected("messages", "an array of messages", list))?
        }
        other => {
            return Err(expected(
                "messages",
                "an array of messages or an object with a `messages` array",
                other,
            ))
        }
    };
    crate::wire::fields::read_each(list, "messages", read_message)
}

/// The message's type and the object holding its fields, whichever form it is in.
fn unwrap_form<'a>(object: &'a Object, at: &str) -> Result<(String, &'a Object, String)> {
    if object.contains_key("lc") {
        let id_at = field_path(at, "id");
        let class = required(object, at, "id")?
            .as_array()
            .and_then(|path| path.last())
            .and_then(Value::as_str)
            .ok_or_else(|| {
                CoreError::invalid(&id_at, "expected the class path, an array of strings")
            })?;
        let kind = match class.trim_end_matches("Chunk") {
            "HumanMessage" => "human",
            "AIMessage" => "ai",
            "ToolMessage" => "tool",
            "SystemMessage" => "system",
            other => {
                return Err(CoreError::invalid(
                    id_at,
                    format!("unsupported message class {other:?} (expected HumanMessage, AIMessage, ToolMessage or SystemMessage)"),
                ))
            }
        };
        let kwargs_at = field_path(at, "kwargs");
        let kwargs = as_object(required(object, at, "kwargs")?, &kwargs_at, "an object")?;
        return Ok((kind.to_owned(), kwargs, kwargs_at));
    }
    let kind = required_str(object, at, "type")?.to_owned();
    match object.get("data") {
        Some(data) if !object.contains_key("content") => {
            let data_at = field_path(at, "data");
            Ok((kind, as_object(data, &data_at, "an object")?, data_at))
        }
        _ => Ok((kind, object, at.to_owned())),
    }
}

fn read_message(value: &Value, at: &str) -> Result<Message> {
    let object = as_object(value, at, "an object (a message)")?;
    let (kind, data, data_at) = unwrap_form(object, at)?;
    let role = match kind.as_str() {
        "human" => Role::User,
        "ai" => Role::Assistant,
        "tool" => Role::Tool,
        "system" => Role::System,
        other => {
            return Err(CoreError::invalid(
                field_path(at, "type"),
                format!("unknown message type {other:?} (expected human, ai, tool or system)"),
            ))
        }
    };
    let content_at = field_path(&data_at, "content");
    let content = match data.get("content") {
        None | Some(Value::Null) => Content::Text(String::new()),
        Some(Value::String(text)) => Content::Text(text.clone()),
        Some(Value::Array(blocks)) => Content::Parts(crate::wire::fields::read_each(
            blocks,
            &content_at,
            read_block,
        )?),
        Some(other) => {
            return Err(expected(
                &content_at,
                "a string or an array of blocks",
                other,
            ))
        }
    };
    let mut tool_calls = Vec::new();
    if role == Role::Assistant {
        for (key, invalid) in [("tool_calls", false), ("invalid_tool_calls", true)] {
            let calls_at = field_path(&data_at, key);
            match data.get(key) {
                None | Some(Value::Null) => {}
                Some(Value::Array(calls)) => {
                    for (index, call) in calls.iter().enumerate() {
                        tool_calls.push(read_call(call, &index_path(&calls_at, index), invalid)?);
                    }
                }
                Some(other) => return Err(expected(&calls_at, "an array of tool calls", other)),
            }
        }
    }
    let (tool_call_id, is_error) = if role == Role::Tool {
        let id = required_str(data, &data_at, "tool_call_id")?.to_owned();
        let status = optional_str(data, &data_at, "status")?;
        (Some(id), status == Some("error"))
    } else {
        (None, false)
    };
    let name = optional_str(data, &data_at, "name")?.map(str::to_owned);
    let known = [
        "type",
        "content",
        "tool_calls",
        "invalid_tool_calls",
        "tool_call_id",
        "name",
    ];
    let fields = crate::wire::fields::object_of(
        data.iter()
            .filter(|(key, value)| !known.contains(&key.as_str()) && !is_default(key, value, role))
            .map(|(key, value)| (key.clone(), value.clone())),
    );
    Ok(Message {
        role,
        content,
        tool_calls,
        tool_call_id,
        is_error,
        name,
        provider_fields: ProviderFields::of(Provider::LangChain, fields),
    })
}

/// Fields LangChain fills with a default on every message, left out so they are not carried.
fn is_default(key: &str, value: &Value, role: Role) -> bool {
    match key {
        "additional_kwargs" | "response_metadata" => value.as_object().is_some_and(Map::is_empty),
        "id" => value.is_null(),
        "status" => role == Role::Tool,
        _ => false,
    }
}

fn read_call(value: &Value, at: &str, invalid: bool) -> Result<ToolCall> {
    let object = as_object(value, at, "an object (a tool call)")?;
    let id = required_str(object, at, "id")?;
    let name = required_str(object, at, "name")?;
    let args_at = field_path(at, "args");
    let arguments = match (object.get("args"), invalid) {
        (None | Some(Value::Null), _) => String::new(),
        (Some(Value::String(text)), true) => text.clone(),
        (Some(args @ Value::Object(_)), false) => args.to_string(),
        (Some(other), false) => return Err(expected(&args_at, "an object", other)),
        (Some(other), true) => return Err(expected(&args_at, "a string", other)),
    };
    let mut fields = crate::wire::fields::object_of(
        object
            .iter()
            .filter(|(key, value)| {
                let default_type = key.as_str() == "type"
                    && matches!(value.as_str(), Some("tool_call" | "invalid_tool_call"));
                !(matches!(key.as_str(), "id" | "name" | "args") || default_type)
            })
            .map(|(key, value)| (key.clone(), value.clone())),
    );
    if invalid {
        fields.insert(INVALID.to_owned(), Value::Bool(true));
    }
    Ok(ToolCall {
        provider_fields: ProviderFields::of(Provider::LangChain, fields),
        ..ToolCall::new(id, name, arguments)
    })
}

fn read_block(value: &Value, at: &str) -> Result<Part> {
    let object = as_object(value, at, "an object (a content block)")?;
    let opaque = || Part::Opaque {
        provider: Provider::LangChain,
        block: value.clone(),
    };
    match required_str(object, at, "type")? {
        "text" if has_only_keys(object, &["type", "text"]) => Ok(Part::Text {
            text: required_str(object, at, "text")?.to_owned(),
        }),
        "image_url" if has_only_keys(object, &["type", "image_url"]) => {
            let (url, detail) = match object.get("image_url") {
                Some(Value::String(url)) => (Some(url.as_str()), None),
                Some(Value::Object(image)) if has_only_keys(image, &["url", "detail"]) => (
                    image.get("url").and_then(Value::as_str),
                    image.get("detail").and_then(Value::as_str),
                ),
                _ => (None, None),
            };
            Ok(match url {
                Some(url) => Part::Image {
                    source: image_source_from_url(url),
                    detail: detail.map(str::to_owned),
                },
                None => opaque(),
            })
        }
        "thinking" if has_only_keys(object, &["type", "thinking", "signature"]) => {
            match (object.get("thinking"), object.get("signature")) {
                (Some(Value::String(thinking)), Some(Value::String(signature))) => {
                    Ok(Part::Thinking {
                        thinking: thinking.clone(),
                        signature: signature.clone(),
                    })
                }
                _ => Ok(opaque()),
            }
        }
        _ => Ok(opaque()),
    }
}

//! Reading AI SDK `ModelMessage`s into the model (see [`super`] for the mapping).

use serde_json::{Map, Value};

use super::{MESSAGE_FIELDS, WHOLE_OUTPUTS};
use crate::error::{CoreError, Result};
use crate::model::{Content, ImageSource, Message, Part, Provider, ProviderFields, Role, ToolCall};
use crate::wire::anthropic_blocks::content_beside_tool_blocks;
use crate::wire::fields::{
    as_object, expected, field_path, has_only_keys, index_path, optional_str, required,
    required_str, Object,
};
use crate::wire::responses::read::image_source_from_url;

/// Reads an array of `ModelMessage`s, or `{system?, messages}`.
///
/// Errors: a top level that is neither, a message without a known `role` or `content`, a part
/// without `type`, a `tool-call` without `toolCallId` or `toolName`, a `tool-result` without
/// `toolCallId` or `output`, or a tool message part that is not a `tool-result`.
pub fn from_ai_sdk(value: &Value) -> Result<Vec<Message>> {
    let mut out = Vec::new();
    let list = match value {
        Value::Array(list) => list,
        Value::Object(object) => {
            match object.get("system") {
                None | Some(Value::Null) => {}
                Some(Value::String(text)) => out.push(Message::text(Role::System, text.clone())),
                Some(other) => return Err(expected("system", "a string", other)),
            }
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
    for (index, message) in list.iter().enumerate() {
        read_message(message, &index_path("messages", index), &mut out)?;
    }
    Ok(out)
}

fn extras(object: &Object, known: &[&str]) -> Map<String, Value> {
    crate::wire::fields::object_of(
        object
            .iter()
            .filter(|(key, _)| !known.contains(&key.as_str()))
            .map(|(key, value)| (key.clone(), value.clone())),
    )
}

fn read_message(value: &Value, at: &str, out: &mut Vec<Message>) -> Result<()> {
    let object = as_object(value, at, "an object (a message)")?;
    let role_at = field_path(at, "role");
    let role = match required_str(object, at, "role")? {
        "system" => Role::System,
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "tool" => Role::Tool,
        other => {
            return Err(CoreError::invalid(
                role_at,
                format!("unknown role {other:?} (expected system, user, assistant or tool)"),
            ))
        }
    };
    let fields = extras(object, &["role", "content"]);
    let content_at = field_path(at, "content");
    let content = required(object, at, "content")?;
    if role == Role::Tool {
        let parts = content
            .as_array()
            .ok_or_else(|| expected(&content_at, "an array of tool-result parts", content))?;
        let mut message_fields = Some(fields).filter(|fields| !fields.is_empty());
        for (index, part) in parts.iter().enumerate() {
            let mut result = tool_result(part, &index_path(&content_at, index))?;
            if let Some(fields) = message_fields.take() {
                let mut all = result
                    .provider_fields
                    .take()
                    .map(|own| own.fields)
                    .unwrap_or_default();
                all.insert(MESSAGE_FIELDS.to_owned(), Value::Object(fields));
                result.provider_fields = ProviderFields::of(Provider::AiSdk, all);
            }
            out.push(result);
        }
        return Ok(());
    }
    let mut calls = Vec::new();
    let content = match content {
        Value::String(text) => Content::Text(text.clone()),
        Value::Array(parts) if role != Role::System => {
            let mut read = Vec::with_capacity(parts.len());
            for (index, part) in parts.iter().enumerate() {
                let part_at = index_path(&content_at, index);
                let part_object = as_object(part, &part_at, "an object (a content part)")?;
                if required_str(part_object, &part_at, "type")? == "tool-call"
                    && role == Role::Assistant
                {
                    calls.push(tool_call(part_object, &part_at)?);
                } else {
                    read.push(read_part(part, &part_at)?);
                }
            }
            if calls.is_empty() {
                Content::Parts(read)
            } else {
                content_beside_tool_blocks(read)
            }
        }
        other => {
            let what = if role == Role::System {
                "a string (a system message's content)"
            } else {
                "a string or an array of parts"
            };
            return Err(expected(&content_at, what, other));
        }
    };
    out.push(Message {
        content,
        tool_calls: calls,
        provider_fields: ProviderFields::of(Provider::AiSdk, fields),
        ..Message::text(role, "")
    });
    Ok(())
}

fn tool_call(object: &Object, at: &str) -> Result<ToolCall> {
    let id = required_str(object, at, "toolCallId")?;
    let name = required_str(object, at, "toolName")?;
    let input = match (object.get("input"), object.get("args")) {
        (Some(input), _) | (None, Some(input)) => input,
        (None, None) => return Err(CoreError::invalid(field_path(at, "input"), "missing")),
    };
    Ok(ToolCall {
        provider_fields: ProviderFields::of(
            Provider::AiSdk,
            extras(object, &["type", "toolCallId", "toolName", "input", "args"]),
        ),
        ..ToolCall::new(id, name, input.to_string())
    })
}

fn tool_result(value: &Value, at: &str) -> Result<Message> {
    let object = as_object(value, at, "an object (a tool-result part)")?;
    let kind = required_str(object, at, "type")?;
    if kind != "tool-result" {
        return Err(CoreError::invalid(
            field_path(at, "type"),
            format!("a tool message holds tool-result parts, found {kind:?}"),
        ));
    }
    let id = required_str(object, at, "toolCallId")?;
    let name = optional_str(object, at, "toolName")?;
    let output_at = field_path(at, "output");
    let output = as_object(
        required(object, at, "output")?,
        &output_at,
        "an object with a `type`",
    )?;
    let output_type = required_str(output, &output_at, "type")?;
    let whole = || {
        Content::Parts(vec![Part::Opaque {
            provider: Provider::AiSdk,
            block: Value::Object(output.clone()),
        }])
    };
    let plain = has_only_keys(output, &["type", "value"]);
    let (content, is_error) = match output_type {
        "text" | "error-text" if plain => (
            Content::Text(required_str(output, &output_at, "value")?.to_owned()),
            output_type == "error-text",
        ),
        "content" if plain => {
            let value_at = field_path(&output_at, "value");
            let items = required(output, &output_at, "value")?;
            let items = items
                .as_array()
                .ok_or_else(|| expected(&value_at, "an array of content items", items))?;
            let parts = crate::wire::fields::read_each(items, &value_at, output_item)?;
            (Content::Parts(parts), false)
        }
        kind if WHOLE_OUTPUTS.contains(&kind) || !plain => (whole(), kind.starts_with("error-")),
        other => {
            return Err(CoreError::invalid(
                field_path(&output_at, "type"),
                format!("unknown tool output type {other:?} (expected text, json, error-text, error-json, content or execution-denied)"),
            ))
        }
    };
    Ok(Message {
        content,
        tool_call_id: Some(id.to_owned()),
        is_error,
        name: name.map(str::to_owned),
        provider_fields: ProviderFields::of(
            Provider::AiSdk,
            extras(object, &["type", "toolCallId", "toolName", "output"]),
        ),
        ..Message::text(Role::Tool, "")
    })
}

/// One item of a `content` tool output: `text`, a `media` image, or kept verbatim.
fn output_item(value: &Value, at: &str) -> Result<Part> {
    let object = as_object(value, at, "an object (a content item)")?;
    let opaque = || Part::Opaque {
        provider: Provider::AiSdk,
        block: value.clone(),
    };
    match required_str(object, at, "type")? {
        "text" if has_only_keys(object, &["type", "text"]) => Ok(Part::Text {
            text: required_str(object, at, "text")?.to_owned(),
        }),
        "media" if has_only_keys(object, &["type", "data", "mediaType"]) => {
            let media_type = required_str(object, at, "mediaType")?;
            let data = required_str(object, at, "data")?;
            Ok(if media_type.starts_with("image/") {
                Part::Image {
                    source: ImageSource::Base64 {
                        media_type: media_type.to_owned(),
                        data: data.to_owned(),
                    },
                    detail: None,
                }
            } else {
                opaque()
            })
        }
        _ => Ok(opaque()),
    }
}

fn read_part(value: &Value, at: &str) -> Result<Part> {
    let object = as_object(value, at, "an object (a content part)")?;
    let opaque = || Part::Opaque {
        provider: Provider::AiSdk,
        block: value.clone(),
    };
    match required_str(object, at, "type")? {
        "text" => {
            let text = required_str(object, at, "text")?;
            Ok(if has_only_keys(object, &["type", "text"]) {
                Part::Text {
                    text: text.to_owned(),
                }
            } else {
                opaque()
            })
        }
        "image" => Ok(image(object).unwrap_or_else(opaque)),
        "reasoning" => {
            let text = required_str(object, at, "text")?;
            let signature = object
                .get("providerOptions")
                .and_then(|options| single(options, "anthropic"))
                .and_then(|anthropic| single(anthropic, "signature"))
                .and_then(Value::as_str);
            Ok(match signature {
                Some(signature) if has_only_keys(object, &["type", "text", "providerOptions"]) => {
                    Part::Thinking {
                        thinking: text.to_owned(),
                        signature: signature.to_owned(),
                    }
                }
                _ => opaque(),
            })
        }
        _ => Ok(opaque()),
    }
}

/// The value of `key` when it is the object's only key.
fn single<'v>(value: &'v Value, key: &str) -> Option<&'v Value> {
    let object = value.as_object()?;
    (object.len() == 1).then(|| object.get(key)).flatten()
}

/// An `image` part with only the modelled fields, as an image.
fn image(object: &Object) -> Option<Part> {
    if !has_only_keys(object, &["type", "image", "mediaType"]) {
        return None;
    }
    let image = object.get("image")?.as_str()?;
    let media_type = object.get("mediaType").and_then(Value::as_str);
    let source = match (image_source_from_url(image), media_type) {
        (source @ ImageSource::Base64 { .. }, None) => source,
        (ImageSource::Url { url }, None) if url.contains("://") || url.starts_with("data:") => {
            ImageSource::Url { url }
        }
        (ImageSource::Url { url }, Some(media_type))
            if !url.contains("://") && !url.starts_with("data:") =>
        {
            ImageSource::Base64 {
                media_type: media_type.to_owned(),
                data: url,
            }
        }
        _ => return None,
    };
    Some(Part::Image {
        source,
        detail: None,
    })
}

//! OpenAI Chat Completions: a `messages` array to and from the model.
//!
//! Reading ([`from_openai`]) takes the array, or an object with a `messages` array (a whole
//! request body: its other fields are ignored). Writing ([`to_openai`]) gives the array.
//!
//! How the shapes map (the normalization rules are listed in [`crate::wire`]):
//! - Roles `system`, `user`, `assistant`, `tool` map one to one. `developer` (the o-series name
//!   for system instructions) reads as [`Role::System`] and is written back as `system`, which
//!   OpenAI accepts for every model. The legacy `function` role and a non-null legacy
//!   `function_call` are errors: they carry no call id, so they cannot be paired with results.
//! - `content`: a string is [`Content::Text`], an array is [`Content::Parts`]; `null` (and, on an
//!   assistant, an absent `content`) is empty text. Parts: `text` and `image_url` are modelled
//!   (a `data:<mime>;base64,` URL is [`ImageSource::Base64`], any other URL [`ImageSource::Url`];
//!   `detail` is kept); every other part (`input_audio`, `file`, `refusal`...) and a known part
//!   with extra fields is [`Part::Opaque`] with `provider: OpenAi`, kept verbatim.
//! - An assistant's `refusal` string is kept as an opaque `{"type": "refusal", "refusal": ...}`
//!   part (the content-part form of the same thing) so it is not lost.
//! - `tool_calls[i] = {id, type: "function", function: {name, arguments}}` is a
//!   [`crate::ToolCall`] with `arguments` kept as the exact text. A missing `type` reads as
//!   `function`; any other type is an error.
//! - `name` is kept on every role; `tool_call_id` is read on tool messages.
//! - Other fields of a message (`audio`, `annotations`, `reasoning_content`, `function_call:
//!   null`...) are ignored: the model has no place for them, and response objects pasted back
//!   into a history carry many of them.
//! - Written out: an OpenAI opaque part of a type Chat Completions does not take (an imported
//!   log can carry any `type`) is written as a text part, its own `text` or a notice naming the
//!   type, so a view always passes the API's part check.
//! - Written out: thinking parts and Anthropic-origin opaque parts are dropped (Chat Completions
//!   has no place for them), except that an Anthropic `text` block kept opaque for its extra
//!   fields (`cache_control`, `citations`) is sent as a plain text part; `is_error` has no
//!   OpenAI field and is dropped (the text is not altered); an assistant with tool calls and
//!   empty text gets `content: null`.
//!
//! Guarantees: `from_openai(&to_openai(msgs))? == msgs` for every list OpenAI can represent (see
//! [`crate::wire`]); no function panics; every error names the path of the bad value
//! (`messages[4].tool_calls[0].function.name: missing`).

use std::borrow::Borrow;

use serde_json::{json, Map, Value};

use super::crossing::{crossing, Crossing};
use super::fields::{
    as_object, expected, field_path, has_only_keys, optional_str, required, required_str, Object,
};
use crate::error::{CoreError, Result};
use crate::model::{Content, ImageSource, Message, Part, Provider, Role, ToolCall};

/// Reads a Chat Completions `messages` array (or an object holding one).
///
/// Errors: a top level that is neither, a message without a known `role`, a missing `content`
/// on a system, user or tool message, a tool message without `tool_call_id`, a malformed tool
/// call, a part without a `type`, or legacy function calling.
pub fn from_openai(messages: &Value) -> Result<Vec<Message>> {
    let list = match messages {
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
    crate::wire::fields::read_each(list, "messages", message_from_openai)
}

/// Writes messages as a Chat Completions `messages` array. Never fails: what OpenAI has no
/// place for is dropped (see the module documentation).
pub fn to_openai<M: Borrow<Message>>(messages: &[M]) -> Value {
    Value::Array(
        messages
            .iter()
            .map(|message| message_to_openai(message.borrow()))
            .collect(),
    )
}

fn message_from_openai(value: &Value, at: &str) -> Result<Message> {
    let object = as_object(value, at, "an object (a message)")?;
    let role = role_from_openai(required_str(object, at, "role")?, &field_path(at, "role"))?;
    let content_at = field_path(at, "content");
    let mut content = match object.get("content") {
        None if role == Role::Assistant => Content::Text(String::new()),
        None => return Err(CoreError::invalid(content_at, "missing")),
        Some(Value::Null) => Content::Text(String::new()),
        Some(Value::String(text)) => Content::Text(text.clone()),
        Some(Value::Array(parts)) => Content::Parts(crate::wire::fields::read_each(
            parts,
            &content_at,
            part_from_openai,
        )?),
        Some(other) => {
            return Err(expected(
                &content_at,
                "a string, null or an array of content parts",
                other,
            ))
        }
    };
    if object
        .get("function_call")
        .is_some_and(|call| !call.is_null())
    {
        return Err(CoreError::invalid(
            field_path(at, "function_call"),
            "legacy function calling is not supported: use `tool_calls` (they carry the id a result needs)",
        ));
    }
    let tool_calls = match object.get("tool_calls") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(calls)) if calls.is_empty() => Vec::new(),
        Some(Value::Array(calls)) if role == Role::Assistant => crate::wire::fields::read_each(
            calls,
            &field_path(at, "tool_calls"),
            tool_call_from_openai,
        )?,
        Some(Value::Array(_)) => {
            return Err(CoreError::invalid(
                field_path(at, "tool_calls"),
                "only assistant messages carry tool calls",
            ))
        }
        Some(other) => {
            return Err(expected(
                &field_path(at, "tool_calls"),
                "an array of tool calls",
                other,
            ))
        }
    };
    if role == Role::Assistant {
        if let Some(refusal) = optional_str(object, at, "refusal")? {
            content = with_refusal(content, refusal);
        }
    }
    let tool_call_id = match role {
        Role::Tool => Some(required_str(object, at, "tool_call_id")?.to_owned()),
        _ => None,
    };
    Ok(Message {
        role,
        content,
        tool_calls,
        tool_call_id,
        is_error: false,
        name: optional_str(object, at, "name")?.map(str::to_owned),
        provider_fields: None,
    })
}

fn role_from_openai(role: &str, at: &str) -> Result<Role> {
    match role {
        "system" | "developer" => Ok(Role::System),
        "user" => Ok(Role::User),
        "assistant" => Ok(Role::Assistant),
        "tool" => Ok(Role::Tool),
        "function" => Err(CoreError::invalid(
            at,
            "the legacy \"function\" role is not supported: use \"tool\" messages with a `tool_call_id`",
        )),
        other => Err(CoreError::invalid(
            at,
            format!("unknown role {other:?} (expected system, developer, user, assistant or tool)"),
        )),
    }
}

/// Appends an assistant's `refusal` to its content as the equivalent refusal part.
fn with_refusal(content: Content, refusal: &str) -> Content {
    let mut parts = match content {
        Content::Text(text) if text.is_empty() => Vec::new(),
        Content::Text(text) => vec![Part::Text { text }],
        Content::Parts(parts) => parts,
    };
    parts.push(Part::Opaque {
        provider: Provider::OpenAi,
        block: json!({"type": "refusal", "refusal": refusal}),
    });
    Content::Parts(parts)
}

fn tool_call_from_openai(value: &Value, at: &str) -> Result<ToolCall> {
    let object = as_object(value, at, "an object (a tool call)")?;
    let id = required_str(object, at, "id")?;
    match optional_str(object, at, "type")? {
        None | Some("function") => {}
        Some(other) => {
            return Err(CoreError::invalid(
                field_path(at, "type"),
                format!("unsupported tool call type {other:?} (expected \"function\")"),
            ))
        }
    }
    let function_at = field_path(at, "function");
    let function = as_object(required(object, at, "function")?, &function_at, "an object")?;
    let name = required_str(function, &function_at, "name")?;
    let arguments = required_str(function, &function_at, "arguments")?;
    Ok(ToolCall::new(id, name, arguments))
}

fn part_from_openai(value: &Value, at: &str) -> Result<Part> {
    let object = as_object(value, at, "an object (a content part)")?;
    let opaque = || Part::Opaque {
        provider: Provider::OpenAi,
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
        "image_url" => Ok(image_from_openai(object, at)?.unwrap_or_else(opaque)),
        _ => Ok(opaque()),
    }
}

/// The modelled image of an `image_url` part, or `None` when it has fields the model does not
/// hold (it is then kept opaque).
fn image_from_openai(object: &Object, at: &str) -> Result<Option<Part>> {
    let image_at = field_path(at, "image_url");
    let image = as_object(
        required(object, at, "image_url")?,
        &image_at,
        "an object with a `url`",
    )?;
    let url = required_str(image, &image_at, "url")?;
    let detail = optional_str(image, &image_at, "detail")?;
    let modelled = has_only_keys(object, &["type", "image_url"])
        && has_only_keys(image, &["url", "detail"])
        && !image.get("detail").is_some_and(Value::is_null);
    Ok(modelled.then(|| Part::Image {
        source: image_source_from_url(url),
        detail: detail.map(str::to_owned),
    }))
}

/// A `data:<mime>;base64,<data>` URL is inline bytes; anything else is an address.
fn image_source_from_url(url: &str) -> ImageSource {
    let inline = url
        .strip_prefix("data:")
        .and_then(|rest| rest.split_once(','))
        .and_then(|(header, data)| {
            header
                .strip_suffix(";base64")
                .map(|media_type| ImageSource::Base64 {
                    media_type: media_type.to_owned(),
                    data: data.to_owned(),
                })
        });
    inline.unwrap_or_else(|| ImageSource::Url {
        url: url.to_owned(),
    })
}

fn image_source_to_url(source: &ImageSource) -> String {
    match source {
        ImageSource::Base64 { media_type, data } => format!("data:{media_type};base64,{data}"),
        ImageSource::Url { url } => url.clone(),
    }
}

fn message_to_openai(message: &Message) -> Value {
    let mut object = Map::new();
    object.insert("role".to_owned(), json!(message.role.as_str()));
    let has_calls = message.role == Role::Assistant && !message.tool_calls.is_empty();
    object.insert(
        "content".to_owned(),
        content_to_openai(&message.content, has_calls),
    );
    if let Some(name) = &message.name {
        object.insert("name".to_owned(), json!(name));
    }
    if has_calls {
        let calls = message.tool_calls.iter().map(tool_call_to_openai).collect();
        object.insert("tool_calls".to_owned(), Value::Array(calls));
    }
    if message.role == Role::Tool {
        if let Some(id) = &message.tool_call_id {
            object.insert("tool_call_id".to_owned(), json!(id));
        }
    }
    Value::Object(object)
}

/// Text stays a string (`null` when empty beside tool calls, as OpenAI itself writes it); parts
/// stay an array, unless every part was dropped, in which case the content is empty text.
fn content_to_openai(content: &Content, has_calls: bool) -> Value {
    let empty_text = || if has_calls { Value::Null } else { json!("") };
    match content {
        Content::Text(text) if text.is_empty() => empty_text(),
        Content::Text(text) => json!(text),
        Content::Parts(parts) => {
            let written: Vec<Value> = parts.iter().filter_map(part_to_openai).collect();
            if written.is_empty() && !parts.is_empty() {
                empty_text()
            } else {
                Value::Array(written)
            }
        }
    }
}

fn part_to_openai(part: &Part) -> Option<Value> {
    match part {
        Part::Text { text } => Some(json!({"type": "text", "text": text})),
        Part::Image { source, detail } => {
            let mut image = Map::new();
            image.insert("url".to_owned(), json!(image_source_to_url(source)));
            if let Some(detail) = detail {
                image.insert("detail".to_owned(), json!(detail));
            }
            Some(json!({"type": "image_url", "image_url": image}))
        }
        // A part of a type Chat Completions takes goes back verbatim. One of a type it does not
        // take (an import or a hand-written log can carry any `type`) would make the whole
        // request fail, so it is written as text: its own `text` when it has one, else a
        // one-line notice naming the type, so the model knows something was there.
        Part::Opaque {
            provider: Provider::OpenAi,
            block,
        } => Some(if is_chat_part(block) {
            block.clone()
        } else {
            json!({"type": "text", "text": unsupported_part_text(block)})
        }),
        // Crossing providers: a block that still says something (an Anthropic text block
        // with `cache_control`, a Responses refusal...) is sent as its text rather than lost.
        Part::Opaque { provider, block } => match crossing(*provider, block) {
            Crossing::Text(text) => Some(json!({"type": "text", "text": text})),
            Crossing::State | Crossing::Other(_) => None,
        },
        Part::Thinking { .. } => None,
    }
}

/// The content part types Chat Completions takes (anything else in `content` is an error).
pub(crate) const PART_TYPES: [&str; 5] = ["text", "image_url", "input_audio", "refusal", "file"];

/// True when an opaque OpenAI part is of a type Chat Completions takes.
fn is_chat_part(block: &Value) -> bool {
    block
        .get("type")
        .and_then(Value::as_str)
        .is_some_and(|kind| PART_TYPES.contains(&kind))
}

/// The text an unsupported part is written as: its `text` string, or a notice naming its type.
fn unsupported_part_text(block: &Value) -> String {
    if let Some(text) = block.get("text").and_then(Value::as_str) {
        return text.to_owned();
    }
    let kind = block
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("unknown");
    format!("[a content part of type {kind:?} was here; Chat Completions cannot carry it]")
}

fn tool_call_to_openai(call: &ToolCall) -> Value {
    json!({
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": call.arguments},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_urls_are_inline_bytes_and_round_trip() {
        let inline = image_source_from_url("data:image/png;base64,iVBO,RW");
        assert_eq!(
            inline,
            ImageSource::Base64 {
                media_type: "image/png".into(),
                data: "iVBO,RW".into()
            }
        );
        assert_eq!(
            image_source_to_url(&inline),
            "data:image/png;base64,iVBO,RW"
        );
        assert_eq!(
            image_source_from_url("data:text/plain,hello"),
            ImageSource::Url {
                url: "data:text/plain,hello".into()
            }
        );
    }

    #[test]
    fn a_part_of_a_type_chat_completions_does_not_take_is_written_as_text() {
        let messages = from_openai(&json!([{"role": "user", "content": [
            {"type": "text", "text": "look"},
            {"type": "input_text", "text": "kept words"},
            {"type": "video_url", "video_url": {"url": "https://example.com/v.mp4"}},
            {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}
        ]}]))
        .unwrap();
        let written = to_openai(&messages);
        assert!(crate::validate_openai(&written).is_empty(), "{written}");
        let parts = written[0]["content"].as_array().unwrap();
        assert_eq!(parts[1], json!({"type": "text", "text": "kept words"}));
        assert_eq!(parts[2]["type"], "text");
        assert!(parts[2]["text"].as_str().unwrap().contains("\"video_url\""));
        assert_eq!(
            parts[3]["type"], "input_audio",
            "a supported part stays verbatim"
        );
    }

    #[test]
    fn assistant_with_calls_and_no_text_writes_null_content() {
        let message = Message::assistant("", vec![ToolCall::new("c", "f", "{}")]);
        assert_eq!(
            to_openai(&[message]),
            json!([{"role": "assistant", "content": null, "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}])
        );
    }

    #[test]
    fn missing_function_name_is_reported_with_its_path() {
        let input = json!([{"role": "user", "content": "hi"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"arguments": "{}"}}]}]);
        assert_eq!(
            from_openai(&input).unwrap_err().to_string(),
            "messages[1].tool_calls[0].function.name: missing"
        );
    }
}

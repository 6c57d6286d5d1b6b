//! Reading Responses items into the model (see [`super`] for the mapping).

use serde_json::Value;

use crate::error::{CoreError, Result};
use crate::model::{Content, ImageSource, Message, Part, Provider, ProviderFields, Role, ToolCall};
use crate::wire::fields::{
    as_object, expected, field_path, has_only_keys, index_path, required, required_str, Object,
};

/// Reads a Responses request body (`{instructions?, input}`), a response (`{output}`), or a
/// bare array of items.
///
/// Errors: a top level that is none of these, an item that is not an object, a message without
/// a known `role` or `content`, a call without `call_id` or `name`, an output without `call_id`.
pub fn from_responses(request: &Value) -> Result<Vec<Message>> {
    let mut out = Vec::new();
    let (items, at) = match request {
        Value::Array(items) => (items.as_slice(), "input"),
        Value::Object(object) => {
            if let Some(instructions) = object.get("instructions") {
                match instructions {
                    Value::Null => {}
                    Value::String(text) => out.push(Message::text(Role::System, text.clone())),
                    other => return Err(expected("instructions", "a string", other)),
                }
            }
            match (object.get("input"), object.get("output")) {
                (Some(Value::String(text)), _) => {
                    out.push(Message::user(text.clone()));
                    return Ok(out);
                }
                (Some(Value::Array(items)), _) => (items.as_slice(), "input"),
                (Some(other), _) => {
                    return Err(expected("input", "a string or an array of items", other))
                }
                (None, Some(Value::Array(items))) => (items.as_slice(), "output"),
                (None, Some(other)) => return Err(expected("output", "an array of items", other)),
                (None, None) => return Err(CoreError::invalid("input", "missing")),
            }
        }
        other => {
            return Err(expected(
                "input",
                "an array of items or an object with an `input` array",
                other,
            ))
        }
    };
    let mut group: Option<Group> = None;
    for (index, item) in items.iter().enumerate() {
        let item_at = index_path(at, index);
        match read_item(item, &item_at)? {
            Item::Turn(message) => {
                flush(&mut group, &mut out);
                out.push(message);
            }
            Item::AssistantMessage(content, fields) => {
                let current = group.get_or_insert_with(Group::default);
                if current.message_seen || !current.calls.is_empty() {
                    flush(&mut group, &mut out);
                }
                let current = group.get_or_insert_with(Group::default);
                current.message_seen = true;
                current.fields = fields;
                current.push_content(content);
            }
            Item::Call(call) => group.get_or_insert_with(Group::default).calls.push(call),
            Item::Opaque(block) => {
                group
                    .get_or_insert_with(Group::default)
                    .parts
                    .push(Part::Opaque {
                        provider: Provider::Responses,
                        block,
                    })
            }
        }
    }
    flush(&mut group, &mut out);
    Ok(out)
}

/// One item, sorted by what the model does with it.
enum Item {
    /// A user, system or developer message, or a tool output: a message of its own.
    Turn(Message),
    /// An assistant `message` item: its content and its extra fields.
    AssistantMessage(Content, Option<ProviderFields>),
    /// A `function_call` or `custom_tool_call`.
    Call(ToolCall),
    /// Any other item (`reasoning`, `web_search_call`...), kept verbatim.
    Opaque(Value),
}

/// The assistant-side items in a row that become one assistant message.
#[derive(Default)]
struct Group {
    parts: Vec<Part>,
    /// The content of the one message item, while it is the only content.
    only_text: Option<String>,
    message_seen: bool,
    fields: Option<ProviderFields>,
    calls: Vec<ToolCall>,
}

impl Group {
    fn push_content(&mut self, content: Content) {
        match content {
            Content::Text(text) if self.parts.is_empty() => self.only_text = Some(text),
            Content::Text(text) => self.parts.push(Part::Text { text }),
            Content::Parts(parts) => self.parts.extend(parts),
        }
    }

    fn into_message(self) -> Message {
        let content = match (self.only_text, self.parts.is_empty()) {
            (Some(text), true) => Content::Text(text),
            // Items after a message with string content: the text becomes the first part.
            (Some(text), false) => {
                let mut parts = vec![Part::Text { text }];
                parts.extend(self.parts);
                Content::Parts(parts)
            }
            (None, true) if !self.message_seen => Content::Text(String::new()),
            (None, _) => Content::Parts(self.parts),
        };
        Message {
            content,
            tool_calls: self.calls,
            provider_fields: self.fields,
            ..Message::text(Role::Assistant, "")
        }
    }
}

fn flush(group: &mut Option<Group>, out: &mut Vec<Message>) {
    if let Some(group) = group.take() {
        out.push(group.into_message());
    }
}

/// The fields of `object` besides `known`, as provider fields (with `extra` added).
fn extra_fields(
    object: &Object,
    known: &[&str],
    extra: Option<(&str, &str)>,
) -> Option<ProviderFields> {
    let mut fields = crate::wire::fields::object_of(
        object
            .iter()
            .filter(|(key, _)| !known.contains(&key.as_str()))
            .map(|(key, value)| (key.clone(), value.clone())),
    );
    if let Some((key, value)) = extra {
        fields.insert(key.to_owned(), Value::String(value.to_owned()));
    }
    ProviderFields::of(Provider::Responses, fields)
}

fn read_item(value: &Value, at: &str) -> Result<Item> {
    let object = as_object(value, at, "an object (an item)")?;
    let kind = match object.get("type") {
        None => "message",
        Some(Value::String(kind)) => kind.as_str(),
        Some(other) => return Err(expected(&field_path(at, "type"), "a string", other)),
    };
    match kind {
        "message" => read_message(object, at),
        "function_call" => Ok(Item::Call(ToolCall {
            provider_fields: extra_fields(object, &["type", "call_id", "name", "arguments"], None),
            ..ToolCall::new(
                required_str(object, at, "call_id")?,
                required_str(object, at, "name")?,
                required_str(object, at, "arguments")?,
            )
        })),
        "custom_tool_call" => Ok(Item::Call(ToolCall {
            provider_fields: extra_fields(object, &["call_id", "name", "input"], None),
            ..ToolCall::new(
                required_str(object, at, "call_id")?,
                required_str(object, at, "name")?,
                required_str(object, at, "input")?,
            )
        })),
        "function_call_output" | "custom_tool_call_output" => {
            let known: &[&str] = if kind == "function_call_output" {
                &["type", "call_id", "output"]
            } else {
                &["call_id", "output"]
            };
            Ok(Item::Turn(Message {
                content: output_content(
                    required(object, at, "output")?,
                    &field_path(at, "output"),
                )?,
                tool_call_id: Some(required_str(object, at, "call_id")?.to_owned()),
                provider_fields: extra_fields(object, known, None),
                ..Message::text(Role::Tool, "")
            }))
        }
        _ => Ok(Item::Opaque(value.clone())),
    }
}

fn read_message(object: &Object, at: &str) -> Result<Item> {
    let role_at = field_path(at, "role");
    let role = match required_str(object, at, "role")? {
        "user" => Role::User,
        "system" | "developer" => Role::System,
        "assistant" => Role::Assistant,
        other => {
            return Err(CoreError::invalid(
                role_at,
                format!("unknown role {other:?} (expected user, assistant, system or developer)"),
            ))
        }
    };
    let content_at = field_path(at, "content");
    let content = match required(object, at, "content")? {
        Value::String(text) => Content::Text(text.clone()),
        Value::Array(parts) => Content::Parts(crate::wire::fields::read_each(
            parts,
            &content_at,
            read_part,
        )?),
        other => {
            return Err(expected(
                &content_at,
                "a string or an array of content parts",
                other,
            ))
        }
    };
    let fields = extra_fields(object, &["type", "role", "content"], None);
    if role == Role::Assistant {
        return Ok(Item::AssistantMessage(content, fields));
    }
    Ok(Item::Turn(Message {
        content,
        provider_fields: fields,
        ..Message::text(role, "")
    }))
}

/// A `function_call_output`'s `output`: a string, or a list of input parts.
fn output_content(value: &Value, at: &str) -> Result<Content> {
    match value {
        Value::String(text) => Ok(Content::Text(text.clone())),
        Value::Array(parts) => Ok(Content::Parts(crate::wire::fields::read_each(
            parts, at, read_part,
        )?)),
        other => Err(expected(at, "a string or an array of content parts", other)),
    }
}

fn read_part(value: &Value, at: &str) -> Result<Part> {
    let object = as_object(value, at, "an object (a content part)")?;
    let opaque = || Part::Opaque {
        provider: Provider::Responses,
        block: value.clone(),
    };
    let kind = required_str(object, at, "type")?;
    match kind {
        // An unknown part is kept, and an assistant's is written back as an item of its own
        // (where Responses keeps what ctxkit does not model); a part typed as an item this
        // reader gives a meaning would then be read as that item. The API refuses it anyway.
        "message"
        | "function_call"
        | "function_call_output"
        | "custom_tool_call"
        | "custom_tool_call_output" => Err(CoreError::invalid(
            field_path(at, "type"),
            format!("\"{kind}\" is an item type, not a content part"),
        )),
        "input_text" | "output_text" => {
            let text = required_str(object, at, "text")?;
            let plain = object.iter().all(|(key, value)| match key.as_str() {
                "type" | "text" => true,
                "annotations" | "logprobs" => {
                    kind == "output_text" && value.as_array().is_some_and(Vec::is_empty)
                }
                _ => false,
            });
            Ok(if plain {
                Part::Text {
                    text: text.to_owned(),
                }
            } else {
                opaque()
            })
        }
        "input_image" => {
            let url = object.get("image_url").and_then(Value::as_str);
            let detail = object.get("detail").and_then(Value::as_str);
            let modelled = has_only_keys(object, &["type", "image_url", "detail"])
                && object.get("detail").is_none_or(Value::is_string);
            Ok(match url.filter(|_| modelled) {
                Some(url) => Part::Image {
                    source: image_source_from_url(url),
                    detail: detail.map(str::to_owned),
                },
                None => opaque(),
            })
        }
        // Every other part, of a known type or not, is kept: `validate_responses` reports an
        // unknown one.
        _ => Ok(opaque()),
    }
}

/// A `data:<mime>;base64,<data>` URL is inline bytes; anything else is an address.
pub(crate) fn image_source_from_url(url: &str) -> ImageSource {
    url.strip_prefix("data:")
        .and_then(|rest| rest.split_once(','))
        .and_then(|(header, data)| {
            header
                .strip_suffix(";base64")
                .map(|media_type| ImageSource::Base64 {
                    media_type: media_type.to_owned(),
                    data: data.to_owned(),
                })
        })
        .unwrap_or_else(|| ImageSource::Url {
            url: url.to_owned(),
        })
}

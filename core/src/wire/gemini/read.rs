//! Reading Gemini contents into the model (see [`super`] for the mapping).

use serde_json::Value;

use super::{NO_ID, SYNTHETIC_ID_PREFIX};
use crate::error::{CoreError, Result};
use crate::model::{Content, ImageSource, Message, Part, Provider, ProviderFields, Role, ToolCall};
use crate::wire::anthropic_blocks::content_beside_tool_blocks;
use crate::wire::fields::{
    as_object, expected, field_path, has_only_keys, index_path, optional_str, required,
    required_str, Object,
};

/// Reads a Gemini request body (`{systemInstruction?, contents}`), a response
/// (`{candidates}`), or a bare array of contents.
///
/// Errors: a top level that is none of these, a content without `parts` or with an unknown
/// `role`, a `functionCall` without `name` or with `args` that are not an object, a
/// `functionResponse` without `name` or `response`, or a response answering no call.
pub fn from_gemini(request: &Value) -> Result<Vec<Message>> {
    let mut reader = Reader::default();
    let (contents, at): (Vec<&Value>, String) = match request {
        Value::Array(contents) => (contents.iter().collect(), "contents".to_owned()),
        Value::Object(object) => {
            let system = object
                .get("systemInstruction")
                .or_else(|| object.get("system_instruction"));
            if let Some(system) = system.filter(|system| !system.is_null()) {
                reader.out.push(system_message(system)?);
            }
            match (object.get("contents"), object.get("candidates")) {
                (Some(Value::Array(contents)), _) => {
                    (contents.iter().collect(), "contents".to_owned())
                }
                (Some(other), _) => {
                    return Err(expected("contents", "an array of contents", other))
                }
                (None, Some(Value::Array(candidates))) => {
                    let contents = candidates
                        .iter()
                        .enumerate()
                        .map(|(index, candidate)| {
                            let at = index_path("candidates", index);
                            let object = as_object(candidate, &at, "an object (a candidate)")?;
                            required(object, &at, "content")
                        })
                        .collect::<Result<_>>()?;
                    return reader.read_all(contents, |index| {
                        field_path(&index_path("candidates", index), "content")
                    });
                }
                _ => return Err(CoreError::invalid("contents", "missing")),
            }
        }
        other => {
            return Err(expected(
                "contents",
                "an array of contents or an object with a `contents` array",
                other,
            ))
        }
    };
    reader.read_all(contents, |index| index_path(&at, index))
}

fn system_message(value: &Value) -> Result<Message> {
    let at = "systemInstruction";
    let content = match value {
        Value::String(text) => Content::Text(text.clone()),
        other => {
            let object = as_object(other, at, "an object with `parts`")?;
            let parts_at = field_path(at, "parts");
            let parts = required(object, at, "parts")?
                .as_array()
                .ok_or_else(|| CoreError::invalid(&parts_at, "expected an array of parts"))?;
            let mut read = Vec::with_capacity(parts.len());
            for (index, part) in parts.iter().enumerate() {
                read.push(plain_part(part, &index_path(&parts_at, index))?);
            }
            content_beside_tool_blocks(read)
        }
    };
    Ok(Message {
        content,
        ..Message::text(Role::System, "")
    })
}

#[derive(Default)]
struct Reader {
    out: Vec<Message>,
    /// Calls read so far (for made-up ids).
    calls_seen: usize,
    /// Calls of the latest model turn not answered yet: (id, name).
    open: Vec<(String, String)>,
}

impl Reader {
    fn read_all(
        mut self,
        contents: Vec<&Value>,
        at: impl Fn(usize) -> String,
    ) -> Result<Vec<Message>> {
        for (index, content) in contents.into_iter().enumerate() {
            self.read_content(content, &at(index))?;
        }
        Ok(self.out)
    }

    fn read_content(&mut self, value: &Value, at: &str) -> Result<()> {
        let object = as_object(value, at, "an object (a content)")?;
        let role = match optional_str(object, at, "role")? {
            None | Some("user") | Some("function") => Role::User,
            Some("model") => Role::Assistant,
            Some(other) => {
                return Err(CoreError::invalid(
                    field_path(at, "role"),
                    format!("unknown role {other:?} (expected \"user\" or \"model\")"),
                ))
            }
        };
        let parts_at = field_path(at, "parts");
        let parts = match required(object, at, "parts")? {
            Value::Array(parts) => parts,
            other => return Err(expected(&parts_at, "an array of parts", other)),
        };
        let mut content = Vec::new();
        let mut calls = Vec::new();
        let mut results = Vec::new();
        for (index, part) in parts.iter().enumerate() {
            let part_at = index_path(&parts_at, index);
            let object = as_object(part, &part_at, "an object (a part)")?;
            if let Some(call) = object.get("functionCall") {
                if role != Role::Assistant {
                    return Err(CoreError::invalid(
                        field_path(&part_at, "functionCall"),
                        "a functionCall part belongs in a \"model\" content",
                    ));
                }
                calls.push(self.read_call(object, call, &part_at)?);
            } else if let Some(response) = object.get("functionResponse") {
                if role != Role::User {
                    return Err(CoreError::invalid(
                        field_path(&part_at, "functionResponse"),
                        "a functionResponse part belongs in a \"user\" content",
                    ));
                }
                results
                    .push(self.read_response(response, &field_path(&part_at, "functionResponse"))?);
            } else {
                content.push(plain_part(part, &part_at)?);
            }
        }
        if role == Role::Assistant {
            self.open = calls
                .iter()
                .map(|c| (c.id.clone(), c.name.clone()))
                .collect();
            self.out.push(Message {
                content: content_beside_tool_blocks(content),
                tool_calls: calls,
                ..Message::text(Role::Assistant, "")
            });
        } else if results.is_empty() {
            self.out.push(Message {
                content: content_beside_tool_blocks(content),
                ..Message::text(Role::User, "")
            });
        } else {
            self.out.extend(results);
            if !content.is_empty() {
                self.out.push(Message {
                    content: content_beside_tool_blocks(content),
                    ..Message::text(Role::User, "")
                });
            }
        }
        Ok(())
    }

    fn read_call(&mut self, part: &Object, call: &Value, part_at: &str) -> Result<ToolCall> {
        let at = field_path(part_at, "functionCall");
        let object = as_object(call, &at, "an object with `name` and `args`")?;
        let name = required_str(object, &at, "name")?;
        let arguments = match object.get("args") {
            None | Some(Value::Null) => "{}".to_owned(),
            Some(args @ Value::Object(_)) => args.to_string(),
            Some(other) => return Err(expected(&field_path(&at, "args"), "an object", other)),
        };
        self.calls_seen += 1;
        let mut fields = crate::wire::fields::object_of(
            part.iter()
                .filter(|(key, _)| key.as_str() != "functionCall")
                .map(|(key, value)| (key.clone(), value.clone())),
        );
        let id = match optional_str(object, &at, "id")? {
            Some(id) => id.to_owned(),
            None => {
                fields.insert(NO_ID.to_owned(), Value::Bool(true));
                format!("{SYNTHETIC_ID_PREFIX}{}", self.calls_seen)
            }
        };
        Ok(ToolCall {
            provider_fields: ProviderFields::of(Provider::Gemini, fields),
            ..ToolCall::new(id, name, arguments)
        })
    }

    fn read_response(&mut self, value: &Value, at: &str) -> Result<Message> {
        let object = as_object(value, at, "an object with `name` and `response`")?;
        let name = required_str(object, at, "name")?;
        let response = required(object, at, "response")?;
        let position = match optional_str(object, at, "id")? {
            Some(id) => self.open.iter().position(|(open, _)| open == id),
            None => self.open.iter().position(|(_, open)| open == name),
        };
        let (id, _) = match position {
            Some(position) => self.open.remove(position),
            None => {
                return Err(CoreError::invalid(
                    at,
                    format!("a functionResponse for {name:?} answers no functionCall of the model turn before it"),
                ))
            }
        };
        let (text, is_error) = response_text(response, &field_path(at, "response"))?;
        Ok(Message {
            tool_call_id: Some(id),
            is_error,
            name: Some(name.to_owned()),
            ..Message::text(Role::Tool, text)
        })
    }
}

/// `{"output": text}` is that text, `{"error": text}` that text as an error; any other object
/// its compact JSON.
fn response_text(response: &Value, at: &str) -> Result<(String, bool)> {
    let object = as_object(response, at, "an object")?;
    if object.len() == 1 {
        if let Some(Value::String(text)) = object.get("output") {
            return Ok((text.clone(), false));
        }
        if let Some(Value::String(text)) = object.get("error") {
            return Ok((text.clone(), true));
        }
    }
    Ok((response.to_string(), false))
}

/// A part that is not a call or a response: text, an inline image, or kept verbatim.
fn plain_part(value: &Value, at: &str) -> Result<Part> {
    let object = as_object(value, at, "an object (a part)")?;
    let opaque = || Part::Opaque {
        provider: Provider::Gemini,
        block: value.clone(),
    };
    if has_only_keys(object, &["text"]) {
        return Ok(Part::Text {
            text: required_str(object, at, "text")?.to_owned(),
        });
    }
    if has_only_keys(object, &["inlineData"]) {
        let data_at = field_path(at, "inlineData");
        let data = as_object(required(object, at, "inlineData")?, &data_at, "an object")?;
        let media_type = required_str(data, &data_at, "mimeType")?;
        let bytes = required_str(data, &data_at, "data")?;
        if media_type.starts_with("image/") && has_only_keys(data, &["mimeType", "data"]) {
            return Ok(Part::Image {
                source: ImageSource::Base64 {
                    media_type: media_type.to_owned(),
                    data: bytes.to_owned(),
                },
                detail: None,
            });
        }
    }
    Ok(opaque())
}

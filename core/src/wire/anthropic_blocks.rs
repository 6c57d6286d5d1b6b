//! Anthropic content blocks: reading one into the model and writing one back.
//!
//! A block is one element of an Anthropic `content` array. Reading sorts it into what the model
//! does with it: a [`Part`] of the message's content, a [`ToolCall`] (`tool_use`), or a tool
//! result (`tool_result`, which becomes its own `Role::Tool` message). Shared by
//! [`super::anthropic`] and the Claude Code importer, whose assistant lines hold the same blocks.
//!
//! Guarantees:
//! - `text`, `image` and `thinking` blocks with exactly the modelled fields become
//!   [`Part::Text`], [`Part::Image`] and [`Part::Thinking`]; writing one back gives the same JSON.
//! - Any other block, and a known block with extra fields (`cache_control`, `citations`, an image
//!   `file` source...), becomes [`Part::Opaque`] with `provider: Anthropic`, kept verbatim.
//! - `tool_use` and `tool_result` keep only the fields the model has (`id`, `name`, `input`;
//!   `tool_use_id`, `content`, `is_error`): extras such as `cache_control` or Claude Code's
//!   `caller` are dropped, as there is no place for them on a [`ToolCall`] or a tool message.
//! - A block that is not an object, lacks its `type`, or lacks a field its type requires is an
//!   error naming that field; nothing panics.

use serde_json::{json, Value};

use super::crossing::{crossing, omitted_note, Crossing};
use super::fields::{
    as_object, expected, field_path, has_only_keys, optional_bool, required, required_str,
};
use crate::error::{CoreError, Result};
use crate::model::{Content, ImageSource, Part, Provider, ToolCall};

/// What one Anthropic content block is, in model terms.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Block {
    /// A piece of the message's own content.
    Part(Part),
    /// A `tool_use` block: a call the assistant made.
    ToolUse(ToolCall),
    /// A `tool_result` block: becomes one `Role::Tool` message.
    ToolResult(ToolResultBlock),
}

/// The fields of a `tool_result` block the model keeps.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolResultBlock {
    /// The id of the `tool_use` it answers.
    pub(crate) tool_use_id: String,
    /// A string reads as text, a list of blocks as parts; absent or `null` as empty text.
    pub(crate) content: Content,
    /// The tool reported a failure.
    pub(crate) is_error: bool,
}

/// Reads the block at `at`.
pub(crate) fn block_from_anthropic(value: &Value, at: &str) -> Result<Block> {
    let object = as_object(value, at, "an object (a content block)")?;
    let block_type = required_str(object, at, "type")?;
    let opaque = || Ok(Block::Part(opaque_part(value)));
    match block_type {
        "text" => {
            let text = required_str(object, at, "text")?;
            if has_only_keys(object, &["type", "text"]) {
                Ok(Block::Part(Part::Text {
                    text: text.to_owned(),
                }))
            } else {
                opaque()
            }
        }
        "image" => match image_source(object, at)? {
            Some(source) if has_only_keys(object, &["type", "source"]) => {
                Ok(Block::Part(Part::Image {
                    source,
                    detail: None,
                }))
            }
            _ => opaque(),
        },
        "thinking" => {
            let thinking = required_str(object, at, "thinking")?;
            let signature = required_str(object, at, "signature")?;
            if has_only_keys(object, &["type", "thinking", "signature"]) {
                Ok(Block::Part(Part::Thinking {
                    thinking: thinking.to_owned(),
                    signature: signature.to_owned(),
                }))
            } else {
                opaque()
            }
        }
        "tool_use" => {
            let id = required_str(object, at, "id")?;
            let name = required_str(object, at, "name")?;
            let input = required(object, at, "input")?;
            if !input.is_object() {
                return Err(expected(&field_path(at, "input"), "an object", input));
            }
            Ok(Block::ToolUse(ToolCall::new(id, name, input.to_string())))
        }
        "tool_result" => Ok(Block::ToolResult(ToolResultBlock {
            tool_use_id: required_str(object, at, "tool_use_id")?.to_owned(),
            content: tool_result_content(object.get("content"), &field_path(at, "content"))?,
            is_error: optional_bool(object, at, "is_error")?,
        })),
        _ => opaque(),
    }
}

/// Reads the blocks of a `content` array that may only hold parts (a `tool_result`'s content,
/// the top-level `system`): a `tool_use` or `tool_result` there is an error.
pub(crate) fn parts_from_anthropic(blocks: &[Value], at: &str) -> Result<Vec<Part>> {
    crate::wire::fields::read_each(blocks, at, part_from_anthropic)
}

/// One block of [`parts_from_anthropic`]'s array, at `block_at`.
fn part_from_anthropic(value: &Value, block_at: &str) -> Result<Part> {
    match block_from_anthropic(value, block_at)? {
        Block::Part(part) => Ok(part),
        Block::ToolUse(_) | Block::ToolResult(_) => Err(CoreError::invalid(
            field_path(block_at, "type"),
            "tool_use and tool_result blocks are not allowed here",
        )),
    }
}

/// The content of a message whose tool blocks were taken out: no parts read as empty text and a
/// single non-empty text part as plain text, so that `Content::Text` survives the round trip
/// through a block array (`to_anthropic` writes it as one text block, or none when empty).
pub(crate) fn content_beside_tool_blocks(mut parts: Vec<Part>) -> Content {
    match parts.as_slice() {
        [] => Content::Text(String::new()),
        [Part::Text { text }] if !text.is_empty() => match parts.pop() {
            Some(Part::Text { text }) => Content::Text(text),
            _ => Content::Parts(parts),
        },
        _ => Content::Parts(parts),
    }
}

/// Writes a part as an Anthropic block. OpenAI-origin opaque parts have no Anthropic form and
/// give `None`, except text (a `text` part with extra fields, a `refusal`), which is sent as a
/// text block; an image's `detail` (OpenAI's) is dropped.
pub(crate) fn part_to_anthropic(part: &Part) -> Option<Value> {
    match part {
        Part::Text { text } => Some(json!({"type": "text", "text": text})),
        Part::Image { source, .. } => {
            Some(json!({"type": "image", "source": image_source_to_anthropic(source)}))
        }
        Part::Thinking {
            thinking,
            signature,
        } => Some(json!({"type": "thinking", "thinking": thinking, "signature": signature})),
        Part::Opaque {
            provider: Provider::Anthropic,
            block,
        } => Some(block.clone()),
        // Crossing providers: words (an OpenAI text part with extras, a refusal) are sent as
        // text rather than lost; provider-bound state (a Responses reasoning item, a Gemini
        // thought) is dropped; anything else (audio, a file) becomes a note, so a message made
        // only of such parts is not empty.
        Part::Opaque { provider, block } => match crossing(*provider, block) {
            Crossing::Text(text) => Some(json!({"type": "text", "text": text})),
            Crossing::State => None,
            Crossing::Other(kind) => {
                Some(json!({"type": "text", "text": omitted_note(&kind, "Anthropic")}))
            }
        },
    }
}

/// Writes content as a list of blocks, for places that need a list (beside tool blocks, a merged
/// system prompt): plain text becomes one text block, or none when blank; blank text parts are
/// left out (Anthropic rejects text blocks without non-whitespace text).
pub(crate) fn content_to_blocks(content: &Content) -> Vec<Value> {
    match content {
        Content::Text(text) if text.trim().is_empty() => Vec::new(),
        Content::Text(text) => vec![json!({"type": "text", "text": text})],
        Content::Parts(parts) => parts
            .iter()
            .filter_map(part_to_anthropic)
            .filter(|block| !is_blank_text_block(block))
            .collect(),
    }
}

/// A plain text block whose text is blank (what a blank text part, or an OpenAI text part with
/// extras and blank text, becomes).
fn is_blank_text_block(block: &Value) -> bool {
    block.as_object().is_some_and(|object| {
        object.len() == 2
            && object.get("type").and_then(Value::as_str) == Some("text")
            && object
                .get("text")
                .and_then(Value::as_str)
                .is_some_and(|text| text.trim().is_empty())
    })
}

/// Writes content where Anthropic accepts a string or a list: text stays a string; in a list,
/// blank text parts are left out. Parts that were all another provider's state (a Responses
/// reasoning item alone, say) give one note instead of an empty list, which Anthropic rejects;
/// the note is one block, as [`crate::wire::breakpoints::anthropic_block_counts`] counts it.
pub(crate) fn content_to_anthropic(content: &Content) -> Value {
    match content {
        Content::Text(text) => Value::String(text.clone()),
        Content::Parts(_) => Value::Array(blocks_or_note(content)),
    }
}

/// [`content_to_blocks`], or one note block when every part was another provider's state
/// (the note [`content_to_anthropic`] writes, so a message after tool results, merged into
/// their user turn, carries the same block).
pub(crate) fn blocks_or_note(content: &Content) -> Vec<Value> {
    let mut blocks = content_to_blocks(content);
    let had_more_than_text = match content {
        Content::Parts(parts) => parts.iter().any(|part| !matches!(part, Part::Text { .. })),
        Content::Text(_) => false,
    };
    if blocks.is_empty() && had_more_than_text {
        let note = omitted_note("provider-specific", "Anthropic");
        blocks.push(json!({"type": "text", "text": note}));
    }
    blocks
}

fn opaque_part(value: &Value) -> Part {
    Part::Opaque {
        provider: Provider::Anthropic,
        block: value.clone(),
    }
}

/// The modelled source of an image block, or `None` when the source has a type or fields the
/// model does not hold (the block is then kept opaque).
fn image_source(object: &super::fields::Object, at: &str) -> Result<Option<ImageSource>> {
    let source_at = field_path(at, "source");
    let source = as_object(required(object, at, "source")?, &source_at, "an object")?;
    match required_str(source, &source_at, "type")? {
        "base64" => {
            let media_type = required_str(source, &source_at, "media_type")?;
            let data = required_str(source, &source_at, "data")?;
            Ok(
                has_only_keys(source, &["type", "media_type", "data"]).then(|| {
                    ImageSource::Base64 {
                        media_type: media_type.to_owned(),
                        data: data.to_owned(),
                    }
                }),
            )
        }
        "url" => {
            let url = required_str(source, &source_at, "url")?;
            Ok(
                has_only_keys(source, &["type", "url"]).then(|| ImageSource::Url {
                    url: url.to_owned(),
                }),
            )
        }
        _ => Ok(None),
    }
}

fn image_source_to_anthropic(source: &ImageSource) -> Value {
    match source {
        ImageSource::Base64 { media_type, data } => {
            json!({"type": "base64", "media_type": media_type, "data": data})
        }
        ImageSource::Url { url } => json!({"type": "url", "url": url}),
    }
}

fn tool_result_content(value: Option<&Value>, at: &str) -> Result<Content> {
    match value {
        None | Some(Value::Null) => Ok(Content::Text(String::new())),
        Some(Value::String(text)) => Ok(Content::Text(text.clone())),
        Some(Value::Array(blocks)) => Ok(Content::Parts(parts_from_anthropic(blocks, at)?)),
        Some(other) => Err(expected(
            at,
            "a string or an array of content blocks",
            other,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_blocks_with_extra_fields_stay_opaque() {
        let block = json!({"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}});
        assert_eq!(
            block_from_anthropic(&block, "m").unwrap(),
            Block::Part(Part::Opaque {
                provider: Provider::Anthropic,
                block: block.clone()
            })
        );
        let file_image = json!({"type": "image", "source": {"type": "file", "file_id": "f_1"}});
        assert!(matches!(
            block_from_anthropic(&file_image, "m").unwrap(),
            Block::Part(Part::Opaque { .. })
        ));
    }

    #[test]
    fn tool_use_keeps_input_as_json_text_and_drops_extras() {
        let block = json!({"type": "tool_use", "id": "t1", "name": "Bash", "input": {"b": 1, "a": "x"}, "caller": {"type": "direct"}});
        assert_eq!(
            block_from_anthropic(&block, "m").unwrap(),
            Block::ToolUse(ToolCall::new("t1", "Bash", r#"{"a":"x","b":1}"#))
        );
        let bad = json!({"type": "tool_use", "id": "t1", "name": "Bash", "input": "ls"});
        assert_eq!(
            block_from_anthropic(&bad, "m[0]").unwrap_err().to_string(),
            "m[0].input: expected an object, found a string"
        );
    }

    #[test]
    fn single_text_beside_tool_blocks_reads_as_plain_text() {
        assert_eq!(
            content_beside_tool_blocks(vec![]),
            Content::Text(String::new())
        );
        assert_eq!(
            content_beside_tool_blocks(vec![Part::Text { text: "a".into() }]),
            Content::Text("a".into())
        );
        let empty_block = vec![Part::Text {
            text: String::new(),
        }];
        assert_eq!(
            content_beside_tool_blocks(empty_block.clone()),
            Content::Parts(empty_block)
        );
    }
}

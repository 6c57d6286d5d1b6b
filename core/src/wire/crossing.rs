//! What a part, a call or a message becomes in a format other than the one it came from.
//!
//! Every writer sends an opaque block or provider fields back verbatim to their own format. For
//! any other format this module decides, in one place, what crosses:
//! - words the model read or wrote (a text block kept opaque for its extra fields, a refusal,
//!   a Gemini text part with a `thoughtSignature`, an AI SDK `json` tool output) cross as text;
//! - provider-bound state (reasoning items with `encrypted_content`, Gemini thought parts,
//!   Anthropic redacted thinking, AI SDK reasoning with provider options, any
//!   [`ProviderFields`]) is dropped, and [`dropped_state`] counts it for the view's stats;
//! - anything else (audio, files, server tool blocks) is dropped too, or replaced by a note
//!   where the target rejects an empty message (Anthropic, Gemini).
//!
//! Tool-call arguments that are not a JSON object ([`arguments_object`]) are carried by the
//! formats whose calls take an object as `{"raw_arguments": text}`, so no log can make a view
//! fail to render.

use std::borrow::{Borrow, Cow};

use serde_json::{Map, Value};

use crate::model::{Message, Part, Provider};
use crate::wire::WireFormat;

/// The key that carries tool-call arguments that are not a JSON object, in formats whose calls
/// take an object (Anthropic `input`, Gemini `args`, LangChain `args`).
pub const RAW_ARGUMENTS: &str = "raw_arguments";

/// What an opaque block of one provider is worth to another.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Crossing<'a> {
    /// Words: sent as a text part.
    Text(Cow<'a, str>),
    /// State only its provider can use (signatures, encrypted reasoning): dropped, counted.
    State,
    /// Anything else, named by its type (sent as a note where a message must not be empty).
    Other(Cow<'a, str>),
}

/// What `block` (an opaque part of `provider`) becomes in another format.
pub(crate) fn crossing(provider: Provider, block: &Value) -> Crossing<'_> {
    let kind = block.get("type").and_then(Value::as_str);
    let text = |key: &str| block.get(key).and_then(Value::as_str).map(Cow::Borrowed);
    let words = match (provider, kind) {
        (Provider::Anthropic, Some("redacted_thinking" | "thinking")) => return Crossing::State,
        (Provider::Anthropic | Provider::OpenAi | Provider::LangChain, Some("text")) => {
            text("text")
        }
        (Provider::OpenAi | Provider::Responses, Some("refusal")) => text("refusal"),
        (Provider::Responses, Some("reasoning")) => return Crossing::State,
        (Provider::Responses, Some("input_text" | "output_text")) => text("text"),
        (Provider::Gemini, _) if block.get("thought").and_then(Value::as_bool) == Some(true) => {
            return Crossing::State
        }
        (Provider::Gemini, _) => text("text"),
        (Provider::AiSdk, Some("reasoning")) => return Crossing::State,
        (Provider::AiSdk, Some("text")) => text("text"),
        (Provider::AiSdk, Some("json" | "error-json")) => block
            .get("value")
            .map(|value| Cow::Owned(value.to_string())),
        (Provider::AiSdk | Provider::Responses, Some("error-text")) => text("value"),
        (Provider::AiSdk, Some("execution-denied")) => Some(Cow::Owned(format!(
            "[tool execution denied{}]",
            block
                .get("reason")
                .and_then(Value::as_str)
                .map(|reason| format!(": {reason}"))
                .unwrap_or_default()
        ))),
        // A LangChain `tool_use` block repeats one of the message's `tool_calls`.
        (Provider::LangChain, Some("reasoning" | "thinking" | "tool_use")) => {
            return Crossing::State
        }
        _ => None,
    };
    match words {
        Some(words) => Crossing::Text(words),
        None => Crossing::Other(Cow::Borrowed(kind.unwrap_or_else(|| gemini_kind(block)))),
    }
}

/// A Gemini part has no `type`: its one data field names it (`inlineData`, `fileData`...).
fn gemini_kind(block: &Value) -> &str {
    block
        .as_object()
        .and_then(|object| object.keys().find(|key| !key.starts_with("thought")))
        .map_or("unknown", String::as_str)
}

/// The note a writer puts where a block it cannot send would leave a message empty.
pub(crate) fn omitted_note(kind: &str, target: &str) -> String {
    format!("[{kind} content omitted: {target} does not accept it]")
}

/// The provider whose opaque parts and fields `format` sends back verbatim.
pub(crate) fn own_provider(format: WireFormat) -> Option<Provider> {
    match format {
        WireFormat::Ctxkit => None,
        WireFormat::Openai => Some(Provider::OpenAi),
        WireFormat::Anthropic => Some(Provider::Anthropic),
        WireFormat::Responses => Some(Provider::Responses),
        WireFormat::Gemini => Some(Provider::Gemini),
        WireFormat::AiSdk => Some(Provider::AiSdk),
        WireFormat::LangChain => Some(Provider::LangChain),
    }
}

/// How many pieces of provider-bound state rendering `messages` in `format` drops: thinking
/// parts (Anthropic's signature, which the AI SDK and LangChain carry in their own encoding),
/// opaque parts of another provider that hold state, and [`crate::ProviderFields`] of another
/// format on messages and calls. The ctxkit format keeps everything: 0.
pub fn dropped_state<M: Borrow<Message>>(messages: &[M], format: WireFormat) -> usize {
    let Some(own) = own_provider(format) else {
        return 0;
    };
    let carries_thinking = matches!(
        format,
        WireFormat::Anthropic | WireFormat::AiSdk | WireFormat::LangChain
    );
    let foreign = |fields: &Option<crate::model::ProviderFields>| {
        usize::from(fields.as_ref().is_some_and(|fields| fields.provider != own))
    };
    messages
        .iter()
        .map(Borrow::borrow)
        .map(|message| {
            let parts = match &message.content {
                crate::model::Content::Parts(parts) => parts.as_slice(),
                crate::model::Content::Text(_) => &[],
            };
            let dropped_parts = parts
                .iter()
                .filter(|part| match part {
                    Part::Thinking { .. } => !carries_thinking,
                    Part::Opaque { provider, block } => {
                        *provider != own && crossing(*provider, block) == Crossing::State
                    }
                    _ => false,
                })
                .count();
            let dropped_calls: usize = message
                .tool_calls
                .iter()
                .map(|call| foreign(&call.provider_fields))
                .sum();
            dropped_parts + dropped_calls + foreign(&message.provider_fields)
        })
        .sum()
}

/// A call's arguments as the JSON object formats like Anthropic's need: empty text is `{}`, a
/// JSON object is itself, and anything else (invalid JSON, an array, a string) is carried as
/// `{"raw_arguments": text}` so that it still reaches the model and never fails a render.
pub fn arguments_object(arguments: &str) -> Map<String, Value> {
    if arguments.trim().is_empty() {
        return Map::new();
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(object)) => object,
        _ => {
            let mut raw = Map::new();
            raw.insert(
                RAW_ARGUMENTS.to_owned(),
                Value::String(arguments.to_owned()),
            );
            raw
        }
    }
}

/// The name of each call in `messages`, by id (the last call of an id wins): formats that name a
/// tool result by its tool (Gemini, the AI SDK) look it up here when the result does not carry
/// one.
pub(crate) fn call_names<'a>(messages: &[&'a Message]) -> crate::text::transcript::CallNames<'a> {
    let mut names = crate::text::transcript::CallNames::default();
    for message in messages {
        for call in &message.tool_calls {
            names.insert(call);
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn words_cross_and_state_does_not() {
        let reasoning = json!({"type": "reasoning", "encrypted_content": "gAAA"});
        assert_eq!(crossing(Provider::Responses, &reasoning), Crossing::State);
        let signed = json!({"text": "hi", "thoughtSignature": "c2ln"});
        assert_eq!(
            crossing(Provider::Gemini, &signed),
            Crossing::Text(Cow::Borrowed("hi"))
        );
        let thought = json!({"text": "hm", "thought": true});
        assert_eq!(crossing(Provider::Gemini, &thought), Crossing::State);
        let file = json!({"fileData": {"fileUri": "gs://x"}});
        assert_eq!(
            crossing(Provider::Gemini, &file),
            Crossing::Other(Cow::Borrowed("fileData"))
        );
        let json_output = json!({"type": "json", "value": {"a": 1}});
        assert_eq!(
            crossing(Provider::AiSdk, &json_output),
            Crossing::Text(Cow::Owned("{\"a\":1}".into()))
        );
    }

    #[test]
    fn arguments_that_are_not_an_object_are_carried_raw() {
        assert!(arguments_object("  ").is_empty());
        assert_eq!(arguments_object("{\"a\":1}")["a"], 1);
        assert_eq!(arguments_object("{\"a\":")[RAW_ARGUMENTS], "{\"a\":");
        assert_eq!(arguments_object("[1]")[RAW_ARGUMENTS], "[1]");
    }
}

//! The one reader: messages in any [`WireFormat`], for the shells (the CLI's `append` and
//! `import`, the wasm `Engine.append`), so a format is read the same way wherever it arrives.

use serde_json::Value;

use crate::error::{CoreError, Result};
use crate::model::Message;
use crate::wire::fields::{expected, index_path};
use crate::wire::{
    from_ai_sdk, from_anthropic, from_gemini, from_langchain, from_openai, from_responses,
    WireFormat,
};

/// `value` read as `format`. The ctxkit format is an array of messages in their serde form.
///
/// Errors: whatever the format's reader reports, with the path of the bad value.
pub fn from_format(value: &Value, format: WireFormat) -> Result<Vec<Message>> {
    match format {
        WireFormat::Ctxkit => ctxkit_from_value(value),
        WireFormat::Openai => from_openai(value),
        WireFormat::Anthropic => from_anthropic(value),
        WireFormat::Responses => from_responses(value),
        WireFormat::Gemini => from_gemini(value),
        WireFormat::AiSdk => from_ai_sdk(value),
        WireFormat::LangChain => from_langchain(value),
    }
}

fn ctxkit_from_value(value: &Value) -> Result<Vec<Message>> {
    let list = value
        .as_array()
        .ok_or_else(|| expected("messages", "an array of messages", value))?;
    list.iter()
        .enumerate()
        .map(|(index, item)| {
            serde_json::from_value(item.clone()).map_err(|error| {
                CoreError::invalid(index_path("messages", index), error.to_string())
            })
        })
        .collect()
}

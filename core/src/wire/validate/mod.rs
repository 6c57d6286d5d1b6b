//! Provider validators: what Anthropic, OpenAI (Chat Completions and Responses) or Gemini would
//! say about a request, before sending it.
//!
//! Each validator reads the request exactly as it would go over the wire (the JSON that
//! [`crate::wire`] produces, or a file from elsewhere) and lists every violation it finds, not
//! only the first, in the provider's own wording and with the provider's own location syntax
//! (`messages.12.content.0` for Anthropic, `messages.[12]` for OpenAI, `input[12]` for Responses,
//! `contents[12]` for Gemini), so a message in a log
//! can be matched to the 400 a provider returned. The checks cover the rules a context manager
//! can break: tool-call/result pairing, ids, roles, empty messages, part types the API does not
//! know, and OpenAI's cache breakpoint markers (`cache_marks`). They never panic, whatever
//! the input.

mod anthropic;
mod cache_marks;
mod gemini;
mod openai;
mod responses;

pub use anthropic::validate_anthropic;
pub use gemini::validate_gemini;
pub use openai::validate_openai;
pub use responses::validate_responses;

/// The validator of `format`, for the formats that are a provider's API (`None` for the ctxkit
/// format, the AI SDK and LangChain, which are libraries' message types that the library
/// converts for whichever provider it calls).
pub fn validate(
    request: &serde_json::Value,
    format: crate::wire::WireFormat,
) -> Option<Vec<Violation>> {
    use crate::wire::WireFormat;
    match format {
        WireFormat::Openai => Some(validate_openai(request)),
        WireFormat::Anthropic => Some(validate_anthropic(request)),
        WireFormat::Responses => Some(validate_responses(request)),
        WireFormat::Gemini => Some(validate_gemini(request)),
        WireFormat::Ctxkit | WireFormat::AiSdk | WireFormat::LangChain => None,
    }
}

/// One rule a request breaks.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Violation {
    /// Where, in the provider's location syntax (`messages.3.content.1`, `messages.[3]`).
    pub at: String,
    /// What the provider would say.
    pub message: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.at, self.message)
    }
}

fn violation(at: impl Into<String>, message: impl Into<String>) -> Violation {
    Violation {
        at: at.into(),
        message: message.into(),
    }
}

/// The string at `key` of a JSON object, if it is one.
fn str_field<'v>(value: &'v serde_json::Value, key: &str) -> Option<&'v str> {
    value.get(key).and_then(serde_json::Value::as_str)
}

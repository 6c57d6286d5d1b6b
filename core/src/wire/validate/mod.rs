//! Provider validators: what Anthropic or OpenAI would say about a request, before sending it.
//!
//! Each validator reads the request exactly as it would go over the wire (the JSON that
//! [`crate::wire`] produces, or a file from elsewhere) and lists every violation it finds, not
//! only the first, in the provider's own wording and with the provider's own location syntax
//! (`messages.12.content.0` for Anthropic, `messages.[12]` for OpenAI), so a message in a log
//! can be matched to the 400 a provider returned. The checks cover the rules a context manager
//! can break: tool-call/result pairing, ids, roles, empty messages. They never panic, whatever
//! the input.

mod anthropic;
mod openai;

pub use anthropic::validate_anthropic;
pub use openai::validate_openai;

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

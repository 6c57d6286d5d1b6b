//! The message model every other module speaks.
//!
//! A [`Message`] is provider-neutral: a role, content (plain text or a list of [`Part`]s), the
//! tool calls an assistant made, and for a tool result the id of the call it answers and whether
//! the tool failed (`is_error`, kept everywhere: the reference design lost it in storage).
//!
//! Guarantees:
//! - Nothing a provider sent is thrown away: thinking blocks keep their signature byte for byte,
//!   and any block ctxkit does not model is kept as an [`Part::Opaque`] value, tagged with the
//!   provider it came from so it is only ever sent back to that provider.
//! - The serde form is the ctxkit wire format (`--format ctxkit`): `content` is a string or an
//!   array of parts, empty fields are omitted, unknown fields are rejected so typos surface.

use serde::{Deserialize, Serialize};

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions to the model. The system prompt itself is never stored in a log: ctxkit
    /// rebuilds it every turn; system messages in a log are ones the caller put there.
    System,
    /// The human, or the harness speaking for them.
    User,
    /// The model.
    Assistant,
    /// The result of one tool call (`tool_call_id` says which).
    Tool,
}

crate::model::unit_enum::unit_enum_deserialize!(
    Role,
    "Role",
    [
        System = "system",
        User = "user",
        Assistant = "assistant",
        Tool = "tool"
    ]
);

impl Role {
    /// The lowercase name used on every wire format.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// The provider a raw block came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    /// OpenAI Chat Completions (and compatible servers: vLLM, llama.cpp, Ollama).
    OpenAi,
    /// Anthropic Messages.
    Anthropic,
    /// OpenAI Responses input and output items.
    Responses,
    /// Google Gemini `contents`.
    Gemini,
    /// The Vercel AI SDK's `ModelMessage`s.
    #[serde(rename = "ai-sdk")]
    AiSdk,
    /// LangChain's serialized messages.
    #[serde(rename = "langchain")]
    LangChain,
}

crate::model::unit_enum::unit_enum_deserialize!(
    Provider,
    "Provider",
    [
        OpenAi = "openai",
        Anthropic = "anthropic",
        Responses = "responses",
        Gemini = "gemini",
        AiSdk = "ai-sdk",
        LangChain = "langchain"
    ]
);

impl Provider {
    /// The provider's name as used in errors and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::Anthropic => "anthropic",
            Provider::Responses => "responses",
            Provider::Gemini => "gemini",
            Provider::AiSdk => "ai-sdk",
            Provider::LangChain => "langchain",
        }
    }
}

/// Where an image's bytes are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ImageSource {
    /// Inline bytes, base64-encoded.
    Base64 {
        /// MIME type, e.g. `image/png`.
        media_type: String,
        /// The base64 text (no `data:` prefix).
        data: String,
    },
    /// An `http(s):` address the provider fetches.
    Url {
        /// The address.
        url: String,
    },
}

/// One piece of a message's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Part {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// An image.
    Image {
        /// Where the bytes are.
        source: ImageSource,
        /// OpenAI's `detail` (`low`, `high`, `auto`), when the caller set one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
    /// A model's visible reasoning. Anthropic checks the signature, so both strings are replayed
    /// exactly as received.
    Thinking {
        /// The reasoning text.
        thinking: String,
        /// The provider's signature over it.
        signature: String,
    },
    /// A provider block ctxkit does not model (redacted thinking, documents, server tool
    /// results, audio, a known block with extra fields such as `cache_control`...). Kept
    /// verbatim and sent back only to the provider it came from.
    Opaque {
        /// The provider whose wire format `block` is in.
        provider: Provider,
        /// The block exactly as received.
        block: serde_json::Value,
    },
}

/// A message's content: plain text, or a list of parts.
///
/// Serialized as a JSON string or an array of parts; `null` reads as empty text.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Content {
    /// Plain text (the common case).
    Text(String),
    /// Several parts: text, images, thinking, provider blocks.
    Parts(Vec<Part>),
}

impl Default for Content {
    fn default() -> Self {
        Content::Text(String::new())
    }
}

impl<'de> Deserialize<'de> for Content {
    // Written by hand so a bad part reports its own error ("unknown variant `txt`") instead of
    // serde's untagged "data did not match any variant".
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ContentVisitor;
        impl<'de> serde::de::Visitor<'de> for ContentVisitor {
            type Value = Content;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string or an array of content parts")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Content, E> {
                Ok(Content::Text(text.to_owned()))
            }
            fn visit_string<E: serde::de::Error>(self, text: String) -> Result<Content, E> {
                Ok(Content::Text(text))
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Content, E> {
                Ok(Content::default())
            }
            fn visit_none<E: serde::de::Error>(self) -> Result<Content, E> {
                Ok(Content::default())
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Content, A::Error> {
                let mut parts = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
                while let Some(part) = seq.next_element::<Part>()? {
                    parts.push(part);
                }
                Ok(Content::Parts(parts))
            }
        }
        deserializer.deserialize_any(ContentVisitor)
    }
}

// By hand, like `Deserialize`: what is read also takes `null` (as empty text); what is written
// never is null.
#[cfg(feature = "schema")]
impl schemars::JsonSchema for Content {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Content".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let parts = generator.subschema_for::<Vec<Part>>();
        if generator.contract().is_deserialize() {
            schemars::json_schema!({ "anyOf": [{ "type": "string" }, parts, { "type": "null" }] })
        } else {
            schemars::json_schema!({ "anyOf": [{ "type": "string" }, parts] })
        }
    }
}

impl Content {
    /// The text of the content: the string itself, or the text parts joined by newlines.
    /// Images, thinking and opaque blocks contribute nothing.
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        match self {
            Content::Text(text) => std::borrow::Cow::Borrowed(text),
            Content::Parts(parts) => {
                let mut texts = parts.iter().filter_map(|part| match part {
                    Part::Text { text } => Some(text.as_str()),
                    _ => None,
                });
                match (texts.next(), texts.next()) {
                    (None, _) => std::borrow::Cow::Borrowed(""),
                    (Some(only), None) => std::borrow::Cow::Borrowed(only),
                    (Some(first), Some(second)) => {
                        let mut joined = format!("{first}\n{second}");
                        for text in texts {
                            joined.push('\n');
                            joined.push_str(text);
                        }
                        std::borrow::Cow::Owned(joined)
                    }
                }
            }
        }
    }

    /// True when there is nothing to show: no parts, or only text that is blank.
    pub fn is_blank(&self) -> bool {
        match self {
            Content::Text(text) => text.trim().is_empty(),
            Content::Parts(parts) => parts.iter().all(|part| match part {
                Part::Text { text } => text.trim().is_empty(),
                _ => false,
            }),
        }
    }
}

/// Fields one wire format has on a message or a tool call and the model does not (a Responses
/// item's `id` and `status`, Gemini's `thoughtSignature` on a call, the AI SDK's
/// `providerOptions`, a LangChain message's `id` and `response_metadata`...). Kept verbatim and
/// written back only in the format they came from: they are that provider's state, and another
/// provider would reject them or misread them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ProviderFields {
    /// The format the fields belong to.
    pub provider: Provider,
    /// The fields, by name, exactly as received.
    pub fields: serde_json::Map<String, serde_json::Value>,
}

impl ProviderFields {
    /// `fields` of `provider`, or `None` when there are none (so empty fields are never stored).
    pub fn of(
        provider: Provider,
        fields: serde_json::Map<String, serde_json::Value>,
    ) -> Option<Self> {
        (!fields.is_empty()).then_some(ProviderFields { provider, fields })
    }
}

/// A tool call an assistant made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    /// The call id the result must echo. Made by the model or a proxy: never trust it as a path.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The call's input as JSON text (OpenAI keeps it as text; Anthropic's `input` object is
    /// serialized here). Text that is not a JSON object is kept as it came: formats whose
    /// calls take an object carry it as `{"raw_arguments": text}`.
    pub arguments: String,
    /// Fields of the call that only its own format has (see [`ProviderFields`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_fields: Option<ProviderFields>,
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// What it says.
    #[serde(default)]
    pub content: Content,
    /// Calls made by an assistant message, in order (parallel calls share one message).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For a tool result: the id of the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// For a tool result: the tool reported a failure.
    #[serde(default, skip_serializing_if = "is_false")]
    pub is_error: bool,
    /// OpenAI's optional `name` (a participant name, or the tool's name on a tool message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Fields of the message that only its own format has (see [`ProviderFields`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_fields: Option<ProviderFields>,
}

fn is_false(value: &bool) -> bool {
    !*value
}

impl Message {
    /// A message with plain text content and nothing else.
    pub fn text(role: Role, text: impl Into<String>) -> Self {
        Message {
            role,
            content: Content::Text(text.into()),
            tool_calls: Vec::new(),
            tool_call_id: None,
            is_error: false,
            name: None,
            provider_fields: None,
        }
    }

    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Message::text(Role::User, text)
    }

    /// An assistant message with text and tool calls.
    pub fn assistant(text: impl Into<String>, tool_calls: Vec<ToolCall>) -> Self {
        Message {
            tool_calls,
            ..Message::text(Role::Assistant, text)
        }
    }

    /// A tool result answering `tool_call_id`.
    pub fn tool_result(
        tool_call_id: impl Into<String>,
        text: impl Into<String>,
        is_error: bool,
    ) -> Self {
        Message {
            tool_call_id: Some(tool_call_id.into()),
            is_error,
            ..Message::text(Role::Tool, text)
        }
    }

    /// The message's text (see [`Content::text`]).
    pub fn text_content(&self) -> std::borrow::Cow<'_, str> {
        self.content.text()
    }
}

impl ToolCall {
    /// A tool call.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
            provider_fields: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_form_omits_empty_fields_and_reads_string_or_parts() {
        let message = Message::tool_result("call_1", "ok", true);
        let json = serde_json::to_string(&message).unwrap_or_default();
        assert_eq!(
            json,
            r#"{"role":"tool","content":"ok","tool_call_id":"call_1","is_error":true}"#
        );

        let parts: Message = serde_json::from_str(
            r#"{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"sig=="},{"type":"text","text":"hi"}]}"#,
        )
        .unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(parts.text_content(), "hi");
        assert!(!parts.content.is_blank());
    }

    #[test]
    fn unknown_fields_and_missing_role_are_errors() {
        let typo = serde_json::from_str::<Message>(r#"{"role":"user","contnet":"hi"}"#);
        assert!(typo
            .map_err(|e| e.to_string())
            .err()
            .unwrap_or_default()
            .contains("contnet"));
        let no_role = serde_json::from_str::<Message>(r#"{"content":"hi"}"#);
        assert!(no_role
            .map_err(|e| e.to_string())
            .err()
            .unwrap_or_default()
            .contains("role"));
    }

    #[test]
    fn text_joins_text_parts_only() {
        let content = Content::Parts(vec![
            Part::Text { text: "a".into() },
            Part::Image {
                source: ImageSource::Url {
                    url: "https://x/y.png".into(),
                },
                detail: None,
            },
            Part::Text { text: "b".into() },
        ]);
        assert_eq!(content.text(), "a\nb");
        assert!(Content::Parts(vec![Part::Text { text: " \n".into() }]).is_blank());
        assert!(Content::Text(String::new()).is_blank());
    }
}

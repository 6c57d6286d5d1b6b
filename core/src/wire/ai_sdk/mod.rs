//! The Vercel AI SDK's `ModelMessage` (v5 and v6) to and from the model.
//!
//! Reading ([`from_ai_sdk`]) takes an array of `ModelMessage`s (what `generateText` returns as
//! `response.messages` and takes as `messages`), or `{system?, messages}`. Writing
//! ([`to_ai_sdk`]) gives the array, the system prompt as a `system` message first.
//!
//! How the shapes map:
//! - Roles `system`, `user`, `assistant` map one to one; a `tool` message gives one
//!   [`crate::Role::Tool`] message per `tool-result` part (its `toolName` is the message's
//!   `name`), and consecutive tool messages are written back as one `tool` message.
//! - Parts: `text` is text; `image` (base64 with `mediaType`, a `data:` URL or an address) is an
//!   image; `reasoning` whose only provider option is Anthropic's `signature` is a
//!   [`crate::Part::Thinking`] (so Anthropic gets its thinking back); every other part (`file`,
//!   `reasoning` with other options, a part with `providerOptions`...) is kept verbatim as
//!   [`crate::Part::Opaque`] with `provider: AiSdk`.
//! - `tool-call` parts are [`crate::ToolCall`]s: `input` is kept as its compact JSON text
//!   (`args`, the v4 name, is read too); `providerOptions` and `providerExecuted` are the call's
//!   [`crate::ProviderFields`].
//! - A `tool-result`'s `output`: `text` is text, `error-text` text with `is_error`; `content`
//!   is parts (`text`, and `media` images); `json`, `error-json` and v6's `execution-denied`
//!   are kept whole as one opaque part (with `is_error` for `error-json`), whose JSON reaches
//!   other providers as text.
//! - A message's fields besides `role` and `content` (`providerOptions`) are its provider
//!   fields; on a tool message they are kept with its first result.
//!
//! Normalizations (JSON in → JSON out): `tool-call` parts come after the other parts of an
//! assistant message; a content of one text part beside calls reads as text (written back as
//! one text part); an `image` given as a base64 `data:` URL is written as `image` +
//! `mediaType`; `args` is written as `input`.
//!
//! Guarantees: `from_ai_sdk(&to_ai_sdk(msgs))? == msgs` for every list the format can represent;
//! no function panics; every error names the path of the bad value
//! (`messages[3].content[0].toolCallId: missing`).

mod read;
mod write;

pub use read::from_ai_sdk;
pub use write::to_ai_sdk;

/// Tool output types kept whole as one opaque part.
pub(crate) const WHOLE_OUTPUTS: [&str; 3] = ["json", "error-json", "execution-denied"];

/// The provider field holding a tool message's own fields, kept with its first result.
pub(crate) const MESSAGE_FIELDS: &str = "message";

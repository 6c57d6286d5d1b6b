//! Google Gemini: `contents` (and `systemInstruction`) to and from the model.
//!
//! Reading ([`from_gemini`]) takes a `generateContent` request body (`{systemInstruction?,
//! contents, ...}`: other fields such as `tools` or `generationConfig` are ignored), a
//! response (`{candidates: [{content}]}`: each candidate's content in order), or a bare array of
//! contents. Writing ([`to_gemini`]) gives `{systemInstruction?, contents}`.
//!
//! How the shapes map:
//! - `systemInstruction` (`{parts: [{text}]}`) is a leading [`crate::Role::System`] message.
//! - Gemini has no string shorthand for content: a list of one non-empty text part, or of no
//!   part, reads as [`crate::Content::Text`] (so `Content::Parts([Text])` comes back as text).
//! - Roles: `user` is [`crate::Role::User`], `model` is [`crate::Role::Assistant`]. A user
//!   content's `functionResponse` parts become [`crate::Role::Tool`] messages, one per part, in
//!   order, before whatever else it holds (legacy `role: "function"` contents read the same).
//! - Parts: `text` is text; `inlineData` with an `image/*` type is a base64 image; a
//!   `functionCall` is a [`crate::ToolCall`] whose `args` object is kept as JSON text. Every
//!   other part (`thought: true` summaries, `fileData`, `executableCode`, a text part with a
//!   `thoughtSignature`...) is kept verbatim as [`crate::Part::Opaque`] with `provider: Gemini`.
//!   A call's `thoughtSignature` (Gemini 2.5 and 3 require it back with the call) is kept in
//!   the call's [`crate::ProviderFields`].
//! - Calls without an `id` (most Gemini models send none) get `gemini_call_<n>`, counted over
//!   the conversation, and their fields say so, so that the id is not written back. A
//!   `functionResponse` answers the first unanswered call of the model turn before it with the
//!   same `name` (by `id` when it has one), as Gemini matches them; its `name` is the tool
//!   message's `name`.
//! - A `functionResponse.response` of `{"output": text}` reads as that text, `{"error": text}`
//!   as that text with `is_error`; any other object as its compact JSON text. Written back,
//!   text that is the compact JSON of an object is that object, any other text `{"output":
//!   text}` (`{"error": text}` for an error).
//!
//! Normalizations (JSON in → JSON out): consecutive `model` contents are written as one (Gemini
//! wants a call turn right after a user or function-response turn), its `functionCall` parts
//! after the others, as a model content reads; a response object's keys
//! are sorted; a legacy `function` role is written as `user`; `role` is always written.
//!
//! Guarantees: `from_gemini(&to_gemini(msgs))? == msgs` for every list the format can
//! represent; no function panics; every error names the path of the bad value
//! (`contents[2].parts[0].functionCall.name: missing`).

mod read;
mod write;

pub use read::from_gemini;
pub use write::to_gemini;

/// The prefix of the ids given to calls that came without one.
pub(crate) const SYNTHETIC_ID_PREFIX: &str = "gemini_call_";

/// The provider field that marks a call id as made up by ctxkit (not written back).
pub(crate) const NO_ID: &str = "noId";

/// The data fields a Gemini part may hold (exactly one of them), as the API names them.
pub(crate) const PART_DATA_FIELDS: [&str; 7] = [
    "text",
    "inlineData",
    "fileData",
    "functionCall",
    "functionResponse",
    "executableCode",
    "codeExecutionResult",
];

/// The metadata fields a Gemini part may hold beside its data.
pub(crate) const PART_META_FIELDS: [&str; 4] = [
    "thought",
    "thoughtSignature",
    "videoMetadata",
    "partMetadata",
];

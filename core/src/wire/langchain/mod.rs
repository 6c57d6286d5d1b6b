//! LangChain messages, in their serialized forms, to and from the model.
//!
//! Reading ([`from_langchain`]) takes an array of messages (or `{messages: [...]}`, a LangGraph
//! state), each in any of the three forms LangChain writes:
//! - the `lc` constructor JSON (`JSON.stringify` of a message, Python's `dumpd`):
//!   `{lc: 1, type: "constructor", id: [..., "AIMessage"], kwargs: {...}}`;
//! - `toDict()` / `messages_to_dict`: `{type: "ai", data: {...}}`;
//! - the plain dicts LangGraph checkpoints store and `coerceMessageLikeToMessage` takes:
//!   `{type: "ai", content, tool_calls, tool_call_id, ...}`.
//!
//! Writing ([`to_langchain`]) gives the plain dicts.
//!
//! How the shapes map:
//! - Types `human`, `ai`, `tool`, `system` (classes `HumanMessage`, `AIMessage`, `ToolMessage`,
//!   `SystemMessage` and their chunks) are the four roles.
//! - `content` is text, or parts: `text` blocks are text, `image_url` blocks images (`detail`
//!   kept), `thinking` blocks with a signature (ChatAnthropic's) [`crate::Part::Thinking`];
//!   every other block (`tool_use`, `reasoning`, a text block with an `index`...) is kept
//!   verbatim as [`crate::Part::Opaque`] with `provider: LangChain`.
//! - `tool_calls[i] = {name, args, id, type: "tool_call"}`: `args` (an object) is kept as its
//!   compact JSON text. `invalid_tool_calls` (arguments that did not parse) are calls too, their
//!   `args` kept as the text they are, and written back as invalid calls.
//! - A tool message's `status: "error"` is `is_error`; its `name` is the message's `name`.
//! - Every other field (`id`, `additional_kwargs`, `response_metadata`, `usage_metadata`,
//!   `artifact`...) is the message's [`crate::ProviderFields`].
//!
//! Normalizations (JSON in → JSON out): every form is written as a plain dict; empty
//! `additional_kwargs`, `response_metadata`, `tool_calls` and `invalid_tool_calls`, a `null`
//! `id` or `name`, `status: "success"` and a call's `type: "tool_call"` are left out (the
//! defaults); an `image_url` given as a string is written as `{url}`.
//!
//! Guarantees: `from_langchain(&to_langchain(msgs))? == msgs` for every list the format can
//! represent; no function panics; every error names the path of the bad value
//! (`messages[1].tool_calls[0].id: missing`).

mod read;
mod write;

pub use read::from_langchain;
pub use write::to_langchain;

/// The call field marking a call that came from `invalid_tool_calls`.
pub(crate) const INVALID: &str = "invalid";

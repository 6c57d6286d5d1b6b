//! Wire formats: conversion between [`crate::Message`] and the JSON of the seven
//! [`WireFormat`]s, with each provider's validator and the repair of tool pairs.
//!
//! - `ctxkit`: the model's own serde form, a list of messages (no conversion; [`from_format`]
//!   and [`render_messages`] read and write it like the others).
//! - `openai`: Chat Completions `messages` ([`from_openai`], [`to_openai`]).
//! - `anthropic`: Messages `{system, messages}` ([`from_anthropic`], [`to_anthropic`]).
//! - `responses`: OpenAI Responses `{instructions, input}` items ([`from_responses`],
//!   [`to_responses`]; its mapping and guarantees are in that module's documentation).
//! - `gemini`: Gemini `generateContent` `{systemInstruction, contents}` ([`from_gemini`],
//!   [`to_gemini`]).
//! - `ai-sdk`: Vercel AI SDK `ModelMessage[]`, v5 and v6 ([`from_ai_sdk`], [`to_ai_sdk`]).
//! - `langchain`: LangChain messages: `lc` constructor JSON, `toDict()` and plain dicts in,
//!   plain dicts out ([`from_langchain`], [`to_langchain`]).
//!
//! [`breakpoints`]: where a view's cache breakpoints go ([`breakpoints::place_breakpoints`])
//! and how an Anthropic or OpenAI request carries them, which the renderer writes.
//!
//! [`from_format`] is the one reader and [`render_messages`] / [`render_view`] the one
//! renderer of all seven. [`validate`] checks a request against the rules of the four
//! provider APIs (OpenAI Chat, Anthropic, Responses, Gemini), each in that provider's words;
//! the AI SDK and LangChain are libraries' message types and have no validator. State that only
//! one provider can use (signatures, encrypted reasoning, Gemini thought parts, provider
//! fields) goes back only to its own format; `crossing` decides what crosses to another format,
//! and [`dropped_state`] counts what a view in a given format leaves out.
//!
//! Readers walk the JSON by hand so that every error names the path of the bad value
//! (`messages[4].tool_calls[0].function.name: missing`) and so that blocks ctxkit does not model
//! are kept verbatim as [`crate::Part::Opaque`], tagged with their provider. No function here
//! panics, on any input.
//!
//! # What "lossless" means
//!
//! **On the model**: `from_X(to_X(msgs)) == msgs` exactly, for every list provider X can
//! represent (below). **On the JSON**: `to_X(from_X(json))` gives back `json` up to the
//! normalizations listed here. Key order never matters (objects compare as maps).
//!
//! ## OpenAI Chat Completions
//!
//! Normalizations (JSON in → JSON out):
//! - `role: "developer"` comes back as `"system"`.
//! - `content: null` and `content: ""` are both empty text; written back as `null` on an
//!   assistant message with tool calls, as `""` everywhere else. An assistant without `content`
//!   gets one.
//! - A call without `type` gets `"type": "function"`; `tool_calls: []` and `tool_calls: null`
//!   disappear.
//! - An assistant's `refusal` string comes back as a `{"type": "refusal"}` content part (its
//!   text, if any, as a text part before it).
//! - Message fields outside the model (`audio`, `annotations`, `refusal: null`,
//!   `reasoning_content`, `tool_call_id` on a non-tool message...) are dropped.
//!
//! Representable messages (exact round trip on the model): no [`crate::Part::Thinking`] and no
//! Anthropic-origin opaque part (both dropped); `is_error` false (no OpenAI field: dropped, the
//! text is not altered); `tool_calls` only on assistant messages; `tool_call_id` present on tool
//! messages and absent elsewhere; opaque parts are objects with a string `type` that would not
//! read as a modelled part; a [`crate::ImageSource::Url`] that is not itself a
//! `data:<mime>;base64,` URL, and a [`crate::ImageSource::Base64`] whose media type has no `,`.
//!
//! ## Anthropic Messages
//!
//! Normalizations (JSON in → JSON out):
//! - A `system` of `null` disappears.
//! - Consecutive user messages holding `tool_result` blocks, and a user message right after
//!   them, are merged into one user message; within it, the `tool_result` blocks come first.
//! - Within an assistant message the `tool_use` blocks come after all other blocks.
//! - `is_error: false` disappears; a `tool_result` with `content: ""` or `null` loses `content`.
//! - `tool_use` and `tool_result` keep only their modelled fields (`cache_control`, Claude Code's
//!   `caller`... are dropped: a tool call or tool message has no place for them). Every other
//!   block with extra fields is kept verbatim, opaque.
//! - A `tool_use` `input` comes back with its keys sorted (it is stored as compact JSON text).
//! - Request fields other than `system` and `messages` (`model`, `tools`...) are not read, and
//!   message fields other than `role` and `content` are dropped.
//!
//! Representable messages (exact round trip on the model): at most one system message, first
//! (several leading ones are merged into one block list; a later one is sent as a user turn);
//! no `name` (Anthropic has none) and no image `detail` (dropped); no OpenAI-origin opaque
//! part (sent as a text note, see below); `tool_call_id` present on tool messages and absent elsewhere (writing a tool message
//! without one is an error); tool call `arguments` are the compact JSON text of an object with
//! sorted keys, as `serde_json` writes it (empty arguments are written as `{}`; anything else is
//! an error); opaque parts are objects with a string `type` that would not read as a modelled
//! part. One content shape has two model forms: next to tool blocks (an assistant that made
//! calls, a user message right after tool results) content is a block list, and a list of one
//! non-empty text block, or of none, reads back as [`crate::Content::Text`]; so there
//! `Content::Parts([Text])` with non-empty text and `Content::Parts([])` come back as text. A
//! user message with empty content right after tool results stays a message of its own.
//!
//! The sections below detail OpenAI Chat and Anthropic; the other four formats document their
//! mappings, normalizations and representable lists in their own modules.
//!
//! ## Across providers (best effort)
//!
//! Anthropic → OpenAI drops thinking, Anthropic opaque blocks and `is_error`. OpenAI → Anthropic
//! drops `name` and image `detail`, replaces an OpenAI part Anthropic cannot take (audio, file)
//! by a short text note saying so (a message made only of such parts would otherwise be empty,
//! which Anthropic rejects), sends a later system message as a user turn, and fails on tool call
//! arguments that are not a JSON object. Either way, an opaque block that holds words the model
//! read or wrote (a text block kept opaque for `cache_control` or `citations`, an OpenAI refusal)
//! crosses as a plain text block instead of being dropped.

mod ai_sdk;
mod anthropic;
mod anthropic_blocks;
pub mod breakpoints;
pub(crate) mod crossing;
pub(crate) mod fields;
pub(crate) mod gemini;
mod langchain;
mod openai;
mod parse;
pub(crate) mod render;
pub(crate) mod repair;
pub(crate) mod responses;
pub(crate) mod validate;

pub use ai_sdk::{from_ai_sdk, to_ai_sdk};
pub use anthropic::{from_anthropic, from_anthropic_message, to_anthropic};
pub use crossing::{arguments_object, dropped_state, RAW_ARGUMENTS};
pub use gemini::{from_gemini, to_gemini};
pub use langchain::{from_langchain, to_langchain};
pub use openai::{from_openai, to_openai};
pub use parse::from_format;
pub use render::{
    render_message, render_messages, render_messages_cached, render_view, render_view_cached,
    WireFormat,
};
pub use repair::{
    repair_tool_pairs, repair_view, RepairReport, EMPTY_RESULT, LEADING_USER, MISSING_RESULT,
};
pub use responses::{
    from_responses, is_user_side_item, responses_turns, responses_turns_by_side, to_responses,
};
pub use validate::{
    validate, validate_anthropic, validate_gemini, validate_openai, validate_responses, Violation,
};

pub(crate) use anthropic_blocks::{block_from_anthropic, content_beside_tool_blocks, Block};
pub(crate) use fields::{
    as_object, expected, field_path, index_path, kind, optional_bool, optional_str, optional_u64,
    required, required_str, Object,
};

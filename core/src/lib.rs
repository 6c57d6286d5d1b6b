//! # ctxkit-core: the pure half of ctxkit
//!
//! An agent keeps the complete log of its session; before every model call ctxkit decides what
//! the model sees. This crate computes that decision and nothing else: no I/O, no clock, no
//! environment, no randomness, no panics. Whatever a decision needs (today's date, a file's
//! contents, the summary an LLM wrote, the real token count the API reported) arrives as an
//! argument, so every transform is deterministic and can be snapshot-tested. The shells
//! (`ctxkit` for Rust and the CLI, `ctxkit-wasm` for JavaScript) do the I/O and call in here.
//!
//! A tour of the concepts, in the order data flows:
//!
//! **Messages and wire formats**
//! - [`message`]: [`Message`], [`Content`], [`Part`], [`ToolCall`]: the provider-neutral model.
//! - [`wire`]: lossless conversion to and from OpenAI Chat Completions and Anthropic Messages.
//! - [`import`]: real transcripts in (Claude Code session files).
//! - [`tokens`]: token estimates (the reference `bytes/4`, and a script- and content-aware
//!   default with a model-family factor), calibrated by real usage when the API reports it.
//! - [`repair`]: [`repair_tool_pairs`] turns any message list into one both providers accept.
//! - [`validate`]: what Anthropic and OpenAI would say about a request, in their own words.
//!
//! **The per-turn pipeline** ([`plan::plan_turn`], composed from the layers below)
//! - [`log`]: log entries (`seq`, message, cached estimate) and safe cut points.
//! - [`budget`]: window − output reserve − tool schemas − margin; trigger and low-water mark.
//! - [`checkpoint`], [`summary_request`], [`extractive`]: compaction as data: a request the
//!   caller answers (LLM or the extractive summarizer), turned into a stored checkpoint.
//! - [`clearing`], [`truncation`]: the cheaper and the last-resort tiers.
//! - [`offload`]: [`plan_offload`] replaces a big tool output by a paged reference to a file.
//! - [`precis`]: [`render_precis`] ranks long-term memories into a bounded `MEMORY.md`.
//! - [`system_prompt`]: [`build_system_prompt`] assembles the prompt from explicit parts.
//! - [`nudge`], [`mod@todo`]: reminders that live in the view only; active tasks kept by a summary.
//! - [`memory_extraction`]: asks a model for durable memories before a compaction, and checks
//!   its answer ([`parse_memory_drafts`]).
//! - [`memory_rules`]: what every memory store applies: importance clamped to 1–10, duplicates
//!   found by normalized content.
//! - [`view`]: what is sent, borrowing unchanged messages from the log.
//! - [`session`]: a session in memory and the turn protocol both shells follow.
//!
//! **Helpers**: [`transcript`] (a bounded transcript for prompts), [`text`] (UTF-8-safe
//! cutting), [`fence`] (fences that keep untrusted text as data), [`fingerprint`].
#![deny(missing_docs)]
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::unreachable,
        clippy::indexing_slicing,
        clippy::string_slice
    )
)]

pub mod budget;
pub mod checkpoint;
pub mod clearing;
pub mod error;
pub mod extractive;
pub mod fence;
pub mod fingerprint;
pub mod import;
pub mod log;
pub mod memory_extraction;
pub mod memory_rules;
pub mod message;
pub mod nudge;
pub mod offload;
pub mod plan;
pub mod precis;
pub mod repair;
pub mod session;
pub mod summary_request;
pub mod system_prompt;
pub mod text;
pub mod todo;
pub mod tokens;
pub mod transcript;
pub mod truncation;
pub mod validate;
pub mod view;
pub mod wire;

pub use error::{CoreError, Result};
pub use memory_extraction::{memory_extraction_request, parse_memory_drafts};
pub use message::{Content, ImageSource, Message, Part, Provider, Role, ToolCall};
pub use offload::{is_offload_reference, plan_offload, OffloadPlan, OffloadPolicy};
pub use precis::{render_precis, MemoryEntry, PrecisOptions};
pub use repair::{repair_tool_pairs, repair_view, RepairReport};
pub use system_prompt::{build_system_prompt, PromptParts};
pub use transcript::{render_transcript, TranscriptLimits};
pub use validate::{validate_anthropic, validate_openai, Violation};
pub use wire::{from_anthropic, from_openai, to_anthropic, to_openai};

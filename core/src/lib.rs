//! # ctxkit-core: the pure half of ctxkit
//!
//! An agent keeps the complete log of its session; before every model call ctxkit decides what
//! the model sees. This crate computes that decision and nothing else: no I/O, no clock, no
//! environment, no randomness, no panics. Whatever a decision needs (today's date, a file's
//! contents, the summary an LLM wrote, the real token count the API reported) arrives as an
//! argument, and every effect (ask an LLM for a summary, write a file) leaves as data, so every
//! transform is deterministic and can be snapshot-tested. The shells (`ctxkit` for Rust and the
//! CLI, `ctxkit-wasm` for JavaScript) do the I/O and call in here. The design, with a table of
//! where each decision lives, is `docs/architecture.md`.
//!
//! A tour, in the order data flows:
//!
//! **The foundation**
//! - [`model`]: [`Message`] (provider-neutral), the log's [`Entry`]s, the [`View`] a turn sends.
//! - [`wire`]: lossless conversion to and from OpenAI Chat Completions and Anthropic Messages,
//!   [`repair_tool_pairs`] (any message list into one both providers accept), the providers'
//!   validators ([`validate_openai`], [`validate_anthropic`]), [`render_view`], the one
//!   renderer of a view in a wire format, and where a view's cache breakpoints go
//!   ([`wire::breakpoints::place_breakpoints`]).
//! - [`tokens`]: token estimates per model family, calibrated by real usage.
//! - [`import`]: real transcripts in (Claude Code, SWE-agent, OpenHands, chat formats).
//! - [`facts`]: facts recognised by their shape for any agent: paths, what a call read,
//!   wrote or edited, the command it ran and where (never by a product's tool names).
//!
//! **The four layers**
//! 1. [`prompt`]: [`build_system_prompt`] assembles the system prompt from explicit parts.
//! 2. [`compaction`]: [`plan_turn`] fits the log into the [`Budget`]: clearing, a summary
//!    request answered into a [`Checkpoint`], a sliding window, truncation, repair.
//! 3. [`offload`]: [`plan_offload`] replaces a big tool output by a paged reference.
//! 4. [`memory`]: the bounded `MEMORY.md` precis, memory extraction, and nudges.
//!
//! **Recall** ([`recall`]): the log is complete, so what a summary left out can be looked up:
//! the `search_history`, `read_history` and `read_offload` tools ([`history_tools`]), their
//! arguments checked ([`parse_history_call`]), the search over a log in memory
//! ([`search_entries`]), the bounded results the model reads, and the system prompt's guidance.
//!
//! **The turn** ([`turn`]): a [`Session`] (the log, checkpoints, nudge state, usage anchor) and
//! the [`TurnDriver`], the one implementation of the turn protocol. A turn steps through
//! [`TurnStep`]s that the caller answers with I/O: [`TurnStep::NeedExtraction`] and
//! [`TurnStep::NeedSummary`] (LLM calls, with their output caps), then [`TurnStep::Ready`]
//! with the view; [`TurnDriver::finish`] returns the [`TurnResult`] and the [`TurnChanges`]
//! to persist.
//!
//! **Measurement** is not here: the cost simulator, probes, needed-next grading and the
//! fidelity measure are the `ctxkit-lab` crate's, which depends on this one (this one, and the
//! npm package's `ctxkit-wasm`, never on it).
//!
//! **Helpers**: [`text`] (UTF-8-safe cutting, fences, bounded transcripts, fingerprints).
//!
//! ```
//! use ctxkit_core::{Budget, Message, ModelFamily, Policy, Session, TurnDriver, TurnInputs, TurnStep};
//!
//! let mut session = Session::new(ModelFamily::OpenAi);
//! session.append([Message::user("Add a --verbose flag to the CLI")]);
//! let policy = Policy::default();
//! let inputs = TurnInputs::new("You are a coding agent.", Budget::for_window(200_000), &policy);
//!
//! let mut turn = TurnDriver::start(&inputs)?;
//! let view = loop {
//!     match turn.step(&session)? {
//!         // No LLM here: `None` answers each call with the deterministic fallback.
//!         TurnStep::NeedExtraction(_) => turn.answer_extraction(None)?,
//!         TurnStep::NeedSummary(_) => turn.answer_summary(&session, None)?,
//!         TurnStep::Ready(view) => break view.to_messages(),
//!     }
//! };
//! let (result, _changes) = turn.finish(&mut session)?;
//! assert_eq!(view.len(), 2); // the system prompt, then the user message
//! assert!(result.stats.fits);
//! # Ok::<(), ctxkit_core::CoreError>(())
//! ```
#![deny(missing_docs)]
// A function a reader can hold: none over 100 lines (too-many-lines-threshold, clippy.toml).
#![warn(clippy::too_many_lines)]
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

pub mod error;

pub mod import;
pub mod model;
pub mod tokens;
pub mod wire;

pub mod facts;

pub mod compaction;
pub mod memory;
pub mod offload;
pub mod prompt;

pub mod recall;

pub mod text;
pub mod turn;

pub use error::{CoreError, Result};

pub use model::{
    Content, Entry, ImageSource, Message, Part, Provider, ProviderFields, Role, ToolCall, View,
};
pub use tokens::ModelFamily;
pub use wire::{
    from_anthropic, from_openai, render_view, repair_tool_pairs, repair_view, to_anthropic,
    to_openai, validate_anthropic, validate_openai, RepairReport, Violation, WireFormat,
};

pub use compaction::{plan_turn, Budget, Checkpoint, Plan, Policy, SummaryRequest, ViewStats};
pub use memory::{
    memory_extraction_request, parse_memory_drafts, render_precis, MemoryEntry, PrecisOptions,
};
pub use offload::{is_offload_reference, plan_offload, OffloadPlan, OffloadPolicy};
pub use prompt::{build_system_prompt, PromptParts};
pub use recall::{
    history_tools, parse_history_call, render_read, render_search, search_entries, HistoryRequest,
    ToolDefinition,
};
pub use text::{render_transcript, TranscriptLimits};

pub use turn::{Session, TurnChanges, TurnDriver, TurnInputs, TurnResult, TurnStep};

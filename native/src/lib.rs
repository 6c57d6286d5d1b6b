//! # ctxkit: the native shell
//!
//! Rust programs and the `ctxkit` command line use this crate. It does the I/O around the pure
//! core ([`core`], re-exported): a SQLite or PostgreSQL store, offload files, the clock, and
//! HTTP calls to an LLM. It decides nothing itself: every policy is a core call.
//!
//! - [`Engine`]: the context half of an agent loop, for many sessions over a store; each turn
//!   is the core's [`core::TurnDriver`] answered with I/O. [`Engine::prepare_turn`] builds the view
//!   to send (system prompt, compaction, offload references, memory, nudges);
//!   [`Engine::record`] stores what came back; [`Engine::record_usage`] keeps the real token
//!   count the API reported; [`Engine::execute_tool`] answers the model's history tools
//!   (`search_history`, `read_history`, `read_offload`) from the complete log. Sessions can be
//!   created, imported, listed and exported, and long-term memories added, searched, listed and
//!   removed.
//! - [`store`]: the [`store::Store`] traits, [`store::SqliteStore`] (WAL, one transaction
//!   per append, migrations, trigram full-text search over memories and over the log) and
//!   [`store::PostgresStore`], the same guarantees on a PostgreSQL database a fleet of workers
//!   on many machines shares (`Engine::open` with a `postgres://` URL).
//! - [`offload`], [`files`], [`held_dir`], [`db_folder`]: big tool outputs, `MEMORY.md` and the database under
//!   `<workdir>/.ctxkit/`, opened through held folders that refuse symbolic links.
//! - [`llm`]: the LLM client that answers the turn driver's summary and extraction requests:
//!   OpenAI-compatible Chat Completions, the Anthropic Messages API and Anthropic's server
//!   compaction (its signed block kept beside the checkpoint for Anthropic views), with
//!   timeouts, retries and fallback (the extractive summary is the default, offline).
//! - [`proxy`]: `ctxkit proxy`, an HTTP server an unchanged agent points its base URL at
//!   (Anthropic Messages, streamed or not): each conversation found by content and logged,
//!   the provider sent ctxkit's view with the agent's own system prompt and tools, the agent
//!   given the provider's answers byte for byte (`docs/proxy.md`).
//! - [`reports`]: a transcript replayed through an engine and measured (the fidelity report
//!   the CLI prints and the Python package returns).
//! - [`clock`]: the time, behind a trait. [`Error`]: the one error type.
//!
//! ## One turn
//!
//! ```
//! use ctxkit::core::{Message, ToolCall};
//! use ctxkit::{Engine, EngineConfig, Event};
//! use ctxkit::clock::FixedClock;
//!
//! let workdir = tempfile::tempdir()?;
//! std::fs::write(workdir.path().join("AGENTS.md"), "Run `cargo test` before committing.")?;
//! let db = workdir.path().join(".ctxkit/ctxkit.db");
//! let mut engine = Engine::open(&db, workdir.path(), EngineConfig::default())?
//!     .with_clock(FixedClock(1_770_768_000)); // 2026-02-11
//!
//! engine.create_session("demo")?;
//! engine.record("demo", vec![Message::user("What is in src/?")])?;
//!
//! // Before the model call: the view, with the system prompt built for this turn (its date,
//! // AGENTS.md and memory frozen with the checkpoint until the next compaction).
//! let turn = engine.prepare_turn("demo")?;
//! assert!(turn.system_prompt().contains("Current date: 2026-02-11"));
//! assert!(turn.system_prompt().contains("cargo test"));
//! assert_eq!(turn.messages.len(), 2);
//! let _request_body = turn.to_openai(); // or turn.to_anthropic()?
//! assert!(matches!(turn.events.last(), Some(Event::TokensEstimated { .. })));
//!
//! // After it: what came back, then the real usage the API reported.
//! engine.record("demo", vec![
//!     Message::assistant("", vec![ToolCall::new("call_1", "bash", r#"{"cmd":"ls src"}"#)]),
//!     Message::tool_result("call_1", "main.rs\n".repeat(5_000), false), // 40 KB: offloaded
//! ])?;
//! engine.record_usage("demo", &turn.stats, 1_234)?;
//!
//! let next = engine.prepare_turn("demo")?;
//! assert_eq!(next.stats.offload_references, 1);
//! assert!(workdir.path().join(".ctxkit/tool_results/demo").is_dir());
//! # Ok::<(), Box<dyn std::error::Error>>(())
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
        clippy::indexing_slicing
    )
)]

pub use ctxkit_core as core;

pub mod clock;
pub mod db_folder;
mod engine;
pub mod error;
pub mod files;
pub mod held_dir;
pub mod llm;
pub mod offload;
pub mod proxy;
pub mod reports;
pub mod store;

pub use engine::{
    AppendKey, AppendedNew, Engine, EngineConfig, Event, EventSink, Fork, IdleOutcome,
    MemoryOptions, PromptConfig, RecordOutcome, RecordedMessage, TurnResult, WarningKind,
    APPEND_ATTEMPTS,
};
pub use error::{Error, Result};

/// The version of this crate, as the CLI's `--version` prints it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

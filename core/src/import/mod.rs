//! Importers for agent transcript formats found in the wild.
//!
//! Each importer turns the text of a transcript file into the message model, plus whatever the
//! file knows that the model does not (real token usage per API call, where the agent compacted).
//! Importers read text the shell has loaded; they do no I/O and never panic on any input.
//!
//! - [`claude_code`]: Claude Code session JSONL ([`import_claude_code`]).
//!
//! Chat Completions histories (tau-bench, SWE-agent, OpenHands responses) need no importer of
//! their own: they are read with [`crate::wire::from_openai`].

pub mod claude_code;

pub use claude_code::{import_claude_code, ApiCall, ClaudeCodeSession, CompactionMarker};

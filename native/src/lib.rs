//! # ctxkit: the native shell
//!
//! Rust programs and the `ctxkit` command line use this crate. It re-exports the pure core
//! ([`core`]) and, as the shell grows, does the I/O around it: the SQLite store, offload files,
//! the clock, and HTTP calls to an LLM. It decides nothing itself: every policy is a core call.
#![deny(missing_docs)]

pub use ctxkit_core as core;

/// The version of this crate, as the CLI's `--version` prints it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

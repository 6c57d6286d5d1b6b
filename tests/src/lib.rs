//! Shared helpers for ctxkit's cross-crate tests: where the fixtures and the corpus are.
#![deny(missing_docs)]

use std::path::PathBuf;

pub mod arbitrary;
pub mod corpus_log;

/// The project root (the folder holding the workspace `Cargo.toml`).
pub fn project_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(PathBuf::from)
        .unwrap_or_default()
}

/// The folder of this crate's fixture files.
pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// The raw corpus of real transcripts: `../shared/corpus/raw` from the project root.
pub fn corpus_dir() -> PathBuf {
    project_root().join("../shared/corpus/raw")
}

pub mod claude_usage;
pub mod estimator_corpus;
pub mod estimator_eval;

/// The README's examples, compiled and run as doctests so they cannot rot.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

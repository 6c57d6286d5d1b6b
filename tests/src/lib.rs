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

/// The raw corpus of real transcripts: `$CTXKIT_CORPUS` if set, else `../shared/corpus/raw`
/// from the project root (the layout of the team's machines), else `/work/shared/corpus/raw`
/// (where that folder lives on them, for a clone made elsewhere). Tests that need the corpus
/// fail, naming the path, when none exists: they never skip silently.
pub fn corpus_dir() -> PathBuf {
    let candidates = [
        std::env::var_os("CTXKIT_CORPUS").map(PathBuf::from),
        Some(project_root().join("../shared/corpus/raw")),
        Some(PathBuf::from("/work/shared/corpus/raw")),
    ];
    let mut candidates = candidates.into_iter().flatten();
    let first = candidates.next().unwrap_or_default();
    std::iter::once(first.clone())
        .chain(candidates)
        .find(|dir| dir.is_dir())
        .unwrap_or(first)
}

pub mod claude_usage;
pub mod estimator_corpus;
pub mod estimator_eval;
pub mod fidelity;

/// The README's examples, compiled and run as doctests so they cannot rot.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

//! # ctxkit-python: the Python package's extension module (`ctxkit._ctxkit`)
//!
//! A thin PyO3 binding over the native shell ([`ctxkit`]) and the pure core
//! ([`ctxkit_core`]), in the style of polars' Python crate: every function converts Python
//! values, calls one Rust function, and converts the answer back. The GIL is released around
//! a call that may wait (a turn, which may call a summarizer; a PostgreSQL store; a whole
//! session read or written) and held around short local work (a step's append, a sync turn
//! without a summarizer and a page read on SQLite, rendering), whose GIL round trip would cost more than the call: see
//! `Engine::with_held`.
//! Nothing of the pipeline is written in Python or decided here.
//!
//! | file | Python |
//! |---|---|
//! | [`functions`] | `parse`, `render`, `repair`, `validate`, `estimate_tokens`, `import_transcript` |
//! | [`engine`] | `Engine`: sessions over SQLite or PostgreSQL, `append`, `prepare`, `view`, `tail`, `record_usage`, history tools, memory, offloads |
//! | `engine_calls` | what `Engine`'s methods share: the input cap, the prepared turn as a dict, the log's tail |
//! | [`summarize`] | the `summarize` callable as the engine's summarizer, with its fallbacks |
//! | [`held`] | `message_fingerprint`, `held_prefix`: which of a framework's messages the log holds |
//! | [`reports`] | `cost` and `fidelity`: the CLI's `--json` rows |
//! | [`convert`] | Python values in and out, errors with paths |
//! | [`errors`] | one exception class per kind of error |
//!
//! The Python side (`python/ctxkit/`) adds only what Python must do: the exception classes, the
//! call of a sync or async `summarize` with its timeout, `Engine.aprepare`, and the adapters
//! for pydantic-ai, LangChain/LangGraph and the OpenAI Agents SDK.
#![deny(missing_docs)]
// A function a reader can hold: none over 100 lines (too-many-lines-threshold, clippy.toml).
#![warn(clippy::too_many_lines)]
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod args;
pub mod convert;
pub mod engine;
mod engine_calls;
mod engine_config;
pub mod errors;
pub mod functions;
pub mod held;
pub mod reports;
pub mod summarize;

use pyo3::prelude::*;

/// The module `ctxkit._ctxkit`.
#[pymodule]
fn _ctxkit(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", ctxkit::VERSION)?;
    m.add_class::<engine::Engine>()?;
    m.add_function(wrap_pyfunction!(functions::parse, m)?)?;
    m.add_function(wrap_pyfunction!(functions::render, m)?)?;
    m.add_function(wrap_pyfunction!(functions::repair, m)?)?;
    m.add_function(wrap_pyfunction!(functions::validate, m)?)?;
    m.add_function(wrap_pyfunction!(functions::estimate_tokens, m)?)?;
    m.add_function(wrap_pyfunction!(functions::import_transcript, m)?)?;
    m.add_function(wrap_pyfunction!(held::message_fingerprint, m)?)?;
    m.add_function(wrap_pyfunction!(held::held_prefix, m)?)?;
    m.add_function(wrap_pyfunction!(reports::cost, m)?)?;
    m.add_function(wrap_pyfunction!(reports::fidelity, m)?)?;
    Ok(())
}

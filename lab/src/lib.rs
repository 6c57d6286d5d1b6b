//! # ctxkit-lab: what ctxkit measures
//!
//! `ctxkit-core` decides what the model sees; this crate measures how well and at what price.
//! It holds no product code: nothing an agent's turn runs is here, and neither `ctxkit-core`
//! nor `ctxkit-wasm` (the npm package) depends on it. The CLI's `cost`, `fidelity` and `probe`
//! commands and the Python package's `cost` and `fidelity` functions call it. Like the core it
//! is pure: no I/O, no clock (times are inputs), no randomness; whatever a measure needs from
//! outside (a history search, a model's answer) is passed in or handed back as data.
//!
//! A tour:
//!
//! - [`cost`]: economics. Prices and cache rules per model as data ([`cost::pricing_for`]), a
//!   cache simulator ([`cost::CacheSimulator`]), the strategies users pick replayed over a
//!   transcript and billed call by call ([`cost::compare_strategies`]), and the report of one
//!   transcript file ([`cost::cost_report`]). Where a view's cache breakpoints go is product
//!   code and stays in the core (`ctxkit_core::wire::breakpoints`); the simulator bills by it.
//! - [`needed_next`]: does a summary hold what the agent went on to need? The facts of the
//!   agent's later tool calls that only the summary could have given it, and the share it
//!   holds ([`needed_next::needed_next`]).
//! - [`fidelity`]: what each checkpoint's summary kept of the pinned facts, and how many of
//!   the dropped ones a history search finds again ([`fidelity::checkpoint_fidelity`]).
//! - [`probes`]: questions with known answers made from the log per checkpoint (recall,
//!   artifact, continuation, decision, needed next), graded by a string check
//!   ([`probes::grade`]), so what a model still knows after a compaction is measured without
//!   a judge model (`ctxkit probe`).
//!
//! ```
//! use ctxkit_lab::cost::pricing_for;
//! use ctxkit_lab::probes::{grade, AnswerKey, KeyItem};
//!
//! // Prices are data: a cached read of the prefix costs a tenth of sending it.
//! let pricing = pricing_for("claude-sonnet-4-5").expect("a priced model");
//! assert!(pricing.prices.cache_read * 10.0 <= pricing.prices.input + 1e-9);
//!
//! // A probe's answer is graded by a string check against its key: no judge model.
//! let key = AnswerKey {
//!     all_of: vec![KeyItem { variants: vec!["src/lib.rs".into()], seq: 3 }],
//! };
//! assert!(grade("The parser is defined in src/lib.rs.", &key));
//! assert!(!grade("I do not remember.", &key));
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

pub mod cost;
pub mod fidelity;
pub mod needed_next;
pub mod probes;

//! # ctxkit-wasm: the JavaScript shell
//!
//! wasm-bindgen bindings that expose the pure core to Node and browsers (the npm package
//! `ctxkit`, built into `pkg/` by `scripts/build-pkg.sh`). Each exported JS concept has a file
//! of its own, in the style of y-crdt's ywasm:
//!
//! | file | JS |
//! |---|---|
//! | [`wire`] | `fromOpenAI`, `toOpenAI`, `fromAnthropic`, `toAnthropic`, the message types |
//! | [`tokens`] | `estimateTokens` |
//! | [`held`] | `messageFingerprints`: what the adapters' router compares |
//! | [`repair`] | `repairToolPairs` |
//! | [`validate`] | `validate` |
//! | [`plan`] | `planTurn`, `summaryCheckpoint`, the budget and policy types |
//! | [`summary`] | `extractiveSummary` |
//! | [`offload`] | `planOffload` |
//! | [`offload_store`] | `Engine.setOffload`: offload built into `append`, through the caller's writer |
//! | [`precis`] | `renderPrecis` |
//! | [`system_prompt`] | `buildSystemPrompt` |
//! | [`nudge`] | `advanceNudges` |
//! | [`engine`] | `Engine`: a session kept in wasm memory |
//! | [`prepare`] | `Engine.prepare`: the turn answered by `summarize` and `extract` |
//! | [`background`] | `Engine.prepare`'s background compaction: `summarize` started, not awaited, past `policy.background_percent` |
//! | [`summarize`] | `Engine.prepare`'s call of the JS summarizer, with its deadline |
//! | [`history`] | the `Engine`'s history tools: `historyTools`, `searchHistory`, `readHistory`, `executeTool` |
//! | [`defaults`] | `defaults`, `version` |
//!
//! Two helpers serve them all: [`convert`] (JS values in and out, errors with paths found by
//! [`json_path`]) and
//! [`view`] (turn options, and views rendered in the asked shape, cached for an `Engine`).
//!
//! The shell converts values and calls the core; it never decides policy. Values cross the
//! boundary in the core's serde form ([`convert`]): what JS passes in is read through
//! `JSON.stringify` with paths, so a bad value throws a JS `Error` that says what is wrong and
//! where (`toOpenAI: messages[3].role: missing`); what the core returns is written by
//! serde-wasm-bindgen as plain JS objects (the same JSON the Rust snapshots and the CLI show). Data keys are snake_case, as in the providers' own
//! formats; functions and methods are camelCase.
//!
//! Guarantees: no exported function panics (a panic would abort the wasm instance): every
//! failure is an `Error` thrown to the caller, and an `Engine` that refused a call is left as
//! it was. The TypeScript types are written by hand next to the functions they describe
//! (`typescript_custom_section`) and checked by `tsc` against a usage file in `pkg/test/`, and
//! against the serde shapes of the Rust types they describe (the test in `src/ts_shapes/`).
#![deny(missing_docs)]
// A function a reader can hold: none over 100 lines (too-many-lines-threshold, clippy.toml).
#![warn(clippy::too_many_lines)]
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::unreachable,
    clippy::indexing_slicing,
    clippy::string_slice
)]

pub mod background;
pub mod convert;
pub mod defaults;
pub mod engine;
pub mod frozen;
pub mod held;
pub mod history;
pub mod idle;
pub mod json_path;
pub mod nudge;
pub mod offload;
pub mod offload_config;
pub mod offload_store;
pub mod plan;
pub mod precis;
pub mod prepare;
pub mod readers;
pub mod repair;
pub mod stand_in;
pub mod summarize;
pub mod summary;
pub mod system_prompt;
pub mod tokens;
pub mod turn_result;
pub mod usage;
pub mod validate;
pub mod view;
pub mod wire;

#[cfg(test)]
mod ts_shapes;

pub use engine::Engine;

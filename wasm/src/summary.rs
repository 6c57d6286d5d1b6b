//! The extractive summarizer: `extractiveSummary`.
//!
//! A checkpoint summary without an LLM: the five sections an LLM is asked for (Goal,
//! Progress, Key Decisions, Next Steps, Critical Context) built from what the messages
//! literally contain. Deterministic, bounded by `limits.max_bytes`, and incremental: given the
//! previous summary it merges instead of starting over (the core's
//! `ctxkit_core::compaction`).

use ctxkit_core::compaction::{extractive_summary, ExtractiveLimits};
use serde::Deserialize;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsError, JsValue};

use crate::convert::{fail, read_json, read_messages, read_or_default};

#[wasm_bindgen(typescript_custom_section)]
const SUMMARY_TYPES: &str = r#"
/** Options of `extractiveSummary`. */
export interface ExtractiveOptions {
  /** The previous checkpoint's summary, to merge into. */
  previous?: string | null;
  /** Bounds (default: 16 KiB, 15 recent calls, ...). */
  limits?: Partial<ExtractiveLimits>;
}
"#;

/// The options of `extractiveSummary` (TS `ExtractiveOptions`).
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub(crate) struct Options {
    previous: Option<String>,
    limits: ExtractiveLimits,
}

/// Summarizes messages without an LLM, merging the previous summary if one is given.
#[wasm_bindgen(js_name = extractiveSummary)]
pub fn extractive_summary_js(
    #[wasm_bindgen(unchecked_param_type = "Message[]")] messages: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "ExtractiveOptions")] options: JsValue,
) -> Result<String, JsError> {
    (|| {
        let messages = read_messages(read_json(&messages, "messages")?, "messages")?;
        let options: Options = read_or_default(&options, "options")?;
        Ok(extractive_summary(
            &messages,
            options.previous.as_deref(),
            &options.limits,
        ))
    })()
    .map_err(fail("extractiveSummary"))
}

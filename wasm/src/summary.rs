//! The extractive summarizer: `extractiveSummary`.
//!
//! A checkpoint summary without an LLM: the five sections an LLM is asked for (Goal,
//! Progress, Key Decisions, Next Steps, Critical Context) built from what the messages
//! literally contain. Deterministic, bounded by `limits.max_bytes`, and incremental: given the
//! previous summary it merges instead of starting over (the core's
//! `ctxkit_core::compaction`).

use ctxkit_core::compaction::{extractive_summary, ExtractiveLimits};
use serde::Deserialize;
use serde_json::Value;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsError, JsValue};

use crate::convert::{fail, read_json};
use crate::readers::read_messages;

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
#[derive(Debug, Default, PartialEq, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub(crate) struct Options {
    previous: Option<String>,
    limits: ExtractiveLimits,
}

crate::readers::defaulted!(
    /// The options, read with the hand-written readers (`crate::readers` says why).
    read_options,
    Options,
    [previous, limits => crate::readers::extractive_limits]
);

/// Summarizes messages without an LLM, merging the previous summary if one is given.
#[wasm_bindgen(js_name = extractiveSummary)]
pub fn extractive_summary_js(
    #[wasm_bindgen(unchecked_param_type = "Message[]")] messages: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "ExtractiveOptions")] options: JsValue,
) -> Result<String, JsError> {
    (|| {
        let messages = read_messages(read_json(&messages, "messages")?, "messages")?;
        let options = match read_json(&options, "options")? {
            Value::Null => Options::default(),
            json => read_options(json, "options")?,
        };
        Ok(extractive_summary(
            &messages,
            options.previous.as_deref(),
            &options.limits,
        ))
    })()
    .map_err(fail("extractiveSummary"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::readers::tests::same;
    use serde_json::json;

    #[test]
    fn options_read_as_derived() {
        same(read_options, json!({}));
        same(
            read_options,
            json!({"previous": "p", "limits": {"files": 3}}),
        );
        same(
            read_options,
            json!({"limits": {"files": -3}, "previous": 1}),
        );
        same(read_options, json!({"limits": {"zz": 1}}));
        same(read_options, json!({"zz": 1}));
        same(read_options, json!(5));
    }
}

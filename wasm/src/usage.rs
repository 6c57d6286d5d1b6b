//! `Engine.recordUsage`: what the provider reported a view cost, checked before it calibrates
//! the next views. The usage may be a count or the provider's usage object with its shape
//! (`"anthropic"`, `"openai"`, `"ai-sdk"`), read by the core as the request's whole input
//! (uncached + cache reads + cache writes: [`ctxkit_core::tokens::full_input_tokens`]); a count
//! outside the plausible band of the estimate is refused by the core's rule
//! ([`ctxkit_core::tokens::check_usage`]) and said so, never believed.

use ctxkit_core::tokens::{full_input_tokens, UsageShape};
use ctxkit_core::CoreError;
use serde::Serialize;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsError, JsValue};

use crate::convert::busy;
use crate::convert::{fail, read, read_json, to_js};
use crate::engine::Engine;
use crate::readers::view_stats;

#[wasm_bindgen(typescript_custom_section)]
const TS: &'static str = r#"
/** The provider usage shapes `recordUsage` reads. */
export type UsageShape = "anthropic" | "openai" | "ai-sdk";

/** What `recordUsage` did with a reported usage. */
export interface UsageVerdict {
  /** Whether it became the calibration anchor. */
  accepted: boolean;
  /** The whole input it counted. */
  input_tokens: number;
  /** Why it was refused (outside the plausible band of the estimate), else `null`. */
  reason: string | null;
}

/** A reported usage the calibration refused: outside the plausible band of the estimate. */
export interface RefusedUsage {
  input_tokens: number;
  estimated_tokens: number;
  lowest_plausible: number;
  highest_plausible: number;
}
"#;

/// What `recordUsage` answers.
#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct UsageVerdict {
    accepted: bool,
    input_tokens: u64,
    reason: Option<String>,
}

#[wasm_bindgen]
impl Engine {
    /// Records the real input tokens the API reported for the view whose stats are given:
    /// later views are counted from that number plus estimates of what was appended since.
    /// `usage` is a count, or the provider's usage object as it came back with `shape` naming
    /// it (`"anthropic"`, `"openai"`, `"ai-sdk"`): its whole input is counted, uncached + cache
    /// reads + cache writes. A count outside the plausible band of the estimate is refused
    /// (the answer says why, and the next views' `stats.refused_usage`); bad input throws.
    #[wasm_bindgen(js_name = recordUsage, unchecked_return_type = "UsageVerdict")]
    pub fn record_usage(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ViewStats")] stats: JsValue,
        #[wasm_bindgen(unchecked_param_type = "number | Record<string, unknown>")] usage: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "UsageShape")] shape: JsValue,
    ) -> Result<JsValue, JsError> {
        (|| {
            let stats = view_stats(read_json(&stats, "stats")?, "stats")?;
            let input_tokens: u64 = if shape.is_undefined() || shape.is_null() {
                read(&usage, "input_tokens")?
            } else {
                let shape = shape.as_string().ok_or_else(|| {
                    CoreError::invalid("shape", "expected \"anthropic\", \"openai\" or \"ai-sdk\"")
                })?;
                let shape = UsageShape::parse(&shape)?;
                let usage: serde_json::Value = read(&usage, "usage")?;
                full_input_tokens(shape, &usage)?
            };
            let verdict = self
                .session
                .try_borrow_mut()
                .map_err(|_| busy())?
                .record_usage(&stats, input_tokens);
            to_js(&UsageVerdict {
                accepted: verdict.is_ok(),
                input_tokens,
                reason: verdict.err().map(|refused| refused.to_string()),
            })
        })()
        .map_err(fail("Engine.recordUsage"))
    }
}

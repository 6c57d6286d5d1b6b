//! What a turn hands back to JavaScript: the rendered view with the turn's stats and the
//! summary it stored (TS `TurnResult`), for `Engine.view`'s and `Engine.prepare`'s turns alike.

use ctxkit_core::compaction::{FallbackKind, LlmCall, SummaryMethod};
use ctxkit_core::TurnResult;
use serde::Serialize;
use wasm_bindgen::JsValue;

use crate::convert::{set, to_js, to_js_sorted, Result};

/// The summary a turn stored (TS `SummaryOutcome`).
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct SummaryOutput {
    method: SummaryMethod,
    through_seq: u64,
    fallback_reason: Option<String>,
}

/// The rendered view with its stats and the summary the turn stored, as the JS result. The
/// summary's `fallback_reason` is the reason of the summary call's fallback in the stats.
pub(crate) fn finish(rendered: JsValue, result: TurnResult) -> Result<JsValue> {
    set(&rendered, "stats", &to_js(&result.stats)?)?;
    let fallback_reason = result
        .stats
        .fallbacks
        .iter()
        .rev()
        .find(|fallback| fallback.call == LlmCall::Summary && fallback.kind != FallbackKind::Stale)
        .map(|fallback| fallback.reason.clone());
    let summary = match result.summary {
        None => JsValue::NULL,
        Some(outcome) => to_js_sorted(&SummaryOutput {
            method: outcome.method,
            through_seq: outcome.through_seq,
            fallback_reason,
        })?,
    };
    set(&rendered, "summary", &summary)?;
    Ok(rendered)
}

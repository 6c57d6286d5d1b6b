//! `Engine.compactIfIdle`: compaction ahead of the cache's expiry, for the loop's timer while
//! the user is away (the native engine's `compact_if_idle`, answered by the caller's
//! callbacks).
//!
//! The decision is the core's (`idle_decision`): the next view is measured as `view` would
//! make it (nothing kept), and when the answer is to compact the turn runs as `prepare` does,
//! with the budget the decision carries (its trigger lowered to the idle floor), asking
//! `summarize` and keeping the checkpoint, so the next turn starts from it. It counts as a
//! turn for the nudges.

use ctxkit_core::turn::{idle_decision, IdleDecision};
use ctxkit_core::{CoreError, TurnDriver, TurnStep};
use wasm_bindgen::JsValue;

use crate::convert::busy;
use crate::convert::{fail, js_error_message, set, to_js, Result};
use crate::engine::Engine;
use crate::prepare::{prepare_turn, read_prepare_options, Parts};
use crate::summarize::Summarizer;
use crate::view::JsTurnInputs;

/// The TypeScript of what `compactIfIdle` takes and gives.
#[wasm_bindgen::prelude::wasm_bindgen(typescript_custom_section)]
const IDLE_TS: &'static str = r#"
/** `compactIfIdle`'s options: a turn's (`prepare`'s) and the idle time. */
export type IdleOptions = PrepareOptions & {
  /** Seconds since the session's last model call (the caller's clock). */
  idle_seconds: number;
  /** The provider's cache lifetime in use, in seconds (default 300). */
  ttl_seconds?: number;
};

/** What an idle check decided (the core's `IdleDecision`). */
export type IdleDecision =
  | { action: "compact"; budget: Budget; expired: boolean }
  | { action: "wait"; seconds: number }
  | { action: "skip"; reason: { kind: "off" } | { kind: "no_lifetime" } | { kind: "below_floor"; view_tokens: number; floor_tokens: number } };

/** What `compactIfIdle` did: the decision, the view it measured, and the compaction's turn. */
export interface IdleResult {
  decision: IdleDecision;
  view_tokens: number;
  result: TurnResultOf<"ctxkit"> | null;
}
"#;

#[wasm_bindgen::prelude::wasm_bindgen]
impl Engine {
    /// Compaction ahead of the cache's expiry, for the loop's timer while the user is away:
    /// `options` are `prepare`'s plus `idle_seconds` (since the last model call, by the
    /// caller's clock) and `ttl_seconds` (the cache lifetime in use, default 300). In the last
    /// `policy.idle_margin_percent` of the lifetime, a session whose next view is above the
    /// idle floor is compacted now (asking `summarize`), so the next turn writes the small
    /// prefix; otherwise `decision` says how long to wait or why not, and nothing changes.
    #[wasm_bindgen(js_name = compactIfIdle, unchecked_return_type = "Promise<IdleResult>")]
    pub fn compact_if_idle(
        &self,
        #[wasm_bindgen(unchecked_param_type = "IdleOptions")] options: JsValue,
    ) -> js_sys::Promise {
        let parts = self.parts();
        // Read now, so later changes to the caller's object do not leak into this call.
        let read = split_idle_options(&options).and_then(|(idle, ttl, rest)| {
            read_prepare_options(&rest, &parts.session)
                .map(|(turn, summarizer)| (idle, ttl, turn, summarizer))
        });
        wasm_bindgen_futures::future_to_promise(async move {
            let (idle, ttl, options, summarizer) =
                read.map_err(|error| fail("Engine.compactIfIdle")(error))?;
            compact_if_idle(parts, idle, ttl, options, summarizer)
                .await
                .map_err(|error| JsValue::from(fail("Engine.compactIfIdle")(error)))
        })
    }
}

/// The idle time and lifetime of `options`, and the options without them (a turn's own).
pub(crate) fn split_idle_options(options: &JsValue) -> Result<(u64, u64, JsValue)> {
    if !options.is_object() {
        return Err(CoreError::invalid(
            "options",
            "expected an object with idle_seconds",
        ));
    }
    let seconds = |name: &str, default: Option<u64>| -> Result<u64> {
        let value = js_sys::Reflect::get(options, &JsValue::from_str(name)).map_err(|error| {
            CoreError::invalid(format!("options.{name}"), js_error_message(&error))
        })?;
        match (value.as_f64(), default) {
            (Some(number), _) if number.is_finite() && number >= 0.0 && number.fract() == 0.0 => {
                Ok(number as u64)
            }
            (None, Some(default)) if value.is_undefined() => Ok(default),
            _ => Err(CoreError::invalid(
                format!("options.{name}"),
                "expected a whole number of seconds, 0 or more",
            )),
        }
    };
    let idle = seconds("idle_seconds", None)?;
    let ttl = seconds("ttl_seconds", Some(300))?;
    let rest = js_sys::Object::assign(
        &js_sys::Object::new(),
        &js_sys::Object::from(options.clone()),
    );
    for name in ["idle_seconds", "ttl_seconds"] {
        js_sys::Reflect::delete_property(&rest, &JsValue::from_str(name))
            .map_err(|error| CoreError::invalid("options", js_error_message(&error)))?;
    }
    Ok((idle, ttl, rest.into()))
}

/// Measures the next view, asks the core, and compacts when it says so.
pub(crate) async fn compact_if_idle(
    parts: Parts,
    idle_seconds: u64,
    ttl_seconds: u64,
    mut options: JsTurnInputs,
    summarizer: Summarizer,
) -> Result<JsValue> {
    let view_tokens = {
        let session = parts.session.try_borrow().map_err(|_| busy())?;
        // Measured with the prompt the turn would send (`prepare` resolves it again).
        let mut measured = options.clone();
        crate::frozen::resolve(&mut measured, Some(&session))?;
        let inputs = measured.inputs();
        let mut turn = TurnDriver::start(&inputs)?;
        let mut compacts = false;
        loop {
            match turn.step(&session)? {
                TurnStep::NeedExtraction(_) => turn.answer_extraction(None)?,
                TurnStep::NeedSummary(_) => {
                    compacts = true;
                    turn.answer_summary(&session, None)?;
                }
                TurnStep::Ready(_) => {
                    let stats = turn
                        .ready_stats()
                        .ok_or_else(|| CoreError::invalid("engine", "a ready turn has no stats"))?;
                    // A view already over the trigger counts as just over it.
                    break match compacts {
                        true => stats.trigger_tokens.saturating_add(1),
                        false => stats.calibrated_tokens.unwrap_or(stats.total_tokens),
                    };
                }
            }
        }
    };
    let decision = idle_decision(
        view_tokens,
        idle_seconds,
        ttl_seconds,
        &options.budget,
        &options.policy,
    );
    let result = match decision {
        IdleDecision::Compact { budget, .. } => {
            options.budget = budget;
            prepare_turn(parts, options, summarizer).await?
        }
        IdleDecision::Wait { .. } | IdleDecision::Skip { .. } => JsValue::NULL,
    };
    let out = to_js(&serde_json::json!({
        "decision": decision,
        "view_tokens": view_tokens,
    }))?;
    set(&out, "result", &result)?;
    Ok(out)
}

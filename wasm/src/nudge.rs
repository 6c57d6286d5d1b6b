//! Nudges: `advanceNudges`.
//!
//! Reminders that go into the view only, never into the log (the core's `ctxkit_core::memory`):
//! a memory nudge every N turns, and a stall nudge when K turns pass in which the agent acted
//! without a progress tool. The state belongs to the session (pass back `next` every turn), so
//! a restart does not reset the counters. Only the messages after `state.last_seq` are read.
//! `planTurn` and `Engine` advance the nudges themselves; this is for callers that assemble
//! their own views.

use ctxkit_core::memory::{advance_nudges, NudgeKind, NudgePolicy, NudgeState};
use ctxkit_core::model::Entry;
use ctxkit_core::{CoreError, Message};
use serde::Serialize;
use serde_json::Value;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsError, JsValue};

use crate::convert::{fail, read_json, to_js_sorted};
use crate::convert::{object, take, take_decoded};
use crate::readers::{nudge_policy, read_messages};

#[wasm_bindgen(typescript_custom_section)]
const NUDGE_TYPES: &str = r#"
/** The input of `advanceNudges`. */
export interface NudgeInput {
  /** The state the previous turn returned (default: a new session). */
  state?: Partial<NudgeState> | null;
  /** The log (default: none), numbered from `first_seq` (default 1); only messages after `state.last_seq` are read. */
  log?: Message[] | null;
  first_seq?: number | null;
  policy?: Partial<NudgePolicy> | null;
}

/** This turn's nudges and the state for the next turn. */
export interface NudgeOutcome {
  /** Messages to append at the end of the view, in order (never to the log). */
  messages: Message[];
  kinds: NudgeKind[];
  /** Pass this as `state` next turn. */
  next: NudgeState;
}
"#;

/// What `advanceNudges` returns (TS `NudgeOutcome`).
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct NudgeOutput {
    messages: Vec<Message>,
    kinds: Vec<NudgeKind>,
    next: NudgeState,
}

/// Advances the nudge state by one turn and returns this turn's reminders.
#[wasm_bindgen(js_name = advanceNudges, unchecked_return_type = "NudgeOutcome")]
pub fn advance_nudges_js(
    #[wasm_bindgen(unchecked_param_type = "NudgeInput")] input: JsValue,
) -> Result<JsValue, JsError> {
    (|| {
        let mut fields = object(
            read_json(&input, "input")?,
            "input",
            "an object (NudgeInput)",
        )?;
        let state: NudgeState = take(&mut fields, "state")
            .map(|json| crate::readers::nudge_state(json, "input.state"))
            .transpose()?
            .unwrap_or_default();
        let log = take(&mut fields, "log").unwrap_or(Value::Array(Vec::new()));
        let log = read_messages(log, "input.log")?;
        let first_seq: u64 = take_decoded(&mut fields, "first_seq")?.unwrap_or(1);
        let policy: NudgePolicy = take(&mut fields, "policy")
            .map(|json| nudge_policy(json, "input.policy"))
            .transpose()?
            .unwrap_or_default();
        if let Some(key) = fields.keys().next() {
            return Err(CoreError::invalid(
                format!("input.{key}"),
                "unknown field (expected one of `state`, `log`, `first_seq`, `policy`)",
            ));
        }
        // Nudges read roles and tool calls only, so the entries carry no estimate.
        let entries: Vec<Entry> = log
            .into_iter()
            .zip(first_seq..)
            .map(|(message, seq)| Entry {
                seq,
                message,
                tokens: 0,
            })
            .collect();
        let outcome = advance_nudges(&state, &entries, &policy);
        to_js_sorted(&NudgeOutput {
            messages: outcome.messages,
            kinds: outcome.kinds,
            next: outcome.next,
        })
    })()
    .map_err(fail("advanceNudges"))
}
